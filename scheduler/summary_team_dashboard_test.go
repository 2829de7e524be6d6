package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestTeam_SummaryButtonOpensTeam: a team with no room has its nightly
// summary in its first owner's private chat, and that summary's Open
// dashboard button opens the team's page (?team=ID), while the owner's
// own summary keeps the button to their month.
func TestTeam_SummaryButtonOpensTeam(t *testing.T) {
	const app = "https://ledger.example/app/"
	e := newTeamEnv(t, bob)
	ctx := context.Background()
	if _, ok, err := e.ts.UnbindRoom(ctx, room); err != nil || !ok {
		t.Fatalf("UnbindRoom: %v %v", ok, err)
	}
	s, err := scheduler.New(scheduler.Config{Store: e.db, Sender: e.snd, Buttons: testButtons(), Now: e.clk.Now, NoChart: true,
		DashboardURL: func() string { return app }})
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Set(t0.Add(12*time.Hour + time.Minute)) // 22:01 in Shanghai
	if err := s.Summaries(ctx); err != nil {
		t.Fatal(err)
	}
	webApp := func(o chat.Outgoing) string {
		for _, row := range o.Buttons {
			for _, b := range row {
				if b.WebApp != "" {
					return b.WebApp
				}
			}
		}
		return ""
	}
	var team, own int
	for _, o := range e.snd.to(alice) {
		switch {
		case strings.Contains(o.Text, "By person"):
			team++
			if want := fmt.Sprintf("%s?team=%d", app, e.team.ID); webApp(o) != want {
				t.Errorf("the team's summary opens %q, want %q", webApp(o), want)
			}
		default:
			own++
			if webApp(o) != app {
				t.Errorf("alice's own summary opens %q, want %q", webApp(o), app)
			}
		}
	}
	if team != 1 || own != 1 {
		t.Fatalf("alice got %d team and %d own summaries, want one of each", team, own)
	}
}
