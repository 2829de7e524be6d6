package console_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/console"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// loopLinks is a server at its default public URL, http://127.0.0.1:8477
// (only text here: nothing listens or dials), without an https Mini App.
func loopLinks() *links { return &links{base: "http://127.0.0.1:8477"} }

// TestConsole_DashboardLoopbackNoWarning: in the terminal the link opens
// on the server's own machine, so a loopback link gets no warning that a
// phone cannot open it, nor a note about a Telegram button (Telegram
// hears both: TestCore_DashboardLinkUnreachable).
func TestConsole_DashboardLoopbackNoWarning(t *testing.T) {
	for _, lang := range []string{"/language en", "/language zh"} {
		ctx := context.Background()
		db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(discard()))
		if err != nil {
			t.Fatal(err)
		}
		now := func() time.Time { return time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC) }
		db.Now = now
		core, err := bot.New(ctx, bot.Config{Store: db, Owner: 1, TZ: "Asia/Shanghai", Now: now, Logger: discard(), Dashboard: loopLinks(),
			PublicURL: "http://127.0.0.1:8477"})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		c, err := console.New(console.Config{In: strings.NewReader(lang + "\n/dashboard\n"), Out: &out, Handler: core, Dir: t.TempDir(), Logger: discard(), FirstMessageID: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		db.Close()
		got := out.String()
		if !strings.Contains(got, "http://127.0.0.1:8477/app/login?code=CODE1-1") {
			t.Fatalf("%s: no link:\n%s", lang, got)
		}
		for _, w := range []string{"GPULEDGER_PUBLIC_URL", "phone", "手机", "Mini App", "小程序"} {
			if strings.Contains(got, w) {
				t.Errorf("%s: the terminal's /dashboard says %q:\n%s", lang, w, got)
			}
		}
	}
}
