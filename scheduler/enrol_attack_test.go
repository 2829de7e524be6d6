package scheduler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestEnrolFloodCards: a leaked enrolment token announces 1,000
// instances at the rate limit (one a second), each with a host name
// that is HTML and control characters. The chat gets at most
// ledger.MaxCardsPerHour cards of their own and one merged card, edited
// in place; nothing it shows of the forged names is markup.
func TestEnrolFloodCards(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.enrolToken()
	e.chat.Take()
	held := 0
	for i := range 1000 {
		ans := e.announce(tok, instance{platform: "runpod", id: fmt.Sprintf("f%04d", i), host: fmt.Sprintf("<b>x%d</b>&\n\u202e", i),
			gpu: "NVIDIA H100 80GB HBM3", gpus: 8, boot: t0.Add(-time.Hour)})
		if ans.State == wire.EnrolHeld {
			held++
		}
		e.clk.Add(time.Second)
	}
	if held != 1000-ledger.MaxPendingInstances {
		t.Errorf("%d held, want %d", held, 1000-ledger.MaxPendingInstances)
	}
	var own, merged, edits int
	mergedID := 0
	for _, s := range e.chat.Take() {
		m := s.Out
		if s.IsAnswer {
			continue
		}
		if strings.Contains(m.Text, "<b>x") || strings.Contains(m.Text, "\u202e") || strings.Contains(m.Text, "&\n") {
			t.Errorf("a forged host name shown as markup or with its control characters: %q", m.Text)
		}
		switch {
		case m.EditMessageID != 0:
			edits++
			if m.EditMessageID != mergedID {
				t.Errorf("an edit of message %d, the merged card is %d", m.EditMessageID, mergedID)
			}
		case strings.HasPrefix(m.Text, "New instance"):
			own++
		case strings.Contains(m.Text, "More new instances"):
			merged++
			mergedID = e.msgID(m)
		default:
			t.Errorf("unexpected message %q", m.Text)
		}
	}
	if own != ledger.MaxCardsPerHour || merged != 1 || edits > ledger.MaxPendingInstances-ledger.MaxCardsPerHour-1 {
		t.Fatalf("%d cards of their own, %d merged cards, %d edits; want %d, 1, at most %d", own, merged, edits,
			ledger.MaxCardsPerHour, ledger.MaxPendingInstances-ledger.MaxCardsPerHour-1)
	}
}

// TestForgedReturnedFlood: whoever holds the enrolment token claims the
// key of an instance the user logged, with a new boot every few minutes
// for a day. Each is "the instance back without its own token" to the
// hub; the user must not get a card for each.
func TestForgedReturnedFlood(t *testing.T) {
	e := newEnv(t, nil)
	tok, in, _, _ := e.returned()
	e.chat.Take()
	start := e.clk.Now()
	for e.clk.Now().Sub(start) < 24*time.Hour {
		e.clk.Add(10*time.Minute + time.Second)
		in.boot = e.clk.Now().Add(-time.Second)
		e.announce(tok, in)
	}
	n := 0
	for _, s := range e.chat.Take() {
		if !s.IsAnswer && s.Out.EditMessageID == 0 {
			n++
		}
	}
	if n > 25 {
		t.Fatalf("a day of forged returns brought %d messages, want at most one an hour", n)
	}
}
