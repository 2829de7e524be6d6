package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// hashOf returns a distinct token hash per label.
func hashOf(label string) [32]byte {
	var h [32]byte
	copy(h[:], label)
	return h
}

func mustEnrolToken(t testing.TB, db *sqlite.DB, user int64, label string, when time.Time) ledger.EnrolToken {
	t.Helper()
	tok, _, err := db.IssueEnrolToken(context.Background(), user, hashOf(label), when)
	if err != nil {
		t.Fatalf("IssueEnrolToken(%d, %s): %v", user, label, err)
	}
	return tok
}

// announcement returns an announcement of a RunPod pod by tok at seen.
func announcement(tok ledger.EnrolToken, pod string, seen time.Time) ledger.Instance {
	return ledger.Instance{UserID: tok.UserID, TokenID: tok.ID, Key: "runpod:" + pod, Platform: "runpod", PlatformID: pod,
		Source: "env RUNPOD_POD_ID", Hostname: "host-" + pod, GPUModel: "A40", GPUCount: 2, BootAt: seen.Add(-5 * time.Minute),
		LastSeen: seen}
}

func mustAnnounce(t testing.TB, db *sqlite.DB, in ledger.Instance) ledger.Instance {
	t.Helper()
	got, _, err := db.Announce(context.Background(), in)
	if err != nil {
		t.Fatalf("Announce(%s): %v", in.Key, err)
	}
	return got
}

// wantKey fails unless err is a keyed ledger error with code and key.
func wantKey(t testing.TB, err error, code, key string) {
	t.Helper()
	wantCode(t, err, code)
	var le *ledger.Error
	if !errors.As(err, &le) || le.Key != key {
		t.Fatalf("error %v has key %q, want %q", err, le.Key, key)
	}
}

func TestDB_IssueEnrolToken(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		tok, revoked, err := db.IssueEnrolToken(ctx, 1, hashOf("a"), at(time.Minute+300*time.Millisecond))
		if err != nil || revoked != nil {
			t.Fatalf("IssueEnrolToken = %+v, %+v, %v", tok, revoked, err)
		}
		if tok.ID == 0 || tok.UserID != 1 || tok.Hash != hashOf("a") || !tok.IssuedAt.Equal(at(time.Minute)) || !tok.Valid() {
			t.Fatalf("token = %+v", tok)
		}
		got, err := db.EnrolTokenByHash(ctx, hashOf("a"))
		if err != nil || got != tok {
			t.Fatalf("EnrolTokenByHash = %+v, %v; want %+v", got, err, tok)
		}
	})
	t.Run("CapRevokesTheOldest", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustUser(t, db, 2)
		var toks []ledger.EnrolToken
		for i := range ledger.MaxEnrolTokens {
			toks = append(toks, mustEnrolToken(t, db, 1, fmt.Sprint("t", i), at(time.Duration(i)*time.Hour)))
		}
		other := mustEnrolToken(t, db, 2, "other", t0)
		tok, revoked, err := db.IssueEnrolToken(ctx, 1, hashOf("new"), at(10*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if revoked == nil || revoked.ID != toks[0].ID || !revoked.RevokedAt.Equal(at(10*time.Hour)) {
			t.Fatalf("revoked = %+v, want the oldest (%d) revoked at 10:00", revoked, toks[0].ID)
		}
		valid, err := db.EnrolTokens(ctx, 1)
		if err != nil || len(valid) != ledger.MaxEnrolTokens {
			t.Fatalf("EnrolTokens = %+v, %v; want %d", valid, err, ledger.MaxEnrolTokens)
		}
		if valid[0].ID != toks[1].ID || valid[len(valid)-1].ID != tok.ID {
			t.Fatalf("EnrolTokens = %+v, want oldest first, ending with the new one", valid)
		}
		old, err := db.EnrolTokenByHash(ctx, hashOf("t0"))
		if err != nil || old.Valid() {
			t.Fatalf("the oldest token = %+v, %v; want found and revoked", old, err)
		}
		if o, _ := db.EnrolTokens(ctx, 2); len(o) != 1 || o[0].ID != other.ID {
			t.Fatalf("the other user's tokens = %+v, want untouched", o)
		}
	})
	t.Run("ErrNotFound/unknownHash", func(t *testing.T) {
		db := openDB(t)
		_, err := db.EnrolTokenByHash(ctx, hashOf("nope"))
		wantKey(t, err, ledger.ENOTFOUND, "enrol_token_unknown")
	})
	t.Run("ErrNotFound/unregistered", func(t *testing.T) {
		db := openDB(t)
		unchanged(t, db, ledger.ENOTFOUND, func() error { _, _, err := db.IssueEnrolToken(ctx, 9, hashOf("a"), t0); return err })
	})
	t.Run("ErrConflict/collision", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustUser(t, db, 2)
		mustEnrolToken(t, db, 1, "a", t0)
		unchanged(t, db, ledger.ECONFLICT, func() error { _, _, err := db.IssueEnrolToken(ctx, 2, hashOf("a"), t0); return err })
	})
}

