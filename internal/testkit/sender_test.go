package testkit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/testkit"
)

// TestSender numbers new messages as Telegram does, returns an edit's own
// ID, keeps toasts, and records nothing while failing.
func TestSender(t *testing.T) {
	ctx := context.Background()
	var s testkit.Sender
	var _ chat.Sender = &s
	if id, _ := s.Send(ctx, chat.Outgoing{ChatID: 1, Text: "a"}); id != 1 {
		t.Errorf("first message ID %d, want 1", id)
	}
	if id, _ := s.Send(ctx, chat.Outgoing{ChatID: 1, Text: "a'", EditMessageID: 1}); id != 1 {
		t.Errorf("edit returned ID %d, want 1", id)
	}
	if id, _ := s.Send(ctx, chat.Outgoing{ChatID: 1, Text: "b"}); id != 2 {
		t.Errorf("second message ID %d, want 2", id)
	}
	boom := errors.New("down")
	s.FailWith(boom)
	if _, err := s.Send(ctx, chat.Outgoing{ChatID: 1, Text: "lost"}); !errors.Is(err, boom) {
		t.Errorf("Send while failing: %v, want %v", err, boom)
	}
	s.FailWith(nil)
	s.AnswerCallback(ctx, "cb", "ok")
	if got := len(s.Sent()); got != 3 {
		t.Errorf("%d messages recorded, want 3 (the failed one not)", got)
	}
	if got := s.NewMessages(); len(got) != 2 || got[0].Text != "a" || got[1].Text != "b" {
		t.Errorf("new messages %+v, want a and b", got)
	}
	if got := s.Toasts(); len(got) != 1 || got[0] != "ok" {
		t.Errorf("toasts %q, want [ok]", got)
	}
}

// TestSender_Take returns messages and toasts in the order they came, each
// once.
func TestSender_Take(t *testing.T) {
	ctx := context.Background()
	var s testkit.Sender
	s.Send(ctx, chat.Outgoing{Text: "a"})
	s.AnswerCallback(ctx, "cb", "done")
	s.Send(ctx, chat.Outgoing{Text: "b"})
	got := s.Take()
	if len(got) != 3 || got[0].Out.Text != "a" || !got[1].IsAnswer || got[1].Callback != "done" || got[2].Out.Text != "b" {
		t.Fatalf("Take() = %+v, want a, the toast, b", got)
	}
	if again := s.Take(); len(again) != 0 {
		t.Fatalf("second Take() = %+v, want nothing new", again)
	}
	s.Send(ctx, chat.Outgoing{Text: "c"})
	if got := s.Take(); len(got) != 1 || got[0].Out.Text != "c" {
		t.Fatalf("Take() after one more = %+v, want c", got)
	}
}

// TestSender_FormattingErrorPanics: a text where a template and its
// arguments disagree stops the test at the call that sent it.
func TestSender_FormattingErrorPanics(t *testing.T) {
	ctx := context.Background()
	var s testkit.Sender
	for _, send := range []func(){
		func() { s.Send(ctx, chat.Outgoing{ChatID: 1, Text: "%!d(string=2) GPUs"}) },
		func() { s.AnswerCallback(ctx, "cb", "done %!s(MISSING)") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a text with fmt's error mark was sent without a panic")
				}
			}()
			send()
		}()
	}
	if got := len(s.Sent()) + len(s.Toasts()); got != 0 {
		t.Errorf("%d malformed texts were recorded", got)
	}
	if _, err := s.Send(ctx, chat.Outgoing{ChatID: 1, Text: "50% off"}); err != nil {
		t.Errorf("a plain percent sign: %v", err)
	}
}
