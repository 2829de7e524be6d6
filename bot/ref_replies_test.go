package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_ReusedNameRepliesByAddress: once two rentals are called yolo,
// every reply about one of them names it by its address, whether the user
// wrote the address or the bare name: a refusal from the store ("yolo was
// already released"), the confirmations of /stop, /resume and /release,
// the line /undo writes and /why. A bare "yolo" left the user to guess
// which one a reply meant.
func TestCore_ReusedNameRepliesByAddress(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
			if lang == "zh" {
				e.say(alice, "/lang zh")
			}
			e.say(alice, "/rent yolo autodl 4090 2/h") // Nov 2 10:00 in Shanghai
			e.now = t0.Add(3 * time.Hour)
			e.say(alice, "/release yolo")
			e.now = t0.Add(24 * time.Hour) // Nov 3 10:00
			e.say(alice, "/rent yolo autodl 4090 3/h")
			e.now = t0.Add(25 * time.Hour)

			old, cur := "yolo@2026-11-02", "yolo@2026-11-03"
			for _, tt := range []struct{ in, want string }{
				{"/release " + old, old},
				{"/resume " + old, old},
				{"/stop " + old, old},
				{"/why " + old, old},
				{"/why yolo", cur},
				{"/stop yolo", cur},
				{"/undo", cur},
				{"/stop yolo", cur},
				{"/resume yolo at 11:30", cur},
				{"/resume yolo", cur},
				{"/traffic yolo 10GB", "/traffic " + cur + " price="},
				{"/release " + cur, cur},
			} {
				got := e.say(alice, tt.in)
				if !strings.Contains(got, tt.want) {
					t.Errorf("%s: reply does not name %s:\n%s", tt.in, tt.want, got)
				}
				// The note on which rental a bare name took ("ℹ️ yolo here
				// is …") quotes the name as typed.
				body, _, _ := strings.Cut(got, "ℹ️")
				if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(body, old, ""), cur, ""), "yolo ") {
					t.Errorf("%s: reply names a bare yolo:\n%s", tt.in, got)
				}
			}
		})
	}
}
