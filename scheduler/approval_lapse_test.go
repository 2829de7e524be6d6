package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// overBobRate sets bob's ¥10/h limit, lets box3 (¥14/h, bob's) report
// busy (so Stop it could act) and ticks: one approval and its two cards,
// alice's and carol's. It returns the approval.
func (e *teamEnv) overBobRate() ledger.Approval {
	e.t.Helper()
	e.setBobRate()
	e.clk.Add(time.Minute)
	e.beat(wire.VerdictBusy, 0, nil)
	e.tick2()
	aps, err := e.ts.Approvals(context.Background(), e.team.ID, ledger.ApprovalPending)
	if err != nil || len(aps) != 1 {
		e.t.Fatalf("pending approvals = %+v, %v; want box3's", aps, err)
	}
	if cards := e.cardsOf(aps[0]); len(cards) != 2 {
		e.t.Fatalf("stored cards = %+v, want alice's and carol's", cards)
	}
	return aps[0]
}

// cardsOf is the stored cards of ap, by admin.
func (e *teamEnv) cardsOf(ap ledger.Approval) map[int64]ledger.ApprovalCard {
	e.t.Helper()
	cards, err := e.ts.ApprovalCards(context.Background(), ap.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[int64]ledger.ApprovalCard{}
	for _, c := range cards {
		out[c.UserID] = c
	}
	return out
}

// approval is ap as stored now.
func (e *teamEnv) approval(ap ledger.Approval) ledger.Approval {
	e.t.Helper()
	got, err := e.ts.Approval(context.Background(), ap.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// release releases box3 through the store, as /release would.
func (e *teamEnv) release() {
	e.t.Helper()
	if _, err := e.db.AppendEvent(context.Background(), ledger.Action{UserID: e.lid, By: bob, At: e.clk.Now()}, "box3",
		ledger.Event{Kind: ledger.EventRelease, At: e.clk.Now()}); err != nil {
		e.t.Fatal(err)
	}
}

// raiseBobRate raises bob's limit to ¥20/h: box3 is under it.
func (e *teamEnv) raiseBobRate() {
	e.t.Helper()
	if err := e.ts.SetLimit(context.Background(), ledger.Action{UserID: e.lid, By: carol, At: e.clk.Now()}, ledger.Limit{
		TeamID: e.team.ID, Scope: ledger.ScopeMember, Subject: "2", Currency: ledger.CNY, RatePerHour: ledger.MustDecimal("20")}); err != nil {
		e.t.Fatal(err)
	}
}

// TestTeam_ReleasedLapsesApproval: box3 released, the next tick lapses
// its approval and edits both admins' cards to say so, without buttons;
// a later Stop it on a card is told the request was closed and does
// nothing. The pending list no longer holds it.
func TestTeam_ReleasedLapsesApproval(t *testing.T) {
	e := newTeamEnv(t, bob)
	ap := e.overBobRate()
	cards := e.cardsOf(ap)
	e.release()
	e.clk.Add(time.Minute)
	e.tick2()
	if got := e.approval(ap); got.State != ledger.ApprovalLapsed || got.DecidedBy != 0 || !got.DecidedAt.Equal(e.clk.Now()) {
		t.Fatalf("approval after the release = %+v, want lapsed now", got)
	}
	for _, admin := range []int64{alice, carol} {
		edit, ok := e.lastEdit(cards[admin].ChatID, int(cards[admin].MessageID))
		if !ok || !strings.Contains(edit.Text, "No longer needed: <b>box3</b> was released.") || len(edit.Buttons) != 0 {
			t.Errorf("admin %d's card after the release = %q %s (edited %v)", admin, edit.Text, labels(edit), ok)
		}
	}
	if pend, err := e.ts.Approvals(context.Background(), e.team.ID, ledger.ApprovalPending); err != nil || len(pend) != 0 {
		t.Errorf("pending approvals = %+v, %v; want none", pend, err)
	}
	// Stop it on carol's old card (as delivered before the edit).
	sent := len(e.snd.Sent())
	toast := e.pressAs(carol, e.snd.to(carol)[0], int(cards[carol].MessageID), "Stop it")
	if !strings.Contains(toast, "This request was closed: box3 no longer needs it") {
		t.Errorf("Stop it on a lapsed approval = %q", toast)
	}
	if got := e.approval(ap); got.State != ledger.ApprovalLapsed || got.DecidedBy != 0 {
		t.Errorf("approval after Stop it = %+v, want it still lapsed", got)
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Error("Stop it on a lapsed approval issued an order")
	}
	for _, m := range e.snd.Sent()[sent:] {
		if m.EditMessageID == 0 {
			t.Errorf("the press sent %q to %d", m.Text, m.ChatID)
		}
	}
	// Later ticks touch nothing more.
	edits := len(e.snd.Sent())
	e.clk.Add(2 * time.Hour)
	e.tick2()
	if n := len(e.snd.Sent()); n != edits {
		t.Errorf("later ticks sent %d more messages", n-edits)
	}
}

// TestTeam_RaisedLimitLapsesApproval: bob's limit raised above box3's
// rate lapses the approval ("within @bob's limit now"), while box3 keeps
// running; Approve and Stop it on it change nothing (no order although
// the agent is there). Lowered again, box3 is over the bound once more:
// the same approval is reopened, pending, and a fresh card goes to each
// admin.
func TestTeam_RaisedLimitLapsesApproval(t *testing.T) {
	e := newTeamEnv(t, bob)
	ctx := context.Background()
	ap := e.overBobRate()
	cards := e.cardsOf(ap)
	e.raiseBobRate()
	e.clk.Add(time.Minute)
	e.tick2()
	if got := e.approval(ap); got.State != ledger.ApprovalLapsed {
		t.Fatalf("approval after the raise = %+v, want lapsed", got)
	}
	edit, ok := e.lastEdit(cards[carol].ChatID, int(cards[carol].MessageID))
	if !ok || !strings.Contains(edit.Text, "No longer needed: <b>box3</b> is within @bob's limit now.") || len(edit.Buttons) != 0 {
		t.Errorf("carol's card after the raise = %q %s (edited %v)", edit.Text, labels(edit), ok)
	}
	for _, press := range []struct {
		who   int64
		label string
	}{{alice, "Approve"}, {carol, "Stop it"}, {alice, "Stop it"}} {
		toast := e.pressAs(press.who, e.snd.to(press.who)[0], int(cards[press.who].MessageID), press.label)
		if !strings.Contains(toast, "This request was closed: box3 no longer needs it") {
			t.Errorf("%s by %d on the lapsed approval = %q", press.label, press.who, toast)
		}
	}
	if got := e.approval(ap); got.State != ledger.ApprovalLapsed || got.DecidedBy != 0 {
		t.Errorf("approval after the presses = %+v, want it lapsed", got)
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Error("a press on a lapsed approval issued an order")
	}
	if r, err := e.db.RentalByID(ctx, e.rid); err != nil || r.State() != ledger.Running {
		t.Errorf("box3 after the presses = %v, %v; want it running", r, err)
	}

	// Over the bound again: reopened, asked afresh.
	e.setBobRate()
	e.clk.Add(time.Minute)
	e.tick2()
	got := e.approval(ap)
	if got.State != ledger.ApprovalPending || !got.CreatedAt.Equal(e.clk.Now()) || !got.DecidedAt.IsZero() {
		t.Fatalf("approval over the bound again = %+v, want it pending from now", got)
	}
	for _, admin := range []int64{alice, carol} {
		if msgs := e.snd.to(admin); len(msgs) != 2 || labels(msgs[1]) != "[Approve] [Stop it]" {
			t.Errorf("admin %d's messages = %d, want a fresh card", admin, len(msgs))
		}
	}
	fresh := e.cardsOf(ap)
	if len(fresh) != 2 || fresh[carol].MessageID == cards[carol].MessageID {
		t.Errorf("stored cards after the reopen = %+v, want the fresh ones only", fresh)
	}
	if all, err := e.ts.Approvals(ctx, e.team.ID, ""); err != nil || len(all) != 1 {
		t.Errorf("approvals = %+v, %v; want the one reopened", all, err)
	}
	// The fresh card works: Approve decides it.
	if toast := e.pressAs(carol, e.snd.to(carol)[1], int(fresh[carol].MessageID), "Approve"); !strings.Contains(toast, "Approved") {
		t.Errorf("Approve on the fresh card = %q", toast)
	}
}

// flakyTeams fails the team store's Limits while failLimits is set.
type flakyTeams struct {
	ledger.TeamStore
	mu         sync.Mutex
	failLimits bool
}

func (f *flakyTeams) Limits(ctx context.Context, teamID int64) ([]ledger.Limit, error) {
	f.mu.Lock()
	fail := f.failLimits
	f.mu.Unlock()
	if fail {
		return nil, errors.New("database is locked")
	}
	return f.TeamStore.Limits(ctx, teamID)
}

// flakyStore fails RentalByID while failRental is set.
type flakyStore struct {
	scheduler.Store
	mu         sync.Mutex
	failRental bool
}

func (f *flakyStore) RentalByID(ctx context.Context, id int64) (*ledger.Rental, error) {
	f.mu.Lock()
	fail := f.failRental
	f.mu.Unlock()
	if fail {
		return nil, errors.New("disk I/O error")
	}
	return f.Store.RentalByID(ctx, id)
}

// TestTeam_LapseNotOnFailedRead: a read that fails lapses nothing. With
// the limit raised but the limits unreadable, and with box3 released but
// the rental unreadable, the approval stays pending and no card is
// edited; once the reads work, it lapses.
func TestTeam_LapseNotOnFailedRead(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(e *teamEnv)
		fail   func(ft *flakyTeams, fs *flakyStore, on bool)
		note   string
	}{
		{"limits unreadable", (*teamEnv).raiseBobRate, func(ft *flakyTeams, _ *flakyStore, on bool) {
			ft.mu.Lock()
			ft.failLimits = on
			ft.mu.Unlock()
		}, "is within @bob's limit now"},
		{"rental unreadable", (*teamEnv).release, func(_ *flakyTeams, fs *flakyStore, on bool) {
			fs.mu.Lock()
			fs.failRental = on
			fs.mu.Unlock()
		}, "was released"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newTeamEnv(t, bob)
			ap := e.overBobRate()
			cards := e.cardsOf(ap)
			ft, fs := &flakyTeams{TeamStore: e.db}, &flakyStore{Store: e.db}
			s, err := scheduler.New(scheduler.Config{Store: fs, Teams: ft, Hub: e.hub, Enrolment: e.hub.Enrolment(), Sender: e.snd, Buttons: testButtons(),
				Now: e.clk.Now, Tick: 30 * time.Second, NoChart: true})
			if err != nil {
				t.Fatal(err)
			}
			c.change(e)
			c.fail(ft, fs, true)
			sent := len(e.snd.Sent())
			for i := 0; i < 3; i++ {
				e.clk.Add(time.Minute)
				if err := s.Checks(context.Background()); err == nil {
					t.Errorf("tick %d with a failing read reported no error", i)
				}
			}
			if got := e.approval(ap); got.State != ledger.ApprovalPending {
				t.Fatalf("approval after failed reads = %+v, want it pending", got)
			}
			for _, m := range e.snd.Sent()[sent:] {
				if m.ChatID == alice || m.ChatID == carol {
					t.Errorf("a tick with a failed read sent %q to %d", m.Text, m.ChatID)
				}
			}
			c.fail(ft, fs, false)
			e.clk.Add(time.Minute)
			if err := s.Checks(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := e.approval(ap); got.State != ledger.ApprovalLapsed {
				t.Fatalf("approval once the reads work = %+v, want it lapsed", got)
			}
			if edit, ok := e.lastEdit(carol, int(cards[carol].MessageID)); !ok || !strings.Contains(edit.Text, c.note) {
				t.Errorf("carol's card = %q (edited %v), want %q", edit.Text, ok, c.note)
			}
		})
	}
}

// TestTeam_PressOnEndedRentalLapses: box3 released and no tick since:
// Stop it on its pending approval lapses it and is told the request was
// closed; no order, nothing decided; the other admin's card is edited.
func TestTeam_PressOnEndedRentalLapses(t *testing.T) {
	e := newTeamEnv(t, bob)
	ap := e.overBobRate()
	cards := e.cardsOf(ap)
	e.release()
	toast := e.pressAs(carol, e.snd.to(carol)[0], int(cards[carol].MessageID), "Stop it")
	if !strings.Contains(toast, "This request was closed: box3 no longer needs it") {
		t.Errorf("Stop it on a released rental's approval = %q", toast)
	}
	if got := e.approval(ap); got.State != ledger.ApprovalLapsed || got.DecidedBy != 0 {
		t.Errorf("approval after the press = %+v, want lapsed, decided by nobody", got)
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Error("Stop it on a released rental's approval issued an order")
	}
	if edit, ok := e.lastEdit(alice, int(cards[alice].MessageID)); !ok || !strings.Contains(edit.Text, "was released") || len(edit.Buttons) != 0 {
		t.Errorf("alice's card = %q %s (edited %v)", edit.Text, labels(edit), ok)
	}
	if edit, ok := e.lastEdit(carol, int(cards[carol].MessageID)); !ok || len(edit.Buttons) != 0 {
		t.Errorf("carol's pressed card = %q %s (edited %v)", edit.Text, labels(edit), ok)
	}
}

// TestTeam_LapseRacesPress: the tick lapsing an approval (limit raised)
// and carol's Approve at once: one wins. Approved, the card was not
// edited to "No longer needed" and the toast says approved; lapsed, the
// toast says the request was closed.
func TestTeam_LapseRacesPress(t *testing.T) {
	won := map[ledger.ApprovalState]int{}
	for i := 0; i < 8; i++ {
		e := newTeamEnv(t, bob)
		ap := e.overBobRate()
		cards := e.cardsOf(ap)
		e.raiseBobRate()
		e.clk.Add(time.Minute)
		var (
			wg    sync.WaitGroup
			toast string
		)
		card := e.snd.to(carol)[0]
		wg.Add(2)
		go func() { defer wg.Done(); e.tick2() }()
		go func() { defer wg.Done(); toast = e.pressAs(carol, card, int(cards[carol].MessageID), "Approve") }()
		wg.Wait()
		got := e.approval(ap)
		won[got.State]++
		aliceEdit, edited := e.lastEdit(alice, int(cards[alice].MessageID))
		switch got.State {
		case ledger.ApprovalApproved:
			if got.DecidedBy != carol || !strings.Contains(toast, "Approved") || (edited && strings.Contains(aliceEdit.Text, "No longer needed")) {
				t.Fatalf("approved: %+v, toast %q, alice's card %q", got, toast, aliceEdit.Text)
			}
		case ledger.ApprovalLapsed:
			if got.DecidedBy != 0 || !strings.Contains(toast, "This request was closed") || !edited || !strings.Contains(aliceEdit.Text, "No longer needed") {
				t.Fatalf("lapsed: %+v, toast %q, alice's card %q", got, toast, aliceEdit.Text)
			}
		default:
			t.Fatalf("state after the race = %+v", got)
		}
	}
	t.Logf("outcomes: %v", won)
}

// TestTeam_LapsedChinese: the card of a lapsed approval is edited in its
// admin's language.
func TestTeam_LapsedChinese(t *testing.T) {
	e := newTeamEnv(t, bob)
	ctx := context.Background()
	u, err := e.db.User(ctx, carol)
	if err != nil {
		t.Fatal(err)
	}
	u.Lang = "zh"
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: carol, At: e.clk.Now()}, u); err != nil {
		t.Fatal(err)
	}
	ap := e.overBobRate()
	cards := e.cardsOf(ap)
	e.release()
	e.clk.Add(time.Minute)
	e.tick2()
	edit, ok := e.lastEdit(carol, int(cards[carol].MessageID))
	if !ok {
		t.Fatal("carol's card was not edited")
	}
	wantZH(t, "carol's lapsed card", edit.Text, "不再需要：<b>box3</b> 已释放。")
}

