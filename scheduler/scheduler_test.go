package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/scheduler"
	"github.com/gpuledger/gpuledger/view"
)

// t0 is 10:00 in Shanghai.
var t0 = time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC)

// testButtons returns buttons made as the server makes them: the tests'
// presses are signed, verified and routed, and a handler's error worded,
// as in production.
func testButtons() *chat.Buttons {
	return chat.NewButtons([]byte("scheduler-test-button-secret-32b"), view.ButtonErrors(slog.New(slog.DiscardHandler)))
}

// dispatch presses the button of p's action and payload as p's user
// does: signed for them and dispatched in their language and zone, as the
// core dispatches.
func dispatch(t testing.TB, db *sqlite.DB, btn *chat.Buttons, snd chat.Sender, p chat.ButtonPress) {
	t.Helper()
	data, err := btn.Sign(p.Update.UserID, p.Action, p.Payload)
	if err != nil {
		t.Fatal(err)
	}
	p.Update.CallbackData, p.Action, p.Payload = data, "", ""
	p.Lang, p.Loc = chat.LangEN, time.UTC
	if u, err := db.User(context.Background(), p.Update.UserID); err == nil {
		p.Lang, p.Loc = u.Lang, u.Location()
	}
	if err := btn.Dispatch(context.Background(), p, snd); err != nil {
		t.Fatalf("press %s: %v", data, err)
	}
}

type env struct {
	t     *testing.T
	db    *sqlite.DB
	clk   *testkit.Clock
	hub   *hub.Hub
	srv   *httptest.Server
	chat  *testkit.Sender
	s     *scheduler.Scheduler
	btn   *chat.Buttons
	rid   int64
	token string
	seq   uint64
	key   int
	// the last heartbeat posted by beat
	lastV  wire.Verdict
	people []wire.Session // reported connected by every heartbeat post sends
	lastAt time.Time
	// What post's heartbeats say of the host: the GPU model ("" the
	// default RTX 4090) and count (0: one), the instance (nil: none), no
	// release command (noCmd); xff is sent as X-Forwarded-For.
	gpu      string
	gpus     int
	instance *wire.InstanceFacts
	noCmd    bool
	xff      string
}

