package bot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// BenchmarkStatus_Team is /status of a plain member whose ledger in use
// (/use) is a team of 50 members holding the year of
// BenchmarkStatus_Personal, each record owned by one of them and charged
// to one of two projects. It lives apart from the builder so that the
// builder's file compiles at the commit before teams.
func BenchmarkStatus_Team(b *testing.B) {
	ctx := context.Background()
	db := openStore(b)
	db.Now = func() time.Time { return yearNow }
	ts, ok := any(db).(ledger.TeamStore)
	if !ok {
		b.Skip("the SQLite store does not implement ledger.TeamStore yet (ledger/sqlite/team.go): no team to measure")
	}
	people := make([]int64, yearPeople)
	for p := range people {
		people[p] = yearPersonID + int64(p)
		if _, err := db.EnsureUser(ctx, ledger.User{ID: people[p], Lang: "en", TZ: "Asia/Shanghai"}); err != nil {
			b.Fatal(err)
		}
	}
	owner := ledger.Action{UserID: people[0], By: people[0], At: yearStart}
	team, err := ts.CreateTeam(ctx, owner, "lab", "u0")
	if err != nil {
		b.Fatal(err)
	}
	for p := 1; p < yearPeople; p++ {
		code, _, err := ts.CreateInvite(ctx, ledger.Action{UserID: team.Ledger(), By: people[0], At: yearStart}, team.ID, 0, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ts.Join(ctx, ledger.Action{UserID: people[p], By: people[p], At: yearStart}, code, fmt.Sprintf("u%d", p), false); err != nil {
			b.Fatal(err)
		}
	}
	if ms, err := ts.Members(ctx, team.ID); err != nil || len(ms) != yearPeople {
		b.Fatalf("the team has %d members (%v), want %d", len(ms), err, yearPeople)
	}
	yearHistory(b, db, team.Ledger(), yearStart, yearHooks{
		act:    func(a *ledger.Action, p int) { a.By = people[p] },
		rental: func(r *ledger.Rental, p int, project string) { r.Owner, r.Project = people[p], project },
		volume: func(v *ledger.Volume, p int, project string) { v.Owner, v.Project = people[p], project },
		charge: func(c *ledger.Charge, p int, project string) { c.Owner, c.Project = people[p], project },
	})
	// The one asking is a plain member (person 1: odd, so llm-sft's),
	// whose own ledger is empty: a reply naming the year's running rentals
	// read the team's.
	asker := people[1]
	if err := ts.SetUse(ctx, asker, team.Ledger()); err != nil {
		b.Fatal(err)
	}
	core, err := bot.New(ctx, bot.Config{Store: db, AllowedUsers: people, Now: func() time.Time { return yearNow }})
	if err != nil {
		b.Fatal(err)
	}
	reply := benchStatus(b, core, asker)
	if !strings.HasPrefix(reply, "👥 lab · ") {
		b.Logf("the reply does not begin with the team's tag yet: %.60q", reply)
	}
}
