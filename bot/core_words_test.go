package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestCore_PriceUnitBillsExactly: "1.88 per hour" is a price per hour on
// AutoDL's per-second billing: ten minutes cost ¥0.31, not a started hour's
// ¥1.88; the same holds in Chinese ("1.88 一小时") and for "an hour".
func TestCore_PriceUnitBillsExactly(t *testing.T) {
	for _, cmd := range []string{
		"/rent t1 autodl 4090 1.88 per hour",
		"/rent t1 autodl 4090 1.88 an hour",
		"/rent t1 autodl 4090 1.88元 每小时",
		"/rent t1 autodl 4090 1.88 一小时",
		"/rent t1 autodl 4090 1.88 hourly",
	} {
		t.Run(cmd, func(t *testing.T) {
			e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
			got := e.say(alice, cmd)
			contains(t, got, "✓", "t1", "¥1.88/h", "per-second")
			e.now = t0.Add(10 * time.Minute)
			st := e.statement(alice)
			if len(st.Rentals) != 1 {
				t.Fatalf("rentals: %+v", st.Rentals)
			}
			if x := e.book(alice).Rental("t1"); x.Mode != ledger.PerSecond {
				t.Errorf("mode = %s, want per-second (AutoDL's)", x.Mode)
			}
			if c := st.Rentals[0].Compute.String(); c != "0.31" {
				t.Errorf("10 minutes of %q: compute %s, want 0.31", cmd, c)
			}
		})
	}
}

// TestCore_ModeAgainstProfileAsks: a mode written against the platform's
// profile (per-hour on AutoDL, 按小时 on RunPod, 包日 on AutoDL) records
// nothing until the user picks one; a mode that matches the profile, or
// one on a platform without a profile, is taken as written.
func TestCore_ModeAgainstProfileAsks(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})

	m := e.ask(alice, "/rent t1 autodl 4090 1.88/h per-hour")
	contains(t, m.Text, "AutoDL", "per-second", "per-hour", "Nothing is recorded")
	if got := buttonTexts(m); len(got) != 3 || !strings.Contains(got[0], "per-second") || !strings.Contains(got[1], "per-hour") || !strings.Contains(got[2], "Cancel") {
		t.Fatalf("buttons = %q, want per-second (AutoDL) / per-hour (as typed) / Cancel", got)
	}
	if n := len(e.book(alice).Rentals); n != 0 {
		t.Fatalf("%d rentals recorded before the choice", n)
	}
	contains(t, e.pressed(alice, button(t, m, "per-second")), "✓", "t1", "per-second")
	if x := e.book(alice).Rental("t1"); x == nil || x.Mode != ledger.PerSecond || !x.StartedAt().Equal(t0) {
		t.Fatalf("t1 after choosing the profile's mode: %+v", x)
	}

	m = e.ask(alice, "/rent t2 autodl 4090 1.88/h per-hour")
	e.now = t0.Add(time.Minute) // the choice is made later: the rental starts when it was sent
	contains(t, e.pressed(alice, button(t, m, "per-hour")), "✓", "t2", "per-hour")
	if x := e.book(alice).Rental("t2"); x == nil || x.Mode != ledger.PerHour || !x.StartedAt().Equal(t0) {
		t.Fatalf("t2 after choosing the typed mode: %+v", x)
	}

	m = e.ask(alice, "/rent t3 autodl 4090 45/day 包日")
	contains(t, e.pressed(alice, button(t, m, "Cancel")), "Cancelled")
	if e.book(alice).Rental("t3") != nil {
		t.Fatal("a cancelled question recorded t3")
	}

	contains(t, e.say(alice, "/rent m4 autodl 4090 1.88/h per-second"), "✓", "m4")
	contains(t, e.say(alice, "/rent m5 zzgpufarm 4090 1.88/h per-hour"), "✓", "m5", "per-hour")
	contains(t, e.say(alice, "/rent m6 autodl 4090 1.88/h"), "✓", "m6", "per-second")

	e.say(alice, "/lang zh")
	m = e.ask(alice, "/rent t7 runpod 4090 0.69/h 按小时")
	contains(t, m.Text, "RunPod", "按秒", "按小时", "选择之前什么也不记录")
	if got := buttonTexts(m); len(got) != 3 || !strings.Contains(got[0], "按秒") || !strings.Contains(got[1], "按小时") || !strings.Contains(got[2], "取消") {
		t.Fatalf("buttons = %q", got)
	}
	contains(t, e.pressed(alice, button(t, m, "按小时")), "✓", "t7")
	if x := e.book(alice).Rental("t7"); x == nil || x.Mode != ledger.PerHour {
		t.Fatalf("t7: %+v", x)
	}
}