func newEnv(t *testing.T, settings func(*ledger.Settings)) *env {
	t.Helper()
	ctx := context.Background()
	db := testkit.DB(t)
	clk := testkit.NewClock(t0)
	db.Now = clk.Now
	st := ledger.DefaultSettings()
	st.IdleWarn = 30 * time.Minute
	if settings != nil {
		settings(&st)
	}
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 1, Lang: "en", TZ: "Asia/Shanghai", Settings: st, CreatedAt: t0.Add(-72 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	r, err := db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Rental{
		Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, clk: clk, chat: &testkit.Sender{}, btn: testButtons(), rid: r.ID}
	t.Cleanup(func() { checkDecisions(t, db, r.ID) })
	// The hub publishes what the agents report on the bus the scheduler
	// subscribes to: neither is handed the other after it is built.
	bus := events.New(events.Config{})
	e.hub, err = hub.New(hub.Config{Store: db, Now: clk.Now, Events: bus})
	if err != nil {
		t.Fatal(err)
	}
	e.s, err = scheduler.New(scheduler.Config{Events: bus, Store: db, Hub: e.hub, Enrolment: e.hub.Enrolment(), Sender: e.chat, Buttons: e.btn, Now: clk.Now, Tick: 30 * time.Second, NoChart: true})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.hub.Handler())
	t.Cleanup(e.srv.Close)
	e.token, err = e.hub.Tokens().Issue(ctx, 1, "box1")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// beat posts a heartbeat with the verdict; idle gives the idle streak.
// An idle heartbeat reports, as a real agent's heartbeats would have, the
// whole streak: the time since the previous idle heartbeat, or the idle
// time given, in windows of at most 10 minutes posted now (as an agent
// sends what it queued), each placed by its sent_at.
func (e *env) beat(v wire.Verdict, idle time.Duration, job *wire.JobState) wire.HeartbeatResponse {
	e.t.Helper()
	now := e.clk.Now()
	from := now.Add(-30 * time.Second)
	if v == wire.VerdictIdle {
		if e.lastV == wire.VerdictIdle && !e.lastAt.IsZero() {
			from = e.lastAt
		}
		if idle > 0 && now.Add(-idle).Before(from) {
			from = now.Add(-idle)
		}
	}
	e.lastV, e.lastAt = v, now
	var resp wire.HeartbeatResponse
	for ws := from; ; {
		we := ws.Add(10 * time.Minute)
		if !we.Before(now) {
			we = now
		}
		resp = e.post(v, ws, we, we.Sub(from), job)
		if !we.Before(now) {
			break
		}
		ws = we
	}
	e.s.DrainEvents(context.Background())
	return resp
}

// post posts one heartbeat whose window is [ws, we], sent now.
func (e *env) post(v wire.Verdict, ws, we time.Time, idle time.Duration, job *wire.JobState) wire.HeartbeatResponse {
	e.t.Helper()
	e.seq++
	gpu := e.gpu
	if gpu == "" {
		gpu = "NVIDIA GeForce RTX 4090"
	}
	var gpus []wire.GPUFact
	for i := range max(e.gpus, 1) {
		gpus = append(gpus, wire.GPUFact{Index: i, Name: gpu})
	}
	h := wire.HeartbeatRequest{Version: wire.Version, Seq: e.seq, BootID: "b1", Verdict: v, Samples: 6,
		WindowStart: ws, WindowEnd: we, SentAt: e.clk.Now(), CanRelease: !e.noCmd, Job: job,
		Host: wire.HostFacts{GPUSource: "simulate", GPUs: gpus}, Sessions: e.people, Instance: e.instance}
	switch v {
	case wire.VerdictIdle:
		h.IdleSamples, h.IdleSeconds = 6, int64(idle/time.Second)
	case wire.VerdictBusy:
		h.BusySamples = 6
	}
	return e.send(h)
}

// send posts h as it is and fails the test unless it is accepted.
func (e *env) send(h wire.HeartbeatRequest) wire.HeartbeatResponse {
	e.t.Helper()
	b, _ := json.Marshal(h)
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+e.token)
	if e.xff != "" {
		req.Header.Set("X-Forwarded-For", e.xff)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var resp wire.HeartbeatResponse
	json.Unmarshal(body, &resp)
	if res.StatusCode != 200 {
		e.t.Fatalf("heartbeat: %d %s", res.StatusCode, body)
	}
	return resp
}

func (e *env) result(id, outcome string) {
	e.t.Helper()
	b, _ := json.Marshal(wire.OrderResult{OrderID: id, Outcome: outcome})
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+wire.PathOrderResult(id), bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	e.s.DrainEvents(context.Background())
}

func (e *env) tick() {
	e.t.Helper()
	if err := e.s.Checks(context.Background()); err != nil {
		e.t.Fatalf("Checks: %v", err)
	}
}

// press presses a button of the card (as the core would after verifying).
func (e *env) press(action string, msgID int) {
	e.t.Helper()
	e.key++
	p := chat.ButtonPress{Update: chat.Update{Key: "tg:update:" + strings.Repeat("x", e.key), Kind: chat.KindCallback, UserID: 1, ChatID: 1, MessageID: msgID, CallbackID: "cb"},
		Action: action, Payload: itoa(e.rid), Now: e.clk.Now()}
	dispatch(e.t, e.db, e.btn, e.chat, p)
}

func itoa(n int64) string { return strings.TrimSpace(strings.Replace(jsonNum(n), "\n", "", -1)) }
func jsonNum(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestIdleCard(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(2 * time.Hour)
	e.beat(wire.VerdictIdle, 20*time.Minute, nil)
	e.tick()
	if n := len(e.chat.Sent()); n != 0 {
		t.Fatalf("%d messages before idle_warn", n)
	}
	e.clk.Add(15 * time.Minute)
	e.beat(wire.VerdictIdle, 35*time.Minute, nil)
	e.tick()
	msgs := e.chat.NewMessages()
	if len(msgs) != 1 {
		t.Fatalf("messages = %d, want one card", len(msgs))
	}
	card := msgs[0]
	if !strings.Contains(card.Text, "box1</b> idle 35m · ¥1.10 spent idle") || len(card.Buttons) != 1 || len(card.Buttons[0]) != 3 {
		t.Fatalf("card = %q %v", card.Text, card.Buttons)
	}
	// Later ticks edit it in place.
	e.clk.Add(10 * time.Minute)
	e.beat(wire.VerdictIdle, 45*time.Minute, nil)
	e.tick()
	all := e.chat.Sent()
	if last := all[len(all)-1]; last.EditMessageID != 1 || !strings.Contains(last.Text, "idle 45m") {
		t.Fatalf("second tick sent %+v; want an edit of message 1", last)
	}
	if n := len(e.chat.NewMessages()); n != 1 {
		t.Fatalf("new messages = %d, want still 1", n)
	}
	// The reminder comes an hour after the card.
	for range 4 {
		e.clk.Add(15 * time.Minute)
		e.beat(wire.VerdictIdle, 0, nil)
		e.tick()
	}
	if n := len(e.chat.NewMessages()); n != 2 {
		t.Fatalf("new messages after 1h = %d, want the card and one reminder", n)
	}
	// Busy again: the card says so and loses its buttons.
	e.clk.Add(time.Minute)
	e.beat(wire.VerdictBusy, 0, nil)
	e.tick()
	all = e.chat.Sent()
	if last := all[len(all)-1]; !strings.Contains(last.Text, "busy again") || last.Buttons != nil {
		t.Fatalf("after busy: %+v", last)
	}
	ds, _ := e.db.Decisions(context.Background(), e.rid, 10)
	if len(ds) < 2 || ds[len(ds)-1].Kind != ledger.DecisionWarn {
		t.Fatalf("decisions = %+v", ds)
	}
}

func TestIdleCard_SnoozeAndKeep(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(time.Hour)
	e.beat(wire.VerdictIdle, 40*time.Minute, nil)
	e.tick()
	e.press(scheduler.ActSnooze, 1)
	// No reminder during the hour of snooze...
	for range 3 {
		e.clk.Add(18 * time.Minute)
		e.beat(wire.VerdictIdle, 0, nil)
		e.tick()
	}
	if n := len(e.chat.NewMessages()); n != 1 {
		t.Fatalf("new messages while snoozed = %d, want 1", n)
	}
	// ...one after it.
	e.clk.Add(6 * time.Minute)
	e.beat(wire.VerdictIdle, 0, nil)
	e.tick()
	if n := len(e.chat.NewMessages()); n != 2 {
		t.Fatalf("new messages after the snooze = %d, want 2", n)
	}
	e.press(scheduler.ActKeep, 2)
	for range 10 {
		e.clk.Add(time.Hour)
		e.beat(wire.VerdictIdle, 0, nil)
		e.tick()
	}
	if n := len(e.chat.NewMessages()); n != 2 {
		t.Fatalf("new messages after Keep = %d, want 2", n)
	}
}

func TestAutoRelease(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoRelease, After: 20 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Hour)
	e.beat(wire.VerdictIdle, 31*time.Minute, nil)
	e.tick() // the warning
	if len(e.chat.NewMessages()) != 1 || !strings.Contains(e.chat.NewMessages()[0].Text, "Auto-release at") {
		t.Fatalf("warning = %+v", e.chat.NewMessages())
	}
	// Within the grace period: nothing.
	for range 3 {
		e.clk.Add(5 * time.Minute)
		if resp := e.beat(wire.VerdictIdle, 0, nil); len(resp.Orders) != 0 {
			t.Fatal("order within the grace period")
		}
		e.tick()
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatal("order issued within the grace period")
	}
	// The GPU gets busy just as the grace ends: never an order.
	e.clk.Add(6 * time.Minute)
	e.beat(wire.VerdictBusy, 0, nil)
	e.tick()
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatal("order issued while busy")
	}
	// Idle again: a new warning, a new grace period, then the order.
	for range 31 {
		e.clk.Add(time.Minute)
		e.beat(wire.VerdictIdle, 0, nil)
		e.tick()
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatal("order issued right at the new warning")
	}
	e.clk.Add(21 * time.Minute)
	e.beat(wire.VerdictIdle, 0, nil)
	e.tick()
	o, ok := e.hub.OpenOrder(e.rid)
	if !ok || o.Action != "release" || o.Origin != ledger.OriginAuto {
		t.Fatalf("no automatic order after the grace period: %+v %v", o, ok)
	}
	resp := e.beat(wire.VerdictIdle, 0, nil)
	if len(resp.Orders) != 1 {
		t.Fatalf("order not handed out: %+v", resp)
	}
	e.result(o.ID, wire.OutcomeReleaseStarted)
	e.clk.Add(5 * time.Second)
	e.result(o.ID, wire.OutcomeDone)
	r, _ := e.db.RentalByID(ctx, e.rid)
	if at, ok := r.ReleasedAt(); !ok || !at.Equal(e.clk.Now().Truncate(time.Second)) {
		t.Fatalf("released %v %v", at, ok)
	}
	all := e.chat.Sent()
	if last := all[len(all)-1]; !strings.Contains(last.Text, "released at") || !strings.Contains(last.Text, "confirmed by its agent") {
		t.Fatalf("last message %q", last.Text)
	}
	ds, _ := e.db.Decisions(ctx, e.rid, 50)
	var kinds []string
	for _, d := range ds {
		kinds = append(kinds, string(d.Kind))
	}
	got := strings.Join(kinds, ",")
	for _, want := range []string{"outcome", "order", "hold", "warn"} {
		if !strings.Contains(got, want) {
			t.Errorf("decisions %s lack %s", got, want)
		}
	}
}