func TestDB_RevokeEnrolTokens(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	mustEnrolToken(t, db, 1, "a", t0)
	mustEnrolToken(t, db, 1, "b", t0)
	mustEnrolToken(t, db, 2, "c", t0)
	r := mustRent(t, db, 1, "box1", t0)
	if _, err := db.IssueToken(ctx, 1, "box1", hashOf("agent"), t0); err != nil {
		t.Fatal(err)
	}
	n, err := db.RevokeEnrolTokens(ctx, 1, at(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("RevokeEnrolTokens = %d, %v; want 2", n, err)
	}
	if n, err := db.RevokeEnrolTokens(ctx, 1, at(2*time.Hour)); err != nil || n != 0 {
		t.Fatalf("RevokeEnrolTokens again = %d, %v; want 0", n, err)
	}
	if v, _ := db.EnrolTokens(ctx, 1); len(v) != 0 {
		t.Fatalf("user 1's valid enrolment tokens = %+v, want none", v)
	}
	a, err := db.EnrolTokenByHash(ctx, hashOf("a"))
	if err != nil || !a.RevokedAt.Equal(at(time.Hour)) {
		t.Fatalf("token a = %+v, %v; want revoked at 1:00", a, err)
	}
	if v, _ := db.EnrolTokens(ctx, 2); len(v) != 1 {
		t.Fatalf("user 2's tokens = %+v, want untouched", v)
	}
	if tok, err := db.TokenByHash(ctx, hashOf("agent")); err != nil || !tok.RevokedAt.IsZero() || tok.RentalID != r.ID {
		t.Fatalf("the rental's agent token = %+v, %v; want still valid", tok, err)
	}
}

func TestDB_Announce(t *testing.T) {
	ctx := context.Background()
	t.Run("NewThenKnown", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		tok := mustEnrolToken(t, db, 1, "a", t0)
		in := announcement(tok, "abc123", at(time.Minute))
		got, created, err := db.Announce(ctx, in)
		if err != nil || !created {
			t.Fatalf("Announce = %+v, %v, %v; want created", got, created, err)
		}
		want := in
		want.ID, want.FirstSeen, want.State = got.ID, in.LastSeen, ledger.InstancePending
		if got != want {
			t.Fatalf("Announce = %+v\nwant %+v", got, want)
		}
		// Known and pending: last seen refreshed, not created, first seen
		// kept, and its facts those first announced (what the user was
		// shown is what a Log press logs).
		again := in
		again.Hostname, again.GPUModel, again.GPUCount, again.BootAt, again.LastSeen = "renamed", "H100", 8, at(30*time.Second), at(time.Hour)
		got2, created, err := db.Announce(ctx, again)
		if err != nil || created {
			t.Fatalf("Announce again = %+v, %v, %v; want not created", got2, created, err)
		}
		if got2.ID != got.ID || got2.Hostname != in.Hostname || got2.GPUModel != in.GPUModel || got2.GPUCount != in.GPUCount ||
			!got2.BootAt.Equal(in.BootAt) || !got2.LastSeen.Equal(at(time.Hour)) || !got2.FirstSeen.Equal(at(time.Minute)) {
			t.Fatalf("Announce again = %+v", got2)
		}
		tk, _ := db.EnrolTokenByHash(ctx, hashOf("a"))
		if tk.Instances != 1 || !tk.LastUsed.Equal(at(time.Hour)) {
			t.Fatalf("token = %+v, want 1 instance, last used 1:00", tk)
		}
		// Not pending (ignored here): its facts are refreshed.
		if _, err := db.IgnoreInstance(ctx, ledger.Action{UserID: 1, At: at(time.Hour)}, got.ID); err != nil {
			t.Fatal(err)
		}
		again.LastSeen = at(2 * time.Hour)
		got3, _, err := db.Announce(ctx, again)
		if err != nil || got3.Hostname != "renamed" || got3.GPUModel != "H100" || got3.GPUCount != 8 || !got3.BootAt.Equal(at(30*time.Second)) {
			t.Fatalf("Announce of an ignored instance = %+v, %v", got3, err)
		}
	})
	t.Run("UnknownBoot", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		in := announcement(mustEnrolToken(t, db, 1, "a", t0), "abc123", t0)
		in.BootAt = time.Time{}
		if got := mustAnnounce(t, db, in); !got.BootAt.IsZero() {
			t.Fatalf("BootAt = %v, want zero (unknown)", got.BootAt)
		}
	})
	t.Run("PerUser", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustUser(t, db, 2)
		a := mustAnnounce(t, db, announcement(mustEnrolToken(t, db, 1, "a", t0), "abc123", t0))
		b := mustAnnounce(t, db, announcement(mustEnrolToken(t, db, 2, "b", t0), "abc123", t0))
		if a.ID == b.ID || b.UserID != 2 {
			t.Fatalf("the same key for two users = %+v and %+v, want two instances", a, b)
		}
	})
	t.Run("IgnoredStaysIgnored", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		tok := mustEnrolToken(t, db, 1, "a", t0)
		in := mustAnnounce(t, db, announcement(tok, "abc123", t0))
		if _, err := db.IgnoreInstance(ctx, act(1), in.ID); err != nil {
			t.Fatal(err)
		}
		got, created, err := db.Announce(ctx, announcement(tok, "abc123", at(time.Hour)))
		if err != nil || created || got.State != ledger.InstanceIgnored {
			t.Fatalf("Announce of an ignored instance = %+v, %v, %v; want ignored, not created", got, created, err)
		}
	})
	t.Run("ErrConflict/pendingFull", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		tok := mustEnrolToken(t, db, 1, "a", t0)
		for i := range ledger.MaxPendingInstances {
			mustAnnounce(t, db, announcement(tok, fmt.Sprint("pod", i), t0))
		}
		unchanged(t, db, ledger.ECONFLICT, func() error {
			_, _, err := db.Announce(ctx, announcement(tok, "onemore", at(time.Minute)))
			wantKey(t, err, ledger.ECONFLICT, "instances_pending_full")
			return err
		})
		// A known one is still heard.
		if _, created, err := db.Announce(ctx, announcement(tok, "pod0", at(time.Hour))); err != nil || created {
			t.Fatalf("Announce of a known instance while full = %v, %v", created, err)
		}
		// One answered makes room.
		p, _ := db.PendingInstances(ctx, 1)
		if _, err := db.IgnoreInstance(ctx, act(1), p[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, created, err := db.Announce(ctx, announcement(tok, "onemore", at(time.Hour))); err != nil || !created {
			t.Fatalf("Announce after an answer = %v, %v; want created", created, err)
		}
	})
	t.Run("ErrNotFound/anotherUsersToken", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustUser(t, db, 2)
		in := announcement(mustEnrolToken(t, db, 2, "b", t0), "abc123", t0)
		in.UserID = 1
		unchanged(t, db, ledger.ENOTFOUND, func() error { _, _, err := db.Announce(ctx, in); return err })
	})
	t.Run("ErrUnauthorized/revoked", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		tok := mustEnrolToken(t, db, 1, "a", t0)
		if _, err := db.RevokeEnrolTokens(ctx, 1, t0); err != nil {
			t.Fatal(err)
		}
		unchanged(t, db, ledger.EUNAUTHORIZED, func() error {
			_, _, err := db.Announce(ctx, announcement(tok, "abc123", t0))
			wantKey(t, err, ledger.EUNAUTHORIZED, "enrol_token_revoked")
			return err
		})
	})
	t.Run("ErrInvalid/noKey", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		in := announcement(mustEnrolToken(t, db, 1, "a", t0), "abc123", t0)
		in.Key = ""
		unchanged(t, db, ledger.EINVALID, func() error { _, _, err := db.Announce(ctx, in); return err })
	})
}

