package bot_test

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_ChinesePlatformNames: Chinese replies name a platform by its
// Chinese name where it has one (恒源云, 矩池云, 阿里云, 腾讯云), not by the
// key the ledger stores; English replies keep the key as the user typed
// it. The rental's reply, /status, /summary, a top-up and a balance.
func TestCore_ChinesePlatformNames(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/lang zh")
	for _, tt := range []struct{ cmd, key, zh string }{
		{"/rent t1 gpushare 4090 1.88/h", "gpushare", "恒源云"},
		{"/rent t2 matpool 3090 1.2/h", "matpool", "矩池云"},
		{"/rent t3 alibaba A10 10/h", "alibaba", "阿里云"},
		{"/rent tc tencent T4 3/h", "tencent", "腾讯云"},
	} {
		if got := e.say(alice, tt.cmd); !strings.Contains(got, tt.zh) || strings.Contains(got, tt.key) {
			t.Errorf("%s in Chinese: want %s, not %s:\n%s", tt.cmd, tt.zh, tt.key, got)
		}
	}
	for _, cmd := range []string{"/status", "/summary", "/topup gpushare 100", "/balance matpool 50"} {
		got := e.say(alice, cmd)
		for _, key := range []string{"gpushare", "matpool", "alibaba", "tencent"} {
			if strings.Contains(got, key) {
				t.Errorf("%s in Chinese names %s by its key:\n%s", cmd, key, got)
			}
		}
		if !strings.Contains(got, "恒源云") && !strings.Contains(got, "矩池云") {
			t.Errorf("%s in Chinese names no platform in Chinese:\n%s", cmd, got)
		}
	}
	if got := e.say(alice, "/autorelease t3 stop"); !strings.Contains(got, "阿里云") || strings.Contains(got, "Alibaba") {
		t.Errorf("/autorelease on alibaba in Chinese:\n%s", got)
	}
	e.say(alice, "/lang en")
	contains(t, e.say(alice, "/status"), "gpushare", "matpool", "alibaba")
}