func TestReleaseButton_TwicePressed(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(time.Hour)
	e.beat(wire.VerdictIdle, 40*time.Minute, nil)
	e.tick()
	e.press(scheduler.ActRelease, 1)
	e.press(scheduler.ActRelease, 1)
	resp := e.beat(wire.VerdictIdle, 0, nil)
	if len(resp.Orders) != 1 {
		t.Fatalf("orders = %d, want exactly 1", len(resp.Orders))
	}
	if !strings.Contains(e.chat.Toasts()[1], "already being released") {
		t.Fatalf("second press toast %q", e.chat.Toasts()[1])
	}
	e.result(resp.Orders[0].ID, wire.OutcomeRefusedBusy)
	all := e.chat.Sent()
	if last := all[len(all)-1]; !strings.Contains(last.Text, "not released") || !strings.Contains(last.Text, "busy") {
		t.Fatalf("refusal message %q", last.Text)
	}
	r, _ := e.db.RentalByID(context.Background(), e.rid)
	if r.State() != ledger.Running {
		t.Fatal("refused release changed the ledger")
	}
}

func TestQuietHours(t *testing.T) {
	// Quiet 10:00-12:00 Shanghai; the test starts at 10:00.
	e := newEnv(t, func(s *ledger.Settings) { s.QuietFrom, s.QuietTo = 10*60, 12*60 })
	e.clk.Add(time.Hour)
	e.beat(wire.VerdictIdle, 40*time.Minute, nil)
	e.tick()
	if n := len(e.chat.Sent()); n != 0 {
		t.Fatalf("%d messages in quiet hours", n)
	}
	e.clk.Add(61 * time.Minute) // 12:01
	e.beat(wire.VerdictIdle, 0, nil)
	e.tick()
	if n := len(e.chat.NewMessages()); n != 1 {
		t.Fatalf("held card not sent after quiet hours: %d", n)
	}
}