// TestDB_Announce_ReleasedRental: an instance whose rental was released
// (its pod restarted after the user released it in the ledger) is a new
// instance again, announced anew.
func TestDB_Announce_ReleasedRental(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	tok := mustEnrolToken(t, db, 1, "a", t0)
	in := mustAnnounce(t, db, announcement(tok, "abc123", t0))
	if err := db.SetInstanceCard(ctx, 1, in.ID, 77); err != nil {
		t.Fatal(err)
	}
	r, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, nil, t0), hashOf("agent"))
	if err != nil {
		t.Fatal(err)
	}
	// Bound to a live rental: stays bound.
	got, created, err := db.Announce(ctx, announcement(tok, "abc123", at(time.Hour)))
	if err != nil || created || got.State != ledger.InstanceBound || got.RentalID != r.ID {
		t.Fatalf("Announce while bound = %+v, %v, %v", got, created, err)
	}
	mustEvent(t, db, 1, r.Name, ledger.EventRelease, at(2*time.Hour))
	got, created, err = db.Announce(ctx, announcement(tok, "abc123", at(3*time.Hour)))
	if err != nil || !created {
		t.Fatalf("Announce after the release = %+v, %v, %v; want created", got, created, err)
	}
	if got.ID != in.ID || got.State != ledger.InstancePending || got.RentalID != 0 || got.Carded || got.MessageID != 0 ||
		!got.FirstSeen.Equal(at(3*time.Hour)) {
		t.Fatalf("instance after the release = %+v; want pending anew, uncarded, first seen 3:00", got)
	}
	if tk, _ := db.EnrolTokenByHash(ctx, hashOf("a")); tk.Instances != 2 {
		t.Fatalf("token instances = %d, want 2 (announced twice)", tk.Instances)
	}
	if _, err := db.InstanceByRental(ctx, r.ID); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("InstanceByRental of the released rental = %v, want ENOTFOUND", err)
	}
}

