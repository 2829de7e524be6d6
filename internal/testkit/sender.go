package testkit

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/gpuledger/gpuledger/chat"
)

// Sender is a chat.Sender that records what is sent, for tests that drive
// the scheduler or a handler without a transport. Send numbers new
// messages 1, 2, 3 … and returns an edit's own ID, as Telegram does. The
// zero value is ready to use; it is safe for concurrent use.
type Sender struct {
	mu     sync.Mutex
	next   int
	msgs   []chat.Outgoing
	toasts []string
	log    []Sent // messages and toasts in the order they came
	taken  int    // how much of log Take has returned
	err    error
}

// Sent is one thing a Sender received: a message, or the toast of a
// callback answer (IsAnswer).
type Sent struct {
	Out      chat.Outgoing
	Callback string // the toast text, for callback answers
	IsAnswer bool
}

// Send records m and returns its message ID, or the error set by FailWith
// (recording nothing, as when the transport is down).
//
// A text with a formatting error of fmt ("%!d(string=2)", "%!(EXTRA …)")
// panics: a template and its arguments disagree, and every test that
// sends through a Sender should fail loudly at the call that made it.
func (s *Sender) Send(_ context.Context, m chat.Outgoing) (int, error) {
	mustBeFormatted(m.Text)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	s.msgs = append(s.msgs, m)
	s.log = append(s.log, Sent{Out: m})
	if m.EditMessageID != 0 {
		return m.EditMessageID, nil
	}
	s.next++
	return s.next, nil
}

// AnswerCallback records the toast text ("" too).
func (s *Sender) AnswerCallback(_ context.Context, _, text string) error {
	mustBeFormatted(text)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.toasts = append(s.toasts, text)
	s.log = append(s.log, Sent{Callback: text, IsAnswer: true})
	return nil
}

// Take returns the messages and toasts received since the last Take, in
// the order they came: for tests that check one exchange at a time.
func (s *Sender) Take() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]Sent(nil), s.log[s.taken:]...)
	s.taken = len(s.log)
	return out
}

// FailWith makes every later Send return err; nil makes Send work again.
func (s *Sender) FailWith(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// Sent returns every message sent so far, edits included, in order.
func (s *Sender) Sent() []chat.Outgoing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]chat.Outgoing(nil), s.msgs...)
}

// NewMessages returns the messages sent so far that are not edits.
func (s *Sender) NewMessages() []chat.Outgoing {
	var out []chat.Outgoing
	for _, m := range s.Sent() {
		if m.EditMessageID == 0 {
			out = append(out, m)
		}
	}
	return out
}

// Toasts returns the texts of the callback answers so far, in order.
func (s *Sender) Toasts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.toasts...)
}

// mustBeFormatted panics when text holds "%!", fmt's mark of a verb and
// an argument that disagree, or of a missing, extra or misindexed one.
func mustBeFormatted(text string) {
	if strings.Contains(text, "%!") {
		panic(fmt.Sprintf("testkit: a sent text has a formatting error: %q", text))
	}
}
