package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// The team's people: alice (1) owns the team, carol (3) is an admin,
// bob (2) and dave (4) are members; box3 is bob's. The room is a group.
const (
	alice, bob, carol, dave = int64(1), int64(2), int64(3), int64(4)
	room                    = int64(-100500)
)

// roomSender is a testkit.Sender whose sends to some chats fail as
// Telegram's would: fail[chat] is returned (once when once[chat]).
type roomSender struct {
	testkit.Sender
	mu   sync.Mutex
	fail map[int64]error
	once map[int64]bool
}

func (s *roomSender) Send(ctx context.Context, m chat.Outgoing) (int, error) {
	s.mu.Lock()
	err := s.fail[m.ChatID]
	if err != nil && s.once[m.ChatID] {
		delete(s.fail, m.ChatID)
	}
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return s.Sender.Send(ctx, m)
}

func (s *roomSender) failOn(chatID int64, err error, once bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail == nil {
		s.fail, s.once = map[int64]error{}, map[int64]bool{}
	}
	s.fail[chatID], s.once[chatID] = err, once
}

// to returns the new messages (not edits) sent to chatID.
func (s *roomSender) to(chatID int64) []chat.Outgoing {
	var out []chat.Outgoing
	for _, m := range s.NewMessages() {
		if m.ChatID == chatID {
			out = append(out, m)
		}
	}
	return out
}

type teamEnv struct {
	*env
	team ledger.Team
	lid  int64 // the team's ledger
	ts   ledger.TeamStore
	snd  *roomSender
	ts2  *scheduler.Scheduler // the scheduler under test, sending through snd
	btn2 *chat.Buttons
}

