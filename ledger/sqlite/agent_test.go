package sqlite_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestDB_IssueToken(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	r := mustRent(t, db, 1, "box1", t0)
	h1, h2 := sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))

	t.Run("OK", func(t *testing.T) {
		tok, err := db.IssueToken(ctx, 1, "box1", h1, at(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if tok.RentalID != r.ID || tok.Rental != "box1" || !tok.Valid() {
			t.Fatalf("token = %+v", tok)
		}
		got, err := db.TokenByHash(ctx, h1)
		if err != nil || got.RentalID != r.ID || !got.Valid() {
			t.Fatalf("TokenByHash = %+v, %v", got, err)
		}
	})
	t.Run("ReissueRevokes", func(t *testing.T) {
		if _, err := db.IssueToken(ctx, 1, "box1", h2, at(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		old, err := db.TokenByHash(ctx, h1)
		if err != nil || old.Valid() {
			t.Fatalf("old token = %+v, %v; want revoked", old, err)
		}
		valid, err := db.ValidTokens(ctx)
		if err != nil || len(valid) != 1 || valid[0].Hash != h2 {
			t.Fatalf("ValidTokens = %+v, %v", valid, err)
		}
	})
	t.Run("ErrNotFound/otherUser", func(t *testing.T) {
		_, err := db.IssueToken(ctx, 2, "box1", sha256.Sum256([]byte("c")), t0)
		wantCode(t, err, ledger.ENOTFOUND)
		_, err = db.TokenByHash(ctx, sha256.Sum256([]byte("nope")))
		wantCode(t, err, ledger.ENOTFOUND)
	})
	t.Run("RevokedOnRelease", func(t *testing.T) {
		mustEvent(t, db, 1, "box1", ledger.EventRelease, at(time.Hour))
		got, err := db.TokenByHash(ctx, h2)
		if err != nil || got.Valid() {
			t.Fatalf("token of released rental = %+v, %v; want revoked", got, err)
		}
		if v, _ := db.ValidTokens(ctx); len(v) != 0 {
			t.Fatalf("ValidTokens after release = %d", len(v))
		}
		_, err = db.IssueToken(ctx, 1, "box1", sha256.Sum256([]byte("d")), at(2*time.Hour))
		wantCode(t, err, ledger.ECONFLICT)
	})
}

func TestDB_SaveBeats(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	var beats []ledger.Beat
	// Two hours of 30 s beats: busy the first hour, idle the second.
	for i := range 240 {
		b := ledger.Beat{RentalID: r.ID, At: at(time.Duration(i) * 30 * time.Second), Verdict: ledger.VerdictBusy,
			BusyS: 30, UtilMean: 900, UtilMax: 1000, Samples: 6}
		if i >= 120 {
			b.Verdict, b.BusyS, b.IdleS, b.UtilMean, b.UtilMax = ledger.VerdictIdle, 0, 30, 0, 10
		}
		beats = append(beats, b)
	}
	st := ledger.AgentState{RentalID: r.ID, UserID: 1, LastSeen: at(2 * time.Hour), BootID: "b1", Seq: 240,
		Verdict: ledger.VerdictIdle, IdleSince: at(time.Hour), GPU: ledger.GPUFacts{Model: "NVIDIA GeForce RTX 4090", Count: 1, Source: "nvml"},
		Job: ledger.JobInfo{Command: "python train.py", Exited: true, ExitCode: 0}}
	// The streak's interval, opened as the hub does.
	if err := db.OpenIdle(ctx, r.ID, at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Saved in two batches, as the hub does.
	if err := db.SaveBeats(ctx, beats[:100], nil); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveBeats(ctx, beats[100:], []ledger.AgentState{st}); err != nil {
		t.Fatal(err)
	}
	hs, err := db.HourStats(ctx, r.ID, t0, at(3*time.Hour))
	if err != nil || len(hs) != 2 {
		t.Fatalf("HourStats = %+v, %v", hs, err)
	}
	if hs[0].BusyS != 3600 || hs[0].Beats != 120 || hs[0].UtilMeanPermille() != 900 || hs[0].UtilMax != 1000 {
		t.Errorf("hour 0 = %+v", hs[0])
	}
	if hs[1].IdleS != 3600 || hs[1].BusyS != 0 || hs[1].UtilMax != 10 {
		t.Errorf("hour 1 = %+v", hs[1])
	}
	got, err := db.Beats(ctx, r.ID, t0, at(time.Hour))
	if err != nil || len(got) != 120 {
		t.Fatalf("Beats = %d, %v", len(got), err)
	}
	n, err := db.PruneBeats(ctx, at(time.Hour))
	if err != nil || n != 120 {
		t.Fatalf("PruneBeats = %d, %v", n, err)
	}
	if hs2, _ := db.HourStats(ctx, r.ID, t0, at(3*time.Hour)); len(hs2) != 2 || hs2[0] != hs[0] {
		t.Fatalf("roll-up changed by pruning: %+v", hs2)
	}
	states, err := db.AgentStates(ctx)
	if err != nil || len(states) != 1 {
		t.Fatalf("AgentStates = %+v, %v", states, err)
	}
	g := states[0]
	if g.Verdict != ledger.VerdictIdle || !g.IdleSince.Equal(at(time.Hour)) || !g.IdleUntil.Equal(at(time.Hour)) || g.Job.Command != "python train.py" ||
		!g.Job.Exited || g.GPU.Count != 1 || !g.FirstSeen.Equal(at(2*time.Hour)) {
		t.Fatalf("state = %+v", g)
	}
	// The people connected survive a save and load.
	since := at(2 * time.Hour)
	g.Sessions = []ledger.Session{{Kind: ledger.SessionSSH, Client: "1.2.3.4", User: "root", Since: since}, {Kind: ledger.SessionJupyter, Client: "local"}}
	if err := db.SaveBeats(ctx, nil, []ledger.AgentState{g}); err != nil {
		t.Fatal(err)
	}
	if states, _ = db.AgentStates(ctx); len(states[0].Sessions) != 2 || states[0].Sessions[0] != g.Sessions[0] || states[0].Sessions[1] != g.Sessions[1] {
		t.Fatalf("sessions = %+v", states[0].Sessions)
	}
	g.Sessions = nil
	if err := db.SaveBeats(ctx, nil, []ledger.AgentState{g}); err != nil {
		t.Fatal(err)
	}
	if states, _ = db.AgentStates(ctx); len(states[0].Sessions) != 0 {
		t.Fatalf("sessions not cleared: %+v", states[0].Sessions)
	}
	// A beat for a rental that is gone is dropped, not an error.
	if err := db.SaveBeats(ctx, []ledger.Beat{{RentalID: 999, At: t0, Verdict: ledger.VerdictBusy}}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestDB_IdleIntervals(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	steps := []struct {
		open     bool
		at       time.Duration
		wantLast ledger.Interval
	}{
		{true, 10 * time.Minute, ledger.Interval{From: at(10 * time.Minute)}},
		{true, 20 * time.Minute, ledger.Interval{From: at(10 * time.Minute)}}, // already open: kept
		{false, 30 * time.Minute, ledger.Interval{From: at(10 * time.Minute), To: at(30 * time.Minute)}},
		{false, 40 * time.Minute, ledger.Interval{From: at(10 * time.Minute), To: at(30 * time.Minute)}}, // none open
		{true, 25 * time.Minute, ledger.Interval{From: at(30 * time.Minute)}},                            // no overlap
	}
	for i, s := range steps {
		var err error
		if s.open {
			err = db.OpenIdle(ctx, r.ID, at(s.at))
		} else {
			err = db.CloseIdle(ctx, r.ID, at(s.at))
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got, _ := db.RentalByID(ctx, r.ID)
		if last := got.Idle[len(got.Idle)-1]; !last.From.Equal(s.wantLast.From) || !last.To.Equal(s.wantLast.To) {
			t.Fatalf("step %d: last interval %+v, want %+v", i, last, s.wantLast)
		}
	}
}

func TestDB_AutoPolicy(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	p, err := db.AutoPolicy(ctx, r.ID)
	if err != nil || p.Action != ledger.AutoNotify {
		t.Fatalf("default policy = %+v, %v", p, err)
	}
	if _, err := db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoStop, After: time.Hour}); err != nil {
		t.Fatal(err)
	}
	p, _ = db.AutoPolicy(ctx, r.ID)
	if p.Action != ledger.AutoStop || p.Grace() != time.Hour {
		t.Fatalf("policy = %+v", p)
	}
	for _, bad := range []ledger.AutoPolicy{{Action: "explode"}, {Action: ledger.AutoRelease, After: time.Second}, {Action: ledger.AutoStop, After: 30 * 24 * time.Hour}} {
		_, err := db.SetAutoPolicy(ctx, 1, "box1", bad)
		wantCode(t, err, ledger.EINVALID)
	}
	_, err = db.SetAutoPolicy(ctx, 1, "nobox", ledger.AutoPolicy{Action: ledger.AutoStop})
	wantCode(t, err, ledger.ENOTFOUND)
	if p, _ = db.AutoPolicy(ctx, r.ID); p.Action != ledger.AutoStop {
		t.Fatalf("a bad policy changed the stored one: %+v", p)
	}
	t.Run("WaitFor", func(t *testing.T) {
		if p.WaitFor != "" {
			t.Fatalf("default wait_for %q", p.WaitFor)
		}
		for _, w := range []ledger.WaitFor{ledger.WaitNone, "ssh,jupyter", ""} {
			if _, err := db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoStop, WaitFor: w}); err != nil {
				t.Fatal(err)
			}
			if p, _ := db.AutoPolicy(ctx, r.ID); p.WaitFor != w {
				t.Fatalf("wait_for %q stored as %q", w, p.WaitFor)
			}
		}
		_, err := db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoStop, WaitFor: "people"})
		wantCode(t, err, ledger.EINVALID)
	})
	t.Run("IdlePeople", func(t *testing.T) {
		for _, d := range []time.Duration{3 * time.Hour, ledger.IdlePeopleNever, 0} {
			if _, err := db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoStop, WaitFor: "jupyter", IdlePeople: d}); err != nil {
				t.Fatal(err)
			}
			if p, _ := db.AutoPolicy(ctx, r.ID); p.IdlePeople != d || p.WaitFor != "jupyter" {
				t.Fatalf("idle_people %s stored as %+v", d, p)
			}
		}
		_, err := db.SetAutoPolicy(ctx, 1, "box1", ledger.AutoPolicy{Action: ledger.AutoStop, IdlePeople: time.Minute})
		wantCode(t, err, ledger.EINVALID)
	})
}

