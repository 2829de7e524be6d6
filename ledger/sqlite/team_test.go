package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// The people of the team store's tests: ann creates the team, cat is made
// an admin, ben and dan join as members, eli never does.
const (
	tAnn = int64(201)
	tBen = int64(202)
	tCat = int64(203)
	tDan = int64(204)
	tEli = int64(205)
)

var tNames = map[int64]string{tAnn: "ann", tBen: "ben", tCat: "cat", tDan: "dan", tEli: "eli"}

// as is an action of person on their own ledger at t0.
func as(person int64) ledger.Action { return ledger.Action{UserID: person, At: t0} }

// onTeam is an action of person on team's ledger at t0.
func onTeam(team ledger.Team, person int64) ledger.Action {
	return ledger.Action{UserID: team.Ledger(), By: person, At: t0}
}

// rosterDB opens a database with the five people registered and team
// "Lab" made by ann through the store, with cat (admin), ben and dan
// (members) joined through invites.
func rosterDB(t *testing.T) (*sqlite.DB, ledger.Team) {
	t.Helper()
	ctx := context.Background()
	db := openDB(t)
	for id := range tNames {
		mustUser(t, db, id)
	}
	team, err := db.CreateTeam(ctx, as(tAnn), "Lab", "ann")
	if err != nil {
		t.Fatalf("CreateTeam: %v", err)
	}
	for _, p := range []int64{tCat, tBen, tDan} {
		mustJoin(t, db, team, p)
	}
	if _, err := db.SetRole(ctx, onTeam(team, tAnn), team.ID, tCat, ledger.RoleAdmin); err != nil {
		t.Fatalf("SetRole(cat admin): %v", err)
	}
	return db, team
}

// mustJoin admits person to team with a fresh invite of ann's.
func mustJoin(t *testing.T, db *sqlite.DB, team ledger.Team, person int64) ledger.Membership {
	t.Helper()
	ctx := context.Background()
	code, _, err := db.CreateInvite(ctx, onTeam(team, tAnn), team.ID, 0, "")
	if err != nil {
		t.Fatalf("CreateInvite: %v", err)
	}
	ms, err := db.Join(ctx, as(person), code, tNames[person], false)
	if err != nil {
		t.Fatalf("Join(%d): %v", person, err)
	}
	return ms
}

// rawExec runs statements on the database file through a connection of
// its own, in one transaction.
func rawExec(t *testing.T, db *sqlite.DB, fn func(tx *sql.Tx) error) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// rawInt reads one integer with SQL.
func rawInt(t *testing.T, db *sqlite.DB, query string, args ...any) int64 {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n sql.NullInt64
	if err := raw.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n.Int64
}

// wantKey fails unless err is a ledger error of code and key.
func teamKey(t *testing.T, err error, code, key string) *ledger.Error {
	t.Helper()
	wantCode(t, err, code)
	var le *ledger.Error
	if !errors.As(err, &le) || le.Key != key {
		t.Fatalf("error %v: want key %q", err, key)
	}
	return le
}

// unchangedKey is unchanged with the error's key checked too.
func unchangedKey(t *testing.T, db *sqlite.DB, code, key string, fn func() error) {
	t.Helper()
	unchanged(t, db, code, func() error {
		err := fn()
		var le *ledger.Error
		if errors.As(err, &le) && le.Key != key {
			t.Fatalf("error %v: want key %q", err, key)
		}
		return err
	})
}

func TestTeam_Create(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, tAnn)
	if _, err := db.UpdateUser(ctx, as(tAnn), ledger.User{Lang: "zh", TZ: "Asia/Shanghai", Settings: ledger.DefaultSettings()}); err != nil {
		t.Fatal(err)
	}
	team, err := db.CreateTeam(ctx, ledger.Action{UserID: tAnn, At: t0, Key: "k1"}, "Lab-1", "@ann")
	if err != nil {
		t.Fatalf("CreateTeam: %v", err)
	}
	if team.ID < 1 || team.Name != "Lab-1" || team.CreatedBy != tAnn || !team.CreatedAt.Equal(t0) || team.Room != 0 {
		t.Fatalf("team = %+v", team)
	}
	// The team's ledger is a user of its own, in the creator's language
	// and zone, with the default settings.
	u, err := db.User(ctx, team.Ledger())
	if err != nil {
		t.Fatalf("the team's ledger: %v", err)
	}
	if u.Lang != "zh" || u.TZ != "Asia/Shanghai" || u.Settings != ledger.DefaultSettings() || len(u.Budgets) != 0 {
		t.Fatalf("team ledger user = %+v", u)
	}
	m, err := db.Member(ctx, team.ID, tAnn)
	if err != nil || m.Role != ledger.RoleOwner || m.Username != "ann" || m.Name() != "@ann" {
		t.Fatalf("owner = %+v, %v", m, err)
	}
	if n := rawInt(t, db, `SELECT count(*) FROM actions WHERE user_id = ? AND kind = 'team' AND by_id = ? AND undoable = 0`, team.Ledger(), tAnn); n != 1 {
		t.Fatalf("journal entries of the creation in the team's journal = %d, want 1", n)
	}
	for _, name := range []string{"lab-1", "LAB-1"} {
		unchangedKey(t, db, ledger.ECONFLICT, "team_name_taken", func() error { _, err := db.CreateTeam(ctx, as(tAnn), name, ""); return err })
	}
	for _, name := range []string{"", "me", "ME", "personal", "-x", "a b", "<b>x</b>", strings.Repeat("x", ledger.MaxTeamNameRunes+1)} {
		unchangedKey(t, db, ledger.EINVALID, "team_name", func() error { _, err := db.CreateTeam(ctx, as(tAnn), name, ""); return err })
	}
	unchanged(t, db, ledger.EDUPLICATE, func() error {
		_, err := db.CreateTeam(ctx, ledger.Action{UserID: tAnn, At: t0, Key: "k1"}, "Other", "")
		return err
	})
	// Someone with no ledger of their own (an outsider) makes no team.
	unchangedKey(t, db, ledger.ENOTFOUND, "not_registered", func() error { _, err := db.CreateTeam(ctx, as(tEli), "Eli", ""); return err })
	// A team's ledger acting with no person makes no team.
	unchanged(t, db, ledger.EINVALID, func() error {
		_, err := db.CreateTeam(ctx, ledger.Action{UserID: team.Ledger()}, "Ghost", "")
		return err
	})

	for i := 2; i <= ledger.MaxTeamsOwned; i++ {
		if _, err := db.CreateTeam(ctx, as(tAnn), fmt.Sprintf("t%d", i), ""); err != nil {
			t.Fatalf("team %d of %d: %v", i, ledger.MaxTeamsOwned, err)
		}
	}
	unchangedKey(t, db, ledger.ECONFLICT, "teams_owned", func() error { _, err := db.CreateTeam(ctx, as(tAnn), "one-more", ""); return err })

	got, err := db.TeamByName(ctx, "lab-1")
	if err != nil || got.ID != team.ID {
		t.Fatalf("TeamByName = %+v, %v", got, err)
	}
	_, err = db.TeamByName(ctx, "nope")
	teamKey(t, err, ledger.ENOTFOUND, "team_unknown")
	_, err = db.Team(ctx, 9999)
	teamKey(t, err, ledger.ENOTFOUND, "team_unknown")
	all, err := db.Teams(ctx)
	if err != nil || len(all) != ledger.MaxTeamsOwned || all[0].ID != team.ID {
		t.Fatalf("Teams = %d teams, %v", len(all), err)
	}
}

