package bot_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/bot"
)

// teamHub is the team chat of ann (owner), cat (admin) and ben (member)
// in team crew, with a real agent hub over the same SQLite file (its
// Tokens as the core's AgentTokens, as the server wires them).
type teamHub struct {
	*env
	srv *httptest.Server
	seq uint64
}

func newTeamHub(t *testing.T) *teamHub {
	t.Helper()
	db := openStore(t)
	th := &teamHub{}
	h, err := hub.New(hub.Config{Store: db, Now: func() time.Time { return th.now }})
	if err != nil {
		t.Fatal(err)
	}
	th.env = newEnv(t, bot.Config{Store: db, AllowedUsers: []int64{ann, ben, cat}, BotName: "LedgerBot",
		AgentTokens: h.Tokens(), PublicURL: "https://ledger.example.com"})
	th.srv = httptest.NewServer(h.Handler())
	t.Cleanup(th.srv.Close)
	contains(t, th.reply(ann, "/team new crew"), "crew", "owner")
	for _, p := range []int64{ben, cat} {
		contains(t, th.reply(p, "/team join "+th.invite(ann, "")), "joined")
	}
	contains(t, th.reply(ann, "/team role @cat admin"), "@cat")
	return th
}

// agentToken has user issue the agent token of rental privately and
// returns it.
func (th *teamHub) agentToken(user int64, rental string) string {
	th.t.Helper()
	r := th.reply(user, "/agent "+rental)
	m := tokenRE.FindStringSubmatch(r)
	if m == nil {
		th.t.Fatalf("/agent %s by %d: no token in %q", rental, user, r)
	}
	return m[1]
}

