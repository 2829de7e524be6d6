package bot_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// utcStamp matches a time written the way logs write it: a UTC clock
// with its "Z", or an RFC 3339 stamp. No reply shows one: a user reads
// times in their own zone, as the rest of the chat writes them.
var utcStamp = regexp.MustCompile(`\d{2}:\d{2}(:\d{2})?Z|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`)

// TestCore_RefusalTimesInUserZone: the refusals that name times (a price
// before the rental's start or after its release, a traffic price before
// the start, a volume price before its creation) show them in the user's
// zone (Asia/Shanghai here) and the chat's format, in English and
// Chinese, never as UTC stamps.
func TestCore_RefusalTimesInUserZone(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	// t0 is 2026-11-02 10:00 in Shanghai, 02:00 UTC.
	contains(t, e.say(alice, "/rent yolo autodl 4090 1.88/h"), "✓")
	contains(t, e.say(alice, "/traffic yolo price=0.8/GB"), "✓")
	contains(t, e.say(alice, "/storage yv 100GB 0.01/GB/day rental=yolo"), "✓")
	contains(t, e.say(alice, "/rent zz autodl 4090 1.88/h"), "✓")
	e.now = t0.Add(24 * time.Hour)
	contains(t, e.say(alice, "/release yolo"), "✓")
	e.now = t0.Add(5 * 24 * time.Hour) // Nov 7: no time below is "yesterday"

	cases := []struct {
		cmd    string
		en, zh []string
	}{
		// before the start: 11:00 on Nov 1, Shanghai (03:00Z)
		{"/price yolo 2.08/h at 2026-11-01 11:00", []string{"Nov 1 11:00", "Nov 2 10:00", "yolo"}, []string{"11月1日 11:00", "11月2日 10:00", "yolo"}},
		// after the release, at 10:00 on Nov 3 (02:00Z)
		{"/price yolo 2.08/h at 2026-11-04 09:00", []string{"Nov 4 09:00", "Nov 3 10:00", "yolo"}, []string{"11月4日 09:00", "11月3日 10:00", "yolo"}},
		{"/traffic yolo price=0.9/GB at 2026-11-01 11:00", []string{"Nov 1 11:00", "Nov 2 10:00"}, []string{"11月1日 11:00", "11月2日 10:00"}},
		{"/storage yv price=0.02/GB/day at 2026-11-01 11:00", []string{"Nov 1 11:00", "Nov 2 10:00"}, []string{"11月1日 11:00", "11月2日 10:00"}},
		{"/stop zz at 2026-11-01 11:00", []string{"Nov 1 11:00", "Nov 2 10:00"}, []string{"11月1日 11:00", "11月2日 10:00"}},
		{"/traffic zz 1GB at 2026-11-01 11:00", []string{"Nov 1 11:00", "Nov 2 10:00"}, []string{"11月1日 11:00", "11月2日 10:00"}},
		{"/storage yv resize 200GB at 2026-11-01 11:00", []string{"Nov 1 11:00", "Nov 2 10:00"}, []string{"11月1日 11:00", "11月2日 10:00"}},
	}
	for _, lang := range []string{"en", "zh"} {
		e.say(alice, "/settings lang="+lang)
		for _, c := range cases {
			got := e.say(alice, c.cmd)
			want := c.en
			if lang == "zh" {
				want = c.zh
			}
			contains(t, got, append([]string{"✗"}, want...)...)
			if m := utcStamp.FindString(got); m != "" {
				t.Errorf("%s %q: reply shows the UTC stamp %q: %s", lang, c.cmd, m, got)
			}
		}
	}
}
