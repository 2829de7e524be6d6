package bot_test

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_VolumeNoFreeAllowance: a volume without a free allowance is
// not said to have "free 0GB" / "免费 0GB"; one with an allowance still
// says it.
func TestCore_VolumeNoFreeAllowance(t *testing.T) {
	for _, tt := range []struct{ lang, zero, free string }{
		{"en", "free 0GB", "free 50GB"},
		{"zh", "免费 0GB", "免费 50GB"},
	} {
		t.Run(tt.lang, func(t *testing.T) {
			e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
			if tt.lang == "zh" {
				e.say(alice, "/lang zh")
			}
			e.say(alice, "/rent a10 gpushare A100 3.5/h")
			got := e.say(alice, "/storage vd3 50GB rental=a10")
			contains(t, got, "vd3", "50GB")
			if strings.Contains(got, tt.zero) {
				t.Errorf("reply says %q:\n%s", tt.zero, got)
			}
			e.say(alice, "/rent s1 autodl 4090 1.88/h")
			contains(t, e.say(alice, "/storage sd1 200GB rental=s1"), tt.free)
		})
	}
}