// newTeamEnv is newEnv with a team "lab" (room bound), its four people,
// and box3 in the team's ledger owned by owner (0: nobody yet), with its
// agent's token in e.token so that beat reports for it.
func newTeamEnv(t *testing.T, owner int64) *teamEnv {
	t.Helper()
	ctx := context.Background()
	e := newEnv(t, nil)
	var ts ledger.TeamStore = e.db
	for id, name := range map[int64]string{bob: "bob", carol: "carol", dave: "dave"} {
		if _, err := e.db.EnsureUser(ctx, ledger.User{ID: id, Lang: "en", TZ: "Asia/Shanghai", Settings: ledger.DefaultSettings(), CreatedAt: t0.Add(-72 * time.Hour)}); err != nil {
			t.Fatal(name, err)
		}
	}
	tm, err := ts.CreateTeam(ctx, ledger.Action{UserID: alice, By: alice, At: t0.Add(-time.Hour)}, "lab", "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		id   int64
		name string
	}{{bob, "bob"}, {carol, "carol"}, {dave, "dave"}} {
		code, _, err := ts.CreateInvite(ctx, ledger.Action{UserID: tm.Ledger(), By: alice, At: t0.Add(-time.Hour)}, tm.ID, p.id, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.Join(ctx, ledger.Action{UserID: p.id, By: p.id, At: t0.Add(-time.Hour)}, code, p.name, false); err != nil {
			t.Fatal(p.name, err)
		}
	}
	if _, err := ts.SetRole(ctx, ledger.Action{UserID: tm.Ledger(), By: alice, At: t0.Add(-time.Hour)}, tm.ID, carol, ledger.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if tm, err = ts.BindRoom(ctx, ledger.Action{UserID: tm.Ledger(), By: alice, At: t0.Add(-time.Hour)}, tm.ID, room, "Lab"); err != nil {
		t.Fatal(err)
	}
	// The team's ledger warns after 30 minutes idle, as alice's does.
	u, err := e.db.User(ctx, tm.Ledger())
	if err != nil {
		t.Fatal(err)
	}
	u.Settings.IdleWarn = 30 * time.Minute
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: tm.Ledger(), At: t0}, u); err != nil {
		t.Fatal(err)
	}
	r, err := e.db.CreateRental(ctx, ledger.Action{UserID: tm.Ledger(), By: owner, At: t0}, ledger.Rental{
		Name: "box3", Platform: "autodl", GPU: "A100", GPUCount: 2, Mode: ledger.PerSecond, Owner: owner,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("14"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Owner != owner {
		t.Fatalf("box3's owner = %d, want %d", r.Owner, owner)
	}
	e.rid = r.ID
	if e.token, err = e.hub.Tokens().Issue(ctx, tm.Ledger(), "box3"); err != nil {
		t.Fatal(err)
	}
	te := &teamEnv{env: e, team: tm, lid: tm.Ledger(), ts: ts, snd: &roomSender{}, btn2: testButtons()}
	te.ts2 = te.newScheduler()
	return te
}

// newScheduler is a scheduler on the env's store and hub (a restart of
// the server builds a new one) sending through snd.
func (e *teamEnv) newScheduler() *scheduler.Scheduler {
	e.t.Helper()
	e.btn2 = testButtons()
	s, err := scheduler.New(scheduler.Config{Store: e.db, Hub: e.hub, Enrolment: e.hub.Enrolment(), Sender: e.snd, Buttons: e.btn2, Now: e.clk.Now, Tick: 30 * time.Second, NoChart: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *teamEnv) tick2() {
	e.t.Helper()
	if err := e.ts2.Checks(context.Background()); err != nil {
		e.t.Fatalf("Checks: %v", err)
	}
}

// pressAs presses the button labelled label of m as user does: the
// callback data as the card carries it, the presser's teams as the core
// reads them. It returns the toast.
func (e *teamEnv) pressAs(user int64, m chat.Outgoing, msgID int, label string) string {
	e.t.Helper()
	data := ""
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.Text == label {
				data = b.Data
			}
		}
	}
	if data == "" {
		e.t.Fatalf("no button %q on %q", label, m.Text)
	}
	return e.pressData(user, m.ChatID, msgID, data)
}

func (e *teamEnv) pressData(user, chatID int64, msgID int, data string) string {
	e.t.Helper()
	ctx := context.Background()
	teams := map[int64]string{}
	ms, err := e.ts.TeamsOf(ctx, user)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range ms {
		teams[m.Team.Ledger()] = string(m.Member.Role)
	}
	e.key++
	p := chat.ButtonPress{Update: chat.Update{Key: fmt.Sprintf("tg:update:team:%d", e.key), Kind: chat.KindCallback, UserID: user, ChatID: chatID,
		MessageID: msgID, CallbackID: "cb", CallbackData: data}, Now: e.clk.Now(), Lang: chat.LangEN, Loc: time.UTC, Teams: teams}
	c := &toastCatcher{roomSender: e.snd}
	if err := e.btn2.Dispatch(ctx, p, c); err != nil {
		e.t.Fatalf("press: %v", err)
	}
	if c.n != 1 {
		e.t.Fatalf("the press was answered %d times (%q)", c.n, c.toast)
	}
	return c.toast
}

// toastCatcher keeps the answer of one press (presses may run at once).
type toastCatcher struct {
	*roomSender
	n     int
	toast string
}

func (c *toastCatcher) AnswerCallback(ctx context.Context, id, text string) error {
	c.n++
	c.toast = text
	return c.roomSender.AnswerCallback(ctx, id, text)
}

// idleCard makes box3 idle 35 minutes and returns the room's card.
func (e *teamEnv) idleCard() chat.Outgoing {
	e.t.Helper()
	e.clk.Add(2 * time.Hour)
	e.beat(wire.VerdictIdle, 35*time.Minute, nil)
	e.tick2()
	cards := e.snd.to(room)
	if len(cards) != 1 {
		e.t.Fatalf("room messages = %+v, want the idle card", e.snd.NewMessages())
	}
	return cards[0]
}

func TestTeam_IdleCardInRoomNamesOwner(t *testing.T) {
	e := newTeamEnv(t, bob)
	c := e.idleCard()
	if !strings.HasPrefix(c.Text, "@bob, <b>box3</b> idle 35m") {
		t.Errorf("card = %q, want it to begin with @bob, and box3 idle", c.Text)
	}
	if got := labels(c); got != "[Release now] [Snooze 1h] [Keep]" {
		t.Errorf("buttons = %s", got)
	}
	for _, m := range e.snd.NewMessages() {
		if m.ChatID == bob {
			t.Errorf("bob got a private copy without asking: %q", m.Text)
		}
	}
}

func TestTeam_ReleaseOwnerOrAdminOnly(t *testing.T) {
	e := newTeamEnv(t, bob)
	c := e.idleCard()
	// dave, a member who does not own box3: refused, nothing changes.
	toast := e.pressAs(dave, c, 1, "Release now")
	if !strings.Contains(toast, "Only @bob (its owner) or an admin") {
		t.Errorf("dave's toast = %q", toast)
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatal("dave's press issued an order")
	}
	// Snooze is anyone's.
	if toast := e.pressAs(dave, c, 1, "Snooze 1h"); !strings.Contains(toast, "Snoozed") || !strings.HasPrefix(toast, "👥 lab · ") {
		t.Errorf("dave's snooze toast = %q", toast)
	}
	// carol, an admin: released through the agent.
	toast = e.pressAs(carol, c, 1, "Release now")
	if _, ok := e.hub.OpenOrder(e.rid); !ok {
		t.Fatalf("carol's press issued no order (toast %q)", toast)
	}
}

func TestTeam_OwnerReleases(t *testing.T) {
	e := newTeamEnv(t, bob)
	c := e.idleCard()
	toast := e.pressAs(bob, c, 1, "Release now")
	if _, ok := e.hub.OpenOrder(e.rid); !ok {
		t.Fatalf("bob's press issued no order (toast %q)", toast)
	}
}

func TestTeam_RemovedMemberPressRefused(t *testing.T) {
	e := newTeamEnv(t, bob)
	c := e.idleCard()
	if _, err := e.ts.RemoveMember(context.Background(), ledger.Action{UserID: e.lid, By: alice, At: e.clk.Now()}, e.team.ID, dave, alice); err != nil {
		t.Fatal(err)
	}
	if toast := e.pressAs(dave, c, 1, "Snooze 1h"); !strings.Contains(toast, "not yours") {
		t.Errorf("removed dave's toast = %q", toast)
	}
	// An outsider (alice's personal buttons are signed for alice only).
	if toast := e.pressAs(99, c, 1, "Keep"); !strings.Contains(toast, "not yours") {
		t.Errorf("a stranger's toast = %q", toast)
	}
}

func TestTeam_OwnerDMCopy(t *testing.T) {
	e := newTeamEnv(t, bob)
	if _, err := e.ts.SetDM(context.Background(), ledger.Action{UserID: e.lid, By: bob, At: t0}, e.team.ID, true); err != nil {
		t.Fatal(err)
	}
	c := e.idleCard()
	dm := e.snd.to(bob)
	if len(dm) != 1 || dm[0].Text != c.Text || labels(dm[0]) != labels(c) {
		t.Fatalf("bob's copy = %+v, want the room's card %q", dm, c.Text)
	}
	// The copy's buttons work for bob like the room's.
	if toast := e.pressAs(bob, dm[0], 7, "Snooze 1h"); !strings.Contains(toast, "Snoozed") {
		t.Errorf("bob's snooze on his copy: %q", toast)
	}
}

// setBobRate gives bob a limit of ¥10/h; box3 runs at ¥14/h.
func (e *teamEnv) setBobRate() {
	e.t.Helper()
	if err := e.ts.SetLimit(context.Background(), ledger.Action{UserID: e.lid, By: carol, At: e.clk.Now()}, ledger.Limit{
		TeamID: e.team.ID, Scope: ledger.ScopeMember, Subject: "2", Currency: ledger.CNY, RatePerHour: ledger.MustDecimal("10")}); err != nil {
		e.t.Fatal(err)
	}
}

func TestTeam_OverLimitOneApproval(t *testing.T) {
	e := newTeamEnv(t, bob)
	e.setBobRate()
	e.tick2()
	e.clk.Add(time.Minute)
	e.tick2()
	aps, err := e.ts.Approvals(context.Background(), e.team.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(aps) != 1 || aps[0].RentalID != e.rid || aps[0].Kind != ledger.LimitRate || aps[0].State != ledger.ApprovalPending {
		t.Fatalf("approvals = %+v, want one pending for box3's rate", aps)
	}
	for _, admin := range []int64{alice, carol} {
		got := e.snd.to(admin)
		if len(got) != 1 {
			t.Fatalf("admin %d got %d messages, want one card over two ticks", admin, len(got))
		}
		if labels(got[0]) != "[Approve] [Stop it]" || !strings.Contains(got[0].Text, "@bob's <b>box3</b>") || !strings.Contains(got[0].Text, "¥14.00/h of ¥10.00/h") {
			t.Errorf("admin %d's card = %q %s", admin, got[0].Text, labels(got[0]))
		}
	}
	if got := e.snd.to(bob); len(got) != 1 || !strings.Contains(got[0].Text, "Your <b>box3</b>") || len(got[0].Buttons) != 0 {
		t.Errorf("bob was told = %+v", got)
	}
	if got := e.snd.to(dave); len(got) != 0 {
		t.Errorf("dave, a member, got %+v", got)
	}
	if got := e.snd.to(room); len(got) != 0 {
		t.Errorf("the room got the approval: %+v", got)
	}
	// A member cannot decide it with the admins' button data.
	card := e.snd.to(carol)[0]
	if toast := e.pressAs(bob, card, 1, "Approve"); !strings.Contains(toast, "Only an admin") {
		t.Errorf("bob's approve = %q", toast)
	}
	// An hour on: one reminder, never an action.
	e.clk.Add(time.Hour)
	e.tick2()
	e.tick2()
	if got := e.snd.to(carol); len(got) != 2 || !strings.HasPrefix(got[1].Text, "Still waiting") {
		t.Errorf("carol's messages after an hour = %+v", got)
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Error("an order was issued without a press")
	}
}

func TestTeam_ApproveStopRace(t *testing.T) {
	e := newTeamEnv(t, bob)
	e.setBobRate()
	e.clk.Add(time.Minute)
	e.beat(wire.VerdictBusy, 0, nil) // the agent is there: Stop it can act
	e.tick2()
	aCard, cCard := e.snd.to(alice), e.snd.to(carol)
	if len(aCard) != 1 || len(cCard) != 1 {
		t.Fatalf("cards: alice %d, carol %d", len(aCard), len(cCard))
	}
	var wg sync.WaitGroup
	toasts := make([]string, 2)
	wg.Add(2)
	go func() { defer wg.Done(); toasts[0] = e.pressAs(alice, aCard[0], 1, "Approve") }()
	go func() { defer wg.Done(); toasts[1] = e.pressAs(carol, cCard[0], 2, "Stop it") }()
	wg.Wait()
	ap, err := e.ts.Approvals(context.Background(), e.team.ID, "")
	if err != nil || len(ap) != 1 {
		t.Fatalf("approvals = %+v, %v", ap, err)
	}
	already := 0
	for _, tt := range toasts {
		if strings.HasPrefix(tt, "Already") {
			already++
		}
	}
	if already != 1 {
		t.Fatalf("toasts = %q, want exactly one told it was decided", toasts)
	}
	_, ordered := e.hub.OpenOrder(e.rid)
	switch ap[0].State {
	case ledger.ApprovalApproved:
		if ap[0].DecidedBy != alice || ordered || !strings.Contains(toasts[1], "Already approved by @alice") {
			t.Errorf("approved: %+v ordered %v toasts %q", ap[0], ordered, toasts)
		}
	case ledger.ApprovalStopped:
		if ap[0].DecidedBy != carol || !ordered || !strings.Contains(toasts[0], "Already stopped by @carol") {
			t.Errorf("stopped: %+v ordered %v toasts %q", ap[0], ordered, toasts)
		}
	default:
		t.Fatalf("state = %s", ap[0].State)
	}
}

func TestTeam_UnknownOwnerAskedOnce(t *testing.T) {
	e := newTeamEnv(t, 0)
	e.tick2()
	e.clk.Add(time.Minute)
	e.tick2()
	asked := e.snd.to(room)
	if len(asked) != 1 || !strings.Contains(asked[0].Text, "whose is it?") || labels(asked[0]) != "[Mine]" {
		t.Fatalf("room = %+v, want one question", asked)
	}
	// A restart does not ask again.
	e.ts2 = e.newScheduler()
	e.tick2()
	if n := len(e.snd.to(room)); n != 1 {
		t.Fatalf("after a restart the room got %d messages", n)
	}
	// The first member to press owns it; the second is told whose.
	if toast := e.pressAs(dave, asked[0], 1, "Mine"); !strings.Contains(toast, "box3 is yours") {
		t.Errorf("dave's toast = %q", toast)
	}
	if toast := e.pressAs(bob, asked[0], 1, "Mine"); !strings.Contains(toast, "box3 is @dave's already") {
		t.Errorf("bob's toast = %q", toast)
	}
	r, err := e.db.RentalByID(context.Background(), e.rid)
	if err != nil || r.Owner != dave {
		t.Fatalf("box3's owner = %d, %v; want dave", r.Owner, err)
	}
}

func TestTeam_RoomMigrated(t *testing.T) {
	e := newTeamEnv(t, 0)
	const super = int64(-1009000)
	e.snd.failOn(room, &chat.MigratedError{To: super, Err: errors.New("400 upgraded")}, false)
	e.tick2()
	if got := e.snd.to(super); len(got) != 1 || !strings.Contains(got[0].Text, "whose is it?") {
		t.Fatalf("the new supergroup got %+v", got)
	}
	tm, err := e.ts.Team(context.Background(), e.team.ID)
	if err != nil || tm.Room != super {
		t.Fatalf("room = %d, %v; want %d", tm.Room, err, super)
	}
}

func TestTeam_RoomGone(t *testing.T) {
	e := newTeamEnv(t, bob)
	e.snd.failOn(room, fmt.Errorf("403 kicked: %w", chat.ErrChatGone), false)
	e.clk.Add(2 * time.Hour)
	e.beat(wire.VerdictIdle, 35*time.Minute, nil)
	e.tick2()
	tm, err := e.ts.Team(context.Background(), e.team.ID)
	if err != nil || tm.Room != 0 {
		t.Fatalf("room = %d, %v; want unbound", tm.Room, err)
	}
	got := e.snd.to(alice)
	if len(got) != 2 || !strings.Contains(got[0].Text, "I was removed from team lab's group") || !strings.Contains(got[1].Text, "@bob, <b>box3</b> idle") {
		t.Fatalf("alice (the owner) got %+v, want the notice and the card", got)
	}
	// Later cards go to alice privately; the notice is not repeated.
	e.clk.Add(2 * time.Hour)
	e.beat(wire.VerdictIdle, 2*time.Hour, nil)
	e.tick2()
	n := 0
	for _, m := range e.snd.to(alice) {
		if strings.Contains(m.Text, "I was removed") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("alice was told %d times", n)
	}
}

// TestTeam_SummarySplit: the team's nightly summary goes to the room
// with the day split by person and by project, the figures of the day's
// statement, and no web-app button (Telegram takes none in a group).
func TestTeam_SummarySplit(t *testing.T) {
	e := newTeamEnv(t, bob)
	ctx := context.Background()
	if _, err := e.db.CreateRental(ctx, ledger.Action{UserID: e.lid, By: dave, At: t0}, ledger.Rental{
		Name: "box4", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Owner: dave, Project: "yolo",
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("2"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	}); err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(scheduler.Config{Store: e.db, Sender: e.snd, Buttons: testButtons(), Now: e.clk.Now, NoChart: true,
		DashboardURL: func() string { return "https://ledger.example/app/" }})
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Set(t0.Add(12*time.Hour + time.Minute)) // 22:01 in Shanghai: 12 hours of both
	if err := s.Summaries(ctx); err != nil {
		t.Fatal(err)
	}
	got := e.snd.to(room)
	if len(got) != 1 {
		t.Fatalf("room = %+v, want the team's summary", got)
	}
	for _, want := range []string{"<b>By person</b>\n@bob ¥168.00\n@dave ¥24.00", "<b>By project</b>\n(no project) ¥168.00\nyolo ¥24.00"} {
		if !strings.Contains(got[0].Text, want) {
			t.Errorf("summary = %q, want %q", got[0].Text, want)
		}
	}
	if got[0].Buttons != nil {
		t.Errorf("the room's summary has buttons %+v", got[0].Buttons)
	}
	// alice's own summary is as before: her private chat, her button.
	if a := e.snd.to(alice); len(a) != 1 || a[0].Buttons == nil || strings.Contains(a[0].Text, "By person") {
		t.Errorf("alice's own summary = %+v", a)
	}
}

// TestTeam_SummarySplitUnpriced: in the team's nightly summary, @bob's
// rental with no price makes his row "¥0.00 + UNPRICED" (and his
// project's), in English and in Chinese, while @alice's priced row is
// not marked: nobody reads Bob's box as free.
func TestTeam_SummarySplitUnpriced(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			e := newTeamEnv(t, alice) // box3, alice's, ¥14/h
			ctx := context.Background()
			if _, err := e.db.CreateRental(ctx, ledger.Action{UserID: e.lid, By: bob, At: t0}, ledger.Rental{
				Name: "box4", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Owner: bob, Project: "llm",
				Currency: ledger.CNY, Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
			}); err != nil {
				t.Fatal(err)
			}
			u, err := e.db.User(ctx, e.lid)
			if err != nil {
				t.Fatal(err)
			}
			u.Lang = lang
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
			if len(got) != 1 {
				t.Fatalf("room = %+v, want the team's summary", got)
			}
			for _, want := range []string{"\n@alice ¥168.00\n@bob ¥0.00 + UNPRICED\n", "\nllm ¥0.00 + UNPRICED"} {
				if !strings.Contains(got[0].Text, want) {
					t.Errorf("summary = %q, want %q", got[0].Text, want)
				}
			}
			if strings.Contains(got[0].Text, "@alice ¥168.00 + UNPRICED") {
				t.Errorf("summary marks Alice's priced row: %q", got[0].Text)
			}
			if head := map[string]string{"en": "<b>By person</b>", "zh": "<b>按成员</b>"}[lang]; !strings.Contains(got[0].Text, head) {
				t.Errorf("summary is not in %s (no %q): %q", lang, head, got[0].Text)
			}
		})
	}
}

// TestTeam_Chinese: a Chinese team's room card names the owner in
// Chinese punctuation, and a Chinese member's refused press is told in
// Chinese.
func TestTeam_Chinese(t *testing.T) {
	e := newTeamEnv(t, bob)
	ctx := context.Background()
	for _, id := range []int64{e.lid, dave} {
		u, err := e.db.User(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		u.Lang = "zh"
		if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: id, At: t0}, u); err != nil {
			t.Fatal(err)
		}
	}
	c := e.idleCard()
	wantZH(t, "room card", c.Text, "@bob，<b>box3</b> 空闲 35分钟")
	toast := e.pressAs(dave, c, 1, "立即释放")
	wantZH(t, "refusal", toast, "只有 @bob（它的所有者）或团队管理员")
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatal("dave's press issued an order")
	}
}

// TestTeam_CardRenamedOwner: a card edited after its rental changed hands
// names the new owner once, not both.
func TestTeam_CardRenamedOwner(t *testing.T) {
	e := newTeamEnv(t, bob)
	c := e.idleCard()
	if _, err := e.ts.SetOwner(context.Background(), ledger.Action{UserID: e.lid, By: alice, At: e.clk.Now()}, e.rid, dave); err != nil {
		t.Fatal(err)
	}
	e.pressAs(dave, c, 1, "Snooze 1h")
	all := e.snd.Sent()
	edit := all[len(all)-1]
	if edit.EditMessageID == 0 || !strings.HasPrefix(edit.Text, "@dave, <b>box3</b> idle") || strings.Contains(edit.Text, "@bob") {
		t.Fatalf("edited card = %q", edit.Text)
	}
}