func TestTeam_InviteJoinReplay(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	mustUser(t, db, 206)
	code, inv, err := db.CreateInvite(ctx, onTeam(team, tCat), team.ID, 0, "")
	if err != nil {
		t.Fatalf("CreateInvite by an admin: %v", err)
	}
	if len(code) != 10 || strings.Trim(code, "abcdefghjkmnpqrstuvwxyz23456789") != "" {
		t.Fatalf("code %q: want 10 letters of the unambiguous alphabet", code)
	}
	if !inv.Expires.Equal(t0.Add(ledger.InviteTTL)) || inv.CreatedBy != tCat || inv.UsedBy != 0 {
		t.Fatalf("invite = %+v", inv)
	}
	if strings.Contains(dump(t, db), code) {
		t.Fatal("the code is stored in clear")
	}
	// Typed in capitals with spaces around, it still works.
	ms, err := db.Join(ctx, ledger.Action{UserID: tEli, At: t0, Key: "join-1"}, "  "+strings.ToUpper(code)+" ", "eli", true)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	if ms.Team.ID != team.ID || ms.Member.Role != ledger.RoleMember || !ms.Member.Outsider || ms.Member.Username != "eli" {
		t.Fatalf("membership = %+v", ms)
	}
	// The invite's maker comes back with the membership, for the notice.
	if by := ms.InvitedBy; by.UserID != tCat || by.Username != "cat" || by.Role != ledger.RoleAdmin {
		t.Fatalf("InvitedBy = %+v, want cat, the admin who made the code", by)
	}
	out, err := db.Outsiders(ctx)
	if err != nil || !slices.Equal(out, []int64{tEli}) {
		t.Fatalf("Outsiders = %v, %v", out, err)
	}
	// The same update delivered again, the code replayed by its user or
	// passed on to someone else: each is refused and changes nothing.
	unchanged(t, db, ledger.EDUPLICATE, func() error {
		_, err := db.Join(ctx, ledger.Action{UserID: tEli, At: t0, Key: "join-1"}, code, "eli", true)
		return err
	})
	unchangedKey(t, db, ledger.ECONFLICT, "invite_used", func() error { _, err := db.Join(ctx, as(tEli), code, "eli", true); return err })
	unchangedKey(t, db, ledger.ECONFLICT, "invite_used", func() error { _, err := db.Join(ctx, as(206), code, "", false); return err })
	unchangedKey(t, db, ledger.ENOTFOUND, "invite_unknown", func() error { _, err := db.Join(ctx, as(206), "abcdefghjk", "", false); return err })
	unchangedKey(t, db, ledger.ENOTFOUND, "invite_unknown", func() error { _, err := db.Join(ctx, as(206), "", "", false); return err })
	// A member who joins again with a new code is told so, and the code
	// stays for someone else.
	code2, _, err := db.CreateInvite(ctx, onTeam(team, tAnn), team.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	le := teamKey(t, func() error { _, err := db.Join(ctx, as(tBen), code2, "ben", false); return err }(), ledger.ECONFLICT, "team_already_member")
	if le.Args[0] != "Lab" {
		t.Fatalf("args = %v", le.Args)
	}
	if _, err := db.Join(ctx, as(206), code2, "", false); err != nil {
		t.Fatalf("the code refused to a member still works: %v", err)
	}
	mem, err := db.Members(ctx, team.ID)
	if err != nil || len(mem) != 6 {
		t.Fatalf("Members = %d, %v", len(mem), err)
	}
}

func TestTeam_InviteExpired(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	code, _, err := db.CreateInvite(ctx, onTeam(team, tAnn), team.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	late := ledger.Action{UserID: tEli, At: t0.Add(ledger.InviteTTL)}
	le := teamKey(t, func() error { _, err := db.Join(ctx, late, code, "eli", false); return err }(), ledger.EINVALID, "invite_expired")
	if at, ok := le.Args[0].(time.Time); !ok || !at.Equal(t0.Add(ledger.InviteTTL)) {
		t.Fatalf("args = %v", le.Args)
	}
	unchangedKey(t, db, ledger.EINVALID, "invite_expired", func() error { _, err := db.Join(ctx, late, code, "eli", false); return err })
	if _, err := db.Join(ctx, ledger.Action{UserID: tEli, At: t0.Add(ledger.InviteTTL - time.Second)}, code, "eli", false); err != nil {
		t.Fatalf("a second before it expires: %v", err)
	}
}

func TestTeam_InviteAddressed(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	mustUser(t, db, 206)
	for _, tc := range []struct {
		name    string
		forUser int64
		forName string
	}{
		{"by username", 0, "@Eli_X"},
		{"by user ID", 206, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, inv, err := db.CreateInvite(ctx, onTeam(team, tCat), team.ID, tc.forUser, tc.forName)
			if err != nil {
				t.Fatal(err)
			}
			addressee, uname := tEli, "eli_x"
			if tc.forUser != 0 {
				addressee, uname = 206, ""
			} else if inv.ForUsername != "Eli_X" {
				t.Fatalf("ForUsername = %q", inv.ForUsername)
			}
			// Forwarded to someone else, with a name or without one:
			// refused, and the code stays unused.
			unchangedKey(t, db, ledger.EUNAUTHORIZED, "invite_not_for_you", func() error { _, err := db.Join(ctx, as(tDan+100), code, "mallory", false); return err })
			unchangedKey(t, db, ledger.EUNAUTHORIZED, "invite_not_for_you", func() error { _, err := db.Join(ctx, as(tDan+101), code, "", false); return err })
			ms, err := db.Join(ctx, as(addressee), code, uname, false)
			if err != nil {
				t.Fatalf("the addressee joins: %v", err)
			}
			if ms.Member.UserID != addressee {
				t.Fatalf("member = %+v", ms.Member)
			}
		})
	}
	unchanged(t, db, ledger.EINVALID, func() error {
		_, _, err := db.CreateInvite(ctx, onTeam(team, tCat), team.ID, 0, "<b>x</b>")
		return err
	})
}

func TestTeam_JoinRace(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	code, _, err := db.CreateInvite(ctx, onTeam(team, tAnn), team.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = db.Join(ctx, as(int64(300+i)), code, "", false)
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case ledger.ErrorCode(err) == ledger.ECONFLICT:
			teamKey(t, err, ledger.ECONFLICT, "invite_used")
		default:
			t.Fatalf("Join: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d people joined with one code, want 1", ok)
	}
	if got := rawInt(t, db, `SELECT count(*) FROM team_members WHERE team_id = ? AND user_id >= 300`, team.ID); got != 1 {
		t.Fatalf("member rows of the racers = %d, want 1", got)
	}
}

func TestTeam_Full(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t) // 4 members
	begin := time.Now()
	rawExec(t, db, func(tx *sql.Tx) error {
		for i := range ledger.MaxTeamMembers - 4 {
			if _, err := tx.Exec(`INSERT INTO team_members (team_id, user_id, username, role, joined_at) VALUES (?, ?, ?, 'member', ?)`,
				team.ID, 10000+i, fmt.Sprintf("u%d", i), t0.Unix()+int64(i)); err != nil {
				return err
			}
		}
		return nil
	})
	code, _, err := db.CreateInvite(ctx, onTeam(team, tAnn), team.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	le := teamKey(t, func() error { _, err := db.Join(ctx, as(tEli), code, "eli", false); return err }(), ledger.ECONFLICT, "team_full")
	if le.Args[0] != ledger.MaxTeamMembers {
		t.Fatalf("args = %v", le.Args)
	}
	unchangedKey(t, db, ledger.ECONFLICT, "team_full", func() error { _, err := db.Join(ctx, as(tEli), code, "eli", false); return err })
	mem, err := db.Members(ctx, team.ID)
	if err != nil || len(mem) != ledger.MaxTeamMembers {
		t.Fatalf("Members = %d, %v", len(mem), err)
	}
	// Owners, then admins, then members in joining order.
	if mem[0].UserID != tAnn || mem[1].UserID != tCat || mem[2].UserID != tBen || mem[3].UserID != tDan || mem[4].Username != "u0" || mem[len(mem)-1].Username != fmt.Sprintf("u%d", ledger.MaxTeamMembers-5) {
		t.Fatalf("order: %+v %+v %+v %+v %+v … %+v", mem[0], mem[1], mem[2], mem[3], mem[4], mem[len(mem)-1])
	}
	// One leaves: the code that was refused admits eli now.
	if _, err := db.RemoveMember(ctx, onTeam(team, tDan), team.ID, tDan, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Join(ctx, as(tEli), code, "eli", false); err != nil {
		t.Fatalf("Join after one left: %v", err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Logf("a thousand members took %v (slow machine?)", d)
	}
}

func TestTeam_LastOwner(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	unchangedKey(t, db, ledger.ECONFLICT, "team_last_owner", func() error {
		_, err := db.RemoveMember(ctx, onTeam(team, tAnn), team.ID, tAnn, tCat)
		return err
	})
	unchangedKey(t, db, ledger.ECONFLICT, "team_last_owner", func() error {
		_, err := db.SetRole(ctx, onTeam(team, tAnn), team.ID, tAnn, ledger.RoleAdmin)
		return err
	})
	// An admin neither removes nor demotes an owner, nor makes one.
	unchangedKey(t, db, ledger.EUNAUTHORIZED, "team_owner_only", func() error {
		_, err := db.RemoveMember(ctx, onTeam(team, tCat), team.ID, tAnn, tCat)
		return err
	})
	unchangedKey(t, db, ledger.EUNAUTHORIZED, "team_owner_only", func() error {
		_, err := db.SetRole(ctx, onTeam(team, tCat), team.ID, tBen, ledger.RoleOwner)
		return err
	})
	// A member changes no one's role, their own included.
	unchangedKey(t, db, ledger.EUNAUTHORIZED, "team_admin_only", func() error {
		_, err := db.SetRole(ctx, onTeam(team, tBen), team.ID, tBen, ledger.RoleAdmin)
		return err
	})
	// With a second owner, the first may leave.
	if _, err := db.SetRole(ctx, onTeam(team, tAnn), team.ID, tCat, ledger.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemoveMember(ctx, onTeam(team, tAnn), team.ID, tAnn, 0); err != nil {
		t.Fatalf("an owner of two leaves: %v", err)
	}
	unchangedKey(t, db, ledger.ECONFLICT, "team_last_owner", func() error {
		_, err := db.SetRole(ctx, onTeam(team, tCat), team.ID, tCat, ledger.RoleMember)
		return err
	})
	// Who left does nothing more.
	unchangedKey(t, db, ledger.ENOTFOUND, "team_not_member", func() error {
		_, _, err := db.CreateInvite(ctx, onTeam(team, tAnn), team.ID, 0, "")
		return err
	})
}

func TestTeam_RemoveHandsRentals(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	lid := team.Ledger()
	// ben's rentals, volume and enrolment token, made on the team's
	// ledger by ben (their owner is who made them); one rental of dan's
	// and a token of ann's that stay as they are.
	for _, name := range []string{"box1", "box2", "old"} {
		if _, err := db.CreateRental(ctx, onTeam(team, tBen), box(name, at(-3*time.Hour))); err != nil {
			t.Fatalf("CreateRental(%s): %v", name, err)
		}
	}
	if _, err := db.CreateRental(ctx, onTeam(team, tDan), box("dans", at(-3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendEvent(ctx, onTeam(team, tBen), "old", ledger.Event{Kind: ledger.EventRelease, At: at(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendEvent(ctx, onTeam(team, tBen), "box2", ledger.Event{Kind: ledger.EventStop, At: at(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateVolume(ctx, onTeam(team, tBen), disk("data", "", at(-2*time.Hour))); err != nil {
		t.Fatal(err)
	}
	bensTok, _, err := db.IssueEnrolTokenBy(ctx, lid, tBen, hashOf("ben's"), at(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	annsTok, _, err := db.IssueEnrolTokenBy(ctx, lid, tAnn, hashOf("ann's"), at(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetUse(ctx, tBen, lid); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"box1": tBen, "old": tBen, "dans": tDan} {
		if got := rawInt(t, db, `SELECT owner FROM rentals WHERE user_id = ? AND name = ?`, lid, name); got != want {
			t.Fatalf("before: owner of %s = %d, want %d", name, got, want)
		}
	}
	// A member removes no one; handing to a plain member or to the one
	// removed is refused; each changes nothing.
	unchangedKey(t, db, ledger.EUNAUTHORIZED, "team_admin_only", func() error {
		_, err := db.RemoveMember(ctx, onTeam(team, tDan), team.ID, tBen, tAnn)
		return err
	})
	unchangedKey(t, db, ledger.EINVALID, "team_hand_to", func() error {
		_, err := db.RemoveMember(ctx, onTeam(team, tCat), team.ID, tBen, tDan)
		return err
	})
	unchangedKey(t, db, ledger.EINVALID, "team_hand_to", func() error {
		_, err := db.RemoveMember(ctx, onTeam(team, tCat), team.ID, tBen, tBen)
		return err
	})
	rm, err := db.RemoveMember(ctx, ledger.Action{UserID: lid, By: tCat, At: t0, Key: "rm-ben"}, team.ID, tBen, tCat)
	if err != nil {
		t.Fatalf("RemoveMember: %v", err)
	}
	if !slices.Equal(rm.Handed, []string{"box1", "box2"}) {
		t.Fatalf("handed = %v, want the unreleased box1 and box2", rm.Handed)
	}
	for name, want := range map[string]int64{"box1": tCat, "box2": tCat, "old": tBen, "dans": tDan} {
		if got := rawInt(t, db, `SELECT owner FROM rentals WHERE user_id = ? AND name = ?`, lid, name); got != want {
			t.Errorf("owner of %s = %d, want %d", name, got, want)
		}
	}
	if got := rawInt(t, db, `SELECT owner FROM volumes WHERE user_id = ?`, lid); got != tCat {
		t.Errorf("owner of the volume = %d, want cat", got)
	}
	if rawInt(t, db, `SELECT revoked_at FROM enrol_tokens WHERE id = ?`, bensTok.ID) != t0.Unix() {
		t.Error("ben's enrolment token is not revoked")
	}
	if rawInt(t, db, `SELECT revoked_at IS NULL FROM enrol_tokens WHERE id = ?`, annsTok.ID) != 1 {
		t.Error("ann's enrolment token was revoked")
	}
	// The row stays (the history names ben), marked removed by cat; the
	// removal is journaled by cat; ben's /use falls back to his own.
	if rawInt(t, db, `SELECT removed_by FROM team_members WHERE team_id = ? AND user_id = ?`, team.ID, tBen) != tCat {
		t.Error("removed_by is not cat")
	}
	if rawInt(t, db, `SELECT by_id FROM actions WHERE key = 'rm-ben' AND user_id = ? AND kind = 'team'`, lid) != tCat {
		t.Error("the removal is not journaled with cat as by_id")
	}
	_, err = db.Member(ctx, team.ID, tBen)
	teamKey(t, err, ledger.ENOTFOUND, "team_not_member")
	if ms, err := db.TeamsOf(ctx, tBen); err != nil || len(ms) != 0 {
		t.Fatalf("TeamsOf(ben) = %v, %v", ms, err)
	}
	if l, err := db.Use(ctx, tBen); err != nil || l != tBen {
		t.Fatalf("Use(ben) = %d, %v, want his own", l, err)
	}
	unchanged(t, db, ledger.EDUPLICATE, func() error {
		_, err := db.RemoveMember(ctx, ledger.Action{UserID: lid, By: tCat, At: t0, Key: "rm-ben"}, team.ID, tBen, tCat)
		return err
	})
	unchangedKey(t, db, ledger.ENOTFOUND, "team_not_member", func() error {
		_, err := db.RemoveMember(ctx, onTeam(team, tCat), team.ID, tBen, tCat)
		return err
	})
	// He comes back through a new invite: his old row, as a member.
	ms := mustJoin(t, db, team, tBen)
	if ms.Member.Role != ledger.RoleMember || ms.Member.Outsider {
		t.Fatalf("rejoined = %+v", ms.Member)
	}
	if n := rawInt(t, db, `SELECT count(*) FROM team_members WHERE team_id = ? AND user_id = ? AND removed_at IS NULL AND removed_by IS NULL`, team.ID, tBen); n != 1 {
		t.Fatalf("ben's rows after rejoining = %d", n)
	}
}

func TestTeam_Rooms(t *testing.T) {
	ctx := context.Background()
	db, lab := rosterDB(t)
	other, err := db.CreateTeam(ctx, as(tDan), "Other", "dan")
	if err != nil {
		t.Fatal(err)
	}
	unchangedKey(t, db, ledger.EUNAUTHORIZED, "team_admin_only", func() error {
		_, err := db.BindRoom(ctx, onTeam(lab, tBen), lab.ID, -100, "lab chat")
		return err
	})
	unchangedKey(t, db, ledger.ENOTFOUND, "team_not_member", func() error {
		_, err := db.BindRoom(ctx, onTeam(lab, tEli), lab.ID, -100, "lab chat")
		return err
	})
	unchanged(t, db, ledger.EINVALID, func() error { _, err := db.BindRoom(ctx, onTeam(lab, tAnn), lab.ID, tBen, ""); return err })
	got, err := db.BindRoom(ctx, onTeam(lab, tCat), lab.ID, -100, "lab chat")
	if err != nil || got.Room != -100 || got.RoomTitle != "lab chat" {
		t.Fatalf("BindRoom = %+v, %v", got, err)
	}
	le := teamKey(t, func() error { _, err := db.BindRoom(ctx, onTeam(other, tDan), other.ID, -100, "x"); return err }(), ledger.ECONFLICT, "room_taken")
	if le.Args[0] != "Lab" {
		t.Fatalf("args = %v", le.Args)
	}
	unchangedKey(t, db, ledger.ECONFLICT, "room_taken", func() error { _, err := db.BindRoom(ctx, onTeam(other, tDan), other.ID, -100, "x"); return err })
	// Binding another group replaces the room.
	if _, err := db.BindRoom(ctx, onTeam(lab, tAnn), lab.ID, -200, "new lab chat"); err != nil {
		t.Fatal(err)
	}
	_, err = db.TeamByRoom(ctx, -100)
	teamKey(t, err, ledger.ENOTFOUND, "team_unknown")
	// Telegram migrates the group to a supergroup: the room follows, once.
	moved, ok, err := db.MoveRoom(ctx, -200, -1001)
	if err != nil || !ok || moved.ID != lab.ID || moved.Room != -1001 || moved.RoomTitle != "new lab chat" {
		t.Fatalf("MoveRoom = %+v, %v, %v", moved, ok, err)
	}
	if tm, err := db.TeamByRoom(ctx, -1001); err != nil || tm.ID != lab.ID {
		t.Fatalf("TeamByRoom(new) = %+v, %v", tm, err)
	}
	if _, ok, err := db.MoveRoom(ctx, -200, -1001); err != nil || ok {
		t.Fatalf("the same migration again: %v, %v; want nothing moved", ok, err)
	}
	// Moving onto a supergroup that another team has meanwhile bound
	// keeps that binding and unbinds the old room.
	if _, err := db.BindRoom(ctx, onTeam(other, tDan), other.ID, -1002, "other"); err != nil {
		t.Fatal(err)
	}
	moved, ok, err = db.MoveRoom(ctx, -1001, -1002)
	if err != nil || !ok || moved.ID != lab.ID || moved.Room != 0 {
		t.Fatalf("MoveRoom onto a taken room = %+v, %v, %v", moved, ok, err)
	}
	if tm, err := db.TeamByRoom(ctx, -1002); err != nil || tm.ID != other.ID {
		t.Fatalf("TeamByRoom(taken) = %+v, %v", tm, err)
	}
	// The bot is removed from the group: the room is forgotten, once.
	was, ok, err := db.UnbindRoom(ctx, -1002)
	if err != nil || !ok || was.ID != other.ID || was.Room != -1002 {
		t.Fatalf("UnbindRoom = %+v, %v, %v", was, ok, err)
	}
	if _, ok, err := db.UnbindRoom(ctx, -1002); err != nil || ok {
		t.Fatalf("UnbindRoom again = %v, %v", ok, err)
	}
	if tm, err := db.Team(ctx, other.ID); err != nil || tm.Room != 0 || tm.RoomTitle != "" {
		t.Fatalf("team after unbind = %+v, %v", tm, err)
	}
}

// openApproval opens an approval of a rental of ben's on the team.
func openApproval(t *testing.T, db *sqlite.DB, team ledger.Team) ledger.Approval {
	t.Helper()
	ctx := context.Background()
	r, err := db.CreateRental(ctx, onTeam(team, tBen), box("box5", at(-time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	ap := ledger.Approval{TeamID: team.ID, RentalID: r.ID, Owner: tBen, Scope: ledger.ScopeMember, Subject: fmt.Sprint(tBen),
		Kind: ledger.LimitRate, Currency: ledger.CNY, Limit: ledger.MustDecimal("10"), Value: ledger.MustDecimal("14")}
	got, created, err := db.OpenApproval(ctx, ap)
	if err != nil || !created || got.ID == 0 || got.State != ledger.ApprovalPending || !got.CreatedAt.Equal(t0) ||
		got.Limit.String() != "10" || got.Value.String() != "14" || got.Owner != tBen {
		t.Fatalf("OpenApproval = %+v, %v, %v", got, created, err)
	}
	// Every later tick finds the same one and asks nobody again.
	again, created, err := db.OpenApproval(ctx, ap)
	if err != nil || created || again.ID != got.ID {
		t.Fatalf("OpenApproval again = %+v, %v, %v", again, created, err)
	}
	return got
}

func TestTeam_DecideApprovalRace(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	ap := openApproval(t, db, team)
	unchangedKey(t, db, ledger.EUNAUTHORIZED, "team_admin_only", func() error {
		_, err := db.DecideApproval(ctx, onTeam(team, tBen), ap.ID, ledger.ApprovalApproved)
		return err
	})
	// ann presses Approve and cat Stop it at once: one wins.
	var (
		wg   sync.WaitGroup
		errs [2]error
		res  [2]ledger.Approval
	)
	start := make(chan struct{})
	for i, p := range []struct {
		who   int64
		state ledger.ApprovalState
	}{{tAnn, ledger.ApprovalApproved}, {tCat, ledger.ApprovalStopped}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res[i], errs[i] = db.DecideApproval(ctx, onTeam(team, p.who), ap.ID, p.state)
		}()
	}
	close(start)
	wg.Wait()
	win, lose := 0, 1
	if errs[0] != nil {
		win, lose = 1, 0
	}
	if errs[win] != nil {
		t.Fatalf("both presses failed: %v, %v", errs[0], errs[1])
	}
	le := teamKey(t, errs[lose], ledger.ECONFLICT, "approval_decided")
	winner := []int64{tAnn, tCat}[win]
	wantState := []ledger.ApprovalState{ledger.ApprovalApproved, ledger.ApprovalStopped}[win]
	if le.Args[0] != wantState || le.Args[1] != "@"+tNames[winner] {
		t.Fatalf("the second press is told %v, want %s by @%s", le.Args, wantState, tNames[winner])
	}
	if res[win].State != wantState || res[win].DecidedBy != winner || !res[win].DecidedAt.Equal(t0) {
		t.Fatalf("decided = %+v", res[win])
	}
	stored, err := db.Approval(ctx, ap.ID)
	if err != nil || stored.State != wantState || stored.DecidedBy != winner {
		t.Fatalf("stored = %+v, %v", stored, err)
	}
	unchangedKey(t, db, ledger.ECONFLICT, "approval_decided", func() error {
		_, err := db.DecideApproval(ctx, onTeam(team, tAnn), ap.ID, ledger.ApprovalStopped)
		return err
	})
	if pend, err := db.Approvals(ctx, team.ID, ledger.ApprovalPending); err != nil || len(pend) != 0 {
		t.Fatalf("pending = %v, %v", pend, err)
	}
	if all, err := db.Approvals(ctx, team.ID, ""); err != nil || len(all) != 1 {
		t.Fatalf("all = %v, %v", all, err)
	}
	_, err = db.Approval(ctx, ap.ID+100)
	teamKey(t, err, ledger.ENOTFOUND, "approval_unknown")
}

func TestTeam_Reminded(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	ap := openApproval(t, db, team)
	if err := db.Reminded(ctx, ap.ID, at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.Reminded(ctx, ap.ID, at(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := db.Approval(ctx, ap.ID)
	if err != nil || !got.RemindedAt.Equal(at(time.Hour)) {
		t.Fatalf("RemindedAt = %v, %v; want the first reminder's time", got.RemindedAt, err)
	}
	teamKey(t, db.Reminded(ctx, ap.ID+100, t0), ledger.ENOTFOUND, "approval_unknown")
}

func TestTeam_MemberRefusedAdminWork(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	ap := openApproval(t, db, team)
	lim := ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeTeam, Currency: ledger.CNY, Month: ledger.MustDecimal("20000")}
	for _, who := range []int64{tBen, tEli} {
		key := "team_admin_only"
		code := ledger.EUNAUTHORIZED
		if who == tEli {
			key, code = "team_not_member", ledger.ENOTFOUND
		}
		unchangedKey(t, db, code, key, func() error {
			_, _, err := db.CreateInvite(ctx, onTeam(team, who), team.ID, 0, "")
			return err
		})
		unchangedKey(t, db, code, key, func() error { return db.SetLimit(ctx, onTeam(team, who), lim) })
		unchangedKey(t, db, code, key, func() error {
			_, err := db.DecideApproval(ctx, onTeam(team, who), ap.ID, ledger.ApprovalStopped)
			return err
		})
		unchangedKey(t, db, code, key, func() error {
			_, err := db.RemoveMember(ctx, onTeam(team, who), team.ID, tDan, tAnn)
			return err
		})
	}
}

func TestTeam_Limits(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	set := []ledger.Limit{
		{TeamID: team.ID, Scope: ledger.ScopeMember, Subject: fmt.Sprint(tBen), Currency: ledger.CNY, RatePerHour: ledger.MustDecimal("10"), GPUs: 2, Month: ledger.MustDecimal("3000")},
		{TeamID: team.ID, Scope: ledger.ScopeProject, Subject: "yolo-v9", Currency: ledger.CNY, Month: ledger.MustDecimal("5000")},
		{TeamID: team.ID, Scope: ledger.ScopeTeam, Currency: ledger.USD, Month: ledger.MustDecimal("20000.50")},
	}
	for _, l := range set {
		if err := db.SetLimit(ctx, onTeam(team, tCat), l); err != nil {
			t.Fatalf("SetLimit(%+v): %v", l, err)
		}
	}
	// Setting again replaces.
	set[0].GPUs = 4
	if err := db.SetLimit(ctx, onTeam(team, tAnn), set[0]); err != nil {
		t.Fatal(err)
	}
	got, err := db.Limits(ctx, team.ID)
	if err != nil || len(got) != 3 {
		t.Fatalf("Limits = %+v, %v", got, err)
	}
	byScope := map[ledger.LimitScope]ledger.Limit{}
	for _, l := range got {
		byScope[l.Scope] = l
	}
	if m := byScope[ledger.ScopeMember]; m.GPUs != 4 || m.RatePerHour.String() != "10" || m.Month.String() != "3000" || m.Subject != fmt.Sprint(tBen) {
		t.Fatalf("member limit = %+v", m)
	}
	if m := byScope[ledger.ScopeTeam]; m.Month.Cmp(ledger.MustDecimal("20000.5")) != 0 || m.Currency != ledger.USD {
		t.Fatalf("team limit = %+v", m)
	}
	// Bad input: each refused, nothing changed.
	bad := []struct {
		l         ledger.Limit
		code, key string
	}{
		{ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeMember, Subject: fmt.Sprint(tEli), Currency: ledger.CNY, GPUs: 1}, ledger.ENOTFOUND, "team_not_member"},
		{ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeMember, Subject: "bob", Currency: ledger.CNY, GPUs: 1}, ledger.EINVALID, ""},
		{ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeProject, Subject: "a b", Currency: ledger.CNY, GPUs: 1}, ledger.EINVALID, "project_name"},
		{ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeProject, Subject: "", Currency: ledger.CNY, GPUs: 1}, ledger.EINVALID, ""},
		{ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeTeam, Subject: "x", Currency: ledger.CNY, GPUs: 1}, ledger.EINVALID, ""},
		{ledger.Limit{TeamID: team.ID, Scope: "planet", Currency: ledger.CNY, GPUs: 1}, ledger.EINVALID, ""},
		{ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeTeam, Currency: "yen!", GPUs: 1}, ledger.EINVALID, "bad_currency"},
		{ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeTeam, Currency: ledger.CNY, GPUs: -1}, ledger.EINVALID, "limit_negative"},
		{ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeTeam, Currency: ledger.CNY, Month: ledger.MustDecimal("-5")}, ledger.EINVALID, "limit_negative"},
	}
	for _, b := range bad {
		unchangedKey(t, db, b.code, b.key, func() error { return db.SetLimit(ctx, onTeam(team, tAnn), b.l) })
	}
	// All bounds 0 clears it.
	if err := db.SetLimit(ctx, onTeam(team, tAnn), ledger.Limit{TeamID: team.ID, Scope: ledger.ScopeProject, Subject: "yolo-v9", Currency: ledger.CNY}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Limits(ctx, team.ID); err != nil || len(got) != 2 {
		t.Fatalf("Limits after clearing one = %+v, %v", got, err)
	}
}

func TestTeam_UseProjectDM(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	if l, err := db.Use(ctx, tBen); err != nil || l != tBen {
		t.Fatalf("Use = %d, %v; want his own", l, err)
	}
	if err := db.SetUse(ctx, tBen, team.Ledger()); err != nil {
		t.Fatal(err)
	}
	if l, err := db.Use(ctx, tBen); err != nil || l != team.Ledger() {
		t.Fatalf("Use = %d, %v; want the team's", l, err)
	}
	unchangedKey(t, db, ledger.ENOTFOUND, "team_not_member", func() error { return db.SetUse(ctx, tEli, team.Ledger()) })
	unchanged(t, db, ledger.EUNAUTHORIZED, func() error { return db.SetUse(ctx, tEli, tBen) })
	if err := db.SetUse(ctx, tBen, tBen); err != nil {
		t.Fatal(err)
	}
	if n := rawInt(t, db, `SELECT count(*) FROM team_use WHERE user_id = ?`, tBen); n != 0 {
		t.Fatalf("/use me left %d rows", n)
	}
	// A member removed without the row being cleaned (an old row) still
	// gets their own ledger.
	rawExec(t, db, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO team_use (user_id, ledger_id) VALUES (?, ?)`, tDan, team.Ledger())
		if err == nil {
			_, err = tx.Exec(`UPDATE team_members SET removed_at = 1 WHERE user_id = ?`, tDan)
		}
		return err
	})
	if l, err := db.Use(ctx, tDan); err != nil || l != tDan {
		t.Fatalf("Use of a removed member = %d, %v", l, err)
	}

	for _, l := range []int64{tBen, team.Ledger()} {
		if err := db.SetProject(ctx, tBen, l, "yolo-v9"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetProject(ctx, tBen, team.Ledger(), "检测"); err != nil {
		t.Fatal(err)
	}
	if p, err := db.Project(ctx, tBen, team.Ledger()); err != nil || p != "检测" {
		t.Fatalf("Project = %q, %v", p, err)
	}
	if p, err := db.Project(ctx, tBen, tBen); err != nil || p != "yolo-v9" {
		t.Fatalf("Project(own) = %q, %v", p, err)
	}
	unchangedKey(t, db, ledger.EINVALID, "project_name", func() error { return db.SetProject(ctx, tBen, team.Ledger(), "a b") })
	unchangedKey(t, db, ledger.ENOTFOUND, "team_not_member", func() error { return db.SetProject(ctx, tEli, team.Ledger(), "x") })
	if err := db.SetProject(ctx, tBen, team.Ledger(), ""); err != nil {
		t.Fatal(err)
	}
	if p, err := db.Project(ctx, tBen, team.Ledger()); err != nil || p != "" {
		t.Fatalf("Project after none = %q, %v", p, err)
	}

	m, err := db.SetDM(ctx, onTeam(team, tBen), team.ID, true)
	if err != nil || !m.DM || m.UserID != tBen {
		t.Fatalf("SetDM = %+v, %v", m, err)
	}
	unchangedKey(t, db, ledger.ENOTFOUND, "team_not_member", func() error { _, err := db.SetDM(ctx, onTeam(team, tEli), team.ID, true); return err })
}

func TestTeam_SetOwner(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	// A synced rental: written by the system, owner unknown.
	r, err := db.CreateRental(ctx, ledger.Action{UserID: team.Ledger(), At: t0}, box("box7", at(-time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	rawExec(t, db, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE rentals SET owner = 0 WHERE id = ?`, r.ID)
		return err
	})
	// A member gives it to someone else: refused.
	unchangedKey(t, db, ledger.EUNAUTHORIZED, "team_admin_only", func() error { _, err := db.SetOwner(ctx, onTeam(team, tBen), r.ID, tDan); return err })
	// ben presses [Mine] first, dan a moment later.
	got, err := db.SetOwner(ctx, onTeam(team, tBen), r.ID, tBen)
	if err != nil || got.ID != r.ID {
		t.Fatalf("SetOwner(Mine) = %v, %v", got, err)
	}
	if o := rawInt(t, db, `SELECT owner FROM rentals WHERE id = ?`, r.ID); o != tBen {
		t.Fatalf("owner = %d, want ben", o)
	}
	le := teamKey(t, func() error { _, err := db.SetOwner(ctx, onTeam(team, tDan), r.ID, tDan); return err }(), ledger.EUNAUTHORIZED, "team_not_yours")
	if le.Args[0] != "box7" || le.Args[1] != "@ben" {
		t.Fatalf("args = %v", le.Args)
	}
	// An admin hands it on; to someone outside the team, never.
	unchangedKey(t, db, ledger.ENOTFOUND, "team_not_member", func() error { _, err := db.SetOwner(ctx, onTeam(team, tCat), r.ID, tEli); return err })
	if _, err := db.SetOwner(ctx, onTeam(team, tCat), r.ID, tDan); err != nil {
		t.Fatalf("an admin hands it on: %v", err)
	}
	if o := rawInt(t, db, `SELECT owner FROM rentals WHERE id = ?`, r.ID); o != tDan {
		t.Fatalf("owner = %d, want dan", o)
	}
	if n := rawInt(t, db, `SELECT count(*) FROM actions WHERE user_id = ? AND kind = 'team' AND rental_id = ? AND by_id = ?`, team.Ledger(), r.ID, tCat); n != 1 {
		t.Fatalf("journal entries of cat's handing = %d, want 1", n)
	}
	// A personal rental has no owner to set; no rental, no owner.
	own := mustRent(t, db, tBen, "mine", at(-time.Hour))
	unchanged(t, db, ledger.EINVALID, func() error { _, err := db.SetOwner(ctx, onTeam(team, tAnn), own.ID, tBen); return err })
	unchangedKey(t, db, ledger.ENOTFOUND, "no_rental_id", func() error { _, err := db.SetOwner(ctx, onTeam(team, tAnn), 9999, tBen); return err })
}

func TestTeam_SeenUsername(t *testing.T) {
	ctx := context.Background()
	db, team := rosterDB(t)
	before := dump(t, db)
	if err := db.SeenUsername(ctx, tBen, "ben"); err != nil {
		t.Fatal(err)
	}
	if dump(t, db) != before {
		t.Fatal("an unchanged username wrote")
	}
	if err := db.SeenUsername(ctx, tBen, "Benny"); err != nil {
		t.Fatal(err)
	}
	m, err := db.MemberByUsername(ctx, team.ID, "@benny")
	if err != nil || m.UserID != tBen {
		t.Fatalf("MemberByUsername(@benny) = %+v, %v", m, err)
	}
	_, err = db.MemberByUsername(ctx, team.ID, "ben")
	teamKey(t, err, ledger.ENOTFOUND, "team_not_member")
	// Telegram gives "Benny" to dan: it names dan only now.
	if err := db.SeenUsername(ctx, tDan, "benny"); err != nil {
		t.Fatal(err)
	}
	if m, err := db.MemberByUsername(ctx, team.ID, "BENNY"); err != nil || m.UserID != tDan {
		t.Fatalf("MemberByUsername after the name moved = %+v, %v", m, err)
	}
	if m, _ := db.Member(ctx, team.ID, tBen); m.Username != "" || m.Name() != fmt.Sprintf("id%d", tBen) {
		t.Fatalf("ben after losing his name = %+v (%s)", m, m.Name())
	}
	// What Telegram would never send is not kept as a name.
	if err := db.SeenUsername(ctx, tAnn, "<a href=x>"); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.Member(ctx, team.ID, tAnn); m.Username != "" {
		t.Fatalf("ann's name = %q", m.Username)
	}
}

// TestTeam_WrongCodeTakesNoWriteLock: a guessed code is answered while
// another process holds the database's write lock, so a stranger trying
// codes never makes the ledger's writers wait.
func TestTeam_WrongCodeTakesNoWriteLock(t *testing.T) {
	db, _ := rosterDB(t)
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin() // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = db.Join(ctx, as(tEli), "abcdefghjk", "eli", false)
	teamKey(t, err, ledger.ENOTFOUND, "invite_unknown")
}
