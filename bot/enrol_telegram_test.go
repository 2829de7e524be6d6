package bot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// enrolChat is a conversation through the real Telegram library whose
// core, agent hub and scheduler are wired as cmd/gpuledger wires them
// (the hub publishes on the bus the scheduler, made before the core,
// subscribes to; the scheduler runs with the transport), and an
// announcement of a RunPod instance with alice's enrolment token.
func enrolChat(t *testing.T) (*convo, func()) {
	t.Helper()
	bus := events.New(events.Config{})
	var h *hub.Hub
	var s *scheduler.Scheduler
	btn := testButtons()
	c := newChatWith(t, func(cfg *bot.Config, c *convo) {
		var err error
		h, err = hub.New(hub.Config{Store: c.db, Now: c.clock, Events: bus})
		if err != nil {
			t.Fatal(err)
		}
		s, err = scheduler.New(scheduler.Config{Events: bus, Store: c.db, Hub: h, Enrolment: h.Enrolment(), Buttons: btn, Now: c.clock, NoChart: true})
		if err != nil {
			t.Fatal(err)
		}
		cfg.AllowedUsers = []int64{alice}
		cfg.Buttons = btn
		cfg.AgentTokens = h.Tokens()
		cfg.Enrolment = h.Enrolment()
		cfg.InstanceCards = s
		cfg.TZ = "Asia/Shanghai"
		cfg.PublicURL = "http://hub"
	})
	ctx, cancel := context.WithCancel(c.ctx)
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx, c.tr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("scheduler: %v", err)
		}
	})
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)

	m := enrolRE.FindStringSubmatch(c.say(alice, "/agent").Text)
	if m == nil {
		t.Fatal("/agent: no enrolment token")
	}
	announce := func() {
		t.Helper()
		before := len(c.fake.Messages(alice))
		now := c.clock()
		hb := wire.HeartbeatRequest{Version: wire.Version, Seq: 1, BootID: "b", Verdict: wire.VerdictBusy, Samples: 6, BusySamples: 6,
			WindowStart: now.Add(-30 * time.Second), WindowEnd: now, SentAt: now,
			Host:     wire.HostFacts{Hostname: "pod-host", GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: "NVIDIA A40"}, {Name: "NVIDIA A40"}}},
			Instance: &wire.InstanceFacts{Platform: "runpod", ID: "abc123", BootedAt: now.Add(-30 * time.Second)}}
		b, _ := json.Marshal(hb)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+m[1])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("announce: %d", res.StatusCode)
		}
		// The scheduler's Run handles the announcement: its card comes.
		wctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
		defer cancel()
		if err := c.fake.WaitFor(wctx, func() bool { return len(c.fake.Messages(alice)) > before }); err != nil {
			t.Fatalf("no card for the announced instance: %v", err)
		}
	}
	return c, announce
}

// buttonOf returns the data of the button labelled label on m, failing
// the test when there is none.
func buttonOf(t *testing.T, m tgfake.Message, label string) string {
	t.Helper()
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.Text == label {
				return b.Data
			}
		}
	}
	t.Fatalf("no button %q on %q (%+v)", label, m.Text, m.Buttons)
	return ""
}

// TestConversation_EnrolCardTelegram: an instance announced with the
// install line of /agent gets a card in Telegram, and its Log button,
// pressed through the real Telegram library, logs it and edits the card.
func TestConversation_EnrolCardTelegram(t *testing.T) {
	c, announce := enrolChat(t)
	c.advance(time.Minute)
	announce()
	msgs := c.fake.Messages(alice)
	card := msgs[len(msgs)-1]
	if !strings.Contains(card.Text, "New instance on RunPod (ID abc123): 2× A40, host <code>pod-host</code>, up since 10:00.") {
		t.Fatalf("card %q", card.Text)
	}
	var data string
	var labels []string
	for _, row := range card.Buttons {
		for _, b := range row {
			labels = append(labels, b.Text)
			if b.Text == "Log, price later" {
				data = b.Data
			}
		}
	}
	if data == "" || len(labels) != 3 {
		t.Fatalf("buttons %q", labels)
	}
	c.advance(time.Minute)
	c.settle(c.fake.PressButton(alice, alice, card.ID, data))
	after := c.fake.Messages(alice)
	edited := after[len(msgs)-1]
	if edited.ID != card.ID || !strings.Contains(edited.Text, "Logged as <b>runpod-abc123</b> from 10:00, without a price") || len(edited.Buttons) != 0 {
		t.Errorf("card after Log: %+v", edited)
	}
	if r := c.book(alice).Rental("runpod-abc123"); r == nil || r.GPUCount != 2 {
		t.Errorf("rental %+v", r)
	}
	var toast string
	for _, a := range c.fake.Answers() {
		toast = a.Text
	}
	if toast != "Logged as runpod-abc123" {
		t.Errorf("toast %q", toast)
	}
}

// TestConversation_UndoShowsInstance: /undo of a Log or a Not mine puts
// the instance back to waiting; the reply says so with the /adopt line
// carrying its number, and a fresh card with its buttons follows, whose
// Log logs it again.
func TestConversation_UndoShowsInstance(t *testing.T) {
	for _, press := range []string{"Log, price later", "Not mine"} {
		t.Run(press, func(t *testing.T) {
			c, announce := enrolChat(t)
			c.advance(time.Minute)
			announce()
			msgs := c.fake.Messages(alice)
			card := msgs[len(msgs)-1]
			c.advance(time.Minute)
			c.settle(c.fake.PressButton(alice, alice, card.ID, buttonOf(t, card, press)))
			c.advance(time.Minute)
			// The change was made with a button: /undo asks first.
			out := c.undoPress(alice, c.undoAsk(alice, "/undo"), 0)
			// The reply, then the card: the outbox may send them as one
			// message (the card's buttons under both).
			var all []string
			for _, m := range out {
				all = append(all, m.Text)
			}
			text := strings.Join(all, "\n\n")
			for _, want := range []string{"↩ undone: ", "runpod-abc123",
				"Instance 1 waits for an answer again: its card is below, or send <code>/adopt 1 PRICE</code>, e.g. <code>/adopt 1 0.85</code>.\n\n" + card.Text} {
				if !strings.Contains(text, want) {
					t.Errorf("after /undo %q lacks %q", text, want)
				}
			}
			if len(out) == 0 {
				t.Fatal("/undo: no reply")
			}
			again := out[len(out)-1]
			if again.ID == card.ID || !strings.HasSuffix(again.Text, card.Text) || len(again.Buttons) != len(card.Buttons) {
				t.Fatalf("after /undo: %+v, want a fresh card like %+v", again, card)
			}
			c.settle(c.fake.PressButton(alice, alice, again.ID, buttonOf(t, again, "Log, price later")))
			if r := c.book(alice).Rental("runpod-abc123"); r == nil || r.State() != ledger.Running {
				t.Errorf("after Log on the fresh card: rental %+v", r)
			}
		})
	}
}
