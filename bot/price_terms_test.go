package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_PriceSaysWhatItEnds: a price change splits the rental's billing
// there, and where that bills more than the time at each rate (a prepaid
// package billed in full, a started hour or step or a minimum billed again)
// the reply says so, with the figures; where it does not (per-second with
// no minimum) it says nothing more. English and Chinese.
func TestCore_PriceSaysWhatItEnds(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
			e.say(alice, "/settings lang="+lang)
			contains(t, e.say(alice, "/rent pk homelab 4090 ¥70/day always-on"), "✓")
			contains(t, e.say(alice, "/rent ph homelab 4090 ¥2/h per-hour"), "✓")
			contains(t, e.say(alice, "/rent ps homelab 4090 ¥2/h"), "✓")
			e.now = t0.Add(90 * time.Minute)
			pk := e.say(alice, "/price pk ¥80/day")
			ph := e.say(alice, "/price ph ¥3/h")
			ps := e.say(alice, "/price ps ¥3/h")
			e.now = t0.Add(2 * time.Hour)
			got := map[string]string{}
			for _, rc := range e.statement(alice).Rentals {
				got[rc.Rental.Name] = rc.Compute.String()
			}
			// The package: ¥70 for the day begun at 10:00, then ¥80 for
			// the one begun at 11:30. The others bill their time only.
			if got["pk"] != "150.00" || got["ph"] != "4.00" || got["ps"] != "4.50" {
				t.Fatalf("compute = %v, want pk 150.00, ph 4.00, ps 4.50", got)
			}
			full, day := "billed in full", "¥70.00/day"
			if lang == "zh" {
				full, day = "照付全额", "¥70.00/天"
			}
			contains(t, pk, "✓", full, day, "10:00", "11:30")
			for _, r := range []string{ph, ps} {
				if strings.Contains(r, full) {
					t.Errorf("a price change that ends no period says one ends: %s", r)
				}
			}
		})
	}
}
