package bot_test

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
)

// TestConversation_DashboardLoopback: through the real Telegram library
// and the fake Bot API, which parses each message's HTML, /dashboard at
// the default public URL (http://127.0.0.1:8477) says in English and
// Chinese that a phone cannot open the link and how to give one it can,
// and why there is no button that opens it inside Telegram.
func TestConversation_DashboardLoopback(t *testing.T) {
	l := &links{base: "http://127.0.0.1:8477"}
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice, bob}, TZ: "Asia/Shanghai", Dashboard: l,
		PublicURL: "http://127.0.0.1:8477"})
	l.now = c.clock
	c.fake.SetUser(bob, "bob", "zh-CN")
	en := c.say(alice, "/dashboard")
	contains(t, en.Text, "http://127.0.0.1:8477/app/login?code=", "phone cannot", "GPULEDGER_PUBLIC_URL", "cloudflared tunnel --url http://localhost:8477")
	zh := c.say(bob, "/dashboard")
	contains(t, zh.Text, "http://127.0.0.1:8477/app/login?code=", "手机打不开", "GPULEDGER_PUBLIC_URL", "隧道")
	for _, m := range []string{en.Text, zh.Text} {
		if strings.Contains(m, "&lt;") {
			t.Errorf("escaped markup: %s", m)
		}
	}
}
