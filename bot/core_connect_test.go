package bot_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/ledger"
)

// connEnv is a core with platform connections over the fake platforms,
// answering through a Sender that deletes.
type connEnv struct {
	*env
	conns *testConns
	snd   *delSender
	msgID int
}

func newConnEnv(t *testing.T) *connEnv {
	t.Helper()
	db := openStore(t)
	conns := newTestConns(t, db)
	e := newEnv(t, bot.Config{Store: db, AllowedUsers: []int64{alice, bob}, Connections: conns})
	return &connEnv{env: e, conns: conns, snd: &delSender{}}
}

// send handles text from user in chatID (== user: private) as message
// msgID, and returns the replies' texts joined.
func (e *connEnv) send(user, chatID int64, text string) string {
	e.t.Helper()
	e.msgID++
	u := e.update(user, text)
	u.ChatID, u.MessageID = chatID, e.msgID
	if chatID != user {
		u.ChatType = chat.ChatGroup
	}
	if err := e.core.Handle(context.Background(), u, e.snd); err != nil {
		e.t.Fatalf("Handle(%q): %v", text, err)
	}
	var b strings.Builder
	for _, s := range e.snd.Take() {
		b.WriteString(s.Out.Text + s.Callback + "\n")
	}
	return b.String()
}

func (e *connEnv) connectors(user int64) []ledger.Connector {
	e.t.Helper()
	cs, err := e.db.Connectors(context.Background(), user)
	if err != nil {
		e.t.Fatal(err)
	}
	return cs
}

func noKey(t *testing.T, where, s string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if strings.Contains(s, k) || strings.Contains(s, k[:len(k)-4]) {
			t.Errorf("%s shows the key: %q", where, s)
		}
	}
}