func TestDB_Orders(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	o := ledger.Order{ID: "o1", RentalID: r.ID, UserID: 1, Rental: "box1", Action: "release", Origin: ledger.OriginButton,
		IssuedAt: at(time.Hour), ExpiresAt: at(time.Hour + 10*time.Minute), Nonce: "n1"}
	if _, err := db.CreateOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	t.Run("ErrConflict/secondOpenOrder", func(t *testing.T) {
		o2 := o
		o2.ID, o2.Nonce = "o2", "n2"
		_, err := db.CreateOrder(ctx, o2)
		wantCode(t, err, ledger.ECONFLICT)
	})
	open, err := db.OpenOrders(ctx, 0)
	if err != nil || len(open) != 1 || open[0].State != ledger.OrderPending || open[0].WaitFor != nil {
		t.Fatalf("OpenOrders = %+v, %v", open, err)
	}
	o.State, o.Outcome, o.UpdatedAt = ledger.OrderStarted, "release_started", at(time.Hour+time.Minute)
	if _, _, err := db.UpdateOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	o.State, o.Outcome, o.UpdatedAt = ledger.OrderDone, "done", at(time.Hour+2*time.Minute)
	ev := &ledger.Event{Kind: ledger.EventRelease, At: at(time.Hour + 2*time.Minute)}
	_, rl, err := db.UpdateOrder(ctx, o, ev)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := rl.ReleasedAt(); !ok || !got.Equal(at(time.Hour+2*time.Minute)) {
		t.Fatalf("rental after confirmed release: %v %v", got, ok)
	}
	t.Run("ErrConflict/twice", func(t *testing.T) {
		_, _, err := db.UpdateOrder(ctx, o, ev)
		wantCode(t, err, ledger.ECONFLICT)
		got, _ := db.RentalByID(ctx, r.ID)
		if n := len(got.Events); n != 2 {
			t.Fatalf("events after a second confirmation: %d, want 2", n)
		}
	})
	if open, _ := db.OpenOrders(ctx, r.ID); len(open) != 0 {
		t.Fatalf("open orders after done: %+v", open)
	}
	t.Run("WaitFor", func(t *testing.T) {
		r2 := mustRent(t, db, 1, "box2", t0)
		a := ledger.Order{ID: "o3", RentalID: r2.ID, UserID: 1, Rental: "box2", Action: "stop", Origin: ledger.OriginAuto,
			WaitFor: []string{"ssh", "jupyter"}, IssuedAt: at(time.Hour), ExpiresAt: at(time.Hour + 10*time.Minute), Nonce: "n3"}
		if _, err := db.CreateOrder(ctx, a); err != nil {
			t.Fatal(err)
		}
		got, err := db.Order(ctx, "o3")
		if err != nil || strings.Join(got.WaitFor, ",") != "ssh,jupyter" || got.IdlePeople != 0 {
			t.Fatalf("order = %+v, %v", got, err)
		}
		// The bound on idle people is kept with the order: it is signed
		// into it at every hand-out.
		r3 := mustRent(t, db, 1, "box3", t0)
		b := ledger.Order{ID: "o4", RentalID: r3.ID, UserID: 1, Rental: "box3", Action: "stop", Origin: ledger.OriginAuto,
			WaitFor: []string{"jupyter"}, IdlePeople: 3 * time.Hour, IssuedAt: at(time.Hour), ExpiresAt: at(time.Hour + 10*time.Minute), Nonce: "n4"}
		if _, err := db.CreateOrder(ctx, b); err != nil {
			t.Fatal(err)
		}
		if got, err := db.Order(ctx, "o4"); err != nil || got.IdlePeople != 3*time.Hour {
			t.Fatalf("order = %+v, %v", got, err)
		}
	})
}

