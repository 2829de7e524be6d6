package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_DashboardButtonOpensTeam: the "Open dashboard" button under a
// reply about a team's ledger opens that team's page (?team=ID, which the
// Mini App routes to #/team/ID); under a reply about the person's own
// ledger it opens their month, as before.
func TestCore_DashboardButtonOpensTeam(t *testing.T) {
	l := &links{app: appURL}
	e := newTeamEnvWith(t, bot.Config{Dashboard: l})
	l.now = func() time.Time { return e.now }
	e.say(e.bob, "/rent box1 autodl 4090 1.88/h")
	e.now = e.now.Add(time.Hour)

	teamApp := fmt.Sprintf("%s?team=%d", appURL, e.team.ID)
	ask := func(cmd string) (text string, apps []string) {
		t.Helper()
		out := e.handle(e.update(e.bob, cmd))
		if len(out) == 0 {
			t.Fatalf("%s: no reply", cmd)
		}
		return out[0].Out.Text, webApps(out[0].Out)
	}
	for _, cmd := range []string{"/status", "/spend", "/summary"} {
		text, apps := ask(cmd)
		if !strings.HasPrefix(text, teamTag) {
			t.Fatalf("%s on the team = %q, want it tagged %q", cmd, text, teamTag)
		}
		if len(apps) != 1 || apps[0] != teamApp {
			t.Errorf("%s on the team: web-app buttons %v, want one to %s", cmd, apps, teamApp)
		}
	}

	e.use(e.bob, e.bob)
	for _, cmd := range []string{"/status", "/spend"} {
		text, apps := ask(cmd)
		if strings.HasPrefix(text, "👥") {
			t.Fatalf("%s on bob's own ledger = %q, want it untagged", cmd, text)
		}
		if len(apps) != 1 || apps[0] != appURL {
			t.Errorf("%s on bob's own ledger: web-app buttons %v, want one to %s", cmd, apps, appURL)
		}
	}
}
