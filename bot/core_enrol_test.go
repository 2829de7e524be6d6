package bot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// newEnrolEnv is a core wired to a real hub's enrolment service over one
// SQLite file, as cmd/gpuledger wires them.
func newEnrolEnv(t *testing.T) *hubEnv {
	t.Helper()
	db := openStore(t)
	he := &hubEnv{}
	h, err := hub.New(hub.Config{Store: db, Now: func() time.Time { return he.now }})
	if err != nil {
		t.Fatal(err)
	}
	he.env = newEnv(t, bot.Config{Store: db, AllowedUsers: []int64{alice, bob}, AgentTokens: h.Tokens(), Enrolment: h.Enrolment(), PublicURL: "http://hub"})
	he.hub = h
	he.srv = httptest.NewServer(h.Handler())
	t.Cleanup(he.srv.Close)
	return he
}

var enrolRE = regexp.MustCompile(`token=(` + wire.EnrolTokenPrefix + `[A-Za-z0-9_-]+)`)

// enrol sends /agent and returns the enrolment token of its install line.
func (he *hubEnv) enrol(user int64) (tok, reply string) {
	he.t.Helper()
	reply = he.say(user, "/agent")
	m := enrolRE.FindStringSubmatch(reply)
	if m == nil {
		he.t.Fatalf("/agent: no enrolment token in %q", reply)
	}
	return m[1], reply
}

// announce posts an enrolment heartbeat and returns the HTTP status and
// the enrolment answer.
func (he *hubEnv) announce(tok, platform, id, gpu string) (int, *wire.EnrolmentAnswer) {
	he.t.Helper()
	he.seq++
	hb := wire.HeartbeatRequest{Version: wire.Version, Seq: he.seq, BootID: "b-" + id, Verdict: wire.VerdictBusy, Samples: 6, BusySamples: 6,
		WindowStart: he.now.Add(-30 * time.Second), WindowEnd: he.now, SentAt: he.now,
		Host:     wire.HostFacts{Hostname: "h-" + id, GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: gpu}}},
		Instance: &wire.InstanceFacts{Platform: platform, ID: id, BootedAt: he.now.Add(-5 * time.Minute)}}
	b, _ := json.Marshal(hb)
	req, _ := http.NewRequest(http.MethodPost, he.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		he.t.Fatal(err)
	}
	defer res.Body.Close()
	var resp wire.HeartbeatResponse
	json.NewDecoder(res.Body).Decode(&resp)
	return res.StatusCode, resp.Enrolment
}

// pendingID is the ID of the user's pending instance with platform ID id.
func (he *hubEnv) pendingID(user int64, id string) int64 {
	he.t.Helper()
	ins, err := he.db.PendingInstances(context.Background(), user)
	if err != nil {
		he.t.Fatal(err)
	}
	for _, in := range ins {
		if in.PlatformID == id {
			return in.ID
		}
	}
	he.t.Fatalf("no pending instance %s: %+v", id, ins)
	return 0
}

func TestCore_AgentEnrol(t *testing.T) {
	he := newEnrolEnv(t)
	tok1, reply := he.enrol(alice)
	for _, want := range []string{
		"<pre>curl -fsSL &#39;http://hub/agent/install.sh?token=" + tok1 + "&#39; | sh</pre>",
		"• AutoDL:", "• RunPod: the template's Container Start Command", "• Vast.ai: the instance's On-start Script",
		"• a VM with systemd", "• your Docker image", "docs/deploy.md",
		"Your valid enrolment tokens (1 of at most 3; /agent revoke revokes them all):\n1. issued 10:00 · last used never · 0 instances announced",
	} {
		if !strings.Contains(reply, want) {
			t.Errorf("/agent reply lacks %q:\n%s", want, reply)
		}
	}
	// The token works: an instance announced with it waits for the user.
	he.now = he.now.Add(time.Minute)
	if code, ans := he.announce(tok1, "runpod", "abc123", "NVIDIA A40"); code != http.StatusOK || ans == nil || ans.State != wire.EnrolWaiting {
		t.Fatalf("announce: %d %+v", code, ans)
	}
	// Each /agent makes a new token and keeps the older ones.
	he.now = he.now.Add(time.Minute)
	tok2, reply := he.enrol(alice)
	if tok2 == tok1 || !strings.Contains(reply, "1. issued 10:00 · last used 10:01 · 1 instances announced\n2. issued 10:02 · last used never · 0 instances announced") {
		t.Errorf("second /agent:\n%s", reply)
	}
	he.enrol(alice)
	he.now = he.now.Add(time.Minute)
	_, reply = he.enrol(alice)
	if !strings.Contains(reply, "Your oldest enrolment token (issued 10:00) was revoked: at most 3 are valid at once.") ||
		!strings.Contains(reply, "(3 of at most 3;") {
		t.Errorf("fourth /agent:\n%s", reply)
	}
	if code, _ := he.announce(tok1, "runpod", "abc123", "NVIDIA A40"); code != http.StatusUnauthorized {
		t.Errorf("the oldest token after the fourth /agent: %d", code)
	}
	if code, _ := he.announce(tok2, "runpod", "abc123", "NVIDIA A40"); code != http.StatusOK {
		t.Errorf("the second token after the fourth /agent: %d", code)
	}
	// A redelivered /agent issues nothing.
	u := he.update(alice, "/agent")
	he.handle(u)
	if out := he.handle(u); len(out) != 0 {
		t.Errorf("a redelivered /agent answered %+v", out)
	}
	toks, _ := he.db.EnrolTokens(context.Background(), alice)
	if len(toks) != 3 {
		t.Errorf("%d valid tokens, want 3", len(toks))
	}
	// /agent revoke revokes them all; the per-rental tokens stay.
	he.say(alice, "/rent box1 autodl 4090 1.88/h")
	rtok := he.agent("box1")
	if got := he.say(alice, "/agent revoke"); !strings.HasPrefix(got, "✓ 3 enrolment tokens revoked") {
		t.Errorf("/agent revoke: %q", got)
	}
	if got := he.say(alice, "/agent revoke"); !strings.Contains(got, "none to revoke") {
		t.Errorf("second /agent revoke: %q", got)
	}
	if code, _ := he.announce(tok2, "runpod", "abc123", "NVIDIA A40"); code != http.StatusUnauthorized {
		t.Errorf("a revoked token: %d", code)
	}
	if code := he.beat(rtok, wire.VerdictBusy); code != http.StatusOK {
		t.Errorf("box1's own token after /agent revoke: %d", code)
	}
}

