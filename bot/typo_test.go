package bot_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// ask sends text and returns the single reply, which must carry buttons.
func (e *env) ask(user int64, text string) chat.Outgoing {
	e.t.Helper()
	out := e.handle(e.update(user, text))
	if len(out) != 1 || len(out[0].Out.Buttons) == 0 {
		e.t.Fatalf("%q: want one reply with buttons, got %+v", text, out)
	}
	for _, row := range out[0].Out.Buttons {
		for _, b := range row {
			if len(b.Data) > chat.MaxButtonData {
				e.t.Fatalf("%q: button %q has %d bytes of data", text, b.Text, len(b.Data))
			}
		}
	}
	return out[0].Out
}

// buttonTexts lists a reply's buttons in reading order.
func buttonTexts(m chat.Outgoing) []string {
	var out []string
	for _, row := range m.Buttons {
		for _, b := range row {
			out = append(out, b.Text)
		}
	}
	return out
}

// button returns the data of the button whose text contains label.
func button(t *testing.T, m chat.Outgoing, label string) string {
	t.Helper()
	for _, row := range m.Buttons {
		for _, b := range row {
			if strings.Contains(b.Text, label) {
				return b.Data
			}
		}
	}
	t.Fatalf("no button %q in %q", label, buttonTexts(m))
	return ""
}

// pressed presses data and returns the text the card was edited to.
func (e *env) pressed(user int64, data string) string {
	e.t.Helper()
	for _, s := range press(e, user, user, 7, data) {
		if !s.IsAnswer {
			if s.Out.EditMessageID != 7 || s.Out.Buttons != nil {
				e.t.Fatalf("press: want the card edited without buttons, got %+v", s.Out)
			}
			return s.Out.Text
		}
	}
	e.t.Fatalf("press %q: the card was not edited", data)
	return ""
}

func TestCore_TypoTopup(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	m := e.ask(alice, "/topup autdl 100")
	contains(t, m.Text, "autdl", "autodl", "Did you mean")
	if got := buttonTexts(m); len(got) != 3 || !strings.Contains(got[0], "autodl") || !strings.Contains(got[1], "autdl") || !strings.Contains(got[2], "Cancel") {
		t.Fatalf("buttons = %q, want Use autodl / Create autdl / Cancel", got)
	}
	if n := len(e.book(alice).TopUps); n != 0 {
		t.Fatalf("a typo recorded %d top-ups before any choice", n)
	}

	// Someone else's press changes nothing; the owner's Use records the
	// corrected command, and /undo takes it back.
	press(e, bob, alice, 7, button(t, m, "autodl"))
	if n := len(e.book(alice).TopUps) + len(e.book(bob).TopUps); n != 0 {
		t.Fatalf("%d top-ups after another user's press", n)
	}
	use := button(t, m, "autodl")
	contains(t, e.pressed(alice, use), "✓", "¥100.00", "autodl")
	b := e.book(alice)
	if len(b.TopUps) != 1 || b.TopUps[0].Platform != "autodl" || b.TopUps[0].Currency != ledger.CNY || b.TopUps[0].Amount.String() != "100" {
		t.Fatalf("top-ups = %+v", b.TopUps)
	}
	// The same button again: the proposal is used, nothing more recorded.
	press(e, alice, alice, 7, use)
	if n := len(e.book(alice).TopUps); n != 1 {
		t.Fatalf("a second press recorded %d top-ups", n)
	}
	contains(t, e.undoConfirmed(alice, "/undo"), "top-up") // made with a button: asked first
	if n := len(e.book(alice).TopUps); n != 0 {
		t.Fatalf("%d top-ups after /undo", n)
	}

	// Create: the name as typed, as a new platform.
	m = e.ask(alice, "/topup autdl $50")
	contains(t, e.pressed(alice, button(t, m, "Create")), "✓", "autdl")
	if b := e.book(alice); len(b.TopUps) != 1 || b.TopUps[0].Platform != "autdl" {
		t.Fatalf("top-ups after Create = %+v", b.TopUps)
	}
	// A platform the user has is not questioned again.
	contains(t, e.say(alice, "/topup autdl 5"), "✓", "autdl")

	// Cancel records nothing.
	m = e.ask(alice, "/balance runpd 20")
	contains(t, m.Text, "runpod")
	contains(t, e.pressed(alice, button(t, m, "Cancel")), "Cancelled")
	if n := len(e.book(alice).Balances); n != 0 {
		t.Fatalf("%d balances after Cancel", n)
	}

	// A new platform far from any known one is recorded as before.
	contains(t, e.say(alice, "/topup mycluster $30"), "✓", "mycluster")
}

