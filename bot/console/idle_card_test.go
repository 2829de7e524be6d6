package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/bot/console"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestConsole_IdleCardNotReprinted: the real scheduler edits an idle
// card at every check to bring its minutes and money up to date. Telegram
// edits it in place; the terminal cannot, so it printed the whole card
// again at every check. Now the card prints once, a check that changes
// only its figures prints nothing, and a change of what it says (busy
// again) prints once; its buttons keep their numbers.
func TestConsole_IdleCardNotReprinted(t *testing.T) {
	ctx := context.Background()
	clk := &stepClock{t: time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC)}
	db, core, btn := newCoreButtons(t, clk.Now)
	var out bytes.Buffer
	c, err := console.New(console.Config{In: strings.NewReader("/rent box1 autodl 4090 1.88/h\n"), Out: &out, Handler: core, Dir: t.TempDir(), Logger: discard(), FirstMessageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := hub.New(hub.Config{Store: db, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	sch, err := scheduler.New(scheduler.Config{Store: db, Hub: h, Sender: c, Buttons: btn, Now: clk.Now, Logger: discard(), NoChart: true})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := h.Tokens().Issue(ctx, 1, "box1")
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	beat := func(v wire.Verdict) {
		t.Helper()
		seq++
		now := clk.Now()
		hb := wire.HeartbeatRequest{Version: wire.Version, Seq: seq, BootID: "b1", Verdict: v, Samples: 6,
			WindowStart: now.Add(-time.Minute), WindowEnd: now, SentAt: now,
			Host: wire.HostFacts{GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: "NVIDIA GeForce RTX 4090"}}}}
		if v == wire.VerdictIdle {
			hb.IdleSamples, hb.IdleSeconds = 6, 60
		} else {
			hb.BusySamples = 6
		}
		b, _ := json.Marshal(hb)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("heartbeat: %d", res.StatusCode)
		}
	}
	check := func() {
		t.Helper()
		if err := sch.Checks(ctx); err != nil {
			t.Fatal(err)
		}
	}
	clk.Add(time.Hour)
	for range 34 { // idle 34 minutes: the card comes at 30m, then four checks
		clk.Add(time.Minute)
		beat(wire.VerdictIdle)
		check()
	}
	got := out.String()
	if n := strings.Count(got, "box1 idle "); n != 1 {
		t.Errorf("the idle card was printed %d times in five checks, want once:\n%s", n, got)
	}
	if strings.Contains(got, "(updated)") {
		t.Errorf("a check that changed only the card's figures printed it again:\n%s", got)
	}
	clk.Add(time.Minute)
	beat(wire.VerdictBusy)
	check()
	got = out.String()
	if n := strings.Count(got, "(updated)"); n != 1 || !strings.Contains(got, "busy again") {
		t.Errorf("busy again: want the change printed once:\n%s", got)
	}
}

// TestConsole_EditUnchanged: an edit that shows what its message showed
// prints nothing, and neither does a refresh of its figures; the buttons
// keep their numbers and take the edit's payloads. A change prints once.
func TestConsole_EditUnchanged(t *testing.T) {
	var presses []string
	card := func(text, data string, refresh bool) chat.Outgoing {
		return chat.Outgoing{ChatID: 1, EditMessageID: 1, Text: text, Refresh: refresh,
			Buttons: [][]chat.Button{{{Text: "Stop", Data: "stop" + data}, {Text: "Keep", Data: "keep" + data}}}}
	}
	h := handlerFunc(func(ctx context.Context, u chat.Update, s chat.Sender) error {
		var m chat.Outgoing
		switch {
		case u.Kind == chat.KindCallback:
			presses = append(presses, u.CallbackData)
			return nil
		case u.Text == "show":
			m = card("<b>box1</b> idle 31m · ¥0.97", "1", false)
			m.EditMessageID = 0
		case u.Text == "same":
			m = card("<b>box1</b> idle 31m · ¥0.97", "2", false)
		case u.Text == "refresh":
			m = card("<b>box1</b> idle 32m · ¥1.00", "3", true)
		case u.Text == "news":
			m = card("<b>box1</b> idle 33m · ¥1.03\nalice connected by SSH", "4", false)
		}
		_, err := s.Send(ctx, m)
		return err
	})
	var out bytes.Buffer
	c, err := console.New(console.Config{In: strings.NewReader("show\nsame\nrefresh\n2\nnews\n4\n"), Out: &out, Handler: h, Logger: discard(), FirstMessageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "box1 idle 31m · ¥0.97\n[1] Stop  [2] Keep\n(updated) box1 idle 33m · ¥1.03\nalice connected by SSH\n[3] Stop  [4] Keep\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if len(presses) != 2 || presses[0] != "keep3" || presses[1] != "keep4" {
		t.Errorf("presses = %q, want keep3 (the refresh's payload under the old number) and keep4", presses)
	}
}

// TestConsole_SavedFilesOwnerOnly: a document or photo the terminal
// writes (an export holds the whole ledger) is readable by its owner
// only, as every file the server writes.
func TestConsole_SavedFilesOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	h := handlerFunc(func(ctx context.Context, u chat.Update, s chat.Sender) error {
		_, err := s.Send(ctx, chat.Outgoing{ChatID: 1, Text: "ledger", Document: &chat.File{Name: "ledger.csv", Data: []byte("a,b\n")}})
		return err
	})
	var out bytes.Buffer
	c, err := console.New(console.Config{In: strings.NewReader("/export\n"), Out: &out, Handler: h, Dir: dir, Logger: discard(), FirstMessageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "ledger.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		t.Errorf("the saved export has mode %v, want owner-only (0600)", m)
	}
}
