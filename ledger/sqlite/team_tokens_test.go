package sqlite_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// issueOn issues the agent token labelled label for the team's rental
// name (as /agent does: the token belongs to the team's ledger).
func issueOn(t *testing.T, db *sqlite.DB, team ledger.Team, name, label string) ledger.AgentToken {
	t.Helper()
	tok, err := db.IssueToken(context.Background(), team.Ledger(), name, hashOf(label), at(-2*time.Hour))
	if err != nil {
		t.Fatalf("IssueToken(%s): %v", name, err)
	}
	return tok
}

// tokenValid reports whether the token labelled label is still valid.
func tokenValid(t *testing.T, db *sqlite.DB, label string) bool {
	t.Helper()
	tok, err := db.TokenByHash(context.Background(), hashOf(label))
	if err != nil {
		t.Fatalf("TokenByHash(%s): %v", label, err)
	}
	return tok.Valid()
}

// TestTeam_RemoveRevokesAgentTokens: removing a member revokes the agent
// tokens of the rentals handed over (running or stopped), in the same
// transaction, and says which; a rental of theirs without a token is
// handed over without one, and the tokens of other members' rentals stay.
// A removal refused, or one that fails after the tokens were revoked in
// its transaction, revokes nothing. A member who leaves loses theirs too.
func TestTeam_RemoveRevokesAgentTokens(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	for _, name := range []string{"box1", "box2", "bare"} {
		if _, err := db.CreateRental(ctx, onTeam(team, tBen), box(name, at(-3*time.Hour))); err != nil {
			t.Fatalf("CreateRental(%s): %v", name, err)
		}
	}
	for _, name := range []string{"dans", "dans2"} {
		if _, err := db.CreateRental(ctx, onTeam(team, tDan), box(name, at(-3*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	issueOn(t, db, team, "box1", "box1 old") // replaced by the next: revoked already
	b1 := issueOn(t, db, team, "box1", "box1")
	b2 := issueOn(t, db, team, "box2", "box2")
	issueOn(t, db, team, "dans", "dans")
	issueOn(t, db, team, "dans2", "dans2")
	if _, err := db.AppendEvent(ctx, onTeam(team, tBen), "box2", ledger.Event{Kind: ledger.EventStop, At: at(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	oldHash := hashOf("box1 old")
	oldRevoked := rawInt(t, db, `SELECT revoked_at FROM agent_tokens WHERE hash = ?`, oldHash[:])

	// Refused: handed to a plain member; nothing changes, every token
	// still works.
	unchangedKey(t, db, ledger.EINVALID, "team_hand_to", func() error {
		_, err := db.RemoveMember(ctx, onTeam(team, tCat), team.ID, tBen, tDan)
		return err
	})
	// Failing after the tokens were revoked in its transaction (the
	// member's row cannot be marked): the revocation is rolled back.
	rawExec(t, db, func(tx *sql.Tx) error {
		_, err := tx.Exec(`CREATE TRIGGER fail_removal BEFORE UPDATE OF removed_at ON team_members BEGIN SELECT RAISE(ABORT, 'no removal'); END`)
		return err
	})
	before := dump(t, db)
	if _, err := db.RemoveMember(ctx, onTeam(team, tCat), team.ID, tBen, tCat); err == nil {
		t.Fatal("RemoveMember succeeded with the member's row locked by a trigger")
	}
	if after := dump(t, db); after != before {
		t.Fatalf("a failed removal changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, label := range []string{"box1", "box2", "dans", "dans2"} {
		if !tokenValid(t, db, label) {
			t.Fatalf("after failed removals: %s's token is revoked", label)
		}
	}
	rawExec(t, db, func(tx *sql.Tx) error {
		_, err := tx.Exec(`DROP TRIGGER fail_removal`)
		return err
	})

	rm, err := db.RemoveMember(ctx, ledger.Action{UserID: team.Ledger(), By: tCat, At: t0, Key: "rm-ben"}, team.ID, tBen, tCat)
	if err != nil {
		t.Fatalf("RemoveMember: %v", err)
	}
	if !slices.Equal(rm.Handed, []string{"box1", "box2", "bare"}) {
		t.Errorf("Handed = %v, want box1, box2, bare", rm.Handed)
	}
	want := []ledger.RevokedToken{{RentalID: b1.RentalID, Rental: "box1"}, {RentalID: b2.RentalID, Rental: "box2"}}
	if !slices.Equal(rm.Revoked, want) {
		t.Errorf("Revoked = %+v, want %+v (bare had no token)", rm.Revoked, want)
	}
	for _, label := range []string{"box1", "box2"} {
		tok, err := db.TokenByHash(ctx, hashOf(label))
		if err != nil || tok.Valid() || !tok.RevokedAt.Equal(t0) {
			t.Errorf("%s's token after ben's removal = %+v, %v, want revoked at the removal", label, tok, err)
		}
	}
	if got := rawInt(t, db, `SELECT revoked_at FROM agent_tokens WHERE hash = ?`, oldHash[:]); got != oldRevoked {
		t.Errorf("box1's older token: revoked_at moved from %d to %d", oldRevoked, got)
	}
	for _, label := range []string{"dans", "dans2"} {
		if !tokenValid(t, db, label) {
			t.Errorf("dan's %s token was revoked with ben's removal", label)
		}
	}
	if n := rawInt(t, db, `SELECT count(*) FROM actions WHERE key = 'rm-ben' AND prev LIKE '%tokens_revoked%box1%box2%'`); n != 1 {
		t.Errorf("the journaled removal does not name the revoked tokens (%d)", n)
	}
	// The new owner's /agent gives the rental a working token again.
	if _, err := db.IssueToken(ctx, team.Ledger(), "box1", hashOf("box1 new"), t0); err != nil || !tokenValid(t, db, "box1 new") {
		t.Fatalf("a new token for box1: %v", err)
	}

	// dan leaves on his own: his rentals pass to the owner, their tokens
	// are revoked the same way.
	rm, err = db.RemoveMember(ctx, onTeam(team, tDan), team.ID, tDan, 0)
	if err != nil {
		t.Fatalf("dan leaves: %v", err)
	}
	if len(rm.Revoked) != 2 || rm.Revoked[0].Rental != "dans" || rm.Revoked[1].Rental != "dans2" {
		t.Errorf("Revoked as dan left = %+v", rm.Revoked)
	}
	for _, label := range []string{"dans", "dans2"} {
		if tokenValid(t, db, label) {
			t.Errorf("dan's %s token is still valid after he left", label)
		}
	}
	if !tokenValid(t, db, "box1 new") {
		t.Error("dan's leaving revoked box1's new token")
	}
}

// issueBy issues the token labelled label for the team's rental name by
// the member by (an admin's /agent NAME for a teammate's rental).
func issueBy(t *testing.T, db *sqlite.DB, team ledger.Team, by int64, name, label string) ledger.AgentToken {
	t.Helper()
	tok, err := db.IssueTokenBy(context.Background(), team.Ledger(), by, name, hashOf(label), at(-2*time.Hour))
	if err != nil {
		t.Fatalf("IssueTokenBy(%d, %s): %v", by, name, err)
	}
	return tok
}

// TestTeam_RemoveRevokesTokensIssuedForOthers: an admin who issued the
// agent token of a teammate's rental holds its install line; removing
// them revokes that token in the same transaction (Issued, with the
// rental's owner, who keeps the rental), besides their own rentals'. A
// token the owner issued again since, and one another admin issued, stay.
func TestTeam_RemoveRevokesTokensIssuedForOthers(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	for _, r := range []struct {
		by   int64
		name string
	}{{tCat, "cats"}, {tBen, "bens"}, {tBen, "bens2"}, {tDan, "dans"}} {
		if _, err := db.CreateRental(ctx, onTeam(team, r.by), box(r.name, at(-3*time.Hour))); err != nil {
			t.Fatalf("CreateRental(%s): %v", r.name, err)
		}
	}
	cats := issueBy(t, db, team, tCat, "cats", "cats")
	bens := issueBy(t, db, team, tCat, "bens", "bens")
	issueBy(t, db, team, tCat, "bens2", "bens2 by cat")
	issueBy(t, db, team, tBen, "bens2", "bens2 by ben") // ben's own line since: cat's is revoked already
	issueBy(t, db, team, tAnn, "dans", "dans by ann")

	rm, err := db.RemoveMember(ctx, onTeam(team, tAnn), team.ID, tCat, tAnn)
	if err != nil {
		t.Fatalf("RemoveMember(cat): %v", err)
	}
	if !slices.Equal(rm.Handed, []string{"cats"}) {
		t.Errorf("Handed = %v, want cats only", rm.Handed)
	}
	want := []ledger.RevokedToken{{RentalID: cats.RentalID, Rental: "cats"}, {RentalID: bens.RentalID, Rental: "bens", Issued: true, Owner: tBen}}
	if !slices.Equal(rm.Revoked, want) {
		t.Errorf("Revoked = %+v, want %+v", rm.Revoked, want)
	}
	for label, valid := range map[string]bool{"cats": false, "bens": false, "bens2 by ben": true, "dans by ann": true} {
		if got := tokenValid(t, db, label); got != valid {
			t.Errorf("%s's token valid = %v after cat's removal, want %v", label, got, valid)
		}
	}
	if r, err := db.Rental(ctx, team.Ledger(), "bens"); err != nil || r.Owner != tBen {
		t.Errorf("bens after cat's removal = owner %d, %v; want still ben's", r.Owner, err)
	}
	if n := rawInt(t, db, `SELECT count(*) FROM actions WHERE prev LIKE '%tokens_revoked%cats%bens%'`); n != 1 {
		t.Errorf("the journaled removal does not name both revoked tokens (%d)", n)
	}
}
