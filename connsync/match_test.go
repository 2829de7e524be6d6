package connsync_test

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// handRental logs a rental by hand, as /rent does.
func (e *env) handRental(name, platform string, start time.Time) *ledger.Rental {
	e.t.Helper()
	r := ledger.Rental{UserID: uid, Name: name, Platform: platform, GPU: "A40", GPUCount: 2, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("0.79"), Unit: ledger.UnitHour}, Currency: ledger.USD,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: start}}}
	if p, ok := ledger.LookupProfile(platform); ok {
		p.Apply(&r)
	}
	got, err := e.db.CreateRental(e.ctx, ledger.Action{UserID: uid, At: e.clk.Now()}, r)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// question returns the one question card among ms.
func question(t *testing.T, ms []chat.Outgoing) chat.Outgoing {
	t.Helper()
	var q []chat.Outgoing
	for _, m := range ms {
		if len(m.Buttons) > 0 {
			q = append(q, m)
		}
	}
	if len(q) != 1 {
		t.Fatalf("want one question, got %q", texts(ms))
	}
	return q[0]
}

func TestSync_Ask(t *testing.T) {
	setup := func(t *testing.T) (*env, chat.Outgoing) {
		e := newEnv(t)
		for i, n := range []string{"old", "mid", "new", "newest"} {
			e.handRental(n, "runpod", t0.Add(-time.Duration(10-i)*time.Hour))
		}
		e.handRental("elsewhere", "vast", t0.Add(-time.Hour))
		e.rp.SetPods(pod("abc123", "", "RUNNING", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		e.round()
		q := question(t, e.snd.take())
		if !strings.Contains(q.Text, "RunPod lists abc123 (2× A40, $0.79/h). Is it one of your rentals?") {
			t.Fatalf("question = %q", q.Text)
		}
		var labels []string
		for _, row := range q.Buttons {
			for _, b := range row {
				labels = append(labels, b.Text)
			}
		}
		if got := strings.Join(labels, "|"); got != "newest (A40)|new (A40)|mid (A40)|A new rental|Don't track it" {
			t.Fatalf("buttons = %s", got)
		}
		e.round()
		if ms := e.snd.take(); len(ms) != 0 {
			t.Fatalf("asked again: %q", texts(ms))
		}
		if n := len(e.book().Rentals); n != 5 {
			t.Fatalf("%d rentals while asking, want the 5 logged", n)
		}
		return e, q
	}
	t.Run("Bind", func(t *testing.T) {
		e, q := setup(t)
		e.press(q.Buttons[1][0].Data, "tg:update:5")
		e.press(q.Buttons[1][0].Data, "tg:update:5") // redelivered
		if r := e.rental("new"); r.PlatformID != "abc123" {
			t.Fatalf("rental new = %+v", r)
		}
		if got := e.snd.answers; len(got) != 2 || got[1] != "Already answered." {
			t.Fatalf("answers = %q", got)
		}
		// The next polls sync it: a stop is applied to the bound rental.
		e.rp.SetPods(pod("abc123", "", "EXITED", "0.79", t0.Add(-time.Hour)))
		e.round()
		if r := e.rental("new"); r.State() != ledger.Stopped {
			t.Fatalf("bound rental not synced: %s", r.State())
		}
		if n := len(e.book().Rentals); n != 5 {
			t.Fatalf("%d rentals, want 5: a duplicate", n)
		}
	})
	t.Run("New", func(t *testing.T) {
		e, q := setup(t)
		last := q.Buttons[len(q.Buttons)-1]
		e.press(last[0].Data, "tg:update:6")
		e.press(last[0].Data, "tg:update:6")
		e.round()
		e.round()
		var synced []*ledger.Rental
		for _, r := range e.book().Rentals {
			if r.PlatformID == "abc123" {
				synced = append(synced, r)
			}
		}
		if len(synced) != 1 || synced[0].Name != "runpod-abc123" || !synced[0].Priced {
			t.Fatalf("synced rentals = %v", synced)
		}
	})
	t.Run("Skip", func(t *testing.T) {
		e, q := setup(t)
		last := q.Buttons[len(q.Buttons)-1]
		e.press(last[1].Data, "tg:update:7")
		e.round()
		e.round()
		if n := len(e.book().Rentals); n != 5 {
			t.Fatalf("%d rentals after Don't track it, want 5", n)
		}
		if ms := e.snd.take(); len(ms) != 1 || ms[0].EditMessageID == 0 || !strings.Contains(ms[0].Text, "will not be tracked") {
			t.Fatalf("messages = %q", texts(ms))
		}
		e.press(q.Buttons[0][0].Data, "tg:update:8") // a late press of another button
		if r := e.rental("newest"); r.PlatformID != "" {
			t.Fatalf("a declined instance was bound: %+v", r)
		}
	})
}

// TestSync_AgentMatch: a rental the agent reported the platform ID of is
// bound without a question.
func TestSync_AgentMatch(t *testing.T) {
	e := newEnv(t)
	var h [32]byte
	tok, _, err := e.db.IssueEnrolToken(e.ctx, uid, h, t0)
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := e.db.Announce(e.ctx, ledger.Instance{UserID: uid, TokenID: tok.ID, Key: "runpod:abc123", Platform: "runpod",
		PlatformID: "abc123", GPUModel: "A40", GPUCount: 2, LastSeen: t0})
	if err != nil {
		t.Fatal(err)
	}
	r := ledger.RentalFromInstance(in, &ledger.PriceOffer{Price: ledger.Price{Amount: ledger.MustDecimal("0.79"), Unit: ledger.UnitHour}, Currency: ledger.USD}, t0.Add(-time.Hour))
	adopted, _, err := e.db.AdoptInstance(e.ctx, ledger.Action{UserID: uid, At: t0}, in.ID, r, sha256.Sum256([]byte("agent")))
	if err != nil {
		t.Fatal(err)
	}
	e.handRental("other", "runpod", t0.Add(-30*time.Minute))
	e.rp.SetPods(pod("abc123", "", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	for _, m := range e.snd.take() {
		if len(m.Buttons) > 0 {
			t.Fatalf("asked although the agent said which rental: %q", m.Text)
		}
	}
	got, err := e.db.RentalByID(e.ctx, adopted.ID)
	if err != nil || got.PlatformID != "abc123" {
		t.Fatalf("adopted rental = %+v, %v", got, err)
	}
	if n := len(e.book().Rentals); n != 2 {
		t.Fatalf("%d rentals, want 2", n)
	}
}
