package bot_test

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// beatPeople posts an idle heartbeat reporting the given people connected.
func (he *hubEnv) beatPeople(tok string, ss ...wire.Session) {
	he.t.Helper()
	hb := he.heartbeat(wire.VerdictIdle)
	hb.Sessions = ss
	if code := he.post(tok, hb); code != 200 {
		he.t.Fatalf("heartbeat: %d", code)
	}
}

// TestCore_WhyShowsWhoIsConnected: /why says who the agent sees connected
// and that the automatic action waits for them; /autorelease … wait_for=
// changes who it waits for, and /why says so.
func TestCore_WhyShowsWhoIsConnected(t *testing.T) {
	he := newHubEnv(t)
	he.say(alice, "/rent box1 autodl 4090 1.88/h")
	tok := he.agent("box1")
	got := he.say(alice, "/autorelease box1 stop after 30m")
	if !strings.Contains(got, "wait_for=ssh,jupyter,vscode") {
		t.Fatalf("/autorelease reply does not say who it waits for: %q", got)
	}
	he.beatPeople(tok, wire.Session{Kind: wire.SessionSSH, Client: "1.2.3.4", User: "root"},
		wire.Session{Kind: wire.SessionJupyter, Client: "local"})
	why := he.say(alice, "/why box1")
	for _, want := range []string{"1 SSH session (root from 1.2.3.4), 1 Jupyter client", "automatic stop is held", "waits while connected: ssh,jupyter,vscode"} {
		if !strings.Contains(why, want) {
			t.Fatalf("/why lacks %q:\n%s", want, why)
		}
	}

	got = he.say(alice, "/autorelease box1 stop after 30m wait_for=none")
	if !strings.Contains(got, "acts even while someone is connected") {
		t.Fatalf("wait_for=none reply: %q", got)
	}
	why = he.say(alice, "/why box1")
	if !strings.Contains(why, "waits while connected: none") || strings.Contains(why, "is held") ||
		!strings.Contains(why, "1 SSH session (root from 1.2.3.4)") {
		t.Fatalf("/why after wait_for=none:\n%s", why)
	}

	// A bad value changes nothing and says what is accepted.
	got = he.say(alice, "/autorelease box1 stop wait_for=people")
	if !strings.Contains(got, "use none, all, or ssh, jupyter, vscode") {
		t.Fatalf("bad wait_for: %q", got)
	}
	if why2 := he.say(alice, "/why box1"); !strings.Contains(why2, "waits while connected: none") {
		t.Fatalf("a bad /autorelease changed the policy:\n%s", why2)
	}

	// In Chinese.
	he.say(alice, "/settings lang=zh")
	he.say(alice, "/autorelease box1 关机 等待=ssh")
	why = he.say(alice, "/why box1")
	for _, want := range []string{"1 个 SSH 会话（root 来自 1.2.3.4）、1 个 Jupyter 客户端", "暂缓"} {
		if !strings.Contains(why, want) {
			t.Fatalf("/why (zh) lacks %q:\n%s", want, why)
		}
	}
}

// TestSessionsText: who is connected, in both languages, with what the
// agent sent escaped (a hostile agent must not inject markup).
func TestSessionsText(t *testing.T) {
	ss := []ledger.Session{{Kind: ledger.SessionSSH, Client: "1.2.3.4", User: "root"}, {Kind: ledger.SessionSSH, Client: "<b>evil</b>"},
		{Kind: ledger.SessionJupyter, Client: "local"}}
	if got, want := view.SessionsText("en", ss), "2 SSH sessions (root from 1.2.3.4, from &lt;b&gt;evil&lt;/b&gt;), 1 Jupyter client"; got != want {
		t.Errorf("en:\n got %s\nwant %s", got, want)
	}
	if got, want := view.SessionsText("zh", ss), "2 个 SSH 会话（root 来自 1.2.3.4，来自 &lt;b&gt;evil&lt;/b&gt;）、1 个 Jupyter 客户端"; got != want {
		t.Errorf("zh:\n got %s\nwant %s", got, want)
	}
	if got := view.SessionsText("en", nil); got != "" {
		t.Errorf("nobody: %q", got)
	}
}