func TestCore_Connect(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := newConnEnv(t)
		got := e.send(alice, alice, "/connect runpod "+runpodKey)
		contains(t, got, "✓", "RunPod", "…WXYZ", "deleted your message")
		noKey(t, "the reply", got, runpodKey)
		if d := e.snd.Deleted(); len(d) != 1 || d[0] != e.msgID {
			t.Errorf("deleted %v, want [%d]", d, e.msgID)
		}
		cs := e.connectors(alice)
		if len(cs) != 1 || cs[0].Platform != "runpod" || cs[0].Hint != "WXYZ" {
			t.Fatalf("connectors %+v", cs)
		}
		if key, err := e.conns.vault.Open(cs[0].KeyEnc, vault.ConnectorAD(alice, "runpod")); err != nil || string(key) != runpodKey {
			t.Errorf("the stored key opens to %q, %v", key, err)
		}
		noKey(t, "the log", e.logs.String(), runpodKey)
		// Chinese, another platform, the other word order.
		contains(t, e.say(alice, "/settings lang=zh"), "✓")
		got = e.send(alice, alice, "/连接 "+vastKey+" vast.ai")
		contains(t, got, "✓ 已连接 Vast.ai", "…6789", "已删除")
		noKey(t, "the reply", got, vastKey)
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		e := newConnEnv(t)
		bad := "rpa_WRONGKEY0123456789abcdefQQQQ"
		got := e.send(alice, alice, "/connect runpod "+bad)
		contains(t, got, "✗", "RunPod rejected this key", "nothing was stored", "Settings → API Keys", "Read/Write", "deleted your message")
		noKey(t, "the reply", got+e.logs.String(), bad)
		if cs := e.connectors(alice); len(cs) != 0 {
			t.Errorf("a rejected key was stored: %+v", cs)
		}
	})
	t.Run("ErrUnavailable", func(t *testing.T) {
		e := newConnEnv(t)
		for range 5 {
			e.conns.vast.Fail("GET /api/v0/users/current", vastfake.Status(503, "text/html", "<html>down</html>"))
		}
		got := e.send(alice, alice, "/connect vast "+vastKey)
		contains(t, got, "✗", "Vast.ai did not answer", "nothing was stored", "Try again later", "deleted your message")
		if cs := e.connectors(alice); len(cs) != 0 {
			t.Errorf("stored on a platform that was down: %+v", cs)
		}
	})
	t.Run("RateLimited", func(t *testing.T) {
		e := newConnEnv(t)
		for range 5 {
			e.conns.vast.Fail("GET /api/v0/users/current", vastfake.TooFrequent("7"))
		}
		got := e.send(alice, alice, "/connect vast "+vastKey)
		contains(t, got, "✗", "limiting requests", "nothing was stored", "Try again in")
		if cs := e.connectors(alice); len(cs) != 0 {
			t.Errorf("stored while rate limited: %+v", cs)
		}
	})
	t.Run("BadAnswer", func(t *testing.T) {
		e := newConnEnv(t)
		for range 5 {
			e.conns.vast.Fail("GET /api/v0/users/current", vastfake.Status(200, "text/html", "<html>login</html>"))
		}
		contains(t, e.send(alice, alice, "/connect vast "+vastKey), "✗", "could not be read", "nothing was stored")
	})
	t.Run("EINVALID", func(t *testing.T) {
		e := newConnEnv(t)
		// lambda passes the parser; this Connections has no Lambda client.
		got := e.send(alice, alice, "/connect lambda secret_abcdefghijklmnop0123")
		contains(t, got, "✗", "Nothing was stored", "runpod, vast, lambda, autodl", "deleted your message")
	})
	t.Run("UsageErrors", func(t *testing.T) {
		e := newConnEnv(t)
		for _, tc := range []struct{ in, want string }{
			{"/connect " + runpodKey, "/connect PLATFORM KEY"},
			{"/connect foo " + runpodKey, "runpod, vast, lambda, autodl"},
			{"/connect runpod " + runpodKey + " more", "one key"},
			{"/connect runpod abc", "Copy the whole key"},
		} {
			got := e.send(alice, alice, tc.in)
			contains(t, got, "✗", tc.want, "deleted your message")
			noKey(t, "the reply to "+tc.in, got, runpodKey)
		}
		contains(t, e.send(alice, alice, "/connect runpod"), "✗", "/connect runpod KEY")
		if d := e.snd.Deleted(); len(d) != 4 {
			t.Errorf("deleted %v: every message with a possible key, not the one without", d)
		}
		if e.conns.checked != 0 || len(e.connectors(alice)) != 0 {
			t.Errorf("a malformed /connect reached the platform (%d) or the store", e.conns.checked)
		}
	})
	t.Run("Group", func(t *testing.T) {
		e := newConnEnv(t)
		got := e.send(alice, -500, "/connect runpod "+runpodKey)
		contains(t, got, "this group saw your message", "I deleted it", "Nothing was stored", "Revoke that key on RunPod", "private chat", "/connect runpod KEY")
		noKey(t, "the group reply", got, runpodKey)
		if d := e.snd.Deleted(); len(d) != 1 {
			t.Errorf("deleted %v", d)
		}
		if e.conns.checked != 0 || len(e.connectors(alice)) != 0 {
			t.Error("a key sent in a group was checked or stored")
		}
		e.snd.fail = errors.New("telegram: Bad Request: message can't be deleted")
		contains(t, e.send(alice, -500, "/connect runpod "+runpodKey), "could not delete it", "delete it yourself")
	})
	t.Run("DeleteFailed", func(t *testing.T) {
		e := newConnEnv(t)
		e.snd.fail = errors.New("telegram: Bad Request: message can't be deleted")
		got := e.send(alice, alice, "/connect runpod "+runpodKey)
		contains(t, got, "✓", "could not delete your message", "delete it yourself now")
		noKey(t, "the log", e.logs.String(), runpodKey)
	})
	t.Run("Console", func(t *testing.T) {
		e := newConnEnv(t)
		out := e.handle(e.update(alice, "/connect runpod "+runpodKey)) // a Sender without Deleter, no message ID
		if len(out) != 1 {
			t.Fatalf("replies %+v", out)
		}
		contains(t, out[0].Out.Text, "✓", "nothing of your message was kept")
	})
	t.Run("Off", func(t *testing.T) {
		e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
		snd := &delSender{}
		u := e.update(alice, "/connect runpod "+runpodKey)
		u.MessageID = 9
		if err := e.core.Handle(context.Background(), u, snd); err != nil {
			t.Fatal(err)
		}
		out := snd.Take()
		if len(out) != 1 {
			t.Fatalf("replies %+v", out)
		}
		contains(t, out[0].Out.Text, "connections are off", "GPULEDGER_SECRET", "deleted your message")
		if d := snd.Deleted(); len(d) != 1 || d[0] != 9 {
			t.Errorf("deleted %v", d)
		}
		for _, cmd := range []string{"/connect", "/disconnect runpod", "/reconcile"} {
			contains(t, e.say(alice, cmd), "connections are off")
		}
	})
	t.Run("InLines", func(t *testing.T) {
		e := newConnEnv(t)
		got := e.send(alice, alice, "/rent box1 runpod 4090 0.69/h\n/connect runpod "+runpodKey)
		contains(t, got, "✗", "alone", "deleted your message")
		if len(e.book(alice).Rentals) != 0 || len(e.connectors(alice)) != 0 {
			t.Error("a multi-line message holding a key was run")
		}
	})
}