func TestDB_UpdateOrder_AlreadyReleasedByHand(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	o := ledger.Order{ID: "o1", RentalID: r.ID, UserID: 1, Rental: "box1", Action: "stop", Origin: ledger.OriginAuto,
		IssuedAt: at(time.Hour), ExpiresAt: at(2 * time.Hour), Nonce: "n1"}
	if _, err := db.CreateOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	mustEvent(t, db, 1, "box1", ledger.EventStop, at(time.Hour+time.Minute))
	o.State, o.Outcome = ledger.OrderDone, "done"
	_, rl, err := db.UpdateOrder(ctx, o, &ledger.Event{Kind: ledger.EventStop, At: at(time.Hour + 2*time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Events) != 2 || !rl.Events[1].At.Equal(at(time.Hour+time.Minute)) {
		t.Fatalf("events = %+v; want only the hand-recorded stop", rl.Events)
	}
}

func TestDB_Decisions(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	for i, k := range []ledger.DecisionKind{ledger.DecisionWarn, ledger.DecisionHold, ledger.DecisionOrder} {
		if _, err := db.AddDecision(ctx, ledger.Decision{UserID: 1, RentalID: r.ID, At: at(time.Duration(i) * time.Minute),
			Kind: k, Summary: string(k), Evidence: "idle 40m"}); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := db.Decisions(ctx, r.ID, 2)
	if err != nil || len(ds) != 2 || ds[0].Kind != ledger.DecisionOrder || ds[1].Kind != ledger.DecisionHold {
		t.Fatalf("Decisions = %+v, %v", ds, err)
	}
}

func TestDB_Cards(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	c, err := db.SaveCard(ctx, ledger.Card{UserID: 1, RentalID: r.ID, Kind: ledger.CardIdle, Incident: "100", MessageID: 7, FirstAt: t0, LastAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.SaveCard(ctx, ledger.Card{UserID: 1, RentalID: r.ID, Kind: ledger.CardIdle, Incident: "100"})
	wantCode(t, err, ledger.ECONFLICT)
	c.SnoozeUntil, c.Reminders = at(time.Hour), 1
	if _, err := db.SaveCard(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := db.CardByMessage(ctx, 1, 7)
	if err != nil || !got.SnoozeUntil.Equal(at(time.Hour)) || got.Reminders != 1 {
		t.Fatalf("CardByMessage = %+v, %v", got, err)
	}
	_, err = db.CardByMessage(ctx, 2, 7)
	wantCode(t, err, ledger.ENOTFOUND)
	if open, _ := db.OpenCards(ctx); len(open) != 1 {
		t.Fatalf("OpenCards = %d", len(open))
	}
	c.Closed = true
	db.SaveCard(ctx, c)
	if open, _ := db.OpenCards(ctx); len(open) != 0 {
		t.Fatalf("OpenCards after close = %d", len(open))
	}
	if latest, err := db.Card(ctx, r.ID, ledger.CardIdle); err != nil || latest.ID != c.ID {
		t.Fatalf("Card = %+v, %v", latest, err)
	}
}

func TestDB_MarkNotice(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	key := "summary:1:2026-11-01"
	for i, want := range []bool{true, false} {
		fresh, err := db.MarkNotice(ctx, 1, key, t0)
		if err != nil || fresh != want {
			t.Fatalf("MarkNotice #%d = %v, %v; want %v", i, fresh, err, want)
		}
	}
	if err := db.UnmarkNotice(ctx, key); err != nil {
		t.Fatal(err)
	}
	if has, _ := db.HasNotice(ctx, key); has {
		t.Fatal("notice still recorded after UnmarkNotice")
	}
}

// TestDB_SaveIdle: an idle interval and the state it goes with are one
// write, and a restart rebuilds the state's idle fields from the intervals
// even when the state row is a flush behind.
func TestDB_SaveIdle(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	st := ledger.AgentState{RentalID: r.ID, UserID: 1, LastSeen: at(time.Hour), BootID: "b1", Seq: 10,
		Verdict: ledger.VerdictIdle, IdleSince: at(50 * time.Minute), IdleUntil: at(time.Hour)}
	if err := db.SaveIdle(ctx, st, time.Time{}, st.IdleSince); err != nil {
		t.Fatal(err)
	}
	// A flush moves the evidence forward, never back.
	st.LastSeen, st.IdleUntil, st.Seq = at(70*time.Minute), at(70*time.Minute), 30
	if err := db.SaveBeats(ctx, nil, []ledger.AgentState{st}); err != nil {
		t.Fatal(err)
	}
	old := st
	old.IdleUntil = at(55 * time.Minute)
	if err := db.SaveBeats(ctx, nil, []ledger.AgentState{old}); err != nil {
		t.Fatal(err)
	}
	got, err := db.AgentStates(ctx)
	if err != nil || len(got) != 1 {
		t.Fatalf("AgentStates = %+v, %v", got, err)
	}
	if g := got[0]; g.Verdict != ledger.VerdictIdle || !g.IdleSince.Equal(at(50*time.Minute)) || !g.IdleUntil.Equal(at(70*time.Minute)) {
		t.Fatalf("state after flushes = %+v, want idle 0:50-1:10", g)
	}
	t.Run("StateBehindTheIntervals", func(t *testing.T) {
		// The streak closed (busy reported) with its state; then a flush
		// that lost the race wrote the older idle state again.
		busy := st
		busy.Verdict, busy.IdleSince, busy.IdleUntil, busy.Seq = ledger.VerdictBusy, time.Time{}, time.Time{}, 31
		if err := db.SaveIdle(ctx, busy, at(70*time.Minute), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveBeats(ctx, nil, []ledger.AgentState{st}); err != nil {
			t.Fatal(err)
		}
		got, _ := db.AgentStates(ctx)
		if g := got[0]; g.Verdict == ledger.VerdictIdle || !g.IdleSince.IsZero() {
			t.Fatalf("state = %+v, want no idle streak: its interval is closed", g)
		}
		rl, _ := db.RentalByID(ctx, r.ID)
		if len(rl.Idle) != 1 || !rl.Idle[0].To.Equal(at(70*time.Minute)) {
			t.Fatalf("intervals = %+v", rl.Idle)
		}
	})
	t.Run("GoneRental", func(t *testing.T) {
		gone := st
		gone.RentalID = 999
		if err := db.SaveIdle(ctx, gone, time.Time{}, at(time.Hour)); err != nil {
			t.Fatalf("SaveIdle for a rental that is gone: %v", err)
		}
	})
}
