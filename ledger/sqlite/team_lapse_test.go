package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// A pending approval lapses once: a second lapse is a no-op that keeps
// the first time; a decided one stays decided; an unknown one is
// ENOTFOUND. Nothing is journaled (the system is not a person).
func TestTeam_LapseApproval(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	ap := openApproval(t, db, team)
	actions := rawInt(t, db, `SELECT count(*) FROM actions`)

	got, lapsed, err := db.LapseApproval(ctx, ap.ID, at(time.Hour))
	if err != nil || !lapsed || got.State != ledger.ApprovalLapsed || !got.DecidedAt.Equal(at(time.Hour)) || got.DecidedBy != 0 {
		t.Fatalf("LapseApproval = %+v, %v, %v", got, lapsed, err)
	}
	again, lapsed, err := db.LapseApproval(ctx, ap.ID, at(2*time.Hour))
	if err != nil || lapsed || again.State != ledger.ApprovalLapsed || !again.DecidedAt.Equal(at(time.Hour)) {
		t.Fatalf("LapseApproval again = %+v, %v, %v; want a no-op", again, lapsed, err)
	}
	if n := rawInt(t, db, `SELECT count(*) FROM actions`); n != actions {
		t.Fatalf("a lapse journaled %d actions", n-actions)
	}
	if pend, err := db.Approvals(ctx, team.ID, ledger.ApprovalPending); err != nil || len(pend) != 0 {
		t.Fatalf("pending after the lapse = %v, %v", pend, err)
	}
	if teams, err := db.PendingApprovalTeams(ctx); err != nil || len(teams) != 0 {
		t.Fatalf("PendingApprovalTeams after the lapse = %v, %v", teams, err)
	}
	// An admin's press on it is refused and changes nothing.
	// It names no one: nobody decided it.
	unchangedKey(t, db, ledger.ECONFLICT, "approval_lapsed", func() error {
		_, err := db.DecideApproval(ctx, onTeam(team, tAnn), ap.ID, ledger.ApprovalStopped)
		return err
	})

	// A decided approval stays decided.
	r2, err := db.CreateRental(ctx, onTeam(team, tBen), box("box6", at(-time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	ap2, _, err := db.OpenApproval(ctx, ledger.Approval{TeamID: team.ID, RentalID: r2.ID, Scope: ledger.ScopeTeam, Kind: ledger.LimitGPUs,
		Currency: ledger.CNY, Limit: ledger.MustDecimal("1"), Value: ledger.MustDecimal("2")})
	if err != nil {
		t.Fatal(err)
	}
	if teams, err := db.PendingApprovalTeams(ctx); err != nil || len(teams) != 1 || teams[0] != team.ID {
		t.Fatalf("PendingApprovalTeams = %v, %v; want [%d]", teams, err, team.ID)
	}
	if _, err := db.DecideApproval(ctx, onTeam(team, tCat), ap2.ID, ledger.ApprovalApproved); err != nil {
		t.Fatal(err)
	}
	kept, lapsed, err := db.LapseApproval(ctx, ap2.ID, at(time.Hour))
	if err != nil || lapsed || kept.State != ledger.ApprovalApproved || kept.DecidedBy != tCat {
		t.Fatalf("LapseApproval of a decided one = %+v, %v, %v", kept, lapsed, err)
	}
	_, _, err = db.LapseApproval(ctx, ap.ID+100, t0)
	teamKey(t, err, ledger.ENOTFOUND, "approval_unknown")
}

// A lapsed approval is set back to pending when its rental is over the
// same bound again: a new time and figures, no decision, no reminder,
// its old cards forgotten. A pending or decided one is never reopened.
func TestTeam_LapsedApprovalReopens(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	ap := openApproval(t, db, team)
	if err := db.Reminded(ctx, ap.ID, at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []ledger.ApprovalCard{{UserID: tAnn, ChatID: tAnn, MessageID: 11}, {UserID: tCat, ChatID: tCat, MessageID: 12}, {UserID: tAnn, ChatID: tAnn, MessageID: 11}} {
		if err := db.AddApprovalCard(ctx, ap.ID, c); err != nil {
			t.Fatal(err)
		}
	}
	cards, err := db.ApprovalCards(ctx, ap.ID)
	if err != nil || len(cards) != 2 || cards[0] != (ledger.ApprovalCard{UserID: tAnn, ChatID: tAnn, MessageID: 11}) || cards[1].MessageID != 12 {
		t.Fatalf("ApprovalCards = %+v, %v", cards, err)
	}
	unchanged(t, db, ledger.EINVALID, func() error { return db.AddApprovalCard(ctx, ap.ID, ledger.ApprovalCard{UserID: tAnn, ChatID: tAnn}) })
	teamKey(t, db.AddApprovalCard(ctx, ap.ID+100, ledger.ApprovalCard{UserID: tAnn, ChatID: tAnn, MessageID: 1}), ledger.ENOTFOUND, "approval_unknown")

	if _, lapsed, err := db.LapseApproval(ctx, ap.ID, at(2*time.Hour)); err != nil || !lapsed {
		t.Fatalf("LapseApproval: %v, %v", lapsed, err)
	}
	want := ledger.Approval{TeamID: team.ID, RentalID: ap.RentalID, Owner: tBen, Scope: ap.Scope, Subject: ap.Subject,
		Kind: ap.Kind, Currency: ap.Currency, Limit: ledger.MustDecimal("12"), Value: ledger.MustDecimal("20"), CreatedAt: at(3 * time.Hour)}
	re, created, err := db.OpenApproval(ctx, want)
	if err != nil || !created || re.ID != ap.ID || re.State != ledger.ApprovalPending || !re.CreatedAt.Equal(at(3*time.Hour)) ||
		!re.RemindedAt.IsZero() || !re.DecidedAt.IsZero() || re.Limit.String() != "12" || re.Value.String() != "20" {
		t.Fatalf("OpenApproval of a lapsed one = %+v, %v, %v; want it pending again", re, created, err)
	}
	if cards, err := db.ApprovalCards(ctx, ap.ID); err != nil || len(cards) != 0 {
		t.Fatalf("the reopened approval's cards = %+v, %v; want none", cards, err)
	}
	// Pending now: opening again is no write; decided: stays decided.
	if same, created, err := db.OpenApproval(ctx, want); err != nil || created || same.ID != ap.ID {
		t.Fatalf("OpenApproval of the pending one = %+v, %v, %v", same, created, err)
	}
	if _, err := db.DecideApproval(ctx, onTeam(team, tAnn), ap.ID, ledger.ApprovalStopped); err != nil {
		t.Fatal(err)
	}
	want.CreatedAt = at(4 * time.Hour)
	if kept, created, err := db.OpenApproval(ctx, want); err != nil || created || kept.State != ledger.ApprovalStopped || !kept.CreatedAt.Equal(at(3*time.Hour)) {
		t.Fatalf("OpenApproval of a stopped one = %+v, %v, %v; want it kept", kept, created, err)
	}
}

// The system's lapse and an admin's press at once: exactly one wins, and
// the stored approval is the winner's.
func TestTeam_LapseRacesDecide(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		db, team := rosterDB(t)
		ap := openApproval(t, db, team)
		lapseRace(t, ctx, db, team, ap)
	}
}

func lapseRace(t *testing.T, ctx context.Context, db *sqlite.DB, team ledger.Team, ap ledger.Approval) {
	t.Helper()
	var (
		wg        sync.WaitGroup
		lapsed    bool
		lapseErr  error
		decideErr error
	)
	start := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		_, lapsed, lapseErr = db.LapseApproval(ctx, ap.ID, at(time.Hour))
	}()
	go func() {
		defer wg.Done()
		<-start
		_, decideErr = db.DecideApproval(ctx, onTeam(team, tCat), ap.ID, ledger.ApprovalStopped)
	}()
	close(start)
	wg.Wait()
	if lapseErr != nil {
		t.Fatalf("LapseApproval: %v", lapseErr)
	}
	stored, err := db.Approval(ctx, ap.ID)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case lapsed && decideErr != nil:
		le := teamKey(t, decideErr, ledger.ECONFLICT, "approval_lapsed")
		if len(le.Args) != 0 || stored.State != ledger.ApprovalLapsed || stored.DecidedBy != 0 {
			t.Fatalf("the lapse won but the press was told %v and the store holds %+v", le.Args, stored)
		}
	case !lapsed && decideErr == nil:
		if stored.State != ledger.ApprovalStopped || stored.DecidedBy != tCat {
			t.Fatalf("the press won but the store holds %+v", stored)
		}
	default:
		t.Fatalf("both or neither won: lapsed %v, press error %v, stored %+v", lapsed, decideErr, stored)
	}
}
