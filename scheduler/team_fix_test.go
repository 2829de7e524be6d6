package scheduler_test

import (
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// adoptedBy makes an instance announced to the team's ledger with an
// enrolment token of maker's, logged as a rental of maker's, and returns
// the instance's ID.
func (e *teamEnv) adoptedBy(maker int64, pod string) int64 {
	e.t.Helper()
	ctx := context.Background()
	tok, _, err := e.db.IssueEnrolTokenBy(ctx, e.lid, maker, sha256.Sum256([]byte("enrol-"+pod)), t0)
	if err != nil {
		e.t.Fatal(err)
	}
	in, _, err := e.db.Announce(ctx, ledger.Instance{UserID: e.lid, TokenID: tok.ID, Key: "runpod:" + pod, Platform: "runpod", PlatformID: pod,
		Hostname: "h-" + pod, GPUModel: "A40", GPUCount: 1, BootAt: t0, LastSeen: t0.Add(time.Minute)})
	if err != nil {
		e.t.Fatal(err)
	}
	r, _, err := e.db.AdoptInstance(ctx, ledger.Action{UserID: e.lid, By: maker, At: t0.Add(time.Minute)}, in.ID,
		ledger.RentalFromInstance(in, nil, t0), sha256.Sum256([]byte("agent-"+pod)))
	if err != nil {
		e.t.Fatal(err)
	}
	if r.Owner != maker {
		e.t.Fatalf("adopted rental's owner = %d, want %d", r.Owner, maker)
	}
	return in.ID
}

// TestTeam_ReconnectOwnerOrAdminOnly: [Reconnect] issues a new agent
// token for the rental and revokes its owner's: dave, a member who does
// not own it, is refused; carol, an admin, may.
func TestTeam_ReconnectOwnerOrAdminOnly(t *testing.T) {
	e := newTeamEnv(t, bob)
	id := e.adoptedBy(bob, "podB")
	data, err := e.btn2.Sign(e.lid, scheduler.ActReconnect, strconv.FormatInt(id, 10))
	if err != nil {
		t.Fatal(err)
	}
	if toast := e.pressData(dave, room, 0, data); !strings.Contains(toast, "Only @bob (its owner) or an admin") {
		t.Errorf("dave's Reconnect = %q, want refused", toast)
	}
	if toast := e.pressData(carol, room, 0, data); !strings.Contains(toast, "Reconnected to") {
		t.Errorf("carol's Reconnect = %q", toast)
	}
}

// lastEdit is the last edit of message msgID in chatID.
func (e *teamEnv) lastEdit(chatID int64, msgID int) (chat.Outgoing, bool) {
	var out chat.Outgoing
	ok := false
	for _, m := range e.snd.Sent() {
		if m.ChatID == chatID && m.EditMessageID == msgID {
			out, ok = m, true
		}
	}
	return out, ok
}

// TestTeam_StopItWithoutAgent: [Stop it] records the decision first, but
// with no agent and no platform nothing is released: the card and the
// toast say so instead of "Stopped by", and a later press, once the
// agent reports, runs the release (an order) instead of "Already
// stopped".
func TestTeam_StopItWithoutAgent(t *testing.T) {
	e := newTeamEnv(t, bob)
	e.setBobRate()
	e.clk.Add(time.Minute)
	e.tick2() // box3 has never reported: no agent
	cards := e.snd.to(carol)
	if len(cards) != 1 {
		t.Fatalf("carol's cards = %+v", cards)
	}
	toast := e.pressAs(carol, cards[0], 5, "Stop it")
	if !strings.Contains(toast, "could not be released") || !strings.Contains(toast, "has no agent") {
		t.Errorf("toast = %q, want it to say box3 was not released", toast)
	}
	edit, ok := e.lastEdit(carol, 5)
	if !ok || strings.Contains(edit.Text, "Stopped by") || !strings.Contains(edit.Text, "Recorded as stopped by @carol, but <b>box3</b> could not be released") {
		t.Errorf("card after Stop it = %q (edited %v)", edit.Text, ok)
	}
	aps, err := e.ts.Approvals(context.Background(), e.team.ID, ledger.ApprovalStopped)
	if err != nil || len(aps) != 1 {
		t.Fatalf("stopped approvals = %+v, %v; want the decision recorded", aps, err)
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatal("an order with no agent")
	}
	// The agent reports; a second press releases instead of "Already stopped".
	e.beat(wire.VerdictIdle, 35*time.Minute, nil)
	toast = e.pressAs(alice, e.snd.to(alice)[0], 6, "Stop it")
	if strings.HasPrefix(toast, "Already") {
		t.Errorf("the second Stop it = %q, want the release run again", toast)
	}
	if _, ok := e.hub.OpenOrder(e.rid); !ok {
		t.Fatalf("the second Stop it issued no order (toast %q)", toast)
	}
	if edit, ok := e.lastEdit(alice, 6); !ok || !strings.Contains(edit.Text, "Stopped by @carol") {
		t.Errorf("alice's card after the second press = %q", edit.Text)
	}
}

// countingTeams counts the team store's OpenApproval calls (each a write).
type countingTeams struct {
	ledger.TeamStore
	mu   sync.Mutex
	open int
}

func (c *countingTeams) OpenApproval(ctx context.Context, ap ledger.Approval) (ledger.Approval, bool, error) {
	c.mu.Lock()
	c.open++
	c.mu.Unlock()
	return c.TeamStore.OpenApproval(ctx, ap)
}

// TestTeam_ApprovalStoredNoWrite: once a rental's approval is stored, a
// later tick reads it and does not call OpenApproval (a write) again.
func TestTeam_ApprovalStoredNoWrite(t *testing.T) {
	e := newTeamEnv(t, bob)
	e.setBobRate()
	ct := &countingTeams{TeamStore: e.db}
	s, err := scheduler.New(scheduler.Config{Store: e.db, Teams: ct, Hub: e.hub, Enrolment: e.hub.Enrolment(), Sender: e.snd, Buttons: testButtons(),
		Now: e.clk.Now, Tick: 30 * time.Second, NoChart: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.Checks(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.clk.Add(time.Minute)
	}
	if ct.open != 1 {
		t.Errorf("OpenApproval called %d times over three ticks, want once", ct.open)
	}
	if aps, err := e.ts.Approvals(context.Background(), e.team.ID, ""); err != nil || len(aps) != 1 {
		t.Errorf("approvals = %+v, %v; want one", aps, err)
	}
}

// TestTeam_NoReminderOnceUnderLimit: an approval whose limit was raised
// above the rental's rate is not reminded an hour on (it lapses).
func TestTeam_NoReminderOnceUnderLimit(t *testing.T) {
	e := newTeamEnv(t, bob)
	e.setBobRate()
	e.tick2()
	if got := e.snd.to(carol); len(got) != 1 {
		t.Fatalf("carol got %d cards, want one", len(got))
	}
	if err := e.ts.SetLimit(context.Background(), ledger.Action{UserID: e.lid, By: carol, At: e.clk.Now()}, ledger.Limit{
		TeamID: e.team.ID, Scope: ledger.ScopeMember, Subject: "2", Currency: ledger.CNY, RatePerHour: ledger.MustDecimal("20")}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Hour + time.Minute)
	e.tick2()
	if got := e.snd.to(carol); len(got) != 1 {
		t.Errorf("carol's messages = %d (%+v), want no reminder once box3 is under the raised limit", len(got), got)
	}
	if aps, err := e.ts.Approvals(context.Background(), e.team.ID, ledger.ApprovalLapsed); err != nil || len(aps) != 1 {
		t.Errorf("lapsed approvals = %+v, %v; want it closed as no longer needed", aps, err)
	}
}

// TestTeam_PackageCountsForRate: a package (¥60,000 a month) burns
// nothing per hour in the engine, but counts its price over the month's
// hours (¥83.33/h) against a rate bound: with box3 (¥14/h) bob's ¥20/h
// is exceeded.
func TestTeam_PackageCountsForRate(t *testing.T) {
	e := newTeamEnv(t, bob)
	ctx := context.Background()
	if _, err := e.db.CreateRental(ctx, ledger.Action{UserID: e.lid, By: bob, At: t0}, ledger.Rental{
		Name: "pkg8", Platform: "autodl", GPU: "H100", GPUCount: 8, Mode: ledger.AlwaysOn, Owner: bob,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("60000"), Unit: ledger.UnitMonth}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.ts.SetLimit(ctx, ledger.Action{UserID: e.lid, By: carol, At: e.clk.Now()}, ledger.Limit{
		TeamID: e.team.ID, Scope: ledger.ScopeMember, Subject: "2", Currency: ledger.CNY, RatePerHour: ledger.MustDecimal("20")}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Minute)
	e.tick2()
	aps, err := e.ts.Approvals(ctx, e.team.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(aps) != 2 || aps[0].Kind != ledger.LimitRate || aps[0].Value.String() != "97.33" {
		t.Fatalf("approvals = %+v, want two for bob's rate at 97.33 (14 + 60000/720)", aps)
	}
}

// TestTeam_MonthApprovalEachMonth: a month bound's approval is about its
// calendar month (the team's zone): November's does not silence
// December, which is asked anew; the rate and GPU bounds keep no period.
func TestTeam_MonthApprovalEachMonth(t *testing.T) {
	e := newTeamEnv(t, bob)
	ctx := context.Background()
	if err := e.ts.SetLimit(ctx, ledger.Action{UserID: e.lid, By: carol, At: e.clk.Now()}, ledger.Limit{
		TeamID: e.team.ID, Scope: ledger.ScopeMember, Subject: "2", Currency: ledger.CNY, Month: ledger.MustDecimal("10")}); err != nil {
		t.Fatal(err)
	}
	u, err := e.db.User(ctx, e.lid)
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Add(2 * time.Hour)
	e.tick2()
	nov := e.clk.Now().In(u.Location()).Format("2006-01")
	e.clk.Set(time.Date(2026, 12, 1, 2, 0, 0, 0, u.Location()))
	e.tick2()
	e.tick2()
	aps, err := e.ts.Approvals(ctx, e.team.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	periods := map[string]int{}
	for _, ap := range aps {
		if ap.Kind == ledger.LimitMonth {
			periods[ap.Period]++
		}
	}
	if len(aps) != 2 || periods[nov] != 1 || periods["2026-12"] != 1 {
		t.Fatalf("approvals = %+v, want one for %s and one for 2026-12", aps, nov)
	}
	if got := e.snd.to(carol); len(got) != 2 {
		t.Errorf("carol got %d cards, want one per month", len(got))
	}
}

// TestTeam_SummarySplitToday: the nightly room summary's split by person
// and project is headed with its period ("Today:", "今天："), so it is
// not taken for the month's that /summary shows.
func TestTeam_SummarySplitToday(t *testing.T) {
	for _, c := range []struct{ lang, want string }{{"en", "<b>Today:</b>\n<b>By person</b>\n@bob ¥"}, {"zh", "<b>今天：</b>\n"}} {
		t.Run(c.lang, func(t *testing.T) {
			e := newTeamEnv(t, bob)
			ctx := context.Background()
			u, err := e.db.User(ctx, e.lid)
			if err != nil {
				t.Fatal(err)
			}
			u.Lang = c.lang
			if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: e.lid, At: t0}, u); err != nil {
				t.Fatal(err)
			}
			s, err := scheduler.New(scheduler.Config{Store: e.db, Sender: e.snd, Buttons: testButtons(), Now: e.clk.Now, NoChart: true})
			if err != nil {
				t.Fatal(err)
			}
			e.clk.Set(t0.Add(12*time.Hour + time.Minute)) // 22:01 in Shanghai
			if err := s.Summaries(ctx); err != nil {
				t.Fatal(err)
			}
			got := e.snd.to(room)
			if len(got) != 1 || !strings.Contains(got[0].Text, c.want) {
				t.Fatalf("room = %+v, want the summary with %q", got, c.want)
			}
		})
	}
}

// TestTeam_RoomCardsHideAgentDetails: a team's room sees how many are
// connected and that a job finished, never the logins, client addresses
// or the command line (which may hold a token); the owner's private copy
// (DM on) has them.
func TestTeam_RoomCardsHideAgentDetails(t *testing.T) {
	e := newTeamEnv(t, bob)
	ctx := context.Background()
	if _, err := e.ts.SetDM(ctx, ledger.Action{UserID: e.lid, By: bob, At: t0}, e.team.ID, true); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(2 * time.Hour)
	e.people = []wire.Session{{Kind: wire.SessionSSH, Client: "203.0.113.9", User: "root"}}
	e.beat(wire.VerdictIdle, 35*time.Minute, nil)
	e.people = nil
	e.tick2()
	cards := e.snd.to(room)
	if len(cards) != 1 || !strings.Contains(cards[0].Text, "1 SSH session") || strings.Contains(cards[0].Text, "203.0.113.9") || strings.Contains(cards[0].Text, "root") {
		t.Fatalf("room's idle card = %+v, want the session counted without its login and address", cards)
	}
	if dm := e.snd.to(bob); len(dm) != 1 || !strings.Contains(dm[0].Text, "root from 203.0.113.9") {
		t.Fatalf("bob's copy = %+v, want the session's login and address", dm)
	}
	code := 0
	e.clk.Add(time.Hour)
	end := e.clk.Now()
	job := &wire.JobState{Command: "HF_TOKEN=hf_secret python train.py", Exited: true, ExitCode: &code, StartedAt: end.Add(-time.Hour), EndedAt: &end, DurationSeconds: time.Hour.Seconds()}
	e.beat(wire.VerdictIdle, 10, job)
	e.clk.Add(30 * time.Second)
	e.beat(wire.VerdictIdle, 40, job)
	// The env's first scheduler hears the hub's events (it sends
	// through e.chat).
	e.s.DrainEvents(ctx)
	var roomJob, dmJob string
	for _, m := range e.chat.NewMessages() {
		if !strings.Contains(m.Text, "finished") {
			continue
		}
		switch m.ChatID {
		case room:
			roomJob = m.Text
		case bob:
			dmJob = m.Text
		}
	}
	if roomJob == "" || strings.Contains(roomJob, "hf_secret") || !strings.Contains(roomJob, "the job") {
		t.Errorf("room's job card = %q, want it without the command", roomJob)
	}
	if !strings.Contains(dmJob, "HF_TOKEN=hf_secret") {
		t.Errorf("bob's job copy = %q, want the command", dmJob)
	}
}