// beat posts a busy heartbeat with tok, as an agent (or someone holding a
// copy of its token) would, and returns the HTTP status.
func (th *teamHub) beat(tok string) int {
	th.t.Helper()
	th.seq++
	hb := wire.HeartbeatRequest{Version: wire.Version, Seq: th.seq, BootID: "b1", Verdict: wire.VerdictBusy, Samples: 6, BusySamples: 6,
		WindowStart: th.now.Add(-30 * time.Second), WindowEnd: th.now, CanRelease: true,
		Host: wire.HostFacts{GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: "NVIDIA GeForce RTX 4090"}}}}
	b, err := json.Marshal(hb)
	if err != nil {
		th.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, th.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
	if err != nil {
		th.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		th.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// removal has from send text (a removal or a leave) and returns what went
// to from and to other, failing the test when any message of it holds one
// of tokens.
func (th *teamHub) removal(from int64, text string, other int64, tokens ...string) (reply, notice string) {
	th.t.Helper()
	for _, s := range th.talk(from, text) {
		switch s.Out.ChatID {
		case from:
			reply += s.Out.Text
		case other:
			notice += s.Out.Text
		}
		for _, tok := range tokens {
			if strings.Contains(s.Out.Text, tok) {
				th.t.Fatalf("a token was sent with %q, to %d: %q", text, s.Out.ChatID, s.Out.Text)
			}
		}
	}
	return reply, notice
}

// TestTeam_RemoveRevokesAgentTokens: /team remove revokes the agent
// tokens of the removed member's rentals at once (the hub refuses a copy
// 5 s later, well inside its 30 s cache), while other members' tokens
// keep working; the admin who receives the rentals is told which rental
// lost its token and that /agent NAME gives a new line (no line or token
// in that reply); the admin's /agent then gives a working one.
func TestTeam_RemoveRevokesAgentTokens(t *testing.T) {
	th := newTeamHub(t)
	contains(t, th.reply(ben, "/rent box3 autodl 4090 1.88/h"), "box3")
	contains(t, th.reply(ben, "/rent box5 autodl 4090 1.88/h"), "box5") // no agent: nothing to revoke
	contains(t, th.reply(cat, "/rent box4 autodl 4090 2.00/h"), "box4")
	bens := th.agentToken(ben, "box3")
	cats := th.agentToken(cat, "box4")
	th.now = th.now.Add(time.Hour)
	for _, tok := range []string{bens, cats} {
		if code := th.beat(tok); code != http.StatusOK {
			t.Fatalf("heartbeat before the removal: %d", code)
		}
	}

	th.now = th.now.Add(5 * time.Second)
	reply, notice := th.removal(ann, "/team remove @ben", ben, bens, cats)
	contains(t, reply, "no longer in team crew", "box3, box5",
		"box3's agent token was revoked with @ben's removal: <code>/agent box3</code> gives a new install line")
	if strings.Contains(reply, "box5's agent token") || strings.Contains(reply, "https://ledger.example.com") {
		t.Errorf("the removal's reply = %q, want box3's token named only and no install line", reply)
	}
	contains(t, notice, "You were removed from team crew")

	if code := th.beat(bens); code != http.StatusUnauthorized {
		t.Fatalf("ben's copy of box3's token 5 s after his removal: %d, want 401", code)
	}
	if code := th.beat(cats); code != http.StatusOK {
		t.Fatalf("cat's token after ben's removal: %d, want 200", code)
	}
	if code := th.beat(th.agentToken(ann, "box3")); code != http.StatusOK {
		t.Fatalf("box3's new token from ann's /agent: %d, want 200", code)
	}
}

// TestTeam_LeaveRevokesAgentTokens: a member who leaves on their own
// loses the agent tokens of the rentals handed over, at once, as a
// removed one does; the admin who receives them is told privately, in
// their own language, which rental lost its token and how to get a new
// line.
func TestTeam_LeaveRevokesAgentTokens(t *testing.T) {
	th := newTeamHub(t)
	contains(t, th.reply(ann, "/settings lang=zh"), "")
	contains(t, th.reply(cat, "/rent box4 autodl 4090 2.00/h"), "box4")
	contains(t, th.reply(ben, "/rent box6 autodl 4090 2.00/h"), "box6")
	cats := th.agentToken(cat, "box4")
	bens := th.agentToken(ben, "box6")
	th.now = th.now.Add(time.Hour)
	if code := th.beat(cats); code != http.StatusOK {
		t.Fatalf("heartbeat before leaving: %d", code)
	}
	th.now = th.now.Add(5 * time.Second)
	left, notice := th.removal(cat, "/team leave", ann)
	contains(t, left, "You left team crew", "box4's agent token was revoked with @cat's leaving")
	contains(t, notice, "@cat 已退出团队 crew", "box4", "box4 的代理令牌已随 @cat 退出团队而作废", "<code>/agent box4</code>")
	if code := th.beat(cats); code != http.StatusUnauthorized {
		t.Fatalf("cat's copy of box4's token 5 s after she left: %d, want 401", code)
	}
	if code := th.beat(bens); code != http.StatusOK {
		t.Fatalf("ben's token after cat left: %d, want 200", code)
	}
}

// TestTeam_RemoveRevokesTokensAnAdminIssued: cat, an admin, issued the
// agent token of ben's box3 (the install line went to her). When ann
// removes cat, that token is refused by the hub at once, box3 stays ben's,
// ann's reply names it, and ben is told privately how to get a new line;
// a token ben issued himself for his box5 keeps working.
func TestTeam_RemoveRevokesTokensAnAdminIssued(t *testing.T) {
	th := newTeamHub(t)
	contains(t, th.reply(ben, "/rent box3 autodl 4090 1.88/h"), "box3")
	contains(t, th.reply(ben, "/rent box5 autodl 4090 1.88/h"), "box5")
	catsCopy := th.agentToken(cat, "box3")
	bens := th.agentToken(ben, "box5")
	th.now = th.now.Add(time.Hour)
	for _, tok := range []string{catsCopy, bens} {
		if code := th.beat(tok); code != http.StatusOK {
			t.Fatalf("heartbeat before the removal: %d", code)
		}
	}

	th.now = th.now.Add(5 * time.Second)
	reply, notice := th.removal(ann, "/team remove @cat", ben, catsCopy, bens)
	contains(t, reply, "no longer in team crew", "box3's agent token was revoked with @cat's removal")
	contains(t, notice, "The agent token of box3 was revoked: @cat, who issued it, was removed from team crew", "/agent NAME")
	if strings.Contains(notice, "box5") {
		t.Errorf("ben's notice names box5, whose token he issued himself: %q", notice)
	}

	if code := th.beat(catsCopy); code != http.StatusUnauthorized {
		t.Fatalf("cat's copy of box3's token 5 s after her removal: %d, want 401", code)
	}
	if code := th.beat(bens); code != http.StatusOK {
		t.Fatalf("ben's own token of box5 after cat's removal: %d, want 200", code)
	}
	contains(t, th.reply(ben, "/status"), "box3")
	if code := th.beat(th.agentToken(ben, "box3")); code != http.StatusOK {
		t.Fatalf("box3's new token from ben's /agent: %d, want 200", code)
	}
}
