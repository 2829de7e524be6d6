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
	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestConversation_ReceiptTelegram: through the real Telegram library and
// the fake Bot API (which refuses HTML it cannot parse), with the hub and
// the scheduler wired as cmd/gpuledger wires them: an agent's bench of a
// card with a neighbour on it brings one receipt card, the warning
// first; its Keep edits it and drops the buttons; /receipt in Chinese
// shows the same bench.
func TestConversation_ReceiptTelegram(t *testing.T) {
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
		cfg.TZ = "Asia/Shanghai"
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

	c.say(alice, "/rent box1 autodl 4090 1.88/h")
	tok, err := h.Tokens().Issue(c.ctx, alice, "box1")
	if err != nil {
		t.Fatal(err)
	}
	c.advance(2 * time.Minute)
	b := receiptBench4090()
	b.GPUs[0].OtherProcs, b.GPUs[0].MemoryUsedMiB, b.GPUs[0].UtilPercent = 2, 9000, 35
	body, _ := json.Marshal(wire.BenchReport{Version: wire.Version, ID: "r1", AgentVersion: "test", BootID: "b1", SentAt: c.clock(), Bench: b})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+wire.PathBench, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	before := len(c.fake.Messages(alice))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("bench: %d", res.StatusCode)
	}
	wctx, wcancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer wcancel()
	if err := c.fake.WaitFor(wctx, func() bool { return len(c.fake.Messages(alice)) > before }); err != nil {
		t.Fatalf("no receipt card: %v", err)
	}
	msgs := c.fake.Messages(alice)
	card := msgs[len(msgs)-1]
	lines := strings.Split(card.Text, "\n")
	if !strings.HasPrefix(lines[0], "⚠ someone else is on the card: 2 other processes, 9000 MiB in use, 35 % busy before the bench") {
		t.Errorf("first line %q, want the neighbour with its evidence", lines[0])
	}
	contains(t, card.Text, "RTX 4090 on AutoDL (box1): tensor 152 TFLOPS", "¥0.0124 per tensor-TFLOP-hour")
	keep := buttonOf(t, card, "Keep")
	buttonOf(t, card, "Release now (¥0.06 so far)")

	c.settle(c.fake.PressButton(alice, alice, card.ID, keep))
	var kept = card
	for _, m := range c.fake.Messages(alice) {
		if m.ID == card.ID {
			kept = m
		}
	}
	if !strings.HasSuffix(kept.Text, "\nKept.") || len(kept.Buttons) != 0 {
		t.Fatalf("after Keep: %q %+v", kept.Text, kept.Buttons)
	}

	c.say(alice, "/settings lang=zh")
	got := c.say(alice, "/receipt box1").Text
	contains(t, got, "box1 的测速收据", "显卡上还有别人：2 个其他进程", "每张量 TFLOP·小时 ¥0.0124")
}
