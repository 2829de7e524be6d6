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
	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// whyEnv is the core, the agent hub and the scheduler over one SQLite
// file, wired as the server wires them, with one clock.
type whyEnv struct {
	*env
	hub   *hub.Hub
	s     *scheduler.Scheduler
	srv   *httptest.Server
	token string
	seq   uint64
	rid   int64
	idle  time.Time // start of the idle streak the beats report
	last  time.Time // when beatIdle last ran
	order string    // the automatic order's id
}

func newWhyEnv(t *testing.T, lang string) *whyEnv {
	t.Helper()
	ctx := context.Background()
	db := openStore(t)
	w := &whyEnv{}
	bus := events.New(events.Config{})
	h, err := hub.New(hub.Config{Store: db, Now: func() time.Time { return w.now }, Events: bus})
	if err != nil {
		t.Fatal(err)
	}
	w.hub = h
	btn := testButtons()
	w.env = newEnv(t, bot.Config{Store: db, AllowedUsers: []int64{alice}, AgentTokens: h.Tokens(), PublicURL: "http://hub", Buttons: btn})
	w.s, err = scheduler.New(scheduler.Config{Events: bus, Store: db, Hub: h, Sender: &testkit.Sender{}, Buttons: btn,
		Now: func() time.Time { return w.now }, Tick: 30 * time.Second, NoChart: true})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = httptest.NewServer(h.Handler())
	t.Cleanup(w.srv.Close)
	if lang != "en" {
		w.say(alice, "/settings lang="+lang)
	}
	w.say(alice, "/rent box1 autodl 4090 1.88/h")
	w.rid = w.book(alice).Rentals[0].ID
	m := tokenRE.FindStringSubmatch(w.say(alice, "/agent box1"))
	if m == nil {
		t.Fatal("/agent: no token")
	}
	w.token = m[1]
	w.say(alice, "/autorelease box1 stop after 30m")
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	return w
}

// beatIdle reports the host idle since w.idle up to now, as an agent
// sends what it queued: windows of at most 10 minutes, each with the
// streak so far, seeing an A100 where a 4090 was logged.
func (w *whyEnv) beatIdle() {
	w.t.Helper()
	ws := w.idle
	if w.last.After(ws) {
		ws = w.last
	}
	w.last = w.now
	for {
		we := ws.Add(10 * time.Minute)
		if we.After(w.now) {
			we = w.now
		}
		w.seq++
		hb := wire.HeartbeatRequest{Version: wire.Version, Seq: w.seq, BootID: "b1", Verdict: wire.VerdictIdle, Samples: 6, IdleSamples: 6,
			IdleSeconds: int64(we.Sub(w.idle) / time.Second), WindowStart: ws, WindowEnd: we, SentAt: w.now, CanRelease: true,
			Host: wire.HostFacts{GPUSource: "nvml", GPUs: []wire.GPUFact{{Name: "NVIDIA A100-SXM4-80GB"}}}}
		b, _ := json.Marshal(hb)
		req, _ := http.NewRequest(http.MethodPost, w.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+w.token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			w.t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			w.t.Fatalf("heartbeat: %d", res.StatusCode)
		}
		if !we.Before(w.now) {
			break
		}
		ws = we
	}
	w.s.DrainEvents(context.Background())
}

func (w *whyEnv) tick() {
	w.t.Helper()
	if err := w.s.Checks(context.Background()); err != nil {
		w.t.Fatalf("Checks: %v", err)
	}
}

// live runs box1 through an idle warning, the grace period, an automatic
// stop order, a Keep press, a GPU mismatch and a silent agent.
func (w *whyEnv) live() {
	w.t.Helper()
	w.idle = t0.Add(25 * time.Minute) // 10:25 in Shanghai
	w.now = t0.Add(time.Hour)
	w.beatIdle()
	w.tick() // the idle warning
	w.now = w.now.Add(5 * time.Minute)
	w.beatIdle()
	w.tick() // held: grace period
	w.now = w.now.Add(30 * time.Minute)
	w.beatIdle()
	w.tick() // the automatic stop
	o, ok := w.hub.OpenOrder(w.rid)
	if !ok || o.Origin != ledger.OriginAuto {
		ds, _ := w.db.Decisions(context.Background(), w.rid, 20)
		w.t.Fatalf("no automatic order: %+v %v\n%+v", o, ok, ds)
	}
	w.order = o.ID
	if _, err := w.s.Keep(context.Background(), alice, w.rid, 0); err != nil {
		w.t.Fatal(err)
	}
	w.now = w.now.Add(20 * time.Minute) // nothing heard
	w.tick()
	w.s.DrainEvents(context.Background()) // the order's expiry
}

// latin finds English words of three letters or more.
var latin = regexp.MustCompile(`[A-Za-z]{3,}`)

// TestCore_WhyInChinese: a Chinese user's /why after an idle warning, a
// hold, an automatic order, a Keep press, a GPU mismatch and a
// silent-agent alert shows no English words, with every clock time in the
// zone the user has when reading it.
func TestCore_WhyInChinese(t *testing.T) {
	w := newWhyEnv(t, "zh")
	w.live()
	why := w.say(alice, "/why box1")
	// What may stay Latin: names, commands, settings, the GPU models and
	// the order id.
	allowed := regexp.MustCompile(`<[^>]*>|/\w+|box1|wait_for=[a-z,]*|NVIDIA A100-SXM4-80GB|RTX 4090|ssh,jupyter,vscode`)
	plain := strings.ReplaceAll(why, w.order, "")
	plain = allowed.ReplaceAllString(plain, "")
	if ws := latin.FindAllString(plain, -1); len(ws) > 0 {
		t.Errorf("English %q in the Chinese /why:\n%s", ws, why)
	}
	contains(t, why, "已发出空闲提醒", "自 10:25 起空闲", "宽限期", "已下达自动关机指令", "按下了“保留”", "空闲卡片",
		"显卡与租用记录不符", "代理失联提醒",
		"NVIDIA A100-SXM4-80GB", "自动关机", "关机指令 "+w.order+"：已过期", "代理没有按时取走指令")

	// The same log in the zone the user has now.
	w.say(alice, "/settings tz=Europe/London")
	why = w.say(alice, "/why box1")
	contains(t, why, "自 02:25 起空闲")
	if strings.Contains(why, "10:25") {
		t.Errorf("/why after tz=Europe/London still shows Shanghai times:\n%s", why)
	}
}

// TestCore_WhyInEnglish: the same log in English reads as it always did.
func TestCore_WhyInEnglish(t *testing.T) {
	w := newWhyEnv(t, "en")
	w.live()
	why := w.say(alice, "/why box1")
	contains(t, why, "idle warning shown", "since 10:25", "spent idle, policy stop", "automatic action held back",
		"grace period: warned 11:00, acting not before 11:30", "automatic stop ordered (", "idle 1h10m, warned 35m ago",
		"nobody reported connected, policy stop after 30m", "Keep pressed", "idle card", "GPU facts differ from the rental",
		"the agent sees NVIDIA A100-SXM4-80GB, you logged RTX 4090", "silent-agent alert", "no release is ever taken on silence",
		"stop order "+w.order+": expired", "automatic stop after 30m of warning")
}
