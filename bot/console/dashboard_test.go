package console_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/console"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// links is a hand-made bot.DashboardLinks: login links under base (the
// query after the code, if any, is extra), and app as its Mini App URL
// ("" for none, a server without https).
type links struct {
	base, extra, app string
	n                int
}

func (l *links) Link(_ context.Context, userID int64) (string, time.Time, error) {
	l.n++
	return fmt.Sprintf("%s/app/login?code=CODE%d-%d%s", l.base, userID, l.n, l.extra), time.Date(2026, 11, 2, 2, 5, 0, 0, time.UTC), nil
}

func (l *links) AppURL() string { return l.app }

// appLinks is a server with an https Mini App.
func appLinks() *links {
	return &links{base: "https://ledger.example", extra: "&x=1", app: "https://ledger.example/app/"}
}

// TestConsole_Dashboard: /dashboard prints its link whole; the web-app
// buttons under it and under /status are left out, the others kept.
func TestConsole_Dashboard(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := func() time.Time { return time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC) }
	db.Now = now
	core, err := bot.New(ctx, bot.Config{Store: db, Owner: 1, TZ: "Asia/Shanghai", Now: now, Logger: discard(), Dashboard: appLinks()})
	if err != nil {
		t.Fatal(err)
	}
	in := "/dashboard\n/status\n"
	var out bytes.Buffer
	c, err := console.New(console.Config{In: strings.NewReader(in), Out: &out, Handler: core, Dir: t.TempDir(), Logger: discard(), FirstMessageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "Your dashboard: https://ledger.example/app/login?code=CODE1-1&x=1\n") || !strings.Contains(got, "until 10:05") {
		t.Errorf("the link is not printed whole on its line:\n%s", got)
	}
	if strings.Contains(got, "Open dashboard") || strings.Contains(got, "[1]") {
		t.Errorf("a web-app button was printed:\n%s", got)
	}

	// A message with both kinds keeps the callback button only.
	out.Reset()
	if _, err := c.Send(ctx, chat.Outgoing{ChatID: 1, Text: "x", Buttons: [][]chat.Button{{{Text: "Release", Data: "r"}}, chat.DashboardRow("en", "https://h/app/")}}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "[1] Release") || strings.Contains(got, "dashboard") {
		t.Errorf("mixed buttons printed as %q", got)
	}
}
