package bot_test

import (
	"testing"

	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_SummaryOff: summary=off turns the nightly summary off (stored as
// -1, which the scheduler skips) and shows as off; a time turns it back on.
func TestCore_SummaryOff(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(alice, "/settings summary=off"), "settings saved", "summary=off")
	if got := e.book(alice).User.Settings.SummaryAt; got != -1 {
		t.Fatalf("SummaryAt after summary=off = %d, want -1", got)
	}
	contains(t, e.say(alice, "/settings summary=21:30"), "summary=21:30")
	if got := e.book(alice).User.Settings.SummaryAt; got != 21*60+30 {
		t.Fatalf("SummaryAt after summary=21:30 = %d, want %d", got, 21*60+30)
	}
}