// TestTeam_MonthAndScopeLapse: a month bound's approval lapses when its
// month is over (December asks anew), and a member's when the rental is
// given to someone else; each card says why.
func TestTeam_MonthAndScopeLapse(t *testing.T) {
	t.Run("month over", func(t *testing.T) {
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
		aps, err := e.ts.Approvals(ctx, e.team.ID, ledger.ApprovalPending)
		if err != nil || len(aps) != 1 {
			t.Fatalf("pending = %+v, %v", aps, err)
		}
		nov := aps[0]
		cards := e.cardsOf(nov)
		e.clk.Set(time.Date(2026, 12, 1, 2, 0, 0, 0, u.Location()))
		e.tick2()
		if got := e.approval(nov); got.State != ledger.ApprovalLapsed {
			t.Fatalf("%s's approval in December = %+v, want lapsed", nov.Period, got)
		}
		if edit, ok := e.lastEdit(carol, int(cards[carol].MessageID)); !ok || !strings.Contains(edit.Text, "No longer needed: "+nov.Period+" is over.") {
			t.Errorf("carol's card = %q (edited %v)", edit.Text, ok)
		}
		if pend, err := e.ts.Approvals(ctx, e.team.ID, ledger.ApprovalPending); err != nil || len(pend) != 1 || pend[0].Period != "2026-12" {
			t.Errorf("pending in December = %+v, %v; want December's", pend, err)
		}
	})
	t.Run("out of scope", func(t *testing.T) {
		e := newTeamEnv(t, bob)
		ap := e.overBobRate()
		cards := e.cardsOf(ap)
		if _, err := e.ts.SetOwner(context.Background(), ledger.Action{UserID: e.lid, By: alice, At: e.clk.Now()}, e.rid, dave); err != nil {
			t.Fatal(err)
		}
		e.clk.Add(time.Minute)
		e.tick2()
		if got := e.approval(ap); got.State != ledger.ApprovalLapsed {
			t.Fatalf("approval once box3 is dave's = %+v, want lapsed", got)
		}
		if edit, ok := e.lastEdit(alice, int(cards[alice].MessageID)); !ok || !strings.Contains(edit.Text, "No longer needed: <b>box3</b> no longer counts against @bob's limit.") {
			t.Errorf("alice's card = %q (edited %v)", edit.Text, ok)
		}
	})
}