func TestQuietHours_AutoActionNotHeld(t *testing.T) {
	e := newEnv(t, func(s *ledger.Settings) { s.QuietFrom, s.QuietTo = 10*60, 12*60 })
	e.db.SetAutoPolicy(context.Background(), 1, "box1", ledger.AutoPolicy{Action: ledger.AutoStop, After: 10 * time.Minute})
	e.clk.Add(30 * time.Minute)
	e.beat(wire.VerdictIdle, 40*time.Minute, nil)
	e.tick()
	if m := e.chat.NewMessages(); len(m) != 1 || !m[0].Silent {
		t.Fatalf("warning before an automatic stop held or loud in quiet hours: %+v", m)
	}
	e.clk.Add(11 * time.Minute)
	e.beat(wire.VerdictIdle, 0, nil)
	e.tick()
	if o, ok := e.hub.OpenOrder(e.rid); !ok || o.Action != "stop" {
		t.Fatalf("automatic stop held by quiet hours: %+v %v", o, ok)
	}
}

func TestSilentAgent(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(time.Hour)
	e.beat(wire.VerdictBusy, 0, nil)
	e.clk.Add(9 * time.Minute)
	e.tick()
	if n := len(e.chat.Sent()); n != 0 {
		t.Fatalf("alert before silent: %d", n)
	}
	e.clk.Add(2 * time.Minute)
	e.tick()
	e.clk.Add(time.Minute)
	e.tick()
	msgs := e.chat.NewMessages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "silent 11m") || !strings.Contains(msgs[0].Text, "may still be billing") {
		t.Fatalf("silent alert = %+v", msgs)
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatal("silence triggered an order")
	}
	e.beat(wire.VerdictBusy, 0, nil)
	e.tick()
	all := e.chat.Sent()
	if last := all[len(all)-1]; !strings.Contains(last.Text, "is back") {
		t.Fatalf("back message %q", last.Text)
	}
}

func TestJobFinished(t *testing.T) {
	e := newEnv(t, nil)
	e.clk.Add(4 * time.Hour)
	code := 0
	end := e.clk.Now()
	job := &wire.JobState{Command: "python train.py", Exited: true, ExitCode: &code, StartedAt: end.Add(-(3*time.Hour + 12*time.Minute)), EndedAt: &end, DurationSeconds: (3*time.Hour + 12*time.Minute).Seconds()}
	e.beat(wire.VerdictIdle, 10, job)
	e.clk.Add(30 * time.Second)
	e.beat(wire.VerdictIdle, 40, job)
	msgs := e.chat.NewMessages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "finished (exit 0, 3h12m, ¥6.02). Release?") {
		t.Fatalf("job messages = %+v", msgs)
	}
}

