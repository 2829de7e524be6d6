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
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestConversation_EnrolCardTelegram: an instance announced with the
// install line of /agent gets a card in Telegram, and its Log button,
// pressed through the real Telegram library, logs it and edits the card.
func TestConversation_EnrolCardTelegram(t *testing.T) {
	fwd := &struct{ *scheduler.Scheduler }{}
	var h *hub.Hub
	c := newChatWith(t, func(cfg *bot.Config, c *convo) {
		var err error
		h, err = hub.New(hub.Config{Store: c.db, Now: c.clock, Listener: fwd})
		if err != nil {
			t.Fatal(err)
		}
		cfg.AllowedUsers = []int64{alice}
		cfg.AgentTokens = h.Tokens()
		cfg.Enrolment = h.Enrolment()
		cfg.TZ = "Asia/Shanghai"
		cfg.PublicURL = "http://hub"
	})
	s, err := scheduler.New(scheduler.Config{Store: c.db, Hub: h, Enrolment: h.Enrolment(), Sender: c.tr, Buttons: c.core, Now: c.clock, NoChart: true})
	if err != nil {
		t.Fatal(err)
	}
	fwd.Scheduler = s
	s.RegisterButtons(c.core)
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)

	m := enrolRE.FindStringSubmatch(c.say(alice, "/agent").Text)
	if m == nil {
		t.Fatal("/agent: no enrolment token")
	}
	c.advance(time.Minute)
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
	h.DrainEvents(context.Background())
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