func TestCore_TypoTopupRedelivered(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	q := e.update(alice, "/topup autdl 100")
	e.handle(q)
	// The question wrote nothing: delivered again after its answer may
	// have been lost, it is asked again, not "already recorded".
	q.Redelivered = true
	again := e.handle(q)
	if len(again) != 1 || len(again[0].Out.Buttons) == 0 || strings.Contains(again[0].Out.Text, "Already") {
		t.Fatalf("redelivered question answered %+v, want the question again", again)
	}
	m := again[0].Out
	u := chat.Update{Key: fmt.Sprintf("test:%d", keySeq.Add(1)), Kind: chat.KindCallback, UserID: alice, ChatID: alice,
		ChatType: chat.ChatPrivate, CallbackID: "cb", CallbackData: button(t, m, "autodl"), MessageID: 7}
	e.handle(u)
	u.Redelivered = true
	got := e.handle(u)
	if n := len(e.book(alice).TopUps); n != 1 {
		t.Fatalf("a redelivered press left %d top-ups, want 1", n)
	}
	if len(got) != 1 || !got[0].IsAnswer || !strings.Contains(got[0].Callback, "Already") {
		t.Fatalf("redelivered press answered %+v, want \"Already done\"", got)
	}
}

func TestCore_TypoRent(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	m := e.ask(alice, "/rent c2 autdl 4090 1.88/h")
	contains(t, m.Text, "autdl", "autodl", "/rent c2 autdl")
	if n := len(e.book(alice).Rentals); n != 0 {
		t.Fatalf("a typo started %d rentals before any choice", n)
	}
	// Confirmed five minutes later, it starts when it was sent, on
	// AutoDL's profile (yuan, per second).
	sent := e.now
	e.now = e.now.Add(5 * time.Minute)
	contains(t, e.pressed(alice, button(t, m, "autodl")), "✓", "c2", "started 10:00", "autodl", "¥1.88/h")
	x := e.book(alice).Rental("c2")
	if x == nil || x.Platform != "autodl" || x.Currency != ledger.CNY || !x.StartedAt().Equal(sent) {
		t.Fatalf("rental = %+v", x)
	}
	contains(t, e.undoConfirmed(alice, "/undo"), "c2")
	if n := len(e.book(alice).Rentals); n != 0 {
		t.Fatalf("%d rentals after /undo", n)
	}

	// "Create" keeps the platform as typed.
	m = e.ask(alice, "/rent c3 runpd 4090 0.4/h currency=USD")
	contains(t, m.Text, "runpod")
	contains(t, e.pressed(alice, button(t, m, "Create")), "✓", "c3", "runpd")
	if x := e.book(alice).Rental("c3"); x == nil || x.Platform != "runpd" {
		t.Fatalf("rental after Create = %+v", x)
	}
	// A platform far from every known one is a new platform, as before;
	// a known one needs no question.
	contains(t, e.say(alice, "/rent c4 homelab 4090 0.1/h currency=USD"), "✓", "c4", "homelab")
	contains(t, e.say(alice, "/rent c5 vast 4090 0.3/h"), "✓", "c5")
	if n := len(e.book(alice).Rentals); n != 3 {
		t.Fatalf("%d rentals, want 3", n)
	}
}

