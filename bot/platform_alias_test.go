package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestCore_PlatformAliasStoredCanonical: every name the ledger's profile
// table knows a platform by is stored under the platform's key, so a
// rental typed "auto-dl" draws on the balance topped up as "autodl" and
// everything shows one platform.
func TestCore_PlatformAliasStoredCanonical(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(alice, "/rent box1 auto-dl 4090 1.88/h"), "✓", "box1")
	contains(t, e.say(alice, "/topup auto-dl 100"), "¥100.00")
	contains(t, e.say(alice, "/rent box2 lambdalabs.com h100 2.49/h"), "✓", "box2")
	contains(t, e.say(alice, "/topup Lambda_Labs 50 usd"), "$50.00")
	b := e.book(alice)
	if len(b.Rentals) != 2 || b.Rentals[0].Platform != "autodl" || b.Rentals[1].Platform != "lambda" {
		t.Fatalf("rentals stored under %+v, want autodl and lambda", platforms(b))
	}
	if len(b.TopUps) != 2 || b.TopUps[0].Platform != "autodl" || b.TopUps[1].Platform != "lambda" {
		t.Fatalf("top-ups stored under %+v, want autodl and lambda", b.TopUps)
	}
	e.now = t0.Add(time.Hour)
	got := e.say(alice, "/balance")
	contains(t, got, "autodl", "lambda")
	for _, alias := range []string{"auto-dl", "autodl.com", "lambdalabs.com", "lambda-labs"} {
		if strings.Contains(got, alias) {
			t.Errorf("/balance shows the alias %q as its own platform: %q", alias, got)
		}
	}
}

func platforms(b *ledger.Book) []string {
	var out []string
	for _, r := range b.Rentals {
		out = append(out, r.Platform)
	}
	return out
}
