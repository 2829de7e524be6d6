package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_BackdatedEventsStateThatTime: the reply to a backdated /stop,
// /resume or /release gives the running time and compute as of the time
// given, not as of now.
func TestCore_BackdatedEventsStateThatTime(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.now = time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC) // four weeks after
	contains(t, e.say(alice, "/rent l1 homelab H100 $2.00/h at 2026-11-05 08:00"), "l1", "Nov 5 08:00")
	contains(t, e.say(alice, "/stop l1 at 2026-11-05 10:10"), "stopped Nov 5 10:10", "ran 2h10m", "compute so far $4.33")
	got := e.say(alice, "/resume l1 at 2026-11-05 13:00")
	contains(t, got, "resumed Nov 5 13:00", "ran 2h10m before", "compute so far $4.33")
	got = e.say(alice, "/price l1 $3.00/h at 2026-11-05 13:30")
	contains(t, got, "costs $3.00/h from Nov 5 13:30")
	if strings.Contains(got, "now") {
		t.Errorf("a backdated /price says %q", got)
	}
	contains(t, e.say(alice, "/release l1 at 2026-11-05 14:00"), "released Nov 5 14:00", "ran 3h10m", "compute total $6.83")
	contains(t, e.say(alice, "/spend 2026-11"), "$6.83")
}

// TestCore_SameSecondStop: stopping or releasing in the second a rental
// started says it ran 0s and cost nothing, in English and Chinese, never
// a blank.
func TestCore_SameSecondStop(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	got := e.say(alice, "/stop box1")
	contains(t, got, "stopped", "ran 0s", "compute so far ¥0.00")
	e.say(alice, "/rent box2 autodl 4090 1.88/h")
	contains(t, e.say(alice, "/release box2"), "released", "ran 0s", "compute total ¥0.00")

	u := e.update(bob, "/rent box1 autodl 4090 1.88元/小时")
	u.LangCode = "zh-hans"
	e.handle(u)
	zh := e.say(bob, "/stop box1")
	contains(t, zh, "已关机", "累计运行 0秒", "计算费用 ¥0.00")
	for _, s := range []string{got, zh} {
		if strings.Contains(s, "ran ,") || strings.Contains(s, "运行 ，") || strings.HasSuffix(s, " ") {
			t.Errorf("blank duration or cost in %q", s)
		}
	}
}

// TestCore_ChargeAt: /charge … at TIME dates the charge then and keeps
// the note clean; a future time is refused and records nothing.
func TestCore_ChargeAt(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h at 2026-11-01 09:00")
	got := e.say(alice, "/charge box1 5 image fee at 2026-11-01 10:05")
	contains(t, got, "¥5.00", "box1", "image fee", "yesterday 10:05")
	b := e.book(alice)
	want := time.Date(2026, 11, 1, 2, 5, 0, 0, time.UTC)
	if len(b.Charges) != 1 || b.Charges[0].Note != "image fee" || !b.Charges[0].At.Equal(want) {
		t.Fatalf("charges = %+v, want one \"image fee\" at %s", b.Charges, want)
	}
	contains(t, e.say(alice, "/charge box1 5 fee at tomorrow 10:00"), "✗", "in the future")
	if n := len(e.book(alice).Charges); n != 1 {
		t.Fatalf("a future charge was recorded: %d charges", n)
	}
	// A charge without a time is dated now and says no date.
	got = e.say(alice, "/charge box1 2 support")
	if strings.Contains(got, "dated") || strings.Contains(got, "yesterday") {
		t.Errorf("undated charge reply %q names a date", got)
	}
}
