package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// beatWork posts a busy heartbeat whose agent saw the host working at work
// (a transfer, an install, disk I/O).
func (he *hubEnv) beatWork(tok, work string) {
	he.t.Helper()
	hb := he.heartbeat(wire.VerdictBusy)
	hb.Reasons, hb.Work = []string{work}, work
	if code := he.post(tok, hb); code != 200 {
		he.t.Fatalf("heartbeat: %d", code)
	}
}

// TestCore_WhyShowsWhatTheHostWorksAt: a copy or an install with the GPU
// quiet is work; /why says what the agent saw (escaped), in English and
// Chinese, and says nothing of it once the host reads idle.
func TestCore_WhyShowsWhatTheHostWorksAt(t *testing.T) {
	he := newHubEnv(t)
	he.say(alice, "/rent box1 autodl 4090 1.88/h")
	tok := he.agent("box1")
	he.say(alice, "/autorelease box1 stop after 30m")
	he.beatWork(tok, "rsync running; disk 180 MB/s <b>")
	why := he.say(alice, "/why box1")
	if !strings.Contains(why, "Working: rsync running; disk 180 MB/s &lt;b&gt;") {
		t.Fatalf("/why does not say what the host works at:\n%s", why)
	}
	he.say(alice, "/settings lang=zh")
	if why := he.say(alice, "/why box1"); !strings.Contains(why, "正在工作：rsync running; disk 180 MB/s") {
		t.Fatalf("/why (zh):\n%s", why)
	}
	he.beatPeople(tok)
	if why := he.say(alice, "/why box1"); strings.Contains(why, "rsync") {
		t.Fatalf("/why after an idle heartbeat still says rsync:\n%s", why)
	}
}

// TestCore_AutoreleaseIdlePeople: /autorelease … idle_people=3h sets how
// long a connected person who does nothing holds the automatic action,
// and says so; /why tells a connection idle past it from one that holds.
func TestCore_AutoreleaseIdlePeople(t *testing.T) {
	he := newHubEnv(t)
	he.say(alice, "/rent box1 autodl 4090 1.88/h")
	tok := he.agent("box1")
	if got := he.say(alice, "/autorelease box1 stop"); !strings.Contains(got, "nothing is done for 2h") {
		t.Fatalf("/autorelease does not say the default bound: %q", got)
	}
	if got := he.say(alice, "/autorelease box1 stop wait_for=jupyter idle_people=3h"); !strings.Contains(got, "nothing is done for 3h") {
		t.Fatalf("/autorelease idle_people=3h: %q", got)
	}
	ran := he.now.Add(-4 * time.Hour)
	he.beatPeople(tok, wire.Session{Kind: wire.SessionJupyter, Client: "local", ActiveAt: &ran})
	why := he.say(alice, "/why box1")
	if !strings.Contains(why, "nothing done for 4h") || strings.Contains(why, "is held") {
		t.Fatalf("/why with a tab idle for 4h:\n%s", why)
	}
	ran = he.now.Add(-time.Hour)
	he.beatPeople(tok, wire.Session{Kind: wire.SessionJupyter, Client: "local", ActiveAt: &ran})
	if why := he.say(alice, "/why box1"); !strings.Contains(why, "is held") {
		t.Fatalf("/why with a cell run an hour ago:\n%s", why)
	}
	he.say(alice, "/settings lang=zh")
	if got := he.say(alice, "/autorelease box1 关机 空闲=none"); !strings.Contains(got, "不限") {
		t.Fatalf("/autorelease 空闲=none (zh): %q", got)
	}
	if got := he.say(alice, "/autorelease box1 stop idle_people=1m"); !strings.Contains(got, "idle_people") {
		t.Fatalf("a bound out of range: %q", got)
	}
}
