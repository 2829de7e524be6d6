package scheduler_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// newZH is newEnv for a user whose language is Chinese.
func newZH(t *testing.T, settings func(*ledger.Settings)) *env {
	t.Helper()
	e := newEnv(t, settings)
	ctx := context.Background()
	u, err := e.db.User(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	u.Lang = "zh"
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: t0}, u); err != nil {
		t.Fatal(err)
	}
	return e
}

// last returns the last message sent (new or edit).
func (e *env) last() chat.Outgoing {
	e.t.Helper()
	all := e.chat.Sent()
	if len(all) == 0 {
		e.t.Fatal("nothing sent")
	}
	return all[len(all)-1]
}

func labels(m chat.Outgoing) string {
	var out []string
	for _, row := range m.Buttons {
		for _, b := range row {
			out = append(out, "["+b.Text+"]")
		}
	}
	return strings.Join(out, " ")
}

// hasLatin reports whether s has an English word of three letters or more
// outside HTML tags, commands, names and money (a text left untranslated).
var english = regexp.MustCompile(`\b(idle|spent|the|agent|release|released|stopped|lease|budget|balance|runs|since|until|Keep|Snooze|Extend|now|confirmed|billing|running|finished)\b`)

func wantZH(t *testing.T, what, got string, want ...string) {
	t.Helper()
	plain := regexp.MustCompile(`<[^>]*>|/\w+|box\d|autodl`).ReplaceAllString(got, "")
	if w := english.FindString(plain); w != "" {
		t.Errorf("%s: English %q left in %q", what, w, got)
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s: %q lacks %q", what, got, w)
		}
	}
}

func TestChinese_IdleCardAndButtons(t *testing.T) {
	e := newZH(t, nil)
	e.clk.Add(2 * time.Hour)
	e.beat(wire.VerdictIdle, 35*time.Minute, nil)
	e.tick()
	m := e.chat.NewMessages()
	if len(m) != 1 {
		t.Fatalf("messages = %+v", m)
	}
	wantZH(t, "idle card", m[0].Text, "<b>box1</b> 空闲 35分钟 · 空闲花费 ¥1.10")
	if got := labels(m[0]); got != "[立即释放] [推迟 1 小时] [保留]" {
		t.Errorf("buttons = %s", got)
	}
	e.press(scheduler.ActSnooze, 1)
	wantZH(t, "snoozed card", e.last().Text, "已推迟到 13:00。")
	wantZH(t, "snooze toast", e.chat.Toasts()[0], "已推迟到 13:00")
	e.press(scheduler.ActKeep, 1)
	wantZH(t, "kept card", e.last().Text, "已保留")
	// Busy again.
	e.clk.Add(time.Minute)
	e.beat(wire.VerdictBusy, 0, nil)
	e.tick()
	wantZH(t, "busy again", e.last().Text, "又忙起来了")
}

func TestChinese_AutoReleaseAndOutcomes(t *testing.T) {
	e := newZH(t, nil)
	ctx := context.Background()
	if _, err := e.db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoRelease, After: 20 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Hour)
	e.beat(wire.VerdictIdle, 31*time.Minute, nil)
	e.tick()
	wantZH(t, "warning", e.chat.NewMessages()[0].Text, "将在 11:20 自动释放", "/autorelease box1 off")
	e.clk.Add(21 * time.Minute)
	e.beat(wire.VerdictIdle, 0, nil)
	e.tick()
	o, ok := e.hub.OpenOrder(e.rid)
	if !ok {
		t.Fatal("no automatic order")
	}
	wantZH(t, "ordered", e.last().Text, "已下令自动释放")
	e.beat(wire.VerdictIdle, 0, nil)
	e.result(o.ID, wire.OutcomeRefusedBusy)
	wantZH(t, "refused", e.last().Text, "未能释放", "代理发现 GPU 正忙", "账本中没有记录")
	// Release now, confirmed.
	e.clk.Add(time.Minute)
	e.press(scheduler.ActRelease, 0)
	wantZH(t, "release toast", e.chat.Toasts()[len(e.chat.Toasts())-1], "已下令释放：box1")
	o, _ = e.hub.OpenOrder(e.rid)
	e.beat(wire.VerdictIdle, 0, nil)
	e.result(o.ID, wire.OutcomeReleaseStarted)
	wantZH(t, "started", e.last().Text, "代理正在执行释放命令")
	e.result(o.ID, wire.OutcomeDone)
	wantZH(t, "done", e.last().Text, "<b>box1</b> 于 11:22 已释放", "代理已确认")
}

