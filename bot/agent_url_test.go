package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_AgentUnreachableURL: an install line at an address no rented
// host can reach (loopback, localhost, a private network) says so beside
// the line, with how to give one that works (GPULEDGER_PUBLIC_URL, a
// tunnel), for /agent NAME and for /agent alone, in English and Chinese.
// A public address gets no such line.
func TestCore_AgentUnreachableURL(t *testing.T) {
	for _, tt := range []struct {
		url     string
		private bool // a private network, not this machine
	}{
		{"http://127.0.0.1:8477", false},
		{"http://localhost:8477", false},
		{"http://[::1]:8477", false},
		{"http://127.0.5.1", false},
		{"http://192.168.1.20:8477", true},
		{"http://10.0.0.7:8477", true},
		{"http://[fd00::7]:8477", true},
		{"http://0.0.0.0:8477", false},
	} {
		t.Run(tt.url, func(t *testing.T) {
			db := openStore(t)
			var now time.Time
			h, err := hub.New(hub.Config{Store: db, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, bot.Config{Store: db, AllowedUsers: []int64{alice}, AgentTokens: h.Tokens(), Enrolment: h.Enrolment(), PublicURL: tt.url})
			now = e.now
			e.say(alice, "/rent box1 autodl 4090 1.88/h")
			where := "only this machine"
			whereZH := "只有本机"
			if tt.private {
				where, whereZH = "only machines on its private network", "只有同一内网"
			}
			for _, cmd := range []string{"/agent box1", "/agent"} {
				contains(t, e.say(alice, cmd), tt.url+"/agent/install.sh?token=", "⚠️", where, "no rented host", "GPULEDGER_PUBLIC_URL", "cloudflared", "ssh -R", "docs/deploy.md")
			}
			e.say(alice, "/settings lang=zh")
			for _, cmd := range []string{"/agent box1", "/agent"} {
				contains(t, e.say(alice, cmd), tt.url+"/agent/install.sh?token=", "⚠️", whereZH, "GPULEDGER_PUBLIC_URL", "cloudflared", "ssh -R")
			}
		})
	}
	t.Run("public", func(t *testing.T) {
		db := openStore(t)
		h, err := hub.New(hub.Config{Store: db})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, bot.Config{Store: db, AllowedUsers: []int64{alice}, AgentTokens: h.Tokens(), Enrolment: h.Enrolment(), PublicURL: "https://ledger.example.com"})
		e.say(alice, "/rent box1 autodl 4090 1.88/h")
		for _, cmd := range []string{"/agent box1", "/agent"} {
			if out := e.say(alice, cmd); strings.Contains(out, "GPULEDGER_PUBLIC_URL") || strings.Contains(out, "⚠️") {
				t.Errorf("%s at a public address warns:\n%s", cmd, out)
			}
		}
	})
}