func TestDB_Announce_Concurrent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	tok := mustEnrolToken(t, db, 1, "a", t0)
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		ids     = map[int64]bool{}
		errs    []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, c, err := db.Announce(ctx, announcement(tok, "abc123", at(time.Duration(i)*time.Second)))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			ids[got.ID] = true
			if c {
				created++
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 || created != 1 || len(ids) != 1 {
		t.Fatalf("%d concurrent announcements: errors %v, %d created, ids %v; want one instance created once", n, errs, created, ids)
	}
	if p, _ := db.PendingInstances(ctx, 1); len(p) != 1 {
		t.Fatalf("pending = %+v, want one", p)
	}
}

func TestDB_Instances(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	tok := mustEnrolToken(t, db, 1, "a", t0)
	a := mustAnnounce(t, db, announcement(tok, "aaa", t0))
	b := mustAnnounce(t, db, announcement(tok, "bbb", at(time.Minute)))
	c := mustAnnounce(t, db, announcement(tok, "ccc", at(2*time.Minute)))
	mustAnnounce(t, db, announcement(mustEnrolToken(t, db, 2, "b", t0), "zzz", t0))
	t.Run("Instance", func(t *testing.T) {
		got, err := db.Instance(ctx, 1, b.ID)
		if err != nil || got != b {
			t.Fatalf("Instance = %+v, %v; want %+v", got, err, b)
		}
		_, err = db.Instance(ctx, 2, b.ID)
		wantKey(t, err, ledger.ENOTFOUND, "no_instance")
	})
	t.Run("SetInstanceCard", func(t *testing.T) {
		if err := db.SetInstanceCard(ctx, 1, a.ID, 42); err != nil {
			t.Fatal(err)
		}
		got, _ := db.Instance(ctx, 1, a.ID)
		if !got.Carded || got.MessageID != 42 {
			t.Fatalf("after SetInstanceCard = %+v", got)
		}
		unchanged(t, db, ledger.ENOTFOUND, func() error { return db.SetInstanceCard(ctx, 2, a.ID, 43) })
	})
	t.Run("PendingInstances", func(t *testing.T) {
		if _, err := db.IgnoreInstance(ctx, act(1), b.ID); err != nil {
			t.Fatal(err)
		}
		p, err := db.PendingInstances(ctx, 1)
		if err != nil || len(p) != 2 || p[0].ID != a.ID || p[1].ID != c.ID {
			t.Fatalf("PendingInstances = %+v, %v; want a and c, oldest first", p, err)
		}
		if p, _ := db.PendingInstances(ctx, 2); len(p) != 1 || p[0].UserID != 2 {
			t.Fatalf("user 2's pending = %+v", p)
		}
	})
	t.Run("InstanceByRental", func(t *testing.T) {
		r, _, err := db.AdoptInstance(ctx, act(1), c.ID, ledger.RentalFromInstance(c, nil, t0), hashOf("agent-c"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.InstanceByRental(ctx, r.ID)
		if err != nil || got.ID != c.ID || got.RentalID != r.ID {
			t.Fatalf("InstanceByRental = %+v, %v", got, err)
		}
		hand := mustRent(t, db, 1, "byhand", t0)
		if _, err := db.InstanceByRental(ctx, hand.ID); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("InstanceByRental of a rental logged by hand = %v, want ENOTFOUND", err)
		}
	})
}

func TestDB_IgnoreInstance(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*sqlite.DB, ledger.Instance) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustUser(t, db, 2)
		in := mustAnnounce(t, db, announcement(mustEnrolToken(t, db, 1, "a", t0), "abc123", t0))
		return db, in
	}
	t.Run("OK", func(t *testing.T) {
		db, in := setup(t)
		got, err := db.IgnoreInstance(ctx, keyed(1, "tg:1:cb:1"), in.ID)
		if err != nil || got.State != ledger.InstanceIgnored || got.ID != in.ID {
			t.Fatalf("IgnoreInstance = %+v, %v", got, err)
		}
		if s, _ := db.Instance(ctx, 1, in.ID); s.State != ledger.InstanceIgnored {
			t.Fatalf("stored state = %s", s.State)
		}
	})
	t.Run("ErrDuplicate/redelivered", func(t *testing.T) {
		db, in := setup(t)
		if _, err := db.IgnoreInstance(ctx, keyed(1, "tg:1:cb:1"), in.ID); err != nil {
			t.Fatal(err)
		}
		unchanged(t, db, ledger.EDUPLICATE, func() error { _, err := db.IgnoreInstance(ctx, keyed(1, "tg:1:cb:1"), in.ID); return err })
	})
	t.Run("AlreadyIgnored", func(t *testing.T) {
		db, in := setup(t)
		mustRent(t, db, 1, "box1", t0)
		if _, err := db.IgnoreInstance(ctx, act(1), in.ID); err != nil {
			t.Fatal(err)
		}
		got, err := db.IgnoreInstance(ctx, act(1), in.ID)
		if err != nil || got.State != ledger.InstanceIgnored {
			t.Fatalf("IgnoreInstance again = %+v, %v", got, err)
		}
		// The second press changed nothing and is not on the undo stack:
		// /undo reverses the first.
		res, err := db.Undo(ctx, act(1))
		if err != nil || res.Kind != ledger.ActionIgnore {
			t.Fatalf("Undo = %+v, %v; want the ignore", res, err)
		}
		if res, err := db.Undo(ctx, act(1)); err != nil || res.Kind != ledger.ActionRent || res.Instance != 0 {
			t.Fatalf("second Undo = %+v, %v; want the rent of box1, no instance (the repeated ignore is not on the stack)", res, err)
		}
	})
	t.Run("Undo", func(t *testing.T) {
		db, in := setup(t)
		if err := db.SetInstanceCard(ctx, 1, in.ID, 42); err != nil {
			t.Fatal(err)
		}
		if _, err := db.IgnoreInstance(ctx, act(1), in.ID); err != nil {
			t.Fatal(err)
		}
		res, err := db.Undo(ctx, act(1))
		if err != nil || res.Kind != ledger.ActionIgnore || res.Name != "runpod-abc123" || res.Instance != in.ID {
			t.Fatalf("Undo = %+v, %v; want the ignore of runpod-abc123, instance %d", res, err, in.ID)
		}
		got, _ := db.Instance(ctx, 1, in.ID)
		if got.State != ledger.InstancePending || !got.Carded || got.MessageID != 42 {
			t.Fatalf("after undo = %+v; want pending, its card kept", got)
		}
	})
	t.Run("ErrNotFound/anotherUsers", func(t *testing.T) {
		db, in := setup(t)
		unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.IgnoreInstance(ctx, act(2), in.ID); return err })
	})
	t.Run("ErrConflict/bound", func(t *testing.T) {
		db, in := setup(t)
		if _, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, nil, t0), hashOf("agent")); err != nil {
			t.Fatal(err)
		}
		unchanged(t, db, ledger.ECONFLICT, func() error {
			_, err := db.IgnoreInstance(ctx, act(1), in.ID)
			wantKey(t, err, ledger.ECONFLICT, "instance_bound")
			return err
		})
	})
}