func TestLeaseReminder(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	// A lease of 4h: Extend moves it.
	if err := e.db.SetLeaseEnd(ctx, ledger.LeaseEnd{RentalID: e.rid, EndsAt: t0.Add(4 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	e.beat(wire.VerdictBusy, 0, nil)
	e.clk.Add(3*time.Hour + 29*time.Minute)
	e.beat(wire.VerdictBusy, 0, nil)
	e.tick()
	if n := len(e.chat.Sent()); n != 0 {
		t.Fatalf("lease reminder too early: %d", n)
	}
	e.clk.Add(2 * time.Minute)
	e.beat(wire.VerdictBusy, 0, nil)
	e.tick()
	m := e.chat.NewMessages()
	if len(m) != 1 || !strings.Contains(m[0].Text, "lease ends at 14:00") || m[0].Buttons[0][0].Text != "Extend 2h" {
		t.Fatalf("lease reminder = %+v", m)
	}
	e.press(scheduler.ActExtend, 1)
	le, _, _ := e.db.LeaseEnd(ctx, e.rid)
	if !le.EndsAt.Equal(t0.Add(6 * time.Hour)) {
		t.Fatalf("lease end after Extend = %s", le.EndsAt)
	}
	e.press(scheduler.ActReleaseAtEnd, 1)
	resp := e.beat(wire.VerdictBusy, 0, nil)
	if resp.Policy.LeaseUntil == nil || !resp.Policy.LeaseUntil.Equal(t0.Add(6*time.Hour)) {
		t.Fatalf("agent not told the deadline: %+v", resp.Policy)
	}
}

func TestLongRunWithoutAgent(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Rental{Name: "box2", Platform: "runpod", GPU: "H100", GPUCount: 1,
		Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("2.00"), Unit: ledger.UnitHour}, Currency: ledger.USD,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}}}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(12 * time.Hour)
	e.beat(wire.VerdictBusy, 0, nil) // box1 has an agent
	e.tick()
	e.tick()
	m := e.chat.NewMessages()
	if len(m) != 1 || !strings.Contains(m[0].Text, "box2</b> has been running 12h ($24.00 so far)") {
		t.Fatalf("long-run reminders = %+v", m)
	}
}

func TestSummaries_OncePerDayAndCatchUp(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	// The user joined yesterday at 10:00; the server was down from 21:00
	// to 10:00, so yesterday's 22:00 summary was missed.
	e.clk.Add(24 * time.Hour)
	if err := e.s.Summaries(ctx); err != nil {
		t.Fatal(err)
	}
	m := e.chat.NewMessages()
	if len(m) != 1 || !strings.Contains(m[0].Text, "late") {
		t.Fatalf("catch-up = %+v", m)
	}
	e.s.Summaries(ctx)
	if n := len(e.chat.NewMessages()); n != 1 {
		t.Fatalf("summary sent %d times", n)
	}
	// Today's at 22:00 Shanghai (14:00 UTC), on time; a failure is retried.
	e.clk.Add(12 * time.Hour)
	e.chat.FailWith(io.ErrUnexpectedEOF)
	if err := e.s.Summaries(ctx); err == nil {
		t.Fatal("a failed send reported no error")
	}
	e.chat.FailWith(nil)
	e.clk.Add(time.Minute)
	e.s.Summaries(ctx)
	e.s.Summaries(ctx)
	m = e.chat.NewMessages()
	if len(m) != 2 || strings.Contains(m[1].Text, "late") {
		t.Fatalf("today's summary = %+v", m)
	}
}

func TestBudgetAlerts(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	u, _ := e.db.User(ctx, 1)
	u.Budgets = []ledger.MonthlyBudget{{Currency: ledger.CNY, Amount: ledger.MustDecimal("100")}}
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: t0}, u); err != nil {
		t.Fatal(err)
	}
	// ¥1.88/h: 50% after about 26.6 h, 80% after 42.6 h.
	for _, step := range []struct {
		at   time.Duration
		want int
	}{{20 * time.Hour, 0}, {27 * time.Hour, 1}, {28 * time.Hour, 1}, {43 * time.Hour, 2}} {
		e.clk.Set(t0.Add(step.at))
		if err := e.s.MoneyAlerts(ctx); err != nil {
			t.Fatal(err)
		}
		var n int
		for _, m := range e.chat.NewMessages() {
			if strings.Contains(m.Text, "Budget") {
				n++
			}
		}
		if n != step.want {
			t.Fatalf("at +%s: %d budget alerts, want %d", step.at, n, step.want)
		}
	}
}
