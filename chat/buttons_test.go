package chat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// testKey is a 32-byte button secret.
var testKey = []byte("gpuledger-button-secret-32-bytes")

// answers records the toasts a press got.
type answers struct{ toasts []string }

func (a *answers) Send(context.Context, Outgoing) (int, error) { return 0, nil }
func (a *answers) AnswerCallback(_ context.Context, _, text string) error {
	a.toasts = append(a.toasts, text)
	return nil
}

// wordErr is the test's ErrorText: the error's text in the presser's
// language, so a test sees both the error and the language reach it.
func wordErr(_ context.Context, p ButtonPress, err error) string {
	return p.Lang + ": " + err.Error()
}

// press returns the callback update of user pressing data.
func press(user int64, data string, lang string) ButtonPress {
	return ButtonPress{Update: Update{Kind: KindCallback, UserID: user, CallbackID: "cb", CallbackData: data}, Lang: lang, Now: time.Unix(1e9, 0)}
}

// TestButtons_SignedBeforeVerifies pins the data format: data signed by
// the core's signer before the router existed (these values) still
// verifies with the same key, so buttons already sent keep working after
// an upgrade.
func TestButtons_SignedBeforeVerifies(t *testing.T) {
	b := NewButtons(testKey, wordErr)
	for _, c := range []struct {
		user            int64
		action, payload string
		data            string
	}{
		{42, "pc", "1a.2", "pc:1a.2:IqwTwudEtn6FhpLc"},
		{-7, "rel", "123", "rel:123:WsHy6lVpQWG4f1Fr"},
		{1 << 40, "pterm", "", "pterm::PHZuw4_Xhfux2rL_"},
	} {
		got, err := b.Sign(c.user, c.action, c.payload)
		if err != nil || got != c.data {
			t.Errorf("Sign(%d, %q, %q) = %q, %v; want %q", c.user, c.action, c.payload, got, err, c.data)
		}
		a, p, ok := b.verify(c.user, c.data)
		if !ok || a != c.action || p != c.payload {
			t.Errorf("verify(%q) = %q, %q, %v", c.data, a, p, ok)
		}
	}
}

// TestButtons_Dispatch presses buttons: only an unaltered press by the
// user it was made for runs the handler, with the signed action and
// payload; the others are told why in the presser's language.
func TestButtons_Dispatch(t *testing.T) {
	b := NewButtons(testKey, wordErr)
	var ran []ButtonPress
	b.Handle("rel", func(_ context.Context, p ButtonPress, s Sender) error {
		ran = append(ran, p)
		return s.AnswerCallback(context.Background(), p.Update.CallbackID, "released")
	})
	good, err := b.Sign(7, "rel", "12")
	if err != nil {
		t.Fatal(err)
	}
	unknown, err := b.Sign(7, "old", "12")
	if err != nil {
		t.Fatal(err)
	}
	other := NewButtons([]byte("another-secret-of-another-server"), wordErr)
	foreign, err := other.Sign(7, "rel", "12")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		user  int64
		data  string
		lang  string
		toast string
		runs  bool
	}{
		{"its user", 7, good, LangEN, "released", true},
		{"another user", 8, good, LangEN, "This button is not yours (or it is no longer valid).", false},
		{"another user, Chinese", 8, good, LangZH, "这个按钮不是给你的（或已失效）。", false},
		{"altered payload", 7, strings.Replace(good, ":12:", ":13:", 1), LangEN, "This button is not yours (or it is no longer valid).", false},
		{"altered action", 7, "re1" + good[3:], LangEN, "This button is not yours (or it is no longer valid).", false},
		{"another key", 7, foreign, LangEN, "This button is not yours (or it is no longer valid).", false},
		{"no MAC", 7, "rel:12", LangEN, "This button is not yours (or it is no longer valid).", false},
		{"empty", 7, "", LangEN, "This button is not yours (or it is no longer valid).", false},
		{"over-long", 7, good + strings.Repeat("x", MaxButtonData), LangEN, "This button is not yours (or it is no longer valid).", false},
		{"unknown action", 7, unknown, LangEN, "This button no longer works.", false},
		{"unknown action, Chinese", 7, unknown, LangZH, "这个按钮已失效。", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ran = nil
			a := &answers{}
			if err := b.Dispatch(context.Background(), press(c.user, c.data, c.lang), a); err != nil {
				t.Fatal(err)
			}
			if len(a.toasts) != 1 || a.toasts[0] != c.toast {
				t.Errorf("toasts %q, want [%q]", a.toasts, c.toast)
			}
			if c.runs != (len(ran) == 1) {
				t.Fatalf("handler ran %d times, want run=%v", len(ran), c.runs)
			}
			if c.runs && (ran[0].Action != "rel" || ran[0].Payload != "12" || ran[0].Update.UserID != 7) {
				t.Errorf("press %+v", ran[0])
			}
		})
	}
}