// offer is a price of $0.79/h for the tests.
var offer = &ledger.PriceOffer{Price: ledger.Price{Amount: ledger.MustDecimal("0.79"), Unit: ledger.UnitHour}, Currency: ledger.USD}

func TestDB_AdoptInstance(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*sqlite.DB, ledger.Instance) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustUser(t, db, 2)
		in := mustAnnounce(t, db, announcement(mustEnrolToken(t, db, 1, "a", t0), "abc123", at(time.Hour)))
		return db, in
	}
	t.Run("OK", func(t *testing.T) {
		db, in := setup(t)
		r, got, err := db.AdoptInstance(ctx, keyed(1, "tg:1:cb:9"), in.ID, ledger.RentalFromInstance(in, offer, at(55*time.Minute)), hashOf("agent"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Name != "runpod-abc123" || r.UserID != 1 || r.Platform != "runpod" || r.GPU != "A40" || r.GPUCount != 2 ||
			!r.Priced || r.Price != offer.Price || r.Currency != ledger.USD || !r.StartedAt().Equal(at(55*time.Minute)) {
			t.Fatalf("rental = %+v", r)
		}
		if got.State != ledger.InstanceBound || got.RentalID != r.ID {
			t.Fatalf("instance = %+v", got)
		}
		if s, _ := db.Instance(ctx, 1, in.ID); s.State != ledger.InstanceBound || s.RentalID != r.ID {
			t.Fatalf("stored instance = %+v", s)
		}
		tok, err := db.TokenByHash(ctx, hashOf("agent"))
		if err != nil || tok.RentalID != r.ID || tok.UserID != 1 || !tok.RevokedAt.IsZero() {
			t.Fatalf("agent token = %+v, %v", tok, err)
		}
		if x, err := db.Rental(ctx, 1, "runpod-abc123"); err != nil || x.ID != r.ID {
			t.Fatalf("Rental = %+v, %v", x, err)
		}
	})
	t.Run("ErrDuplicate/redelivered", func(t *testing.T) {
		db, in := setup(t)
		if _, _, err := db.AdoptInstance(ctx, keyed(1, "k"), in.ID, ledger.RentalFromInstance(in, offer, t0), hashOf("agent")); err != nil {
			t.Fatal(err)
		}
		unchanged(t, db, ledger.EDUPLICATE, func() error {
			_, _, err := db.AdoptInstance(ctx, keyed(1, "k"), in.ID, ledger.RentalFromInstance(in, offer, t0), hashOf("agent2"))
			return err
		})
	})
	t.Run("NameInUse", func(t *testing.T) {
		db, in := setup(t)
		tok := mustEnrolToken(t, db, 1, "b", t0)
		mustRent(t, db, 1, "runpod-abc123", t0)
		r, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, nil, t0), hashOf("agent"))
		if err != nil || r.Name != "runpod-abc123-2" {
			t.Fatalf("AdoptInstance = %+v, %v; want runpod-abc123-2", r, err)
		}
		// Another pod whose ID starts the same.
		in3 := mustAnnounce(t, db, announcement(tok, "abc123zz", t0))
		r3, _, err := db.AdoptInstance(ctx, act(1), in3.ID, ledger.RentalFromInstance(in3, nil, t0), hashOf("agent3"))
		if err != nil || r3.Name != "runpod-abc123-3" {
			t.Fatalf("AdoptInstance = %+v, %v; want runpod-abc123-3", r3, err)
		}
		// A name of 32 characters is clipped to fit the suffix.
		long := strings.Repeat("x", 32)
		mustRent(t, db, 1, long, t0)
		in4 := mustAnnounce(t, db, announcement(tok, "other", t0))
		rl := ledger.RentalFromInstance(in4, nil, t0)
		rl.Name = long
		r4, _, err := db.AdoptInstance(ctx, act(1), in4.ID, rl, hashOf("agent4"))
		if err != nil || r4.Name != strings.Repeat("x", 30)+"-2" {
			t.Fatalf("AdoptInstance = %+v, %v; want 30 x and -2", r4, err)
		}
	})
	t.Run("Ignored", func(t *testing.T) {
		db, in := setup(t)
		if _, err := db.IgnoreInstance(ctx, act(1), in.ID); err != nil {
			t.Fatal(err)
		}
		if _, got, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, nil, t0), hashOf("agent")); err != nil || got.State != ledger.InstanceBound {
			t.Fatalf("AdoptInstance of an ignored instance = %+v, %v", got, err)
		}
	})
	t.Run("Undo", func(t *testing.T) {
		db, in := setup(t)
		if err := db.SetInstanceCard(ctx, 1, in.ID, 42); err != nil {
			t.Fatal(err)
		}
		before := dump(t, db)
		r, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, offer, t0), hashOf("agent"))
		if err != nil {
			t.Fatal(err)
		}
		// Its agent reported: its state goes with the rental.
		st := ledger.AgentState{RentalID: r.ID, UserID: 1, LastSeen: at(time.Hour), BootID: "b", Seq: 1, Verdict: ledger.VerdictBusy}
		if err := db.SaveBeats(ctx, nil, []ledger.AgentState{st}); err != nil {
			t.Fatal(err)
		}
		res, err := db.Undo(ctx, act(1))
		if err != nil || res.Kind != ledger.ActionAdopt || res.Name != "runpod-abc123" || res.Instance != in.ID {
			t.Fatalf("Undo = %+v, %v; want the adopt of runpod-abc123, instance %d", res, err, in.ID)
		}
		if _, err := db.RentalByID(ctx, r.ID); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("rental after undo: %v, want ENOTFOUND", err)
		}
		if _, err := db.TokenByHash(ctx, hashOf("agent")); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("agent token after undo: %v, want gone", err)
		}
		got, _ := db.Instance(ctx, 1, in.ID)
		if got.State != ledger.InstancePending || got.RentalID != 0 || !got.Carded || got.MessageID != 42 {
			t.Fatalf("instance after undo = %+v; want pending, unbound, its card kept", got)
		}
		if states, _ := db.AgentStates(ctx); len(states) != 0 {
			t.Fatalf("agent states after undo = %+v, want none", states)
		}
		// Everything but the journal is as before the adopt.
		if after := dump(t, db); stripJournal(after) != stripJournal(before) {
			t.Fatalf("undo left changes:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		// It can be logged again.
		if _, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, offer, t0), hashOf("agent")); err != nil {
			t.Fatalf("AdoptInstance after undo: %v", err)
		}
	})
	t.Run("UndoIgnoredThenAdopted", func(t *testing.T) {
		db, in := setup(t)
		if _, err := db.IgnoreInstance(ctx, act(1), in.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, nil, t0), hashOf("agent")); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Undo(ctx, act(1)); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.Instance(ctx, 1, in.ID); got.State != ledger.InstanceIgnored {
			t.Fatalf("after undoing the adopt: %s, want ignored (as before it)", got.State)
		}
		if _, err := db.Undo(ctx, act(1)); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.Instance(ctx, 1, in.ID); got.State != ledger.InstancePending {
			t.Fatalf("after undoing the ignore: %s, want pending", got.State)
		}
	})
	t.Run("ErrConflict/undoAfterAgentRelease", func(t *testing.T) {
		db, in := setup(t)
		r, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, offer, t0), hashOf("agent"))
		if err != nil {
			t.Fatal(err)
		}
		confirm(t, db, r, "o1", "release", at(2*time.Hour))
		unchanged(t, db, ledger.ECONFLICT, func() error { _, err := db.Undo(ctx, act(1)); return err })
	})
	t.Run("ErrConflict/bound", func(t *testing.T) {
		db, in := setup(t)
		if _, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, nil, t0), hashOf("agent")); err != nil {
			t.Fatal(err)
		}
		unchanged(t, db, ledger.ECONFLICT, func() error {
			_, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, nil, t0), hashOf("agent2"))
			wantKey(t, err, ledger.ECONFLICT, "instance_bound")
			return err
		})
	})
	t.Run("ErrNotFound/anotherUsers", func(t *testing.T) {
		db, in := setup(t)
		unchanged(t, db, ledger.ENOTFOUND, func() error {
			_, _, err := db.AdoptInstance(ctx, act(2), in.ID, ledger.RentalFromInstance(in, offer, t0), hashOf("agent"))
			wantKey(t, err, ledger.ENOTFOUND, "no_instance")
			return err
		})
	})
	t.Run("ErrInvalid/terms", func(t *testing.T) {
		db, in := setup(t)
		r := ledger.RentalFromInstance(in, offer, t0)
		r.Mode = "hourly-ish"
		unchanged(t, db, ledger.EINVALID, func() error { _, _, err := db.AdoptInstance(ctx, act(1), in.ID, r, hashOf("agent")); return err })
	})
	t.Run("ErrConflict/tokenCollision", func(t *testing.T) {
		db, in := setup(t)
		mustRent(t, db, 1, "box1", t0)
		if _, err := db.IssueToken(ctx, 1, "box1", hashOf("agent"), t0); err != nil {
			t.Fatal(err)
		}
		unchanged(t, db, ledger.ECONFLICT, func() error {
			_, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, offer, t0), hashOf("agent"))
			return err
		})
	})
}

