package sqlite_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// The people of the tests' team: alice owns it, carol is an admin, bob
// and dave are members, eve is in no team.
const (
	alice = int64(101)
	bob   = int64(102)
	carol = int64(103)
	dave  = int64(104)
	eve   = int64(105)
)

// teamLedger is the ledger of the tests' team (ID 1).
var teamLedger = ledger.TeamLedger(1)

// openTeam opens a database holding a team's ledger with alice (owner),
// carol (admin), bob and dave (members) and eve outside it. The team's
// rows are written with SQL, as the migration defines them, so these
// tests of the records' checks stand on their own.
func openTeam(t *testing.T) *sqlite.DB {
	t.Helper()
	db := openDB(t)
	for _, id := range []int64{alice, bob, carol, dave, eve} {
		mustUser(t, db, id)
	}
	if _, err := db.EnsureUser(context.Background(), ledger.User{ID: teamLedger, TZ: "Asia/Shanghai"}); err != nil {
		t.Fatalf("EnsureUser(team ledger): %v", err)
	}
	teamSQL(t, db, `INSERT INTO teams (id, name, name_key, created_by, created_at) VALUES (1, 'Lab', 'lab', ?, ?)`, alice, t0.Unix())
	for _, m := range []struct {
		id   int64
		name string
		role ledger.Role
	}{{alice, "alice", ledger.RoleOwner}, {carol, "carol", ledger.RoleAdmin}, {bob, "bob", ledger.RoleMember}, {dave, "", ledger.RoleMember}} {
		teamSQL(t, db, `INSERT INTO team_members (team_id, user_id, username, role, joined_at) VALUES (1, ?, ?, ?, ?)`,
			m.id, m.name, string(m.role), t0.Unix())
	}
	return db
}

// teamSQL runs a statement on the database file through a connection of
// its own.
func teamSQL(t *testing.T, db *sqlite.DB, query string, args ...any) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// byOf is an action of person on the team's ledger.
func byOf(person int64) ledger.Action {
	return ledger.Action{UserID: teamLedger, By: person, At: t0}
}