func TestCore_AgentEnrol_Chinese(t *testing.T) {
	he := newEnrolEnv(t)
	he.say(alice, "/lang zh")
	_, reply := he.enrol(alice)
	if !strings.Contains(reply, "通用安装命令（只显示一次）") || !strings.Contains(reply, "1. 10:00 发放 · 最近使用 从未 · 已报到 0 个实例") {
		t.Errorf("/agent in Chinese:\n%s", reply)
	}
	if got := he.say(alice, "/agent 作废"); !strings.HasPrefix(got, "✓ 已作废 1 个注册令牌") {
		t.Errorf("/agent 作废: %q", got)
	}
}

func TestCore_AgentEnrol_Off(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	for _, cmd := range []string{"/agent", "/agent revoke", "/adopt 1 0.5"} {
		if got := e.say(alice, cmd); !strings.Contains(got, "agent hub is not running") {
			t.Errorf("%s without a hub: %q", cmd, got)
		}
	}
}

func TestCore_AgentEnrol_InGroup(t *testing.T) {
	he := newEnrolEnv(t)
	u := chat.Update{Key: "test:grp-agent", Kind: chat.KindText, UserID: alice, ChatID: -5, ChatType: chat.ChatGroup, Text: "/agent"}
	out := he.handle(u)
	var private []string
	for _, s := range out {
		if s.Out.ChatID == -5 && strings.Contains(s.Out.Text, "token=") {
			t.Errorf("the install line went to the group: %q", s.Out.Text)
		}
		if s.Out.ChatID == alice {
			private = append(private, s.Out.Text)
		}
	}
	if len(private) != 2 || !strings.Contains(private[1], "token="+wire.EnrolTokenPrefix) {
		t.Errorf("private replies %q", private)
	}
}

func TestCore_Adopt(t *testing.T) {
	he := newEnrolEnv(t)
	tok, _ := he.enrol(alice)
	he.now = he.now.Add(10 * time.Minute)
	he.announce(tok, "runpod", "abc123", "NVIDIA A40")
	id := he.pendingID(alice, "abc123")
	sid := strconv.FormatInt(id, 10)
	got := he.say(alice, "/adopt "+sid+" $0.79")
	if !strings.Contains(got, "✓ Logged as <b>runpod-abc123</b> from 10:05 at $0.79/h. /undo takes it back.") {
		t.Fatalf("/adopt: %q", got)
	}
	var r *ledger.Rental
	for _, x := range he.book(alice).Rentals {
		if x.Name == "runpod-abc123" {
			r = x
		}
	}
	if r == nil || r.Price.Amount.String() != "0.79" || r.Currency != ledger.USD || r.GPUCount != 1 || r.Platform != "runpod" {
		t.Fatalf("rental %+v", r)
	}
	if got := he.say(alice, "/adopt "+sid); !strings.Contains(got, "instance "+sid+" is already logged as runpod-abc123") {
		t.Errorf("second /adopt: %q", got)
	}
	if got := he.say(alice, "/adopt 999 0.5"); !strings.Contains(got, "you have no announced instance 999") {
		t.Errorf("/adopt of an unknown ID: %q", got)
	}
	// Another user cannot adopt alice's instance. (/undo asks: the
	// message before it was refused.)
	he.undoConfirmed(alice, "/undo")
	if got := he.say(bob, "/adopt "+sid+" 0.5"); !strings.Contains(got, "you have no announced instance "+sid) {
		t.Errorf("bob's /adopt of alice's instance: %q", got)
	}
	// No price: the price of the last rental on that platform and GPU; a
	// price without a currency takes the platform's.
	he.say(alice, "/rent old1 runpod A40 $0.81/h")
	he.announce(tok, "runpod", "abc123", "NVIDIA A40")
	if got := he.say(alice, "/adopt "+sid); !strings.Contains(got, "at $0.81/h") {
		t.Errorf("/adopt with the offered price: %q", got)
	}
	he.announce(tok, "autodl", "uuid-9", "NVIDIA GeForce RTX 4090")
	if got := he.say(alice, "/adopt "+strconv.FormatInt(he.pendingID(alice, "uuid-9"), 10)+" 1.5"); !strings.Contains(got, "at ¥1.50/h") {
		t.Errorf("/adopt with a bare price on AutoDL: %q", got)
	}
}

