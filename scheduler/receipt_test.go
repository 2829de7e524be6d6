package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
	"github.com/gpuledger/gpuledger/scheduler"
)

// bench4090 is an RTX 4090's bench as the agent sends it: 152 tensor
// TFLOPS, so ¥1.88/h is ¥0.0124 per tensor-TFLOP-hour (1.88 ÷ 152 =
// 0.012368…).
func bench4090() perf.Bench {
	return perf.Bench{StartedAt: t0, WallSeconds: 1.2, GPUSeconds: 0.8, Source: "simulate",
		GPUs: []perf.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", BF16TFLOPS: 152, FP16TFLOPS: 152,
			FP32TFLOPS: 80, MemGBps: 950, H2DGBps: 24, D2HGBps: 25, PCIeGen: 4, PCIeGenMax: 4, PCIeWidth: 16, PCIeWidthMax: 16,
			PowerLimitW: 450, PowerDefaultW: 450}},
		Host: perf.Host{CPUCores: 16, DiskWriteMBps: 1800, DiskReadMBps: 2100}}
}

// sendBench posts b with the rental's token as the agent does, and lets
// the scheduler handle what the hub published.
func (e *env) sendBench(id string, b perf.Bench) wire.BenchResponse {
	e.t.Helper()
	body, _ := json.Marshal(wire.BenchReport{Version: wire.Version, ID: id, AgentVersion: "test", BootID: "b1", SentAt: e.clk.Now(), Bench: b})
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+wire.PathBench, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		e.t.Fatalf("bench: %d %s", res.StatusCode, out)
	}
	var resp wire.BenchResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		e.t.Fatal(err)
	}
	e.s.DrainEvents(context.Background())
	return resp
}

// pressData presses a button by the data it carries, as Telegram sends
// it back: the card's own button, not an action the test names.
func (e *env) pressData(data string, msgID int) {
	e.t.Helper()
	e.key++
	p := chat.ButtonPress{Update: chat.Update{Key: "tg:update:r" + strconv.Itoa(e.key), Kind: chat.KindCallback, UserID: 1, ChatID: 1,
		MessageID: msgID, CallbackID: "cb", CallbackData: data}, Now: e.clk.Now(), Lang: chat.LangEN, Loc: time.UTC}
	if err := e.btn.Dispatch(context.Background(), p, e.chat); err != nil {
		e.t.Fatalf("press %s: %v", data, err)
	}
}

// receiptCard returns the one receipt card sent, and its message ID.
func receiptCard(t *testing.T, e *env) (chat.Outgoing, int) {
	t.Helper()
	var cards []chat.Outgoing
	var id int
	for i, m := range e.chat.Sent() {
		if m.EditMessageID == 0 && strings.Contains(m.Text, "TFLOPS") {
			cards = append(cards, m)
			id = i + 1 // the fake sender numbers new messages 1, 2, … and edits keep theirs
		}
	}
	if len(cards) != 1 {
		t.Fatalf("%d receipt cards, want 1: %+v", len(cards), e.chat.Sent())
	}
	// The fake numbers only new messages: count them up to the card.
	n := 0
	for _, m := range e.chat.Sent()[:id] {
		if m.EditMessageID == 0 {
			n++
		}
	}
	return cards[0], n
}

func TestReceiptCard(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(2 * time.Minute)
	e.sendBench("r1", bench4090())
	card, _ := receiptCard(t, e)
	for _, w := range []string{
		"RTX 4090 on AutoDL (box1): tensor 152 TFLOPS",
		"memory 0.95 TB/s", "PCIe 4.0 x16 24 GB/s", "power 450/450 W", "disk 1.8 GB/s", "16 cores",
		"¥1.88/h → ¥0.0124 per tensor-TFLOP-hour", "Measured by the agent",
	} {
		if !strings.Contains(card.Text, w) {
			t.Errorf("card lacks %q:\n%s", w, card.Text)
		}
	}
	// Two minutes at ¥1.88/h: ¥0.0627 → ¥0.06.
	if len(card.Buttons) != 1 || len(card.Buttons[0]) != 2 || card.Buttons[0][0].Text != "Keep" || card.Buttons[0][1].Text != "Release now (¥0.06 so far)" {
		t.Fatalf("buttons %+v, want [Keep] [Release now (¥0.06 so far)]", card.Buttons)
	}

	// Another bench of the rental, and the same event again: no second card.
	e.clk.Add(time.Minute)
	e.sendBench("r2", bench4090())
	r, _ := e.db.RentalByID(context.Background(), e.rid)
	e.s.Handle(context.Background(), ledger.BenchReported{Rental: r, Bench: ledger.BenchRecord{RentalID: r.ID, UserID: 1, ReportID: "r1", Bench: bench4090()}})
	receiptCard(t, e)
}

