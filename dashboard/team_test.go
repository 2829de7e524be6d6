package dashboard_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/ledger"
)

// The people of the team tests: alice (1) made team "vision", bob (2)
// and carol (3) joined, carol was removed since; dave (4) is allowed but
// in no team; olga (5) was admitted to the team from outside the allow
// list (she has no ledger of her own).
const (
	alice, bob, carol, dave, olga = 1, 2, 3, 4, 5
)

// teamEnv is a dashboard over a real SQLite ledger holding team
// "vision": alice's box1 (project yolo-v9), bob's box2 (project llm) and
// a one-off of his, a rental synced from RunPod nobody claimed, and
// carol's charge from before she was removed. Alice also has a personal
// rental, which no team view may show.
func teamEnv(t *testing.T) (*env, ledger.Team) {
	t.Helper()
	e := newEnv(t, func(c *dashboard.Config) {
		c.Allowed = func(id int64) bool { return id >= alice && id <= olga }
		c.Personal = func(id int64) bool { return id >= alice && id <= dave }
	})
	ctx := context.Background()
	for _, id := range []int64{alice, bob, carol, dave} {
		if _, err := e.db.EnsureUser(ctx, ledger.User{ID: id, Lang: "en", TZ: "Asia/Shanghai", CreatedAt: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 11, 10, 2, 0, 0, 0, time.UTC)
	by := func(who int64, team *ledger.Team) ledger.Action {
		at = at.Add(time.Minute)
		if team == nil {
			return ledger.Action{UserID: who, By: who, At: at}
		}
		return ledger.Action{UserID: team.Ledger(), By: who, At: at}
	}
	team, err := e.db.CreateTeam(ctx, by(alice, nil), "vision", "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		id       int64
		name     string
		outsider bool
	}{{bob, "bob", false}, {carol, "carol", false}, {olga, "olga", true}} {
		code, _, err := e.db.CreateInvite(ctx, by(alice, nil), team.ID, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Join(ctx, by(p.id, nil), code, p.name, p.outsider); err != nil {
			t.Fatal(err)
		}
	}
	rent := func(a ledger.Action, name, platform, price string, cur ledger.Currency, project string) {
		t.Helper()
		if _, err := e.db.CreateRental(ctx, a, ledger.Rental{Name: name, Platform: platform, GPU: "RTX 4090", GPUCount: 1,
			Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal(price), Unit: ledger.UnitHour},
			Currency: cur, Project: project, Events: []ledger.Event{{Kind: ledger.EventStart, At: a.At}}}); err != nil {
			t.Fatal(err)
		}
	}
	charge := func(a ledger.Action, amount, note, project string) {
		t.Helper()
		if _, err := e.db.AddCharge(ctx, a, "", ledger.Charge{Platform: "autodl", Amount: ledger.MustDecimal(amount), Currency: ledger.CNY,
			At: a.At, Note: note, Project: project}); err != nil {
			t.Fatal(err)
		}
	}
	rent(by(alice, &team), "box1", "autodl", "1.88", ledger.CNY, "yolo-v9")
	rent(by(bob, &team), "box2", "autodl", "7.50", ledger.CNY, "llm")
	charge(by(bob, &team), "12.50", "dataset", "llm")
	charge(by(carol, &team), "3.00", "image", "")
	rent(ledger.Action{UserID: team.Ledger(), At: at.Add(time.Hour)}, "pod7", "runpod", "2.49", ledger.USD, "")
	rent(by(alice, nil), "mine", "autodl", "99", ledger.CNY, "") // alice's own ledger
	if _, err := e.db.RemoveMember(ctx, by(alice, nil), team.ID, carol, alice); err != nil {
		t.Fatal(err)
	}
	return e, team
}

// TestTeam_MemberGetsTheSplit: a member's team view has the month's
// totals per currency and its rows by person, by project and by
// platform, each equal to ledger.Split (and Statement.ByPlatform) of the
// team's month as the store has it; people are named, nobody's rental
// is "unclaimed", the removed member still counted; and no figure of
// anyone's personal ledger is in it.
func TestTeam_MemberGetsTheSplit(t *testing.T) {
	e, team := teamEnv(t)
	target := dashboard.PathTeam + "?team=" + strconv.FormatInt(team.ID, 10)
	for _, who := range []int64{alice, bob, olga} {
		var page dashboard.TeamPage
		rec := e.get(e.signIn(who), target, &page)
		if rec.Code != http.StatusOK {
			t.Fatalf("member %d: %d %s", who, rec.Code, rec.Body)
		}
		if page.Team.Name != "vision" || page.Month != "2026-11" || !page.Current {
			t.Errorf("member %d: team %+v month %s current %v", who, page.Team, page.Month, page.Current)
		}
		if bytes.Contains(rec.Body.Bytes(), []byte(`"mine"`)) {
			t.Errorf("member %d: alice's own rental shows in the team view: %s", who, rec.Body)
		}
		if who != alice {
			continue
		}
		// The figures the page must show, from the store's own book.
		b, err := e.db.Book(context.Background(), team.Ledger())
		if err != nil {
			t.Fatal(err)
		}
		st := ledger.Spend(b, page.From, page.AsOf)
		rows := ledger.Split(st)
		want := map[string]string{}
		for _, r := range ledger.SplitBy(rows, false) {
			want["person "+strconv.FormatInt(r.Owner, 10)+" "+string(r.Currency)] = r.Amount.String()
		}
		for _, r := range ledger.SplitBy(rows, true) {
			want["project "+r.Project+" "+string(r.Currency)] = r.Amount.String()
		}
		for c, tot := range st.Totals {
			want["total "+string(c)] = tot.Total.String()
		}
		for p, byCur := range st.ByPlatform {
			for c, tot := range byCur {
				want["platform "+p+" "+string(c)] = tot.Total.String()
			}
		}
		got := map[string]string{}
		names := map[int64]string{}
		for _, r := range page.People {
			got["person "+strconv.FormatInt(*r.Owner, 10)+" "+r.Currency] = r.Amount
			names[*r.Owner] = r.Name
		}
		for _, r := range page.Projects {
			got["project "+*r.Project+" "+r.Currency] = r.Amount
		}
		for _, tt := range page.Totals {
			got["total "+tt.Currency] = *tt.Total
		}
		for _, p := range page.Platforms {
			got["platform "+p.Platform+" "+p.Currency] = *p.Total
		}
		if len(got) != len(want) {
			t.Errorf("%d figures on the page, the split has %d:\n got %v\nwant %v", len(got), len(want), got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: page %q, split %q", k, got[k], v)
			}
		}
		for _, k := range []string{"person 1 CNY", "person 2 CNY", "person 3 CNY", "person 0 USD", "project llm CNY", "project yolo-v9 CNY"} {
			if want[k] == "" || want[k] == "0.00" {
				t.Errorf("the team's book has no %s: the test's ledger is not what it meant (%v)", k, want)
			}
		}
		if names[alice] != "@alice" || names[bob] != "@bob" || names[0] == "" || names[carol] == "" || names[carol] == "@carol" {
			t.Errorf("people named %v", names)
		}
		l := page.Labels
		for _, s := range []string{l.ByPerson, l.ByProject, l.ByPlatform, l.Totals, l.Title} {
			if !bytes.Contains([]byte(s), []byte("November 2026")) {
				t.Errorf("label %q does not name the month", s)
			}
		}
	}
}

// TestTeam_StrangersGetOne404: whoever may not see a team (an allowed
// user in no team, a removed member, any user asking for a team that
// does not exist or by a malformed ID) gets the same 404, byte for byte:
// the answer never says whether the team exists. And a member asking
// for someone else's team gets it too.
func TestTeam_StrangersGetOne404(t *testing.T) {
	e, team := teamEnv(t)
	id := strconv.FormatInt(team.ID, 10)
	tokens := map[int64]string{}
	token := func(who int64) string {
		if tokens[who] == "" {
			tokens[who] = e.signIn(who)
		}
		return tokens[who]
	}
	var first []byte
	for _, c := range []struct {
		who   int64
		query string
	}{
		{dave, "?team=" + id}, {carol, "?team=" + id}, {dave, "?team=" + strconv.FormatInt(team.ID+1, 10)},
		{alice, "?team=" + strconv.FormatInt(team.ID+1, 10)}, {alice, "?team=abc"}, {alice, "?team=-3"}, {alice, ""},
		{alice, "?team=0"}, {alice, "?team=99999999999999999999"}, {dave, "?team=" + id + "&month=1999-01"},
	} {
		rec := e.get(token(c.who), dashboard.PathTeam+c.query, nil)
		if rec.Code != http.StatusNotFound {
			t.Errorf("user %d %s: %d %s, want 404", c.who, c.query, rec.Code, rec.Body)
			continue
		}
		if first == nil {
			first = rec.Body.Bytes()
			refusal(t, rec, http.StatusNotFound, "not_found", "no such team")
		} else if !bytes.Equal(rec.Body.Bytes(), first) {
			t.Errorf("user %d %s answered %s, the first stranger %s", c.who, c.query, rec.Body, first)
		}
	}
	var teams dashboard.TeamsAnswer
	if rec := e.get(token(carol), dashboard.PathTeams, &teams); rec.Code != 200 || len(teams.Teams) != 0 {
		t.Errorf("the removed member's teams: %d %+v", rec.Code, teams)
	}
	if rec := e.get(token(alice), dashboard.PathTeams, &teams); rec.Code != 200 || len(teams.Teams) != 1 ||
		teams.Teams[0] != (dashboard.TeamRef{ID: team.ID, Name: "vision", Role: "owner"}) {
		t.Errorf("alice's teams: %d %+v", rec.Code, teams)
	}
}

// TestTeam_OutsiderSeesOnlyTheTeam: a person admitted to the team from
// outside the allow list has a session, but the personal pages (month,
// rental, CSV, compare) answer 403 "not_personal" and read no book of
// theirs; /me lists their team and no months; the team view answers.
func TestTeam_OutsiderSeesOnlyTheTeam(t *testing.T) {
	e, team := teamEnv(t)
	tok := e.signIn(olga)
	before := e.store.books.Load()
	for _, p := range []string{dashboard.PathMonth, dashboard.PathRental + "?id=1", dashboard.PathExport + "?month=2026-11", dashboard.PathCompare} {
		rec := e.get(tok, p, nil)
		refusal(t, rec, http.StatusForbidden, "not_personal", "no ledger of your own")
	}
	if n := e.store.books.Load() - before; n != 0 {
		t.Errorf("the refusals read %d books", n)
	}
	var me dashboard.Me
	if rec := e.get(tok, dashboard.PathMe, &me); rec.Code != 200 {
		t.Fatalf("me: %d %s", rec.Code, rec.Body)
	}
	if me.Personal || len(me.Months) != 0 || len(me.Teams) != 1 || me.Teams[0].ID != team.ID || me.Teams[0].Role != "member" {
		t.Errorf("the outsider's me: %+v", me)
	}
	if rec := e.get(tok, dashboard.PathTeam+"?team="+strconv.FormatInt(team.ID, 10), nil); rec.Code != 200 {
		t.Errorf("the outsider's team view: %d %s", rec.Code, rec.Body)
	}
	// A member with a ledger of their own still has it, and their team.
	if rec := e.get(e.signIn(alice), dashboard.PathMe, &me); rec.Code != 200 || !me.Personal || len(me.Teams) != 1 || len(me.Months) == 0 {
		t.Errorf("alice's me: %d %+v", rec.Code, me)
	}
}

// TestTeam_UnpricedRowsMarked: a rental of bob's with no price makes his
// row and its project's carry "unpriced": 1 (the page shows the mark
// from it), as the chat's split does, while alice's priced rows carry
// none: a person whose box has no price is not shown as spending nothing.
func TestTeam_UnpricedRowsMarked(t *testing.T) {
	e, team := teamEnv(t)
	at := time.Date(2026, 11, 10, 4, 0, 0, 0, time.UTC)
	if _, err := e.db.CreateRental(context.Background(), ledger.Action{UserID: team.Ledger(), By: bob, At: at}, ledger.Rental{
		Name: "box9", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Currency: ledger.CNY,
		Project: "nopay", Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}}); err != nil {
		t.Fatal(err)
	}
	var page dashboard.TeamPage
	if rec := e.get(e.signIn(alice), dashboard.PathTeam+"?team="+strconv.FormatInt(team.ID, 10), &page); rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	got := map[string]int{}
	for _, r := range page.People {
		got["person "+r.Name+" "+r.Currency] = r.Unpriced
	}
	for _, r := range page.Projects {
		got["project "+*r.Project+" "+r.Currency] = r.Unpriced
	}
	for k, want := range map[string]int{"person @bob CNY": 1, "person @alice CNY": 0, "project nopay CNY": 1, "project llm CNY": 0, "project yolo-v9 CNY": 0} {
		if n, ok := got[k]; !ok || n != want {
			t.Errorf("%s: unpriced %d (present %v), want %d; rows %v", k, n, ok, want, got)
		}
	}
}