// TestConversation_ModeQuestion asks the mode question through the real
// Telegram library and the fake Bot API, in Chinese: the buttons arrive,
// nothing is recorded, and the press records the mode chosen in place of
// the question.
func TestConversation_ModeQuestion(t *testing.T) {
	c := newChat(t, bot.Config{AllowedUsers: []int64{bob}, TZ: "Asia/Shanghai"})
	c.fake.SetUser(bob, "bob", "zh-CN")
	m := c.say(bob, "/rent 训练 runpod 4090 0.69/h 按小时")
	contains(t, m.Text, "RunPod", "按秒", "按小时", "选择之前什么也不记录")
	if len(m.Buttons) != 2 || len(m.Buttons[0]) != 2 || len(m.Buttons[1]) != 1 {
		t.Fatalf("buttons: %+v", m.Buttons)
	}
	if n := len(c.book(bob).Rentals); n != 0 {
		t.Fatalf("%d rentals before the choice", n)
	}
	c.settle(c.fake.PressButton(bob, bob, m.ID, m.Buttons[0][0].Data))
	msgs := c.fake.Messages(bob)
	if card := msgs[len(msgs)-1]; card.ID != m.ID || len(card.Buttons) != 0 || !strings.Contains(card.Text, "✓") {
		t.Fatalf("card after the choice: %+v", card)
	}
	if x := c.book(bob).Rental("训练"); x == nil || x.Mode != ledger.PerSecond {
		t.Fatalf("rental: %+v", x)
	}
}

// TestCore_BudgetOffSeveralAsks: with budgets in three currencies, "/budget
// 0" or "/budget off" without a currency removes nothing and asks which;
// "/budget 0 USD", "/budget off $" and "/budget off all" remove precisely.
// With one budget, "off" removes that one and says which.
func TestCore_BudgetOffSeveralAsks(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	for _, b := range []string{"/budget ¥3000/month", "/budget $500/month", "/budget €400/month"} {
		contains(t, e.say(alice, b), "✓")
	}
	budgets := func() int { return len(e.book(alice).User.Budgets) }
	for _, off := range []string{"/budget 0", "/budget off", "/预算 关闭", "/budget 0/month"} {
		got := e.say(alice, off)
		contains(t, got, "¥", "$", "€", "/budget off all")
		if strings.Contains(got, "✓") || budgets() != 3 {
			t.Fatalf("%q with three budgets: %q, %d budgets left", off, got, budgets())
		}
	}
	contains(t, e.say(alice, "/budget 0 USD"), "✓", "$")
	if bs := e.book(alice).User.Budgets; len(bs) != 2 || bs[0].Currency != ledger.CNY || bs[1].Currency != ledger.EUR {
		t.Fatalf("after /budget 0 USD: %+v", bs)
	}
	contains(t, e.say(alice, "/budget off €"), "✓", "€")
	contains(t, e.say(alice, "/budget off"), "✓", "¥")
	if budgets() != 0 {
		t.Fatalf("%d budgets left", budgets())
	}
	e.say(alice, "/budget ¥3000/month")
	e.say(alice, "/budget $500/month")
	contains(t, e.say(alice, "/budget off all"), "✓")
	if budgets() != 0 {
		t.Fatalf("/budget off all left %d", budgets())
	}
	contains(t, e.say(alice, "/budget off"), "no", "budget")
	contains(t, e.say(alice, "/budget 5 all"), "off")
	contains(t, e.say(alice, "/budget off all USD"), "all")
}

