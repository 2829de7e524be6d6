package bot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// hubEnv is a core wired to a real agent hub (its Tokens as the core's
// AgentTokens, as the server wires them) over one SQLite file.
type hubEnv struct {
	*env
	hub *hub.Hub
	srv *httptest.Server
	seq uint64
}

func newHubEnv(t *testing.T) *hubEnv {
	t.Helper()
	db := openStore(t)
	he := &hubEnv{}
	h, err := hub.New(hub.Config{Store: db, Now: func() time.Time { return he.now }})
	if err != nil {
		t.Fatal(err)
	}
	he.env = newEnv(t, bot.Config{Store: db, AllowedUsers: []int64{alice}, AgentTokens: h.Tokens(), PublicURL: "http://hub"})
	he.hub = h
	he.srv = httptest.NewServer(h.Handler())
	t.Cleanup(he.srv.Close)
	return he
}

var tokenRE = regexp.MustCompile(`(?:--token |token=)([A-Za-z0-9_-]+)`)

// agent issues a token for name with /agent and returns it.
func (he *hubEnv) agent(name string) string {
	he.t.Helper()
	m := tokenRE.FindStringSubmatch(he.say(alice, "/agent "+name))
	if m == nil {
		he.t.Fatalf("/agent %s: no token in the reply", name)
	}
	return m[1]
}

// heartbeat is the next heartbeat of a quiet RTX 4090 host whose window
// of 6 samples all read v.
func (he *hubEnv) heartbeat(v wire.Verdict) wire.HeartbeatRequest {
	he.seq++
	hb := wire.HeartbeatRequest{Version: wire.Version, Seq: he.seq, BootID: "b1", Verdict: v, Samples: 6,
		WindowStart: he.now.Add(-30 * time.Second), WindowEnd: he.now, CanRelease: true,
		Host: wire.HostFacts{GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: "NVIDIA GeForce RTX 4090"}}}}
	if v == wire.VerdictIdle {
		hb.IdleSamples = 6
	} else {
		hb.BusySamples = 6
	}
	return hb
}