func TestCore_ConnectList(t *testing.T) {
	e := newConnEnv(t)
	got := e.send(alice, alice, "/connect")
	contains(t, got, "Platform connections", "No platform is connected", "RunPod", "runpod.io/console/user/settings",
		"cloud.vast.ai/manage-keys", "cloud.lambda.ai/api-keys", "开发者Token", "/connect autodl KEY")
	e.send(alice, alice, "/connect runpod "+runpodKey)
	e.send(alice, alice, "/connect vast "+vastKey)
	ctx := context.Background()
	e.now = t0.Add(time.Hour)
	if err := e.db.MarkSynced(ctx, alice, "runpod", e.now, "runpod: the platform is unavailable: 503"); err != nil {
		t.Fatal(err)
	}
	cs := e.connectors(alice)
	for _, c := range cs {
		if c.Platform == "vast" {
			if _, err := e.db.MarkRejected(ctx, alice, "vast", c.KeyEnc, t0.Add(30*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
	}
	got = e.send(alice, alice, "/connect")
	contains(t, got, "✓ <b>RunPod</b>", "…WXYZ", "last sync 11:00", "last sync failed: runpod: the platform is unavailable",
		"⚠ <b>Vast.ai</b>", "rejected by the platform since 10:30", "/connect vast KEY", "Not connected:", "Lambda", "AutoDL")
	if strings.Contains(got, "cloud.vast.ai/manage-keys") {
		t.Error("a connected platform is listed as not connected")
	}
	noKey(t, "the listing", got, runpodKey, vastKey)
	if d := e.snd.Deleted(); len(d) != 2 {
		t.Errorf("the listing deleted a message: %v", d)
	}
	// In a group the listing goes to the private chat.
	e.msgID++
	u := e.update(alice, "/connect")
	u.ChatID, u.ChatType, u.MessageID = -500, chat.ChatGroup, e.msgID
	if err := e.core.Handle(ctx, u, e.snd); err != nil {
		t.Fatal(err)
	}
	var toAlice, toGroup int
	for _, s := range e.snd.Take() {
		switch s.Out.ChatID {
		case alice:
			toAlice++
			contains(t, s.Out.Text, "Platform connections")
		case -500:
			toGroup++
			if strings.Contains(s.Out.Text, "WXYZ") {
				t.Errorf("the group sees the listing: %q", s.Out.Text)
			}
		}
	}
	if toAlice != 1 || toGroup != 1 {
		t.Errorf("%d replies to alice, %d to the group; want 1 each", toAlice, toGroup)
	}
}

func TestCore_Disconnect(t *testing.T) {
	e := newConnEnv(t)
	e.send(alice, alice, "/connect runpod "+runpodKey)
	contains(t, e.send(alice, alice, "/rent box1 runpod 4090 0.69/h"), "✓")
	contains(t, e.send(alice, alice, "/disconnect runpod"), "✓ Disconnected RunPod", "nothing was stopped or released", "/connect runpod KEY")
	if cs := e.connectors(alice); len(cs) != 0 {
		t.Errorf("still connected: %+v", cs)
	}
	if st := e.book(alice).Rentals[0].State(); st != ledger.Running {
		t.Errorf("disconnecting changed the rental: %s", st)
	}
	contains(t, e.send(alice, alice, "/disconnect runpod"), "✗", "RunPod is not connected")
	contains(t, e.send(alice, alice, "/disconnect"), "✗", "/disconnect PLATFORM", "runpod, vast, lambda, autodl")
	contains(t, e.send(alice, alice, "/disconnect foo"), "✗", "&#34;foo&#34;", "runpod, vast")
	contains(t, e.send(alice, -500, "/disconnect runpod"), "private")
}

func TestCore_Reconcile(t *testing.T) {
	e := newConnEnv(t)
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	usd := func(m int64) ledger.Money { return ledger.Money{Currency: ledger.USD, Minor: m} }
	e.conns.recon = []ledger.Reconciliation{{
		Platform: "runpod", From: from, To: from.AddDate(0, 1, 0), Source: "billing",
		LedgerTotal: usd(1000), PlatformTotal: usd(1200), DriftTotal: usd(200), Cause: ledger.CausePrice,
		Lines: []ledger.ReconcileLine{{RentalID: 1, Name: "box1", PlatformID: "abc123", Ledger: usd(1000), Platform: usd(1200), PlatformOK: true, Drift: usd(200), Cause: ledger.CausePrice}},
	}}
	got := e.send(alice, alice, "/reconcile")
	contains(t, got, "RunPod", "ledger $10.00", "platform $12.00", "drift +$2.00", "price", "box1", "abc123")
	sh, _ := time.LoadLocation("Asia/Shanghai")
	want := [2]time.Time{time.Date(2026, 11, 1, 0, 0, 0, 0, sh), time.Date(2026, 12, 1, 0, 0, 0, 0, sh)}
	if len(e.conns.asked) != 1 || !e.conns.asked[0][0].Equal(want[0]) || !e.conns.asked[0][1].Equal(want[1]) {
		t.Errorf("Reconcile asked for %v, want the month in the user's zone %v", e.conns.asked, want)
	}
	e.send(alice, alice, "/reconcile 2026-10")
	if got := e.conns.asked[1][0]; !got.Equal(time.Date(2026, 10, 1, 0, 0, 0, 0, sh)) {
		t.Errorf("/reconcile 2026-10 asked from %s", got)
	}
	contains(t, e.send(alice, alice, "/reconcile 2027-01"), "✗", "has not begun", "2026-11")
	contains(t, e.send(alice, alice, "/reconcile november"), "✗", "not a month", "YYYY-MM")
	if len(e.conns.asked) != 2 {
		t.Errorf("a bad month reached Reconcile: %v", e.conns.asked)
	}
}

func TestCore_ReleaseLive(t *testing.T) {
	e := newConnEnv(t)
	contains(t, e.send(alice, alice, "/rent box1 runpod 4090 0.69/h"), "✓")
	x := e.book(alice).Rentals[0]
	e.conns.live[x.ID] = "runpod"
	e.now = t0.Add(2 * time.Hour)
	e.msgID++
	u := e.update(alice, "/release box1")
	u.MessageID = e.msgID
	if err := e.core.Handle(context.Background(), u, e.snd); err != nil {
		t.Fatal(err)
	}
	out := e.snd.Take()
	if len(out) != 1 || len(out[0].Out.Buttons) != 1 || len(out[0].Out.Buttons[0]) != 2 {
		t.Fatalf("want one card with two buttons, got %+v", out)
	}
	card := out[0].Out
	contains(t, card.Text, "box1", "still runs on RunPod")
	term, rec := card.Buttons[0][0], card.Buttons[0][1]
	if term.Text != "Terminate on RunPod" || !strings.HasPrefix(term.Data, "pterm:"+itoa(x.ID)+":") {
		t.Errorf("terminate button %+v", term)
	}
	if rec.Text != "Only record it" || !strings.HasPrefix(rec.Data, "plog:") {
		t.Errorf("record button %+v", rec)
	}
	if st := e.book(alice).Rentals[0].State(); st != ledger.Running {
		t.Fatalf("the card released the rental: %s", st)
	}
	// A press later records the release at the /release's time.
	e.now = t0.Add(3 * time.Hour)
	press := chat.Update{Key: "test:press:1", Kind: chat.KindCallback, UserID: alice, ChatID: alice, ChatType: chat.ChatPrivate,
		CallbackID: "cb1", CallbackData: rec.Data, MessageID: 77}
	if err := e.core.Handle(context.Background(), press, e.snd); err != nil {
		t.Fatal(err)
	}
	out = e.snd.Take()
	var edited bool
	for _, s := range out {
		if s.Out.EditMessageID == 77 {
			edited = true
			contains(t, s.Out.Text, "released", "box1")
		}
	}
	if !edited {
		t.Errorf("the card was not edited into the release: %+v", out)
	}
	r := e.book(alice).Rentals[0]
	if r.State() != ledger.Released || !r.Events[len(r.Events)-1].At.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("after Only record it: state %s, last event %+v", r.State(), r.Events[len(r.Events)-1])
	}
	// The same press again changes nothing; bob's press of alice's card neither.
	if err := e.core.Handle(context.Background(), press, e.snd); err != nil {
		t.Fatal(err)
	}
	bobPress := press
	bobPress.Key, bobPress.UserID = "test:press:2", bob
	if err := e.core.Handle(context.Background(), bobPress, e.snd); err != nil {
		t.Fatal(err)
	}
	if n := len(e.book(alice).Rentals[0].Events); n != len(r.Events) {
		t.Errorf("a repeated or foreign press changed the rental: %d events, want %d", n, len(r.Events))
	}
	// A rental not live on its platform is released as before.
	contains(t, e.send(alice, alice, "/rent box2 runpod 4090 0.69/h"), "✓")
	contains(t, e.send(alice, alice, "/release box2"), "released")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestCore_ConnectForwardedOrEdited(t *testing.T) {
	e := newConnEnv(t)
	e.msgID++
	u := e.update(alice, "/connect runpod "+runpodKey)
	u.Forwarded, u.MessageID = true, e.msgID
	if err := e.core.Handle(context.Background(), u, e.snd); err != nil {
		t.Fatal(err)
	}
	out := e.snd.Take()
	if len(out) != 1 {
		t.Fatalf("replies %+v", out)
	}
	contains(t, out[0].Out.Text, "forwarded", "not run", "deleted your message")
	u = e.update(alice, "/connect runpod "+runpodKey)
	u.Edited, u.Kind, u.MessageID = true, chat.KindOther, 99
	if err := e.core.Handle(context.Background(), u, e.snd); err != nil {
		t.Fatal(err)
	}
	if d := e.snd.Deleted(); len(d) != 2 || d[1] != 99 {
		t.Errorf("deleted %v, want the forwarded and the edited message", d)
	}
	if e.conns.checked != 0 || len(e.connectors(alice)) != 0 {
		t.Error("a forwarded or edited /connect was run")
	}
}

func TestCore_ConnectTypo(t *testing.T) {
	e := newConnEnv(t)
	got := e.send(alice, alice, "/conect runpod "+runpodKey)
	contains(t, got, "/connect", "deleted your message")
	noKey(t, "the reply", got, runpodKey)
	if d := e.snd.Deleted(); len(d) != 1 {
		t.Errorf("deleted %v, want the mistyped /connect", d)
	}
	e.send(alice, alice, "/conect")
	if d := e.snd.Deleted(); len(d) != 1 {
		t.Errorf("a bare mistyped command was deleted: %v", d)
	}
}

// TestCore_ConnectListChinese: a Chinese user's /connect says in Chinese
// where each platform's key is made, around the page its spec names
// (connector.Spec.KeyPage) where it has one, and no placeholder is left.
func TestCore_ConnectListChinese(t *testing.T) {
	e := newConnEnv(t)
	contains(t, e.say(alice, "/settings lang=zh"), "✓")
	got := e.send(alice, alice, "/connect")
	contains(t, got, "未连接", "在 RunPod 控制台 Settings → API Keys（runpod.io/console/user/settings）创建 key",
		"在 Vast.ai 的 Keys 页面（cloud.vast.ai/manage-keys）创建", "在 Lambda 的 API keys 页面（cloud.lambda.ai/api-keys）创建",
		"设置 → 开发者Token", "/connect autodl KEY")
	if strings.Contains(got, "%!") || strings.Contains(got, "%[") {
		t.Errorf("a placeholder is left in the listing: %s", got)
	}
}