// stripJournal drops the actions table from a dump: an undo leaves its
// journal rows behind by design.
func stripJournal(d string) string {
	var b strings.Builder
	skip := false
	for _, line := range strings.Split(d, "\n") {
		if strings.HasPrefix(line, "== ") {
			skip = line == "== actions"
		}
		if !skip {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func TestDB_RebindInstance(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*sqlite.DB, ledger.Instance, *ledger.Rental) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustUser(t, db, 2)
		in := mustAnnounce(t, db, announcement(mustEnrolToken(t, db, 1, "a", t0), "abc123", t0))
		r, _, err := db.AdoptInstance(ctx, act(1), in.ID, ledger.RentalFromInstance(in, offer, t0), hashOf("agent"))
		if err != nil {
			t.Fatal(err)
		}
		return db, in, r
	}
	t.Run("OK", func(t *testing.T) {
		db, in, r := setup(t)
		tok, err := db.RebindInstance(ctx, 1, in.ID, hashOf("agent2"), at(time.Hour))
		if err != nil || tok.RentalID != r.ID || tok.Rental != r.Name || tok.Hash != hashOf("agent2") || !tok.IssuedAt.Equal(at(time.Hour)) {
			t.Fatalf("RebindInstance = %+v, %v", tok, err)
		}
		if old, _ := db.TokenByHash(ctx, hashOf("agent")); old.RevokedAt.IsZero() {
			t.Fatalf("the earlier token = %+v, want revoked", old)
		}
		if nw, err := db.TokenByHash(ctx, hashOf("agent2")); err != nil || !nw.RevokedAt.IsZero() {
			t.Fatalf("the new token = %+v, %v, want valid", nw, err)
		}
	})
	t.Run("ErrConflict/released", func(t *testing.T) {
		db, in, r := setup(t)
		mustEvent(t, db, 1, r.Name, ledger.EventRelease, at(time.Hour))
		unchanged(t, db, ledger.ECONFLICT, func() error {
			_, err := db.RebindInstance(ctx, 1, in.ID, hashOf("agent2"), at(2*time.Hour))
			return err
		})
	})
	t.Run("ErrConflict/notBound", func(t *testing.T) {
		db, _, _ := setup(t)
		p := mustAnnounce(t, db, announcement(mustEnrolToken(t, db, 1, "b", t0), "pending", t0))
		unchanged(t, db, ledger.ECONFLICT, func() error {
			_, err := db.RebindInstance(ctx, 1, p.ID, hashOf("agent2"), t0)
			wantKey(t, err, ledger.ECONFLICT, "instance_not_bound")
			return err
		})
	})
	t.Run("ErrNotFound/anotherUsers", func(t *testing.T) {
		db, in, _ := setup(t)
		unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.RebindInstance(ctx, 2, in.ID, hashOf("agent2"), t0); return err })
	})
}