// byIDs returns by_id of the journal's entries of kind on the team's
// ledger, in order.
func byIDs(t *testing.T, db *sqlite.DB, kind ledger.ActionKind) []int64 {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT by_id FROM actions WHERE user_id = ? AND kind = ? ORDER BY id`, teamLedger, string(kind))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// TestTeamRecords_OwnerDefaultsToActor: a rental bob logs on the team's
// ledger is bob's, with its project, and reads back so from every
// loader; a personal rental keeps owner 0.
func TestTeamRecords_OwnerDefaultsToActor(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	r := box("box1", at(-2*time.Hour))
	r.Project = "yolo-v9"
	got, err := db.CreateRental(ctx, byOf(bob), r)
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != bob || got.Project != "yolo-v9" {
		t.Fatalf("CreateRental on the team = owner %d project %q, want %d yolo-v9", got.Owner, got.Project, bob)
	}
	byName, err := db.Rental(ctx, teamLedger, "box1")
	if err != nil {
		t.Fatal(err)
	}
	byID, err := db.RentalByID(ctx, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	live, err := db.LiveRentals(ctx)
	if err != nil || len(live) != 1 {
		t.Fatalf("LiveRentals = %d, %v", len(live), err)
	}
	book, err := db.Book(ctx, teamLedger)
	if err != nil || len(book.Rentals) != 1 {
		t.Fatalf("Book = %v", err)
	}
	for what, x := range map[string]*ledger.Rental{"Rental": byName, "RentalByID": byID, "LiveRentals": live[0], "Book": book.Rentals[0]} {
		if x.Owner != bob || x.Project != "yolo-v9" {
			t.Errorf("%s: owner %d project %q, want %d yolo-v9", what, x.Owner, x.Project, bob)
		}
	}
	if ids := byIDs(t, db, ledger.ActionRent); len(ids) != 1 || ids[0] != bob {
		t.Errorf("journal by_id of the rent = %v, want [%d]", ids, bob)
	}

	mine := mustRent(t, db, alice, "own", at(-time.Hour))
	if mine.Owner != 0 || mine.Project != "" {
		t.Errorf("a personal rental = owner %d project %q, want 0 and none", mine.Owner, mine.Project)
	}

	// A member cannot log a rental for someone else; an admin can, for a
	// member only; a bad project name is refused. None changes anything.
	other := box("box2", at(-time.Hour))
	other.Owner = dave
	unchanged(t, db, ledger.EUNAUTHORIZED, func() error { _, err := db.CreateRental(ctx, byOf(bob), other); return err })
	other.Owner = eve
	unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.CreateRental(ctx, byOf(carol), other); return err })
	bad := box("box3", at(-time.Hour))
	bad.Project = "no spaces"
	unchanged(t, db, ledger.EINVALID, func() error { _, err := db.CreateRental(ctx, byOf(bob), bad); return err })
	other.Owner = dave
	if got, err := db.CreateRental(ctx, byOf(carol), other); err != nil || got.Owner != dave {
		t.Fatalf("an admin's rental for dave = %+v, %v", got, err)
	}
}

// TestTeamRecords_AttachedInherit: a volume and a charge attached to
// bob's rental take its owner and project when they give none, even
// when an admin logs them; an unattached one is the actor's.
func TestTeamRecords_AttachedInherit(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	r := box("box1", at(-3*time.Hour))
	r.Project = "yolo-v9"
	if _, err := db.CreateRental(ctx, byOf(bob), r); err != nil {
		t.Fatal(err)
	}
	v, err := db.CreateVolume(ctx, byOf(carol), disk("data1", "box1", at(-2*time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if v.Owner != bob || v.Project != "yolo-v9" {
		t.Errorf("attached volume = owner %d project %q, want %d yolo-v9", v.Owner, v.Project, bob)
	}
	c, err := db.AddCharge(ctx, byOf(bob), "box1", ledger.Charge{Amount: ledger.MustDecimal("5"), Note: "image"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Owner != bob || c.Project != "yolo-v9" {
		t.Errorf("attached charge = owner %d project %q, want %d yolo-v9", c.Owner, c.Project, bob)
	}
	loose, err := db.AddCharge(ctx, byOf(dave), "", ledger.Charge{Amount: ledger.MustDecimal("2"), Platform: "runpod", Currency: ledger.USD, Project: "bert"})
	if err != nil {
		t.Fatal(err)
	}
	if loose.Owner != dave || loose.Project != "bert" {
		t.Errorf("a loose charge = owner %d project %q, want %d bert", loose.Owner, loose.Project, dave)
	}
	// dave may not attach a charge to bob's rental: it changes what it costs.
	unchanged(t, db, ledger.EUNAUTHORIZED, func() error {
		_, err := db.AddCharge(ctx, byOf(dave), "box1", ledger.Charge{Amount: ledger.MustDecimal("1")})
		return err
	})

	book, err := db.Book(ctx, teamLedger)
	if err != nil {
		t.Fatal(err)
	}
	if len(book.Volumes) != 1 || book.Volumes[0].Owner != bob || book.Volumes[0].Project != "yolo-v9" {
		t.Errorf("Book's volume lost its owner or project: %+v", book.Volumes)
	}
	owners := map[int64]string{}
	for _, c := range book.Charges {
		owners[c.Owner] = c.Project
	}
	if len(book.Charges) != 2 || owners[bob] != "yolo-v9" || owners[dave] != "bert" {
		t.Errorf("Book's charges = %+v, want bob's on yolo-v9 and dave's on bert", book.Charges)
	}
	recs, err := db.Records(ctx, teamLedger, ledger.RecordFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Kind == ledger.RecordCharge && rec.Owner == 0 {
			t.Errorf("record #%d lost its owner", rec.Ref)
		}
	}
}

// TestTeamRecords_MemberCannotChangeAnothers: bob may not stop, reprice
// or delete dave's rental or its charge; carol (an admin) may, and the
// journal keeps that carol did it.
func TestTeamRecords_MemberCannotChangeAnothers(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	if _, err := db.CreateRental(ctx, byOf(dave), box("box3", at(-2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	c, err := db.AddCharge(ctx, byOf(dave), "box3", ledger.Charge{Amount: ledger.MustDecimal("3")})
	if err != nil {
		t.Fatal(err)
	}
	stop := ledger.Event{Kind: ledger.EventStop, At: at(-time.Hour)}
	var le *ledger.Error
	unchanged(t, db, ledger.EUNAUTHORIZED, func() error {
		_, err := db.AppendEvent(ctx, byOf(bob), "box3", stop)
		le, _ = err.(*ledger.Error)
		return err
	})
	if le == nil || le.Key != "team_not_yours" || len(le.Args) != 2 || le.Args[0] != "box3" || le.Args[1] != "id104" {
		t.Fatalf("refusal = %#v, want team_not_yours naming box3 and id104 (dave has no username)", le)
	}
	unchanged(t, db, ledger.EUNAUTHORIZED, func() error {
		_, err := db.SetTraffic(ctx, byOf(bob), "box3", ledger.TrafficTerms{Priced: true, PricePerGB: ledger.MustDecimal("1")})
		return err
	})
	unchanged(t, db, ledger.EUNAUTHORIZED, func() error { _, err := db.DeleteRecord(ctx, byOf(bob), c.Ref); return err })
	note := "mine now"
	unchanged(t, db, ledger.EUNAUTHORIZED, func() error {
		_, _, err := db.FixRecord(ctx, byOf(bob), c.Ref, ledger.RecordFix{Note: &note})
		return err
	})
	if _, err := db.CreateVolume(ctx, byOf(dave), disk("data3", "", at(-2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	unchanged(t, db, ledger.EUNAUTHORIZED, func() error {
		_, err := db.AppendVolumeEvent(ctx, byOf(bob), "data3", ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: at(-time.Hour)})
		return err
	})
	// eve is no member: ENOTFOUND, not a hint of what the team holds.
	unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.AppendEvent(ctx, byOf(eve), "box3", stop); return err })

	got, err := db.AppendEvent(ctx, byOf(carol), "box3", stop)
	if err != nil {
		t.Fatalf("the admin's stop: %v", err)
	}
	if got.State() != ledger.Stopped || got.Owner != dave {
		t.Fatalf("after the admin's stop: state %v owner %d", got.State(), got.Owner)
	}
	if ids := byIDs(t, db, ledger.ActionStop); len(ids) != 1 || ids[0] != carol {
		t.Fatalf("journal by_id of the stop = %v, want [%d]", ids, carol)
	}
	// dave changes his own.
	if _, err := db.AppendEvent(ctx, byOf(dave), "box3", ledger.Event{Kind: ledger.EventResume, At: at(-30 * time.Minute)}); err != nil {
		t.Fatalf("the owner's resume: %v", err)
	}
	// A rental nobody owns yet (a synced one) is any member's to change.
	teamSQL(t, db, `UPDATE rentals SET owner = 0 WHERE name = 'box3'`)
	if _, err := db.AppendEvent(ctx, byOf(bob), "box3", ledger.Event{Kind: ledger.EventStop, At: at(-10 * time.Minute)}); err != nil {
		t.Fatalf("a member's stop of an unowned rental: %v", err)
	}
}

// TestTeamRecords_RemovedMemberRefused: once bob is removed (his row
// kept, removed_at set) nothing he sends writes the team's ledger, his
// own rental included.
func TestTeamRecords_RemovedMemberRefused(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	if _, err := db.CreateRental(ctx, byOf(bob), box("box1", at(-2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	teamSQL(t, db, `UPDATE team_members SET removed_at = ?, removed_by = ? WHERE team_id = 1 AND user_id = ?`, t0.Unix(), alice, bob)
	for name, fn := range map[string]func() error{
		"stop": func() error {
			_, err := db.AppendEvent(ctx, byOf(bob), "box1", ledger.Event{Kind: ledger.EventStop, At: at(-time.Hour)})
			return err
		},
		"rent": func() error { _, err := db.CreateRental(ctx, byOf(bob), box("box2", at(-time.Hour))); return err },
		"charge": func() error {
			_, err := db.AddCharge(ctx, byOf(bob), "", ledger.Charge{Amount: ledger.MustDecimal("1"), Platform: "autodl", Currency: ledger.CNY})
			return err
		},
		"topup": func() error {
			_, err := db.AddTopUp(ctx, byOf(bob), ledger.TopUp{Platform: "autodl", Amount: ledger.MustDecimal("100"), Currency: ledger.CNY})
			return err
		},
		"undo": func() error { _, err := db.Undo(ctx, byOf(bob)); return err },
	} {
		t.Run(name, func(t *testing.T) {
			var key string
			unchanged(t, db, ledger.ENOTFOUND, func() error {
				err := fn()
				var le *ledger.Error
				if e, ok := err.(*ledger.Error); ok {
					le = e
					key = le.Key
				}
				return err
			})
			if key != "team_not_member" {
				t.Fatalf("key = %q, want team_not_member", key)
			}
		})
	}
}

// TestTeamRecords_UndoOwnOnly: bob's /undo on the team reverses his own
// latest change, not carol's later one; the journal says what is next
// for each of them.
func TestTeamRecords_UndoOwnOnly(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	if _, err := db.CreateRental(ctx, byOf(bob), box("box1", at(-3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRental(ctx, byOf(carol), box("box2", at(-2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	next, err := db.NextUndoBy(ctx, teamLedger, bob)
	if err != nil || next.Name != "box1" || !next.Last {
		t.Fatalf("NextUndoBy(bob) = %+v, %v; want box1, his last", next, err)
	}
	res, err := db.Undo(ctx, byOf(bob))
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "box1" {
		t.Fatalf("bob's undo reversed %q, want his box1", res.Name)
	}
	if _, err := db.Rental(ctx, teamLedger, "box2"); err != nil {
		t.Fatalf("carol's box2 went with bob's undo: %v", err)
	}
	if _, err := db.Rental(ctx, teamLedger, "box1"); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("bob's box1 is still there: %v", err)
	}
	// Nothing of bob's is left; carol's entry is not his to undo.
	unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.Undo(ctx, byOf(bob)); return err })
	if _, err := db.NextUndoBy(ctx, teamLedger, bob); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("NextUndoBy(bob) after his undo: %v, want ENOTFOUND", err)
	}
	if next, err := db.NextUndoBy(ctx, teamLedger, carol); err != nil || next.Name != "box2" {
		t.Fatalf("NextUndoBy(carol) = %+v, %v; want box2", next, err)
	}
}

// TestTeamRecords_AdoptOwner: an enrolment token of the team's ledger
// records its maker (a member only); an instance announced with the one
// dave made is dave's when carol adopts it; without a maker it is the
// adopter's.
func TestTeamRecords_AdoptOwner(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	// eve, outside the team, cannot make one of its tokens.
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, _, err := db.IssueEnrolTokenBy(ctx, teamLedger, eve, hashOf("eve-tok"), t0)
		return err
	})
	tok, _, err := db.IssueEnrolTokenBy(ctx, teamLedger, dave, hashOf("team-tok"), t0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.EnrolTokenByHash(ctx, hashOf("team-tok")); err != nil || got.CreatedBy != dave {
		t.Fatalf("the token read back = %+v, %v; want made by dave", got, err)
	}
	in := mustAnnounce(t, db, announcement(tok, "pod1", t0))
	r := box("", at(-time.Hour))
	got, _, err := db.AdoptInstance(ctx, byOf(carol), in.ID, r, hashOf("agent-1"))
	if err != nil {
		t.Fatalf("AdoptInstance: %v", err)
	}
	if got.Owner != dave {
		t.Fatalf("adopted rental's owner = %d, want dave (%d), who made the token", got.Owner, dave)
	}
	// A token nobody is named for: the adopter's.
	tok2 := mustEnrolToken(t, db, teamLedger, "team-tok2", t0)
	in2 := mustAnnounce(t, db, announcement(tok2, "pod2", t0))
	got2, _, err := db.AdoptInstance(ctx, byOf(bob), in2.ID, box("", at(-time.Hour)), hashOf("agent-2"))
	if err != nil {
		t.Fatalf("AdoptInstance: %v", err)
	}
	if got2.Owner != bob {
		t.Fatalf("adopted rental's owner = %d, want the adopter bob (%d)", got2.Owner, bob)
	}
	// Someone outside the team neither adopts nor ignores its instances.
	in3 := mustAnnounce(t, db, announcement(tok2, "pod3", t0))
	unchanged(t, db, ledger.ENOTFOUND, func() error {
		_, _, err := db.AdoptInstance(ctx, byOf(eve), in3.ID, box("", at(-time.Hour)), hashOf("agent-3"))
		return err
	})
	unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.IgnoreInstance(ctx, byOf(eve), in3.ID); return err })
}

// TestTeamRecords_UndoNotUnderTeammate: bob may not undo his rent of
// box1 once carol (an admin) stopped it: the undo would take her stop
// with it. Once carol undoes her stop, bob's undo goes through.
func TestTeamRecords_UndoNotUnderTeammate(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	if _, err := db.CreateRental(ctx, byOf(bob), box("box1", at(-3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendEvent(ctx, byOf(carol), "box1", ledger.Event{Kind: ledger.EventStop, At: at(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var key string
	unchanged(t, db, ledger.ECONFLICT, func() error {
		_, err := db.Undo(ctx, byOf(bob))
		if le, ok := err.(*ledger.Error); ok {
			key = le.Key
		}
		return err
	})
	if key != "undo_stale" {
		t.Fatalf("refusal key = %q, want undo_stale", key)
	}
	if res, err := db.Undo(ctx, byOf(carol)); err != nil || res.Kind != ledger.ActionStop {
		t.Fatalf("carol's undo = %+v, %v; want her stop", res, err)
	}
	if res, err := db.Undo(ctx, byOf(bob)); err != nil || res.Name != "box1" || res.Kind != ledger.ActionRent {
		t.Fatalf("bob's undo after carol's = %+v, %v; want his rent of box1", res, err)
	}
}

// TestTeamRecords_UndoDeleteKeepsOwner: a charge bob deletes and then
// undoes comes back as his, on its project.
func TestTeamRecords_UndoDeleteKeepsOwner(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	c, err := db.AddCharge(ctx, byOf(bob), "", ledger.Charge{Amount: ledger.MustDecimal("4"), Platform: "autodl", Currency: ledger.CNY, Project: "bert"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRecord(ctx, byOf(bob), c.Ref); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Undo(ctx, byOf(bob)); err != nil {
		t.Fatal(err)
	}
	book, err := db.Book(ctx, teamLedger)
	if err != nil {
		t.Fatal(err)
	}
	if len(book.Charges) != 1 || book.Charges[0].Owner != bob || book.Charges[0].Project != "bert" {
		t.Fatalf("the charge after undoing its deletion = %+v, want bob's on bert", book.Charges)
	}
}

// TestTeamRecords_IgnoreInstanceMakerOrAdmin: on a team's ledger "Not
// mine" is for the member who made the enrolment token the instance
// announced itself with, or an admin: bob cannot silence dave's box
// (team_not_yours, nothing changed); dave can, and so can carol, an admin.
func TestTeamRecords_IgnoreInstanceMakerOrAdmin(t *testing.T) {
	ctx := context.Background()
	db := openTeam(t)
	tok, _, err := db.IssueEnrolTokenBy(ctx, teamLedger, dave, hashOf("dave-tok"), t0)
	if err != nil {
		t.Fatal(err)
	}
	in1 := mustAnnounce(t, db, announcement(tok, "pod1", t0))
	in2 := mustAnnounce(t, db, announcement(tok, "pod2", t0))
	unchangedKey(t, db, ledger.EUNAUTHORIZED, "team_not_yours", func() error { _, err := db.IgnoreInstance(ctx, byOf(bob), in1.ID); return err })
	if got, err := db.IgnoreInstance(ctx, byOf(dave), in1.ID); err != nil || got.State != ledger.InstanceIgnored {
		t.Fatalf("dave's Not mine = %+v, %v", got, err)
	}
	if got, err := db.IgnoreInstance(ctx, byOf(carol), in2.ID); err != nil || got.State != ledger.InstanceIgnored {
		t.Fatalf("carol's (an admin) Not mine = %+v, %v", got, err)
	}
}
