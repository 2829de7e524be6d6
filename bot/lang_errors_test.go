package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestCore_LedgerErrorsInUsersLanguageAndZone: a ledger refusal reaches a
// Chinese user in Chinese, with its times in the user's zone and the bot's
// usual time format, never as English or a UTC "Z" time.
func TestCore_LedgerErrorsInUsersLanguageAndZone(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.now = time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC) // 20:00 in Shanghai
	e.say(alice, "/settings lang=zh")

	t.Run("StopBeforeStart", func(t *testing.T) {
		e.say(alice, "/rent box2 autodl 4090 1.88/h at 2026-11-02 10:00")
		got := e.say(alice, "/stop box2 at 2026-11-02 09:00")
		t.Log(got)
		contains(t, got, "✗", "box2", "09:00", "10:00")
		for _, bad := range []string{"Z", "before", "started", "01:00", "02:00"} {
			if strings.Contains(got, bad) {
				t.Errorf("reply %q contains %q (English or UTC)", got, bad)
			}
		}
	})
	t.Run("BadName", func(t *testing.T) {
		got := bot.ErrorText(ledger.ValidateName("bo→x"), "zh")
		contains(t, got, "名字", `"bo→x"`)
		if strings.Contains(got, "may use only") || strings.Contains(got, "letters") {
			t.Errorf("reply %q is in English", got)
		}
	})
}