// TestCore_BudgetAmountOwnCurrencies: an amount without a sign asks when
// the user's budgets and spending are in several currencies, even if only
// one of them is spent in so far.
func TestCore_BudgetAmountOwnCurrencies(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	contains(t, e.say(alice, "/budget $500/month"), "✓")
	got := e.say(alice, "/budget 3000")
	contains(t, got, "¥", "$")
	if strings.Contains(got, "✓") {
		t.Fatalf("/budget 3000 with a ¥ rental and a $ budget was set: %q", got)
	}
	if bs := e.book(alice).User.Budgets; len(bs) != 1 || bs[0].Currency != ledger.USD {
		t.Fatalf("budgets: %+v", bs)
	}
}

// TestCore_ProposalNamesModeAgainstProfile: a rental proposed from free
// text with a mode against the platform's profile says so above its
// Confirm button, in the user's language; one without a mode says nothing.
func TestCore_ProposalNamesModeAgainstProfile(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/lang zh")
	m := e.ask(alice, "租了一台4090 1.88元/小时 autodl 按小时")
	contains(t, m.Text, "AutoDL", "按秒", "按小时", "每个开始的小时")
	contains(t, e.pressed(alice, button(t, m, "确认")), "✓", "按小时") // confirmed as shown, not asked again
	if x := e.book(alice).Rental("box1"); x == nil || x.Mode != ledger.PerHour {
		t.Fatalf("box1 after Confirm: %+v", x)
	}
	m = e.ask(alice, "租了一台4090 1.88元 每小时 autodl")
	if strings.Contains(m.Text, "按小时") || strings.Contains(m.Text, "per-hour") {
		t.Errorf("a price per hour was proposed with a mode: %q", m.Text)
	}
}

// TestCore_ModeAgainstProfileInLines: inside a multi-line message the line
// with a mode against the profile is refused with the question's words
// (buttons would be cut from a numbered answer); the other lines stand.
func TestCore_ModeAgainstProfileInLines(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	got := e.say(alice, "/rent job1 autodl 4090 1.88/h per-hour\n/rent job2 autodl 4090 1.88 per hour")
	contains(t, got, "✗", "AutoDL bills", "by itself", "✓", "job2")
	b := e.book(alice)
	if b.Rental("job1") != nil || b.Rental("job2") == nil || b.Rental("job2").Mode != ledger.PerSecond {
		t.Fatalf("rentals: %+v", b.Rentals)
	}
}

// TestCore_ModeAskedAfterPlatformChoice: a platform typo's question comes
// first; choosing the platform it meant then asks about a mode against
// that platform's profile, rather than recording it silently.
func TestCore_ModeAskedAfterPlatformChoice(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	m := e.ask(alice, "/rent t1 autdl 4090 1.88/h per-hour")
	contains(t, m.Text, "autdl", "autodl")
	var q *chat.Outgoing
	for _, s := range press(e, alice, alice, 7, button(t, m, "autodl")) {
		if !s.IsAnswer && len(s.Out.Buttons) > 0 {
			q = &s.Out
		}
	}
	if q == nil {
		t.Fatalf("no mode question after choosing autodl; rentals %+v", e.book(alice).Rentals)
	}
	contains(t, q.Text, "AutoDL bills", "per-hour")
	if n := len(e.book(alice).Rentals); n != 0 {
		t.Fatalf("%d rentals before the mode was chosen", n)
	}
	e.pressed(alice, button(t, *q, "per-hour"))
	if x := e.book(alice).Rental("t1"); x == nil || x.Mode != ledger.PerHour || x.Platform != "autodl" {
		t.Fatalf("t1: %+v", x)
	}
}
