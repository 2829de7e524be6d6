package bot_test

import (
	"strings"
	"testing"
)

// TestCore_DashboardLinkUnreachable: a sign-in link sent to Telegram is
// opened on a phone. When the server's public URL is loopback (the
// default http://127.0.0.1:8477) or a private address, the reply says the
// phone cannot open it, and how to give one it can; and without an https
// URL, why there is no button that opens it inside Telegram. In the
// terminal (an update without a Key) the link opens on the same machine:
// no warning.
func TestCore_DashboardLinkUnreachable(t *testing.T) {
	for _, tc := range []struct {
		name, base, lang string
		want             []string
	}{
		{"Loopback", "http://127.0.0.1:8477", "", []string{"127.0.0.1:8477", "phone", "GPULEDGER_PUBLIC_URL", "tunnel", "docs/deploy.md"}},
		{"Localhost", "http://localhost:8477", "", []string{"localhost:8477", "phone", "GPULEDGER_PUBLIC_URL"}},
		{"LoopbackChinese", "http://127.0.0.1:8477", "zh-hans", []string{"127.0.0.1:8477", "手机", "GPULEDGER_PUBLIC_URL", "隧道"}},
		{"Private", "http://192.168.1.20:8477", "", []string{"192.168.1.20:8477", "private address", "GPULEDGER_PUBLIC_URL"}},
		{"PrivateChinese", "http://10.0.0.5:8477", "zh", []string{"10.0.0.5:8477", "内网", "GPULEDGER_PUBLIC_URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, l := dashEnv(t, "")
			l.base = tc.base
			u := e.update(alice, "/dashboard")
			u.LangCode = tc.lang
			out := e.handle(u)
			if len(out) != 1 {
				t.Fatalf("replies = %+v", out)
			}
			contains(t, out[0].Out.Text, append(tc.want, l.issued()[0])...)

			// The terminal's user opens it on the server's machine.
			u = e.update(alice, "/dashboard")
			u.Key, u.LangCode = "", tc.lang
			out = e.handle(u)
			if len(out) != 1 {
				t.Fatalf("replies = %+v", out)
			}
			for _, w := range []string{"GPULEDGER_PUBLIC_URL", "phone", "手机", "https"} {
				if strings.Contains(strings.ReplaceAll(out[0].Out.Text, "http://", ""), w) {
					t.Errorf("the terminal's reply warns (%q): %s", w, out[0].Out.Text)
				}
			}
		})
	}

	t.Run("PublicHTTP", func(t *testing.T) {
		e, l := dashEnv(t, "")
		l.base = "http://203.0.113.7:8477"
		m := e.say(alice, "/dashboard")
		contains(t, m, l.issued()[0], "https", "button", "GPULEDGER_PUBLIC_URL")
		if strings.Contains(m, "phone cannot") {
			t.Errorf("a public address is called unreachable: %s", m)
		}
		u := e.update(bob, "/dashboard")
		u.LangCode = "zh"
		contains(t, e.handle(u)[0].Out.Text, "https", "按钮")
	})
	t.Run("HTTPS", func(t *testing.T) {
		e, _ := dashEnv(t, appURL)
		m := e.say(alice, "/dashboard")
		if strings.Contains(m, "GPULEDGER_PUBLIC_URL") || strings.Contains(m, "⚠️") {
			t.Errorf("an https link with its button warns: %s", m)
		}
	})
}
