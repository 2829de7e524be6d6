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

// TestCore_StoragePlatformStoredAsTopups: a volume for a platform of the
// user's own is stored under the name its top-ups are, whatever the case.
func TestCore_StoragePlatformStoredAsTopups(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(alice, "/topup MyGpuFarm 100 usd"), "$100.00")
	contains(t, e.say(alice, "/storage sd1 100GB $0.10/GB/month platform=MyGpuFarm"), "sd1")
	contains(t, e.say(alice, "/charge auto-dl 5 image fee"), "¥5.00")
	b := e.book(alice)
	if len(b.TopUps) != 1 || len(b.Volumes) != 1 {
		t.Fatalf("top-ups %+v, volumes %+v: want one each", b.TopUps, b.Volumes)
	}
	if b.Volumes[0].Platform != b.TopUps[0].Platform {
		t.Fatalf("volume under %q, top-up under %q: want one platform", b.Volumes[0].Platform, b.TopUps[0].Platform)
	}
	if len(b.Charges) != 1 || b.Charges[0].Platform != "autodl" {
		t.Fatalf("charges = %+v, want one on autodl", b.Charges)
	}
}

func platforms(b *ledger.Book) []string {
	var out []string
	for _, r := range b.Rentals {
		out = append(out, r.Platform)
	}
	return out
}
