package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// volumeTerms returns alice's only volume.
func (e *env) volumeTerms(user int64) *ledger.Volume {
	e.t.Helper()
	b := e.book(user)
	if len(b.Volumes) != 1 {
		e.t.Fatalf("want one volume, got %d", len(b.Volumes))
	}
	return b.Volumes[0]
}

// TestCore_StoragePriceNamesStoppedRate: correcting the price of a RunPod
// volume, which has a stopped rate, without stopped= makes it one rate in
// every state (docs/design.md §3): the reply says the stopped rate was
// replaced and offers the command that keeps it, which, sent as it
// stands, does. A volume created with a price on a platform whose profile
// bills stopped volumes differently says so too. English and Chinese.
func TestCore_StoragePriceNamesStoppedRate(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
			e.say(alice, "/settings lang="+lang)
			e.say(alice, "/rent p1 runpod 4090 0.69/h")
			contains(t, e.say(alice, "/storage pv 100GB rental=p1"), "$0.20/GB")
			e.now = t0.Add(time.Hour)

			got := e.say(alice, "/storage pv price=0.12/GB/month")
			contains(t, got, "✓", "$0.20/GB", "<code>/storage pv price=0.12/GB/month stopped=0.2/GB/month</code>")
			if v := e.volumeTerms(alice); v.HasStoppedPrice {
				t.Fatalf("the correction kept a stopped rate: %+v", v)
			}
			cmds := offered(got)
			if len(cmds) != 1 {
				t.Fatalf("want one command to keep the stopped rate, got %q", cmds)
			}
			contains(t, e.say(alice, cmds[0]), "✓")
			if v := e.volumeTerms(alice); !v.HasStoppedPrice || v.StoppedPrice.String() != "0.2" || v.Price.String() != "0.12" {
				t.Fatalf("%q: price %s stopped %v %s, want 0.12 and 0.2", cmds[0], v.Price, v.HasStoppedPrice, v.StoppedPrice)
			}
			// In another unit, the kept stopped rate is converted to it.
			got = e.say(alice, "/storage pv price=0.004/GB/day")
			contains(t, got, "✓", "<code>/storage pv price=0.004/GB/day stopped=")
			// A correction that gives stopped= says nothing of it.
			got = e.say(alice, "/storage pv price=0.10/GB/month stopped=0.20")
			if strings.Contains(got, "<code>") {
				t.Errorf("a correction with stopped= still offers a command: %s", got)
			}
			// A change from a time on says so too, with the time in the
			// command, which keeps the stopped rate from then when sent.
			got = e.say(alice, "/storage pv price=0.05/GB/month at 2026-11-02 10:30")
			contains(t, got, "✓", "<code>/storage pv price=0.05/GB/month stopped=0.2/GB/month at 2026-11-02 10:30</code>")
			if cmds = offered(got); len(cmds) != 1 {
				t.Fatalf("want one command to keep the stopped rate, got %q", cmds)
			}
			contains(t, e.say(alice, cmds[0]), "✓")
			if p := e.volumeTerms(alice).PriceAt(t0.Add(45 * time.Minute)); !p.HasStoppedPrice || p.StoppedPrice.String() != "0.2" {
				t.Fatalf("%q: terms from 10:30 = %+v, want a stopped rate of 0.2", cmds[0], p)
			}
		})
	}
}

// TestCore_StorageCreateNamesProfileStoppedRate: a volume created with
// the user's price on RunPod, whose profile bills a stopped pod's volume
// at another rate, is one rate in every state; the reply says so and how
// to bill stopped time as the profile does.
func TestCore_StorageCreateNamesProfileStoppedRate(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent p1 runpod 4090 0.69/h")
	got := e.say(alice, "/storage pv 100GB 0.12/GB/month rental=p1")
	contains(t, got, "✓", "RunPod", "$0.20/GB", "<code>/storage pv price=0.12/GB/month stopped=0.2/GB/month</code>")
	cmds := offered(got)
	if len(cmds) != 1 {
		t.Fatalf("want one command to bill stopped time as RunPod does, got %q", cmds)
	}
	contains(t, e.say(alice, cmds[0]), "✓")
	if v := e.volumeTerms(alice); !v.HasStoppedPrice || v.StoppedPrice.String() != "0.2" {
		t.Fatalf("stopped rate %v %s, want 0.2", v.HasStoppedPrice, v.StoppedPrice)
	}
}

// TestCore_TrafficRepriceKeepsTerms: changing a rental's traffic price
// keeps the free allowance and the charged direction the user set
// before, unless the change gives them; the reply shows what it kept.
func TestCore_TrafficRepriceKeepsTerms(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent v3 vast 4090 0.40/h")
	contains(t, e.say(alice, "/traffic v3 price=0.02/GB free=50GB direction=both"), "✓", "50GB", "both")
	got := e.say(alice, "/traffic v3 price=0.03/GB")
	contains(t, got, "✓", "$0.03", "50GB", "both")
	x := e.book(alice).Rentals[0]
	if x.Traffic.FreeGB.String() != "50" || x.Traffic.Direction != ledger.Both {
		t.Fatalf("traffic terms after a new price = %+v, want free 50GB both ways", x.Traffic)
	}
	// Given, they change.
	e.say(alice, "/traffic v3 price=0.03/GB free=0 direction=out")
	x = e.book(alice).Rentals[0]
	if !x.Traffic.FreeGB.IsZero() || x.Traffic.Direction != ledger.Out {
		t.Fatalf("traffic terms = %+v, want no free GB, out", x.Traffic)
	}
}