// TestDB_AgentState_Instance: the host facts of an agent's state (the
// instance key, its boot, its last shutdown report) are written by
// SaveBeats and SaveIdle and read back by AgentStates; a row written
// without them reads as zero.
func TestDB_AgentState_Instance(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	r := mustRent(t, db, 1, "box1", t0)
	r2 := mustRent(t, db, 1, "box2", t0)
	old := mustRent(t, db, 1, "old", t0)
	st := ledger.AgentState{RentalID: r.ID, UserID: 1, LastSeen: at(time.Hour), BootID: "b1", Seq: 3, Verdict: ledger.VerdictBusy,
		InstanceKey: "runpod:abc123", HostBoot: at(10 * time.Minute), ShutdownAt: at(59 * time.Minute), ShutdownHost: true}
	if err := db.SaveBeats(ctx, nil, []ledger.AgentState{st}); err != nil {
		t.Fatal(err)
	}
	idle := ledger.AgentState{RentalID: r2.ID, UserID: 1, LastSeen: at(time.Hour), BootID: "b2", Seq: 4, Verdict: ledger.VerdictIdle,
		IdleSince: at(50 * time.Minute), IdleUntil: at(time.Hour), InstanceKey: "machine:ff", HostBoot: at(5 * time.Minute)}
	if err := db.SaveIdle(ctx, idle, time.Time{}, idle.IdleSince); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `INSERT INTO agent_state (rental_id, user_id, first_seen, last_seen, boot_id, seq, verdict,
		gpu_model, gpu_count, gpu_source, can_release, reasons) VALUES (?, 1, ?, ?, 'b0', 1, 'busy', '', 0, '', 0, '')`,
		old.ID, t0.Unix(), t0.Unix()); err != nil {
		t.Fatal(err)
	}
	got, err := db.AgentStates(ctx)
	if err != nil || len(got) != 3 {
		t.Fatalf("AgentStates = %+v, %v", got, err)
	}
	byID := map[int64]ledger.AgentState{}
	for _, s := range got {
		byID[s.RentalID] = s
	}
	if g := byID[r.ID]; g.InstanceKey != st.InstanceKey || !g.HostBoot.Equal(st.HostBoot) || !g.ShutdownAt.Equal(st.ShutdownAt) || !g.ShutdownHost {
		t.Fatalf("state saved by SaveBeats = %+v", g)
	}
	if g := byID[r2.ID]; g.InstanceKey != "machine:ff" || !g.HostBoot.Equal(at(5*time.Minute)) || !g.ShutdownAt.IsZero() || g.ShutdownHost {
		t.Fatalf("state saved by SaveIdle = %+v", g)
	}
	if g := byID[old.ID]; g.InstanceKey != "" || !g.HostBoot.IsZero() || !g.ShutdownAt.IsZero() || g.ShutdownHost {
		t.Fatalf("a row without host facts = %+v, want them zero", g)
	}
	// The next heartbeat after a shutdown report clears it.
	st.ShutdownAt, st.ShutdownHost, st.HostBoot, st.Seq = time.Time{}, false, at(2*time.Hour), 4
	if err := db.SaveBeats(ctx, nil, []ledger.AgentState{st}); err != nil {
		t.Fatal(err)
	}
	got, _ = db.AgentStates(ctx)
	for _, g := range got {
		if g.RentalID == r.ID && (!g.ShutdownAt.IsZero() || g.ShutdownHost || !g.HostBoot.Equal(at(2*time.Hour))) {
			t.Fatalf("state after a new boot = %+v, want the report cleared and the new boot", g)
		}
	}
}