func TestCore_TypoCharge(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	e.say(alice, "/storage data1 200GB 0.0066/GB/day rental=box1")

	// A name that is nothing the user has asks first, even with no near
	// candidate.
	m := e.ask(alice, "/charge nosuch 5 fee")
	contains(t, m.Text, "nosuch")
	if got := buttonTexts(m); len(got) != 2 || !strings.Contains(got[0], "nosuch") || !strings.Contains(got[1], "Cancel") {
		t.Fatalf("buttons = %q, want Create nosuch / Cancel", got)
	}
	if n := len(e.book(alice).Charges); n != 0 {
		t.Fatalf("a charge on an unknown name was recorded before any choice: %d", n)
	}
	contains(t, e.pressed(alice, button(t, m, "nosuch")), "✓", "nosuch", "fee")
	if b := e.book(alice); len(b.Charges) != 1 || b.Charges[0].Platform != "nosuch" {
		t.Fatalf("charges = %+v", b.Charges)
	}
	contains(t, e.undoConfirmed(alice, "/undo"), "charge")

	// Near a rental: Use records it on the rental.
	m = e.ask(alice, "/charge box2 5 image fee")
	contains(t, m.Text, "box2", "box1")
	contains(t, e.pressed(alice, button(t, m, "box1")), "✓", "box1", "image fee")
	b := e.book(alice)
	if len(b.Charges) != 1 || b.Charges[0].RentalID != b.Rental("box1").ID {
		t.Fatalf("charges = %+v", b.Charges)
	}

	// Rentals, volumes and known platforms are charged at once.
	contains(t, e.say(alice, "/charge box1 1 support"), "✓", "box1")
	contains(t, e.say(alice, "/charge data1 2 snapshot"), "✓", "data1")
	contains(t, e.say(alice, "/charge runpod 3 support"), "✓", "runpod")
	b = e.book(alice)
	if n := len(b.Charges); n != 4 {
		t.Fatalf("%d charges, want 4", n)
	}
	// The volume's charge is its platform's, in its currency.
	if c := b.Charges[2]; c.Note != "snapshot" || c.Platform != "autodl" || c.Currency != ledger.CNY || c.RentalID != 0 {
		t.Fatalf("volume charge = %+v", c)
	}
}

func TestCore_TypoChinese(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{bob}})
	u := e.update(bob, "/settings lang=zh")
	e.handle(u)
	m := e.ask(bob, "/topup autdl 100")
	contains(t, m.Text, "autdl", "autodl", "是不是")
	got := buttonTexts(m)
	if len(got) != 3 || !strings.Contains(got[0], "autodl") || !strings.Contains(got[2], "取消") {
		t.Fatalf("buttons = %q", got)
	}
	contains(t, e.say(bob, "/stauts"), "未知命令", "/stauts", "/status")
}

func TestCore_UnknownCommandSuggestion(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(alice, "/stauts"), "Unknown command /stauts", "Did you mean /status?")
	contains(t, e.say(alice, "/relase box1"), "/release")
	if got := e.say(alice, "/xyzzy"); strings.Contains(got, "Did you mean") {
		t.Errorf("/xyzzy got a suggestion: %q", got)
	}
}

func TestCore_TypoInLines(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	out := e.handle(e.update(alice, "/topup autdl 100\n/stauts\n/topup autodl 5"))
	if len(out) != 1 {
		t.Fatalf("want one answer, got %+v", out)
	}
	contains(t, out[0].Out.Text, "line 1, 2", "autodl", "/status")
	b := e.book(alice)
	if len(b.TopUps) != 1 || b.TopUps[0].Platform != "autodl" || b.TopUps[0].Amount.String() != "5" {
		t.Fatalf("top-ups = %+v", b.TopUps)
	}
}

func TestParse_UnknownCommandNear(t *testing.T) {
	_, err := command.Parse("/stauts", t0, time.UTC)
	var pe *command.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("Parse(/stauts) = %v, want a ParseError", err)
	}
	contains(t, bot.ErrorText(err, chat.LangEN), "/stauts", "/status")
	contains(t, bot.ErrorText(err, chat.LangZH), "/status")
}

func TestConversation_TypoButtons(t *testing.T) {
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice}, TZ: "Asia/Shanghai"})
	m := c.say(alice, "/topup autdl 100")
	contains(t, m.Text, "Did you mean", "autodl")
	var labels []string
	for _, row := range m.Buttons {
		for _, b := range row {
			labels = append(labels, b.Text)
		}
	}
	if len(labels) != 3 || !strings.Contains(labels[0], "Use autodl") || !strings.Contains(labels[1], "Create autdl") {
		t.Fatalf("buttons = %q", labels)
	}
	if n := len(c.book(alice).TopUps); n != 0 {
		t.Fatalf("%d top-ups before any choice", n)
	}
	c.settle(c.fake.PressButton(alice, alice, m.ID, m.Buttons[0][0].Data))
	msgs := c.fake.Messages(alice)
	card := msgs[len(msgs)-1]
	if card.ID != m.ID || len(card.Buttons) != 0 || !strings.Contains(card.Text, "top-up ¥100.00 on autodl") {
		t.Fatalf("card after Use: %+v", card)
	}
	if b := c.book(alice); len(b.TopUps) != 1 || b.TopUps[0].Platform != "autodl" {
		t.Fatalf("top-ups = %+v", b.TopUps)
	}
	contains(t, c.say(alice, "/stauts").Text, "Did you mean /status?")
}
