package bot_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// proposal sends free text and returns the one reply, which must carry the
// Confirm / Edit / Cancel buttons.
func (e *env) proposal(user int64, text string) chat.Outgoing {
	e.t.Helper()
	out := e.handle(e.update(user, text))
	if len(out) != 1 || len(out[0].Out.Buttons) != 1 || len(out[0].Out.Buttons[0]) != 3 {
		e.t.Fatalf("%q: want one proposal with 3 buttons, got %+v", text, out)
	}
	return out[0].Out
}

// pressedProposal presses button i (0 Confirm, 1 Edit, 2 Cancel) of proposal p
// shown as message msgID and returns the message that replaced it.
func (e *env) pressedProposal(user int64, p chat.Outgoing, i, msgID int) chat.Outgoing {
	e.t.Helper()
	var edit *chat.Outgoing
	for _, s := range press(e, user, user, msgID, p.Buttons[0][i].Data) {
		if !s.IsAnswer {
			edit = &s.Out
		}
	}
	if edit == nil || edit.EditMessageID != msgID || edit.Buttons != nil {
		e.t.Fatalf("press %d on %q: the proposal was not replaced: %+v", i, p.Text, edit)
	}
	return *edit
}

// TestCore_FreeText: a rental told in words is proposed with its per-card
// price summed and its start time kept; stopping and releasing in words
// are proposed and written only on Confirm; "status" is answered at once.
func TestCore_FreeText(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})

	// 10:00 in Shanghai: rented three hours ago, two cards at ¥1.88 each.
	p := e.proposal(alice, "3小时前在autodl租了2张4090 每张1.88元/小时")
	contains(t, p.Text, "2×RTX 4090 at ¥1.88/h each = ¥3.76/h",
		"/rent box1 autodl 2xRTX4090 3.76/h currency=CNY at 2026-11-02 07:00")
	if n := len(e.book(alice).Rentals); n != 0 {
		t.Fatalf("%d rentals before Confirm", n)
	}
	card := e.pressedProposal(alice, p, 0, 1)
	contains(t, card.Text, "✓", "box1", "07:00", "¥3.76/h")
	b := e.book(alice)
	if len(b.Rentals) != 1 {
		t.Fatalf("%d rentals after Confirm", len(b.Rentals))
	}
	x := b.Rentals[0]
	if x.GPUCount != 2 || x.Price.Amount.Cmp(ledger.MustDecimal("3.76")) != 0 || x.Price.Unit != ledger.UnitHour ||
		!x.StartedAt().Equal(t0.Add(-3*time.Hour)) {
		t.Fatalf("rental = %d GPUs at %s from %v", x.GPUCount, x.Price, x.StartedAt())
	}

	// "status" without a slash is answered, with nothing to confirm.
	out := e.handle(e.update(alice, "status"))
	if len(out) != 1 || out[0].Out.Buttons != nil {
		t.Fatalf("status: %+v", out)
	}
	contains(t, out[0].Out.Text, "box1", "2×RTX 4090")

	// An hour later: "box1关机了" is proposed, and stops only on Confirm.
	e.now = t0.Add(time.Hour)
	p = e.proposal(alice, "box1关机了")
	contains(t, p.Text, "/stop box1 at 2026-11-02 11:00")
	if st := e.book(alice).Rental("box1").State(); st != ledger.Running {
		t.Fatalf("box1 is %s before Confirm", st)
	}
	e.now = t0.Add(time.Hour + 2*time.Minute) // the tap comes later: the stop is when it was said
	card = e.pressedProposal(alice, p, 0, 2)
	contains(t, card.Text, "box1", "stopped")
	x = e.book(alice).Rental("box1")
	if x.State() != ledger.Stopped || !x.Events[len(x.Events)-1].At.Equal(t0.Add(time.Hour)) {
		t.Fatalf("box1 after Confirm: %s, events %+v", x.State(), x.Events)
	}
	// A second tap finds the proposal used.
	got := press(e, alice, alice, 2, p.Buttons[0][0].Data)
	contains(t, got[len(got)-1].Out.Text, "expired or was already answered")

	// Stopping a stopped rental is refused at once; an unknown name writes nothing.
	for _, in := range []string{"stopped box1", "stopped box9"} {
		out = e.handle(e.update(alice, in))
		if len(out) != 1 || out[0].Out.Buttons != nil {
			t.Fatalf("%q: %+v", in, out)
		}
	}
	contains(t, out[0].Out.Text, "box9")

	// Release: Cancel writes nothing; Confirm of "释放box1" releases it.
	p = e.proposal(alice, "released box1")
	contains(t, e.pressedProposal(alice, p, 2, 3).Text, "Cancelled", "/release box1")
	if st := e.book(alice).Rental("box1").State(); st != ledger.Stopped {
		t.Fatalf("box1 is %s after Cancel", st)
	}
	p = e.proposal(alice, "释放box1")
	contains(t, e.pressedProposal(alice, p, 0, 4).Text, "box1", "released")
	if st := e.book(alice).Rental("box1").State(); st != ledger.Released {
		t.Fatalf("box1 is %s after Confirm", st)
	}

	// In Chinese: the per-card sum in the user's words.
	u := e.update(bob, "rented 2x A100 on runpod $0.35/h each")
	u.LangCode = "zh-CN"
	out = e.handle(u)
	if len(out) != 1 || out[0].Out.Buttons == nil {
		t.Fatalf("bob's proposal: %+v", out)
	}
	contains(t, out[0].Out.Text, "2×A100", "每张 $0.35/小时", "共 $0.70/小时", "/rent box1 runpod 2xA100 0.7/h currency=USD")

	// In a group, the same words are talk, not commands: no reply.
	for _, in := range []string{"status", "stopped box1", "rented 2x A100 on runpod $0.35/h each"} {
		g := chat.Update{Key: fmt.Sprintf("test:%d", keySeq.Add(1)), Kind: chat.KindText, UserID: alice, ChatID: -900,
			ChatType: chat.ChatGroup, Text: in}
		if out := e.handle(g); len(out) != 0 {
			t.Fatalf("group %q: %+v", in, out)
		}
	}
}