// TestCore_UndoAdopt_Line: without a scheduler to send the card again,
// /undo of an /adopt still says the instance waits and gives the /adopt
// line with its number; an instance ignored before it was logged is
// ignored again, and the reply says so.
func TestCore_UndoAdopt_Line(t *testing.T) {
	he := newEnrolEnv(t)
	tok, _ := he.enrol(alice)
	he.announce(tok, "runpod", "abc123", "NVIDIA A40")
	sid := strconv.FormatInt(he.pendingID(alice, "abc123"), 10)
	he.say(alice, "/adopt "+sid+" $0.79")
	got := he.say(alice, "/undo")
	if !strings.HasPrefix(got, "↩ undone: instance logged runpod-abc123") ||
		!strings.Contains(got, "\nInstance "+sid+" waits for an answer again: <code>/adopt "+sid+" PRICE</code> logs it, e.g. <code>/adopt "+sid+" 0.85</code>.") {
		t.Errorf("/undo of /adopt: %q", got)
	}
	if r := he.book(alice).Rental("runpod-abc123"); r != nil {
		t.Fatalf("the rental stayed after /undo: %+v", r)
	}
	// Not mine, then /adopt anyway, then /undo: ignored again.
	he.say(alice, "/lang zh")
	if _, err := he.hub.Enrolment().Ignore(context.Background(), ledger.Action{UserID: alice, At: he.now}, he.pendingID(alice, "abc123")); err != nil {
		t.Fatal(err)
	}
	he.say(alice, "/adopt "+sid+" $0.79")
	if got := he.say(alice, "/undo"); !strings.Contains(got, "实例 "+sid+" 恢复为已忽略（记账之前就是如此）；仍可用 <code>/adopt "+sid+" 价格</code> 记账。") {
		t.Errorf("/undo of /adopt of an ignored instance: %q", got)
	}
	if got := he.undoConfirmed(alice, "/undo"); !strings.Contains(got, "实例 "+sid+" 重新等待你的答复：发送 <code>/adopt "+sid+" 价格</code> 记账") {
		t.Errorf("/undo of Not mine: %q", got)
	}
	// Undoing something else says nothing of instances.
	he.say(alice, "/rent box1 autodl 4090 1.88/h")
	if got := he.say(alice, "/undo"); strings.Contains(got, "/adopt") {
		t.Errorf("/undo of a rent: %q", got)
	}
}

// TestCore_AgentEnrol_Times: /agent's list of enrolment tokens reads its
// times as the bot's other replies do: to the minute, with the day when
// not today; to the second only where two tokens would read alike.
func TestCore_AgentEnrol_Times(t *testing.T) {
	he := newEnrolEnv(t)
	he.now = he.now.Add(28 * time.Second) // 10:00:28
	tok1, _ := he.enrol(alice)
	he.now = he.now.Add(time.Minute) // 10:01:28
	he.announce(tok1, "runpod", "abc123", "NVIDIA A40")
	he.now = he.now.Add(23 * time.Hour) // 09:01:28 the next day
	if _, reply := he.enrol(alice); !strings.Contains(reply, "\n1. issued yesterday 10:00 · last used yesterday 10:01 · 1 instances announced\n2. issued 09:01 · last used never") {
		t.Errorf("/agent a day later:\n%s", reply)
	}
	he.now = he.now.Add(17 * time.Second) // 09:01:45, the same minute as the second
	if _, reply := he.enrol(alice); !strings.Contains(reply, "\n2. issued 09:01:28 · last used never · 0 instances announced\n3. issued 09:01:45 · last used never") {
		t.Errorf("two tokens in one minute:\n%s", reply)
	}
	he.now = he.now.Add(time.Minute)
	if _, reply := he.enrol(alice); !strings.Contains(reply, "Your oldest enrolment token (issued yesterday 10:00) was revoked") {
		t.Errorf("fourth /agent:\n%s", reply)
	}
	he.say(alice, "/lang zh")
	he.now = he.now.Add(time.Minute)
	if _, reply := he.enrol(alice); !strings.Contains(reply, "你最早的注册令牌（09:01:28 发放）已作废") || !strings.Contains(reply, "\n1. 09:01:45 发放") {
		t.Errorf("/agent in Chinese:\n%s", reply)
	}
}