// TestButtons_HandlerError: a handler that fails answers nothing; the
// press is answered once with the ErrorText's words for the presser.
func TestButtons_HandlerError(t *testing.T) {
	b := NewButtons(testKey, wordErr)
	b.Handle("x", func(context.Context, ButtonPress, Sender) error { return errors.New("refused") })
	d, err := b.Sign(3, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	a := &answers{}
	if err := b.Dispatch(context.Background(), press(3, d, LangZH), a); err != nil {
		t.Fatal(err)
	}
	if len(a.toasts) != 1 || a.toasts[0] != "zh: refused" {
		t.Errorf("toasts %q, want the rendered error", a.toasts)
	}
}

// TestButtons_LongToastClipped: a toast longer than Telegram shows is
// cut, not refused.
func TestButtons_LongToastClipped(t *testing.T) {
	b := NewButtons(testKey, func(context.Context, ButtonPress, error) string { return strings.Repeat("长", 100) })
	b.Handle("x", func(context.Context, ButtonPress, Sender) error { return errors.New("no") })
	d, _ := b.Sign(3, "x", "")
	a := &answers{}
	if err := b.Dispatch(context.Background(), press(3, d, LangEN), a); err != nil {
		t.Fatal(err)
	}
	if len(a.toasts) != 1 || len(a.toasts[0]) > maxToast+len("…") || !strings.HasSuffix(a.toasts[0], "…") {
		t.Errorf("toast of %d bytes %q", len(a.toasts[0]), a.toasts)
	}
}

// failing is a Sender whose answers fail.
type failing struct{ answers }

func (failing) AnswerCallback(context.Context, string, string) error { return errors.New("network") }

// TestButtons_AnswerFails: a failure to answer is Dispatch's error.
func TestButtons_AnswerFails(t *testing.T) {
	b := NewButtons(testKey, wordErr)
	if err := b.Dispatch(context.Background(), press(1, "forged", LangEN), &failing{}); err == nil {
		t.Error("Dispatch = nil, want the answer's error")
	}
}

// TestButtons_SignRefuses: data that would not fit or not parse back is
// an error, not a button.
func TestButtons_SignRefuses(t *testing.T) {
	b := NewButtons(testKey, wordErr)
	for _, c := range []struct{ action, payload string }{
		{"", "1"},
		{"toolong", "1"},
		{"a:b", "1"},
		{"rel", "1:2"},
		{"rel", strings.Repeat("9", MaxButtonPayload+1)},
	} {
		if d, err := b.Sign(1, c.action, c.payload); err == nil {
			t.Errorf("Sign(%q, %q) = %q, want an error", c.action, c.payload, d)
		}
	}
	d, err := b.Sign(1, "pterm", strings.Repeat("9", MaxButtonPayload))
	if err != nil || len(d) > MaxButtonData {
		t.Errorf("the longest data: %q (%d bytes), %v", d, len(d), err)
	}
}

// TestButtons_HandlePanics: two owners of one action, an action that
// cannot be signed, or no handler is caught when the server is built.
func TestButtons_HandlePanics(t *testing.T) {
	nop := func(context.Context, ButtonPress, Sender) error { return nil }
	for _, c := range []struct {
		name string
		do   func(b *Buttons)
	}{
		{"duplicate", func(b *Buttons) { b.Handle("rel", nop); b.Handle("rel", nop) }},
		{"empty action", func(b *Buttons) { b.Handle("", nop) }},
		{"long action", func(b *Buttons) { b.Handle("toolong", nop) }},
		{"colon", func(b *Buttons) { b.Handle("a:b", nop) }},
		{"nil handler", func(b *Buttons) { b.Handle("rel", nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			c.do(NewButtons(testKey, wordErr))
		})
	}
}

// TestButtonTexts checks the router's own catalog.
func TestButtonTexts(t *testing.T) {
	for _, err := range buttonTexts.Check() {
		t.Error(err)
	}
}

// TestButtonPress_ActsOnBy: a press acts on the ledger its button was
// verified for and names the presser only on a team's ledger, where the
// store checks and journals them; a press no Dispatch saw acts on the
// presser's own ledger as itself.
func TestButtonPress_ActsOnBy(t *testing.T) {
	b := NewButtons(testKey, wordErr)
	const team = -(int64(1) << 52) - 7
	var got ButtonPress
	b.Handle("x", func(_ context.Context, p ButtonPress, _ Sender) error { got = p; return nil })
	own, _ := b.Sign(42, "x", "1")
	teamData, _ := b.Sign(team, "x", "1")
	for _, c := range []struct {
		data       string
		wantLedger int64
		wantBy     int64
	}{{own, 42, 0}, {teamData, team, 42}} {
		got = ButtonPress{}
		p := ButtonPress{Update: Update{UserID: 42, CallbackData: c.data}, Teams: map[int64]string{team: "member"}}
		if err := b.Dispatch(context.Background(), p, &answers{}); err != nil {
			t.Fatal(err)
		}
		if got.ActsOn() != c.wantLedger || got.By() != c.wantBy {
			t.Errorf("press of %q: ActsOn %d By %d, want %d %d", c.data, got.ActsOn(), got.By(), c.wantLedger, c.wantBy)
		}
	}
	if p := (ButtonPress{Update: Update{UserID: 9}}); p.ActsOn() != 9 || p.By() != 0 {
		t.Errorf("undispatched press: ActsOn %d By %d, want 9 0", p.ActsOn(), p.By())
	}
}
