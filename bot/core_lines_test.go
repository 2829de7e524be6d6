package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestCore_RedeliveredAnswered: a change applied by a delivery whose
// answer was lost is answered from what was stored when the transport
// says so (Redelivered), and not applied again; a question is answered
// again; without Redelivered a duplicate stays silent.
func TestCore_RedeliveredAnswered(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	u := e.update(alice, "/rent box1 autodl 4090 1.88/h")
	e.handle(u)
	if out := e.handle(u); len(out) != 0 {
		t.Fatalf("plain duplicate answered: %+v", out)
	}
	u.Redelivered = true
	out := e.handle(u)
	if len(out) != 1 || !strings.Contains(out[0].Out.Text, "Already recorded") || !strings.Contains(out[0].Out.Text, "/rent box1") {
		t.Fatalf("redelivered change: %+v", out)
	}
	q := e.update(alice, "/status")
	e.handle(q)
	q.Redelivered = true
	if out := e.handle(q); len(out) != 1 || !strings.Contains(out[0].Out.Text, "box1") {
		t.Fatalf("redelivered question: %+v", out)
	}
	bad := e.update(alice, "/stop nosuch")
	e.handle(bad)
	bad.Redelivered = true
	if out := e.handle(bad); len(out) != 1 || !strings.Contains(out[0].Out.Text, "nosuch") {
		t.Fatalf("redelivered error: %+v", out)
	}
	if n := len(e.book(alice).Rentals); n != 1 {
		t.Fatalf("%d rentals", n)
	}
}

// TestCore_SentAtIsTheCommandTime: an update handled late is recorded at
// the time it was sent; one handled at once at the clock.
func TestCore_SentAtIsTheCommandTime(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h at -3h")
	u := e.update(alice, "/stop box1")
	u.SentAt = e.now.Add(-time.Hour).Truncate(time.Second)
	e.handle(u)
	r := e.book(alice).Rentals[0]
	if got := r.Events[len(r.Events)-1]; got.Kind != ledger.EventStop || !got.At.Equal(u.SentAt) {
		t.Fatalf("late /stop recorded %v at %v, want stop at %v (when it was sent)", got.Kind, got.At, u.SentAt)
	}
	u = e.update(alice, "/resume box1")
	u.SentAt = e.now.Add(-time.Second).Truncate(time.Second)
	e.handle(u)
	r = e.book(alice).Rentals[0]
	if got := r.Events[len(r.Events)-1]; !got.At.Equal(e.now.Truncate(time.Second)) {
		t.Fatalf("prompt /resume at %v, want the clock %v", got.At, e.now)
	}
}

// TestCore_CommandLines: one command per line runs each line with its
// own key and answers once; a failing line does not stop the others; a
// redelivery applies nothing twice.
func TestCore_CommandLines(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	u := e.update(alice, "/rent box1 autodl 4090 1.88/h\n  /charge box1 5 a \n/stop nosuch\n/charge box1 7 b")
	out := e.handle(u)
	if len(out) != 1 {
		t.Fatalf("%d answers, want 1: %+v", len(out), out)
	}
	for _, want := range []string{"3 applied", "line 3", "<b>1.</b>", "<b>4.</b>", "nosuch"} {
		if !strings.Contains(out[0].Out.Text, want) {
			t.Errorf("answer lacks %q: %s", want, out[0].Out.Text)
		}
	}
	if out := e.handle(u); len(out) != 0 {
		t.Errorf("redelivery answered: %+v", out)
	}
	b := e.book(alice)
	if len(b.Rentals) != 1 || len(b.Charges) != 2 {
		t.Fatalf("%d rentals, %d charges; want 1 and 2", len(b.Rentals), len(b.Charges))
	}
	// Not a list: a command followed by plain text stays one message.
	if got := e.say(alice, "/charge box1 1 note\nmore words"); !strings.Contains(got, "recorded") {
		t.Errorf("a command with a second line of text: %q", got)
	}
}
