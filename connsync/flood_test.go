package connsync_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/ledger"
)

// pods are n running pods "fl0000".. named "flood-N", started an hour
// before t0.
func pods(from, n int) []runpodfake.Pod {
	var out []runpodfake.Pod
	for i := from; i < from+n; i++ {
		out = append(out, pod(fmt.Sprintf("fl%04d", i), fmt.Sprintf("flood-%d", i), "RUNNING", "0.79", t0.Add(-time.Hour)))
	}
	return out
}

// card returns the one flood card among ms, with its buttons' data by
// label.
func card(t *testing.T, ms []chat.Outgoing) (chat.Outgoing, map[string]string) {
	t.Helper()
	if len(ms) != 1 {
		t.Fatalf("want one card, got %d messages: %q", len(ms), texts(ms))
	}
	data := map[string]string{}
	for _, row := range ms[0].Buttons {
		for _, b := range row {
			data[b.Text] = b.Data
		}
	}
	if data["Log all"] == "" || data["Show them"] == "" || data["Ignore"] == "" {
		t.Fatalf("card %q has buttons %v", ms[0].Text, data)
	}
	return ms[0], data
}

// TestSync_Flood: a listing of more new instances than the sync logs by
// itself is one card, edited in place and kept over a restart, with no
// rental until the user answers; each answer does what it says.
func TestSync_Flood(t *testing.T) {
	t.Run("OneCardNoRentals", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pods(0, 30)...)
		e.connect("runpod")
		e.round()
		if n := len(e.book().Rentals); n != 0 {
			t.Fatalf("%d rentals from a listing of 30 new pods, want none before an answer", n)
		}
		c, _ := card(t, e.snd.take())
		if !strings.Contains(c.Text, "RunPod lists 30 instances you have not logged") || c.EditMessageID != 0 {
			t.Fatalf("card = %+v", c)
		}
		e.round()
		e.restart()
		e.round()
		if ms := e.snd.take(); len(ms) != 0 {
			t.Fatalf("the same flood, over a restart, said again: %q", texts(ms))
		}
		e.rp.SetPods(pods(0, 31)...)
		e.round()
		ms := e.snd.take()
		if len(ms) != 1 || ms[0].EditMessageID != 1 || !strings.Contains(ms[0].Text, "31 instances") {
			t.Fatalf("one more pod: %d messages %+v, want the card (message 1) edited", len(ms), ms)
		}
		if n := len(e.book().Rentals); n != 0 {
			t.Fatalf("%d rentals, want none before an answer", n)
		}
	})
	t.Run("LogAll", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pods(0, 30)...)
		e.connect("runpod")
		e.round()
		_, data := card(t, e.snd.take())
		e.press(data["Log all"], "tg:1:update:1")
		e.snd.take() // the card edited: "Logging…"
		e.round()
		if n := len(e.book().Rentals); n != 30 {
			t.Fatalf("%d rentals after Log all, want 30", n)
		}
		ms := e.snd.take()
		if len(ms) != 1 || ms[0].EditMessageID != 1 || !strings.Contains(ms[0].Text, "Logged 30 instances") {
			t.Fatalf("after Log all: %q, want one summary on the card", texts(ms))
		}
		e.press(data["Log all"], "tg:1:update:2")
		if a := e.snd.answers[len(e.snd.answers)-1]; a != "Already answered." {
			t.Fatalf("a second press answered %q", a)
		}
		e.round()
		if ms := e.snd.take(); len(ms) != 0 || len(e.book().Rentals) != 30 {
			t.Fatalf("after the summary: %q, %d rentals", texts(ms), len(e.book().Rentals))
		}
		// The 30 the user chose to log do not count against the day:
		// one more pod is logged as usual, not a new card.
		e.rp.SetPods(pods(0, 31)...)
		e.round()
		if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "logged as <b>flood-30</b>") {
			t.Fatalf("a pod after Log all: %q", texts(ms))
		}
	})
	t.Run("Ignore", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pods(0, 30)...)
		e.connect("runpod")
		e.round()
		_, data := card(t, e.snd.take())
		e.press(data["Ignore"], "tg:1:update:1")
		e.snd.take()
		e.round()
		ms := e.snd.take()
		if len(ms) != 1 || !strings.Contains(ms[0].Text, "Ignored 30 instances") {
			t.Fatalf("after Ignore: %q", texts(ms))
		}
		// Ignored ones never come back; a new one counts afresh.
		e.rp.SetPods(pods(0, 31)...)
		e.restart()
		e.round()
		e.round()
		b := e.book()
		if len(b.Rentals) != 1 || b.Rentals[0].PlatformID != "fl0030" {
			t.Fatalf("after a new pod: %s", e.snapshot())
		}
		if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "logged as") {
			t.Fatalf("the new pod said %q", texts(ms))
		}
	})
	t.Run("Show", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pods(0, 30)...)
		e.connect("runpod")
		e.round()
		_, data := card(t, e.snd.take())
		e.press(data["Show them"], "")
		ms := e.snd.take()
		if len(ms) != 1 || !strings.Contains(ms[0].Text, "fl0000 (flood-0)") || !strings.Contains(ms[0].Text, "fl0019") ||
			strings.Contains(ms[0].Text, "fl0020") || !strings.Contains(ms[0].Text, "10 more") || !strings.Contains(ms[0].Text, "$0.79/h") {
			t.Fatalf("Show them: %q", texts(ms))
		}
		if n := len(e.book().Rentals); n != 0 {
			t.Fatalf("Show them logged %d rentals", n)
		}
	})
	t.Run("PerDay", func(t *testing.T) {
		// Five a round for four rounds are logged; the fifth round's
		// five would pass MaxNewPerDay: a card. A day later the count is
		// afresh.
		e := newEnv(t)
		e.connect("runpod")
		for i := range 4 {
			e.rp.SetPods(pods(0, (i+1)*connsync.MaxNewPerRound)...)
			e.round()
		}
		if n := len(e.book().Rentals); n != connsync.MaxNewPerDay {
			t.Fatalf("%d rentals after four rounds of five, want %d", n, connsync.MaxNewPerDay)
		}
		e.snd.take()
		e.rp.SetPods(pods(0, 25)...)
		e.round()
		card(t, e.snd.take())
		if n := len(e.book().Rentals); n != 20 {
			t.Fatalf("%d rentals past the day's cap", n)
		}
	})
	t.Run("KnownKeepSyncing", func(t *testing.T) {
		// A flood does not stop what is logged already: a stop of a
		// logged pod is recorded and told during it.
		e := newEnv(t)
		e.rp.SetPods(pod("own1", "mine", "RUNNING", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		e.round()
		e.snd.take()
		e.rp.SetPods(append(pods(0, 30), pod("own1", "mine", "EXITED", "0.79", t0.Add(-time.Hour)))...)
		e.round()
		if r := e.rental("mine"); r.State() != ledger.Stopped {
			t.Fatalf("the logged pod is %s during a flood, want stopped", r.State())
		}
		ms := e.snd.take()
		if len(ms) != 2 || !strings.Contains(texts(ms), "stopped <b>mine</b>") {
			t.Fatalf("during a flood: %q, want the stop and the card", texts(ms))
		}
	})
}

// failing is a chat.Sender that fails every send while down.
type failing struct {
	mu   sync.Mutex
	down bool
	sent
}

func (f *failing) Send(ctx context.Context, m chat.Outgoing) (int, error) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		return 0, errors.New("chat down")
	}
	return f.sent.Send(ctx, m)
}

// TestSync_NoticeSurvives: the "logged as" line, a stop's line and a
// price notice are written with their changes; a process that dies
// before they go out (here: the chat failing until the restart) tells
// them after the restart, once each.
func TestSync_NoticeSurvives(t *testing.T) {
	e := newEnv(t)
	f := &failing{down: true}
	e.s.SetSender(f)
	e.rp.SetPods(pod("abc1", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	e.rp.SetPods(pod("abc1", "box1", "EXITED", "0.99", t0.Add(-time.Hour)))
	e.round()
	if r := e.rental("box1"); r.State() != ledger.Stopped {
		t.Fatalf("box1 is %s", r.State())
	}
	// The process dies; the next one's chat works.
	e.restart()
	f2 := &sent{}
	e.s.SetSender(f2)
	e.round()
	e.round()
	got := texts(f2.take())
	for _, want := range []string{"logged as <b>box1</b>", "stopped <b>box1</b>", "lists <b>box1</b> at $0.99/h"} {
		if strings.Count(got, want) != 1 {
			t.Fatalf("after the restart: %q, want %q once", got, want)
		}
	}
}
