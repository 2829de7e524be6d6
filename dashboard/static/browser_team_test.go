package static_test

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/internal/browser"
)

// teamButtonURL is the address Telegram opens for the bot's button under
// a reply about team teamID's ledger: the team in the query (the bot's
// chat.TeamAppURL), Telegram's launch data in the fragment.
func teamButtonURL(base, teamID string) string {
	return strings.Replace(telegramURL(base, nil), "/app/#", "/app/?team="+teamID+"#", 1)
}

// TestDashboard_BrowserTeamButton: the Mini App opened from a team
// reply's button (?team=ID) signs in with Telegram's data and opens on
// that team's page, for a person with a ledger of their own and for one
// admitted to the team only (without asking for a month they do not
// have); a team the person is not in shows the page's error, not another
// page. The address ends as the team's route with the query gone.
func TestDashboard_BrowserTeamButton(t *testing.T) {
	f := load(t)
	b := browser.Start(t)
	team := "3"
	if got := f.team.Team.ID; got != 3 {
		t.Fatalf("the team fixture is team %d; this test opens team 3", got)
	}
	address := func(p *browser.Page) string {
		return browser.Eval[string](p, `location.search + location.hash`)
	}

	for _, c := range []struct {
		name     string
		outsider bool
	}{{"Personal", false}, {"TeamOnly", true}} {
		t.Run(c.name, func(t *testing.T) {
			hub := &fakeHub{t: t, f: f, outsider: c.outsider}
			srv := hub.serve()
			p := b.Open(t, teamButtonURL(srv.URL, team), browser.Options{Viewport: browser.Phone})
			if s := p.WaitState(); s != "ready" {
				t.Fatalf("state %q, want ready; page: %s", s, p.Text("main"))
			}
			expectText(t, p, `[data-test="team-title"]`, f.team.Labels.Title)
			if n := p.Count(`[data-test^="total-"]`); n != 0 {
				t.Errorf("%d month totals on the team's page", n)
			}
			if got := address(p); got != "#/team/"+team {
				t.Errorf("address %q, want #/team/%s with the query gone", got, team)
			}
			if sessions, bearer, _, _ := hub.seen(); len(sessions) != 1 || bearer == 0 {
				t.Errorf("sessions %d, bearer calls %d: want one sign-in with Telegram's data, then its token", len(sessions), bearer)
			}
			// No refused request at all: the team's page is asked for
			// first, so an outsider never meets the month's 403.
			p.CheckClean(nil)
		})
	}

	// NotMember: another team's ID (a forwarded or edited address) gets
	// the API's one 404, shown as the page's error with its retry; the
	// person's month is not shown in its place.
	t.Run("NotMember", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		p := b.Open(t, teamButtonURL(srv.URL, "99"), browser.Options{Viewport: browser.Phone})
		if s := p.WaitState(); s != "error" {
			t.Fatalf("state %q, want error; page: %s", s, p.Text("main"))
		}
		if p.Count(`[data-test="error"] [data-test="retry"]`) != 1 {
			t.Errorf("no error with a retry button; page: %s", p.Text("main"))
		}
		if n := p.Count(`[data-test^="total-"], [data-test="team-title"]`); n != 0 {
			t.Errorf("%d month or team figures shown for a team the person is not in", n)
		}
		if got := address(p); got != "#/team/99" {
			t.Errorf("address %q, want #/team/99", got)
		}
		p.CheckClean(func(pr browser.Problem) bool {
			return pr.Source == "network" && strings.Contains(pr.Text, "404") && strings.Contains(pr.URL, dashboard.PathTeam)
		})
	})

	// NotANumber: a query team that is not a team's ID is dropped, and
	// the rest of the query kept; the page is the person's month.
	t.Run("NotANumber", func(t *testing.T) {
		hub := &fakeHub{t: t, f: f}
		srv := hub.serve()
		u := strings.Replace(telegramURL(srv.URL, nil), "/app/#", "/app/?team=3x&x=1#", 1)
		p := b.Open(t, u, browser.Options{Viewport: browser.Phone})
		if s := p.WaitState(); s != "ready" {
			t.Fatalf("state %q, want ready; page: %s", s, p.Text("main"))
		}
		if got := address(p); got != "?x=1" {
			t.Errorf("address %q, want ?x=1", got)
		}
		if p.Count(`[data-test^="total-"]`) == 0 || p.Count(`[data-test="team-title"]`) != 0 {
			t.Errorf("want the month, not a team's page; page: %s", p.Text("main"))
		}
		p.CheckClean(nil)
	})
}