func TestReceiptCard_BenchOff(t *testing.T) {
	e := newEnv(t, func(s *ledger.Settings) { s.BenchOff = true })
	e.clk.Add(2 * time.Minute)
	e.sendBench("r1", bench4090())
	r, _ := e.db.RentalByID(context.Background(), e.rid)
	e.s.Handle(context.Background(), ledger.BenchReported{Rental: r, Bench: ledger.BenchRecord{RentalID: r.ID, UserID: 1, Bench: bench4090()}})
	if m := e.chat.Sent(); len(m) != 0 {
		t.Fatalf("benches off, yet sent %+v", m)
	}
}

// TestReceiptCard_Release: the card's Release now is the idle card's: an
// order to the rental's agent, the same one a second press does not
// repeat.
func TestReceiptCard_Release(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(time.Minute)
	e.beat(wire.VerdictBusy, 0, nil)
	e.clk.Add(time.Minute)
	e.sendBench("r1", bench4090())
	card, id := receiptCard(t, e)
	e.pressData(card.Buttons[0][1].Data, id)
	resp := e.beat(wire.VerdictBusy, 0, nil)
	if len(resp.Orders) != 1 || resp.Orders[0].Action != wire.ActionRelease {
		t.Fatalf("orders %+v, want one release", resp.Orders)
	}
	if toasts := e.chat.Toasts(); len(toasts) != 1 || !strings.Contains(toasts[0], "box1") {
		t.Fatalf("toasts %q", toasts)
	}
	e.pressData(card.Buttons[0][1].Data, id)
	if resp := e.beat(wire.VerdictBusy, 0, nil); len(resp.Orders) != 1 || resp.Orders[0].ID != e.mustOrder(resp) {
		t.Fatalf("orders after a second press %+v, want the one", resp.Orders)
	}
}

func (e *env) mustOrder(resp wire.HeartbeatResponse) string {
	if len(resp.Orders) == 0 {
		return ""
	}
	return resp.Orders[0].ID
}

// TestReceiptCard_Keep: Keep edits the card in place, says so, and drops
// the buttons; the rental runs on and nothing is ordered.
func TestReceiptCard_Keep(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(time.Minute)
	e.beat(wire.VerdictBusy, 0, nil)
	e.sendBench("r1", bench4090())
	card, id := receiptCard(t, e)
	e.pressData(card.Buttons[0][0].Data, id)
	all := e.chat.Sent()
	last := all[len(all)-1]
	if last.EditMessageID != id || !strings.HasPrefix(last.Text, card.Text) || !strings.HasSuffix(last.Text, "\nKept.") || last.Buttons != nil {
		t.Fatalf("after Keep: %+v, want the card edited with Kept. and no buttons", last)
	}
	if toasts := e.chat.Toasts(); len(toasts) != 1 || toasts[0] != "Kept box1" {
		t.Fatalf("toasts %q", toasts)
	}
	if resp := e.beat(wire.VerdictBusy, 0, nil); len(resp.Orders) != 0 {
		t.Fatalf("Keep ordered %+v", resp.Orders)
	}
	r, _ := e.db.RentalByID(context.Background(), e.rid)
	if r.State() != ledger.Running {
		t.Fatalf("Keep changed the rental: %s", r.State())
	}
}

