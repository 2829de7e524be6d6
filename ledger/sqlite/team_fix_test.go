package sqlite_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// An invite code seen posted in a group is expired by its code: Join
// then refuses it as expired; a second expiry, a used code and an unknown
// code report ok false and change nothing.
func TestTeam_ExpireInvite(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	code, _, err := db.CreateInvite(ctx, onTeam(team, tAnn), team.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := db.CreateInvite(ctx, onTeam(team, tAnn), team.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	when := t0.Add(time.Minute)
	id, ok, err := db.ExpireInvite(ctx, "  "+code+" ", when)
	if err != nil || !ok || id != team.ID {
		t.Fatalf("ExpireInvite = %d, %v, %v; want %d, true", id, ok, err, team.ID)
	}
	if got := rawInt(t, db, `SELECT expires_at FROM team_invites WHERE team_id = ? AND used_by IS NULL ORDER BY expires_at LIMIT 1`, team.ID); got != when.Unix() {
		t.Fatalf("expires_at = %d, want %d", got, when.Unix())
	}
	teamKey(t, func() error {
		_, err := db.Join(ctx, ledger.Action{UserID: tEli, At: when.Add(time.Second)}, code, "eli", false)
		return err
	}(), ledger.EINVALID, "invite_expired")
	for _, c := range []string{code, "nosuchcode"} {
		unchanged(t, db, "", func() error {
			id, ok, err := db.ExpireInvite(ctx, c, when.Add(time.Second))
			if ok || id != 0 {
				t.Fatalf("ExpireInvite(%q) again = %d, %v", c, id, ok)
			}
			return err
		})
	}
	// The other code still works; once used, it cannot be expired.
	if _, err := db.Join(ctx, ledger.Action{UserID: tEli, At: when}, other, "eli", false); err != nil {
		t.Fatalf("the other code: %v", err)
	}
	unchanged(t, db, "", func() error {
		_, ok, err := db.ExpireInvite(ctx, other, when)
		if ok {
			t.Fatal("a used code was expired")
		}
		return err
	})
}

// Former members are named with their last username and role; a member
// who rejoins is no longer one.
func TestTeam_FormerMembers(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	if f, err := db.FormerMembers(ctx, team.ID); err != nil || len(f) != 0 {
		t.Fatalf("FormerMembers before = %v, %v", f, err)
	}
	if _, err := db.RemoveMember(ctx, onTeam(team, tAnn), team.ID, tCat, tAnn); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemoveMember(ctx, onTeam(team, tBen), team.ID, tBen, 0); err != nil {
		t.Fatal(err)
	}
	f, err := db.FormerMembers(ctx, team.ID)
	if err != nil || len(f) != 2 {
		t.Fatalf("FormerMembers = %v, %v", f, err)
	}
	if f[0].UserID != tCat || f[0].Username != "cat" || f[0].Role != ledger.RoleAdmin ||
		f[1].UserID != tBen || f[1].Username != "ben" || f[1].Role != ledger.RoleMember {
		t.Fatalf("FormerMembers = %+v", f)
	}
	mustJoin(t, db, team, tBen)
	f, err = db.FormerMembers(ctx, team.ID)
	if err != nil || len(f) != 1 || f[0].UserID != tCat {
		t.Fatalf("FormerMembers after ben rejoined = %+v, %v", f, err)
	}
}

// A month bound's approval is asked once per month: November's approval,
// decided, leaves December's to be opened; a period on a rate bound or
// one that is no month is refused and changes nothing.
func TestTeam_ApprovalPeriod(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	r, err := db.CreateRental(ctx, onTeam(team, tBen), box("box5", at(-time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	ap := ledger.Approval{TeamID: team.ID, RentalID: r.ID, Scope: ledger.ScopeTeam, Kind: ledger.LimitMonth,
		Period: "2026-11", Currency: ledger.CNY, Limit: ledger.MustDecimal("100"), Value: ledger.MustDecimal("120")}
	nov, created, err := db.OpenApproval(ctx, ap)
	if err != nil || !created || nov.Period != "2026-11" {
		t.Fatalf("OpenApproval(November) = %+v, %v, %v", nov, created, err)
	}
	if _, err := db.DecideApproval(ctx, onTeam(team, tAnn), nov.ID, ledger.ApprovalApproved); err != nil {
		t.Fatal(err)
	}
	again, created, err := db.OpenApproval(ctx, ap)
	if err != nil || created || again.ID != nov.ID || again.State != ledger.ApprovalApproved {
		t.Fatalf("OpenApproval(November) again = %+v, %v, %v", again, created, err)
	}
	ap.Period = "2026-12"
	dec, created, err := db.OpenApproval(ctx, ap)
	if err != nil || !created || dec.ID == nov.ID || dec.State != ledger.ApprovalPending || dec.Period != "2026-12" {
		t.Fatalf("OpenApproval(December) = %+v, %v, %v", dec, created, err)
	}
	if got, err := db.Approval(ctx, dec.ID); err != nil || got.Period != "2026-12" {
		t.Fatalf("Approval = %+v, %v", got, err)
	}
	for _, bad := range []ledger.Approval{
		{TeamID: team.ID, RentalID: r.ID, Scope: ledger.ScopeTeam, Kind: ledger.LimitRate, Period: "2026-12", Currency: ledger.CNY},
		{TeamID: team.ID, RentalID: r.ID, Scope: ledger.ScopeTeam, Kind: ledger.LimitMonth, Period: "2026-13", Currency: ledger.CNY},
		{TeamID: team.ID, RentalID: r.ID, Scope: ledger.ScopeTeam, Kind: ledger.LimitMonth, Period: "2026-1", Currency: ledger.CNY},
		{TeamID: team.ID, RentalID: r.ID, Scope: ledger.ScopeTeam, Kind: ledger.LimitMonth, Period: "2026-12'; --", Currency: ledger.CNY},
	} {
		unchanged(t, db, ledger.EINVALID, func() error { _, _, err := db.OpenApproval(ctx, bad); return err })
	}
}

// An admin who is demoted or removed loses the unused invites they made:
// a demoted admin's code and a removed admin's code (with which they
// would let themselves back in) are expired in the same transaction; a
// code whose maker lost the role some other way is refused at Join; the
// other admins' codes keep working.
func TestTeam_InvitesOfFormerAdmin(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	invite := func(by int64) string {
		t.Helper()
		code, _, err := db.CreateInvite(ctx, onTeam(team, by), team.ID, 0, "")
		if err != nil {
			t.Fatalf("CreateInvite(%d): %v", by, err)
		}
		return code
	}
	later := ledger.Action{UserID: tEli, At: t0.Add(time.Minute)}
	join := func(code string) func() error {
		return func() error { _, err := db.Join(ctx, later, code, "eli", false); return err }
	}
	annCode := invite(tAnn)

	// Demoted: cat's code stops at the demotion.
	demoted := invite(tCat)
	if _, err := db.SetRole(ctx, onTeam(team, tAnn), team.ID, tCat, ledger.RoleMember); err != nil {
		t.Fatal(err)
	}
	if n := rawInt(t, db, `SELECT count(*) FROM team_invites WHERE created_by = ? AND expires_at = ?`, tCat, t0.Unix()); n != 1 {
		t.Fatalf("cat's invites expired at the demotion = %d, want 1", n)
	}
	unchangedKey(t, db, ledger.EINVALID, "invite_expired", join(demoted))

	// Made admin again: a member made an admin does not bring old codes
	// back; a code whose maker was demoted behind the store's back (a
	// code from before the expiry existed) is refused at Join.
	if _, err := db.SetRole(ctx, onTeam(team, tAnn), team.ID, tCat, ledger.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	unchangedKey(t, db, ledger.EINVALID, "invite_expired", join(demoted))
	old := invite(tCat)
	rawExec(t, db, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE team_members SET role = 'member' WHERE team_id = ? AND user_id = ?`, team.ID, tCat)
		return err
	})
	unchangedKey(t, db, ledger.EUNAUTHORIZED, "invite_revoked", join(old))
	rawExec(t, db, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE team_members SET role = 'admin' WHERE team_id = ? AND user_id = ?`, team.ID, tCat)
		return err
	})

	// Removed: cat cannot come back with a code of their own.
	removed := invite(tCat)
	if _, err := db.RemoveMember(ctx, onTeam(team, tAnn), team.ID, tCat, tAnn); err != nil {
		t.Fatal(err)
	}
	unchangedKey(t, db, ledger.EINVALID, "invite_expired", func() error {
		_, err := db.Join(ctx, ledger.Action{UserID: tCat, At: t0.Add(time.Minute)}, removed, "cat", false)
		return err
	})
	if n := rawInt(t, db, `SELECT count(*) FROM team_invites WHERE created_by = ? AND used_by IS NULL AND expires_at > ?`, tCat, t0.Unix()); n != 0 {
		t.Fatalf("cat's live invites after removal = %d", n)
	}
	// ann's code was untouched by all of it.
	if _, err := db.Join(ctx, later, annCode, "eli", false); err != nil {
		t.Fatalf("ann's code: %v", err)
	}
}

// Handing a rental on moves the live volumes attached to it, and no
// other record: not a loose volume, not a deleted one, not another
// rental's.
func TestTeam_SetOwnerMovesVolumes(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	lid := team.Ledger()
	r, err := db.CreateRental(ctx, onTeam(team, tBen), box("box7", at(-3*time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRental(ctx, onTeam(team, tBen), box("box8", at(-3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	for name, rental := range map[string]string{"data": "box7", "gone": "box7", "loose": "", "other": "box8"} {
		if _, err := db.CreateVolume(ctx, onTeam(team, tBen), disk(name, rental, at(-2*time.Hour))); err != nil {
			t.Fatalf("CreateVolume(%s): %v", name, err)
		}
	}
	rawExec(t, db, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE volumes SET deleted = 1 WHERE user_id = ? AND name = 'gone'`, lid)
		return err
	})
	if _, err := db.SetOwner(ctx, onTeam(team, tCat), r.ID, tDan); err != nil {
		t.Fatalf("SetOwner: %v", err)
	}
	for name, want := range map[string]int64{"data": tDan, "gone": tBen, "loose": tBen, "other": tBen} {
		if got := rawInt(t, db, `SELECT owner FROM volumes WHERE user_id = ? AND name = ?`, lid, name); got != want {
			t.Errorf("owner of volume %s = %d, want %d", name, got, want)
		}
	}
	if got := rawInt(t, db, `SELECT owner FROM rentals WHERE user_id = ? AND name = 'box8'`, lid); got != tBen {
		t.Errorf("owner of box8 = %d, want ben", got)
	}
}

// A top-up or a balance reading on a team's ledger is the team's money,
// owned by no one: any member adds one, but only an admin deletes or
// corrects one (the member who typed it included: their way back is
// /undo of their own entry); the refusals change nothing.
func TestTeamRecords_TopUpBalanceAdminOnly(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	tu, err := db.AddTopUp(ctx, byOf(bob), ledger.TopUp{Platform: "autodl", Amount: ledger.MustDecimal("100"), Currency: ledger.CNY})
	if err != nil {
		t.Fatalf("a member's top-up: %v", err)
	}
	br, err := db.RecordBalance(ctx, byOf(dave), ledger.BalanceRecord{Platform: "autodl", Amount: ledger.MustDecimal("80"), Currency: ledger.CNY, At: at(-time.Hour)})
	if err != nil {
		t.Fatalf("a member's balance reading: %v", err)
	}
	amt := ledger.MustDecimal("1000")
	for _, ref := range []int64{tu.Ref, br.Ref} {
		for _, who := range []int64{bob, dave} {
			var le *ledger.Error
			unchanged(t, db, ledger.EUNAUTHORIZED, func() error {
				_, err := db.DeleteRecord(ctx, byOf(who), ref)
				le, _ = err.(*ledger.Error)
				return err
			})
			if le == nil || le.Key != "team_admin_only" {
				t.Fatalf("delete #%d by %d: refusal %#v, want team_admin_only", ref, who, le)
			}
			unchanged(t, db, ledger.EUNAUTHORIZED, func() error {
				_, _, err := db.FixRecord(ctx, byOf(who), ref, ledger.RecordFix{Amount: &amt})
				return err
			})
		}
		// Someone outside the team learns nothing of the record.
		unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.DeleteRecord(ctx, byOf(eve), ref); return err })
	}
	if _, fixed, err := db.FixRecord(ctx, byOf(carol), tu.Ref, ledger.RecordFix{Amount: &amt}); err != nil || fixed.Amount.String() != "1000" {
		t.Fatalf("the admin's fix = %+v, %v", fixed, err)
	}
	if _, err := db.DeleteRecord(ctx, byOf(alice), br.Ref); err != nil {
		t.Fatalf("the owner's delete: %v", err)
	}
	// On a personal ledger the person changes their own, as before.
	own, err := db.AddTopUp(ctx, act(bob), ledger.TopUp{Platform: "autodl", Amount: ledger.MustDecimal("5"), Currency: ledger.CNY})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRecord(ctx, act(bob), own.Ref); err != nil {
		t.Fatalf("a personal top-up's delete: %v", err)
	}
}