// post sends hb with tok and returns the HTTP status.
func (he *hubEnv) post(tok string, hb wire.HeartbeatRequest) int {
	he.t.Helper()
	b, _ := json.Marshal(hb)
	req, _ := http.NewRequest(http.MethodPost, he.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		he.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// beat posts a heartbeat with verdict v and returns the HTTP status.
func (he *hubEnv) beat(tok string, v wire.Verdict) int {
	he.t.Helper()
	return he.post(tok, he.heartbeat(v))
}

// TestCore_ReleaseRevokesAgentToken: a /release typed in chat revokes the
// rental's agent token at once, not when the hub's cache expires, and an
// /undo of the release says the token stays revoked.
func TestCore_ReleaseRevokesAgentToken(t *testing.T) {
	he := newHubEnv(t)
	he.say(alice, "/rent box1 autodl 4090 1.88/h")
	tok := he.agent("box1")
	he.now = he.now.Add(time.Hour)
	if code := he.beat(tok, wire.VerdictBusy); code != http.StatusOK {
		t.Fatalf("heartbeat before the release: %d", code)
	}
	he.now = he.now.Add(5 * time.Second) // well within the hub's 30 s cache
	contains(t, he.say(alice, "/release box1"), "released")
	if code := he.beat(tok, wire.VerdictBusy); code != http.StatusUnauthorized {
		t.Fatalf("heartbeat 5s after /release: %d, want 401 (token revoked)", code)
	}
	got, err := he.db.ValidTokens(context.Background())
	if err != nil || len(got) != 0 {
		t.Fatalf("valid tokens after /release = %+v, %v", got, err)
	}
	contains(t, he.say(alice, "/undo"), "undone", "release", "box1", "/agent box1", "revoked")
	if code := he.beat(tok, wire.VerdictBusy); code != http.StatusUnauthorized {
		t.Fatalf("heartbeat after undoing the release: %d, want 401 (revocation is final)", code)
	}
	if st := he.book(alice).Rental("box1").State(); st != ledger.Running {
		t.Fatalf("box1 after undo: %s", st)
	}
	tok = he.agent("box1")
	if code := he.beat(tok, wire.VerdictBusy); code != http.StatusOK {
		t.Fatalf("heartbeat with the new token: %d", code)
	}
}

// TestCore_StopReachesHubAtOnce: after a /stop typed in chat the hub no
// longer treats the rental as running (no idle interval is opened for a
// stopped rental, and the one open at the stop is closed there), and a
// /resume makes it count again.
func TestCore_StopReachesHubAtOnce(t *testing.T) {
	he := newHubEnv(t)
	he.say(alice, "/rent box1 autodl 4090 1.88/h")
	he.say(alice, "/rent box2 autodl 4090 1.88/h")
	tok1, tok2 := he.agent("box1"), he.agent("box2")
	he.now = he.now.Add(time.Hour)
	he.beat(tok1, wire.VerdictIdle) // box1: an idle interval opens
	he.beat(tok2, wire.VerdictBusy) // box2: busy, cached as running
	he.now = he.now.Add(5 * time.Second)
	stopAt := he.now
	he.say(alice, "/stop box1")
	he.say(alice, "/stop box2")
	he.now = he.now.Add(5 * time.Second)
	he.beat(tok1, wire.VerdictIdle)
	he.beat(tok2, wire.VerdictIdle) // idle after the stop: not idle time of a running rental
	b := he.book(alice)
	if iv := b.Rental("box1").Idle; len(iv) != 1 || !iv[0].To.Equal(stopAt) {
		t.Fatalf("box1 idle intervals = %+v; want one closed at the stop %s", iv, stopAt)
	}
	if iv := b.Rental("box2").Idle; len(iv) != 0 {
		t.Fatalf("box2 idle intervals = %+v; want none for a stopped rental", iv)
	}
	he.say(alice, "/resume box2")
	he.now = he.now.Add(5 * time.Second)
	he.beat(tok2, wire.VerdictBusy)
	he.beat(tok2, wire.VerdictIdle)
	if iv := he.book(alice).Rental("box2").Idle; len(iv) != 1 || !iv[0].To.IsZero() {
		t.Fatalf("box2 idle intervals after /resume = %+v; want one open", iv)
	}
}

// TestCore_AutoReleaseSaysWhatHappens: /autorelease says when the action
// comes, what the ledger records, and for a stop what the platform does
// to a stopped instance; release points to stop, which keeps the data.
func TestCore_AutoReleaseSaysWhatHappens(t *testing.T) {
	he := newHubEnv(t)
	he.say(alice, "/rent box1 autodl 4090 1.88/h")
	contains(t, he.say(alice, "/autorelease box1 stop after 45m"),
		"idle 30m", "45m more", "<b>stop</b>", "data stays", "AutoDL keeps billing its storage", "stopped for 15d")
	got := he.say(alice, "/autorelease box1 release")
	contains(t, got, "30m more", "<b>release</b>", "token is revoked", "<code>/autorelease box1 stop</code>")
	he.say(alice, "/settings lang=zh")
	contains(t, he.say(alice, "/autorelease box1 stop"), "记为<b>关机</b>", "数据保留", "AutoDL 会释放关机满")
}

// TestCore_UndoReleaseWithoutToken: with the hub running but no token ever
// issued for the rental, undoing its release says nothing of a token.
func TestCore_UndoReleaseWithoutToken(t *testing.T) {
	he := newHubEnv(t)
	he.say(alice, "/rent box1 autodl 4090 1.88/h")
	he.now = he.now.Add(time.Hour)
	contains(t, he.say(alice, "/release box1"), "released")
	got := he.say(alice, "/undo")
	contains(t, got, "undone", "release", "box1")
	if strings.Contains(got, "revoked") || strings.Contains(got, "/agent") {
		t.Errorf("/undo of a release without a token mentions one:\n%s", got)
	}
}