// TestReceiptFollowUp: the rental's first work after a receipt card: one
// line with the setup tax (31 min at ¥1.88/h = ¥0.9713 → ¥0.97), at the
// user's clock (Shanghai: t0 is 10:00), once.
func TestReceiptFollowUp(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.clk.Add(2 * time.Minute)
	e.sendBench("r1", bench4090())
	receiptCard(t, e)
	r, _ := e.db.RentalByID(ctx, e.rid)
	e.clk.Add(30 * time.Minute)
	before := len(e.chat.NewMessages())
	for range 2 {
		e.s.Handle(ctx, ledger.WorkStarted{Rental: r, At: t0.Add(31 * time.Minute)})
	}
	msgs := e.chat.NewMessages()[before:]
	if len(msgs) != 1 || msgs[0].Text != "<b>box1</b> started working at 10:31: ¥0.97 before training started (31m)." {
		t.Fatalf("follow-up %+v", msgs)
	}

	t.Run("no card, no follow-up", func(t *testing.T) {
		e := newEnv(t, nil)
		r, _ := e.db.RentalByID(ctx, e.rid)
		e.clk.Add(time.Hour)
		e.s.Handle(ctx, ledger.WorkStarted{Rental: r, At: t0.Add(31 * time.Minute)})
		if m := e.chat.Sent(); len(m) != 0 {
			t.Fatalf("sent %+v without a receipt card", m)
		}
	})
}

// TestReceiptCard_Chinese: a Chinese user's card and buttons are in
// Chinese.
func TestReceiptCard_Chinese(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	u, _ := e.db.User(ctx, 1)
	u.Lang = chat.LangZH
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: e.clk.Now()}, u); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(2 * time.Minute)
	e.sendBench("r1", bench4090())
	card, _ := receiptCard(t, e)
	for _, w := range []string{"张量 152 TFLOPS", "每张量 TFLOP·小时 ¥0.0124", "由主机上的代理测得"} {
		if !strings.Contains(card.Text, w) {
			t.Errorf("card lacks %q:\n%s", w, card.Text)
		}
	}
	if b := card.Buttons[0]; b[0].Text != "保留" || b[1].Text != "立即释放（已花 ¥0.06）" {
		t.Errorf("buttons %q %q", b[0].Text, b[1].Text)
	}
}

// TestReceiptCard_QuietHours: a bench that comes in the user's quiet
// hours gives its card when they end, with its buttons.
func TestReceiptCard_QuietHours(t *testing.T) {
	e := newEnv(t, func(s *ledger.Settings) { s.QuietFrom, s.QuietTo = 10*60, 12*60 })
	e.clk.Add(2 * time.Minute)
	e.sendBench("r1", bench4090())
	if m := e.chat.Sent(); len(m) != 0 {
		t.Fatalf("sent in quiet hours: %+v", m)
	}
	e.clk.Set(t0.Add(2*time.Hour + time.Minute))
	e.tick()
	card, _ := receiptCard(t, e)
	if len(card.Buttons) != 1 || card.Buttons[0][0].Text != "Keep" || !strings.HasPrefix(card.Buttons[0][1].Text, "Release now (¥3.") {
		t.Fatalf("held card's buttons %+v", card.Buttons)
	}
}

// TestReceiptCard_NothingMeasured: a bench that could open no GPU still
// gives a card saying why.
func TestReceiptCard_NothingMeasured(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(2 * time.Minute)
	e.sendBench("r1", perf.Bench{Source: "none", Host: perf.Host{CPUCores: 8},
		Skipped: []perf.Skip{{What: "gpu", GPU: -1, Why: "no CUDA driver: libcuda.so.1 not found"}}})
	msgs := e.chat.NewMessages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "the bench could measure no GPU") || !strings.Contains(msgs[0].Text, "libcuda.so.1 not found") {
		t.Fatalf("card %+v", msgs)
	}
	_ = scheduler.ActReceiptKeep
}

// TestReceiptCard_WorkedFirst: a rental that worked before its bench came
// (the agent benches a free GPU only) gets the setup tax on the card
// itself, and no line after it.
func TestReceiptCard_WorkedFirst(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.db.SetFirstWork(ctx, e.rid, t0.Add(31*time.Minute)); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(3 * time.Hour)
	e.sendBench("r1", bench4090())
	card, _ := receiptCard(t, e)
	if !strings.HasSuffix(card.Text, "\n<b>box1</b> started working at 10:31: ¥0.97 before training started (31m).") {
		t.Fatalf("card %q, want the setup tax's line at its end", card.Text)
	}
	r, _ := e.db.RentalByID(ctx, e.rid)
	n := len(e.chat.NewMessages())
	e.s.Handle(ctx, ledger.WorkStarted{Rental: r, At: t0.Add(31 * time.Minute)})
	if m := e.chat.NewMessages(); len(m) != n {
		t.Fatalf("a second setup-tax line: %+v", m[n:])
	}
}