func TestChinese_SilentJobLeaseLongRun(t *testing.T) {
	e := newZH(t, nil)
	ctx := context.Background()
	if err := e.db.SetLeaseEnd(ctx, ledger.LeaseEnd{RentalID: e.rid, EndsAt: t0.Add(4 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(3*time.Hour + 31*time.Minute)
	code := 0
	end := e.clk.Now()
	job := &wire.JobState{Command: "python train.py", Exited: true, ExitCode: &code, StartedAt: end.Add(-3 * time.Hour), EndedAt: &end, DurationSeconds: (3 * time.Hour).Seconds()}
	e.beat(wire.VerdictBusy, 0, job)
	wantZH(t, "job finished", e.last().Text, "<code>python train.py</code> 已结束（退出码 0，用时 3小时，花费 ¥5.64）。要释放吗？")
	if got := labels(e.last()); got != "[立即释放] [保留]" {
		t.Errorf("job buttons = %s", got)
	}
	e.tick()
	wantZH(t, "lease", e.last().Text, "租期将于 14:00 结束（还有 29分钟）")
	if got := labels(e.last()); got != "[延长 2 小时] [到期释放]" {
		t.Errorf("lease buttons = %s", got)
	}
	e.press(scheduler.ActExtend, 0)
	wantZH(t, "extend toast", e.chat.Toasts()[len(e.chat.Toasts())-1], "租期已延长到 16:00")
	e.clk.Add(11 * time.Minute)
	e.tick()
	wantZH(t, "silent", e.last().Text, "代理已失联 11分钟", "可能仍在计费")
	if got := labels(e.last()); got != "[我已释放]" {
		t.Errorf("silent buttons = %s", got)
	}
	e.press(scheduler.ActReleased, 0)
	wantZH(t, "released by hand", e.chat.Toasts()[len(e.chat.Toasts())-1], "✓ box1 已于 13:42 释放")

	// A rental without an agent that runs long.
	if _, err := e.db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Rental{Name: "box2", Platform: "autodl", GPU: "4090", GPUCount: 1,
		Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("2.00"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}}}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(9 * time.Hour)
	e.tick()
	wantZH(t, "long run", e.last().Text, "<b>box2</b> 已运行 12小时42分（已花 ¥25.40），没有代理在监控它。还在用吗？")
}

func TestChinese_ReleaseNotConfirmed(t *testing.T) {
	e := newZH(t, nil)
	e.clk.Add(time.Hour)
	if _, err := e.db.AppendEvent(context.Background(), ledger.Action{UserID: 1, At: e.clk.Now()}, "box1", ledger.Event{Kind: ledger.EventRelease, At: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	// The token is revoked with the release: heartbeats are refused, and
	// the hub tells the scheduler once the grace for heartbeats in flight is over.
	e.clk.Add(5 * time.Minute)
	if code := e.beatStatus(); code != 401 {
		t.Fatalf("heartbeat of a released rental: %d", code)
	}
	e.s.DrainEvents(context.Background())
	wantZH(t, "unconfirmed", e.last().Text, "释放未确认", "账本记录它已于 11:00 释放", "实例仍在运行", "除非你在平台上也释放了它")
}

func TestChinese_SummaryAndMoneyAlerts(t *testing.T) {
	e := newZH(t, nil)
	ctx := context.Background()
	u, _ := e.db.User(ctx, 1)
	u.Budgets = []ledger.MonthlyBudget{{Currency: ledger.CNY, Amount: ledger.MustDecimal("100")}}
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: t0}, u); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.RecordBalance(ctx, ledger.Action{UserID: 1, At: t0}, ledger.BalanceRecord{UserID: 1, Platform: "autodl", Amount: ledger.MustDecimal("60"), Currency: ledger.CNY, At: t0}); err != nil {
		t.Fatal(err)
	}
	e.clk.Set(t0.Add(27 * time.Hour))
	if err := e.s.MoneyAlerts(ctx); err != nil {
		t.Fatal(err)
	}
	var budget, runway string
	for _, m := range e.chat.NewMessages() {
		switch {
		case strings.Contains(m.Text, "预算"):
			budget = m.Text
		case strings.Contains(m.Text, "余额"):
			runway = m.Text
		}
	}
	wantZH(t, "budget", budget, "预算：本月已花 ¥50.76 / ¥100.00（50%）。")
	wantZH(t, "runway", runway, "⚠ 你的 autodl 余额（¥9.24）按每小时 ¥1.88 的消耗，将在 4小时54分 后")

	// Stopped on AutoDL: the data goes after 15 days.
	if _, err := e.db.AppendEvent(ctx, ledger.Action{UserID: 1, At: e.clk.Now()}, "box1", ledger.Event{Kind: ledger.EventStop, At: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(14*24*time.Hour + time.Hour)
	if err := e.s.MoneyAlerts(ctx); err != nil {
		t.Fatal(err)
	}
	m := e.chat.NewMessages()
	// Its times as the chat writes them, in the user's zone: stopped at
	// 13:00 on Nov 3 in Shanghai, deleted 15 days on, tomorrow here.
	wantZH(t, "deadline", m[len(m)-1].Text, "自", "起关机", "释放它并删除数据", "11月3日 13:00", "明天 13:00")

	// The nightly summary, late, with its chart caption.
	if err := e.s.Summaries(ctx); err != nil {
		t.Fatal(err)
	}
	m = e.chat.NewMessages()
	wantZH(t, "summary", m[len(m)-1].Text, "每日总结", "迟到")
	if strings.Contains(m[len(m)-1].Text, "2026-") {
		t.Errorf("the late summary writes its date as an ISO stamp, not as the chat does: %s", m[len(m)-1].Text)
	}
}

// TestCatalog: every message has both languages and the same arguments
// in each.
func TestCatalog(t *testing.T) {
	for _, err := range scheduler.Messages().Check() {
		t.Error(err)
	}
}

// The agent's view of the GPUs is told in the user's language, all of it:
// the models and counts it names are facts, the words around them are not.
func TestChinese_GPUMismatch(t *testing.T) {
	e := newZH(t, nil)
	e.clk.Add(time.Minute)
	h := wire.HeartbeatRequest{Version: wire.Version, Seq: 1, BootID: "b1", Verdict: wire.VerdictBusy, Samples: 6, BusySamples: 6,
		WindowStart: e.clk.Now().Add(-30 * time.Second), WindowEnd: e.clk.Now(), SentAt: e.clk.Now(), CanRelease: true,
		Host: wire.HostFacts{GPUSource: "nvml", GPUs: []wire.GPUFact{{Name: "NVIDIA GeForce RTX 3090"}}}}
	// Logged: one RTX 4090. The agent sees a 3090.
	e.send(h)
	e.s.DrainEvents(context.Background())
	got := e.last().Text
	wantZH(t, "gpu mismatch", got, "代理看到的是 NVIDIA GeForce RTX 3090", "你记录的是 RTX 4090")
	for _, w := range []string{"sees", "logged", "pay for"} {
		if strings.Contains(got, w) {
			t.Errorf("gpu mismatch: English %q left in %q", w, got)
		}
	}
}

// A count short of what is paid for is told too, in English for an English user.
func TestGPUMismatch_CountShort(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Rental{
		Name: "box2", Platform: "autodl", GPU: "RTX 4090", GPUCount: 2, Mode: ledger.PerSecond,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("3.76"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	}); err != nil {
		t.Fatal(err)
	}
	tok, err := e.hub.Tokens().Issue(ctx, 1, "box2")
	if err != nil {
		t.Fatal(err)
	}
	e.token = tok
	e.clk.Add(time.Minute)
	e.send(wire.HeartbeatRequest{Version: wire.Version, Seq: 1, BootID: "b2", Verdict: wire.VerdictBusy, Samples: 6, BusySamples: 6,
		WindowStart: e.clk.Now().Add(-30 * time.Second), WindowEnd: e.clk.Now(), SentAt: e.clk.Now(), CanRelease: true,
		Host: wire.HostFacts{GPUSource: "nvml", GPUs: []wire.GPUFact{{Name: "NVIDIA GeForce RTX 4090"}}}})
	e.s.DrainEvents(ctx)
	if got := e.last().Text; !strings.Contains(got, "the agent sees only 1 of the 2 GPUs you pay for") {
		t.Errorf("count mismatch: %q", got)
	}
}
