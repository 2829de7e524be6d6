package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// counting is the real store, counting the announcements written.
type counting struct {
	hub.Store
	mu        sync.Mutex
	announces int
}

func (c *counting) Announce(ctx context.Context, in ledger.Instance) (ledger.Instance, bool, error) {
	c.mu.Lock()
	c.announces++
	c.mu.Unlock()
	return c.Store.Announce(ctx, in)
}

func (c *counting) n() int { c.mu.Lock(); defer c.mu.Unlock(); return c.announces }

// enrolEnv is a hub on a real database with an enrolment token of user 1.
type enrolEnv struct {
	*env
	store *counting
	enrol string
}

func newEnrolEnv(t *testing.T) *enrolEnv {
	t.Helper()
	e := &enrolEnv{env: newEnv(t, hub.Config{})}
	e.store = &counting{Store: e.db}
	e.restart()
	tok, revoked, err := e.hub.Enrolment().Issue(context.Background(), 1)
	if err != nil || revoked != nil {
		t.Fatalf("Issue = %v, %v", revoked, err)
	}
	e.enrol = tok
	return e
}

// restart replaces the hub by a new one on the same database, as a
// restarted server does (the old one flushed, as Run does when it ends).
func (e *enrolEnv) restart() {
	e.t.Helper()
	ctx := context.Background()
	if err := e.hub.Flush(ctx); err != nil {
		e.t.Fatal(err)
	}
	h, err := hub.New(hub.Config{Store: e.store, Now: e.clk.Now, Events: e.rec})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := h.Load(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.hub = h
	e.srv.Close()
	e.srv = httptest.NewServer(h.Handler())
	e.t.Cleanup(e.srv.Close)
}

// facts is a heartbeat from RunPod pod id, booted at boot, sent now.
func (e *enrolEnv) facts(id string, boot time.Time) wire.HeartbeatRequest {
	h := hb(wire.VerdictBusy, 0)
	now := e.clk.Now()
	h.SentAt, h.WindowStart, h.WindowEnd = now, now.Add(-30*time.Second), now
	h.Host.Hostname = "host-" + id
	h.Instance = &wire.InstanceFacts{Platform: "runpod", PlatformSource: "env RUNPOD_POD_ID", ID: id, BootedAt: boot}
	return h
}

// send posts a heartbeat and returns the status, the enrolment answer
// (on 200) and the error text (otherwise).
func (e *enrolEnv) send(token string, h wire.HeartbeatRequest) (int, wire.HeartbeatResponse, string) {
	e.t.Helper()
	b, _ := json.Marshal(h)
	return e.sendRaw(token, b)
}

func (e *enrolEnv) sendRaw(token string, b []byte) (int, wire.HeartbeatResponse, string) {
	e.t.Helper()
	code, body := e.post(wire.PathHeartbeat, token, b)
	var resp wire.HeartbeatResponse
	if code != http.StatusOK {
		var er struct{ Error string }
		json.Unmarshal(body, &er)
		return code, resp, er.Error
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		e.t.Fatalf("response %s: %v", body, err)
	}
	return code, resp, ""
}

// answer sends an enrolment heartbeat that must be answered 200.
func (e *enrolEnv) answer(h wire.HeartbeatRequest) wire.EnrolmentAnswer {
	e.t.Helper()
	code, resp, msg := e.send(e.enrol, h)
	if code != http.StatusOK || resp.Enrolment == nil {
		e.t.Fatalf("enrolment heartbeat = %d %q %+v", code, msg, resp)
	}
	if len(resp.Orders) != 0 || resp.Policy.Signature != "" || resp.Rental != "" {
		e.t.Fatalf("an enrolment answer carries orders, a policy or a rental: %+v", resp)
	}
	return *resp.Enrolment
}

// events returns the events published since the last call.
func (e *enrolEnv) events(from *int) []string {
	all := e.rec.list()
	out := all[*from:]
	*from = len(all)
	return out
}

func (e *enrolEnv) pending() []ledger.Instance {
	e.t.Helper()
	p, err := e.db.PendingInstances(context.Background(), 1)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func act(at time.Time, key string) ledger.Action { return ledger.Action{UserID: 1, At: at, Key: key} }

func TestEnrolment_Issue(t *testing.T) {
	e := newEnrolEnv(t)
	ctx := context.Background()
	if !wire.IsEnrolToken(e.enrol) || len(e.enrol) != len(wire.EnrolTokenPrefix)+43 || strings.ContainsAny(e.enrol, "=+/") {
		t.Fatalf("token %q is not the prefix and 32 bytes of unpadded base64url", e.enrol)
	}
	var toks []string
	for range ledger.MaxEnrolTokens - 1 {
		tok, revoked, err := e.hub.Enrolment().Issue(ctx, 1)
		if err != nil || revoked != nil {
			t.Fatalf("Issue = %v, %v", revoked, err)
		}
		toks = append(toks, tok)
	}
	list, err := e.hub.Enrolment().Tokens(ctx, 1)
	if err != nil || len(list) != ledger.MaxEnrolTokens {
		t.Fatalf("Tokens = %d, %v; want %d", len(list), err, ledger.MaxEnrolTokens)
	}
	// The oldest works until one more is issued.
	if got := e.answer(e.facts("abc123", t0)); got.State != wire.EnrolWaiting {
		t.Fatalf("answer %+v", got)
	}
	_, revoked, err := e.hub.Enrolment().Issue(ctx, 1)
	if err != nil || revoked == nil {
		t.Fatalf("the 4th Issue revoked %v, %v; want the oldest", revoked, err)
	}
	if code, _, msg := e.send(e.enrol, e.facts("abc123", t0)); code != http.StatusUnauthorized || !strings.Contains(msg, "was revoked") {
		t.Fatalf("the revoked oldest token: %d %q; want 401 revoked at once", code, msg)
	}
	for _, tok := range toks {
		if code, _, msg := e.send(tok, e.facts("abc123", t0)); code != http.StatusOK {
			t.Fatalf("a newer token: %d %q", code, msg)
		}
	}
}

func TestEnrol_Refused(t *testing.T) {
	e := newEnrolEnv(t)
	ctx := context.Background()
	good := e.facts("abc123", t0)
	bodyOf := func(h wire.HeartbeatRequest) []byte { b, _ := json.Marshal(h); return b }
	noFacts := e.facts("abc123", t0)
	noFacts.Instance = nil
	noKey := e.facts("", t0)
	noKey.Instance = &wire.InstanceFacts{Platform: "runpod"}
	noKey.Host.Hostname = ""
	badVersion := e.facts("abc123", t0)
	badVersion.Version = "v9"
	gpus := e.facts("abc123", t0)
	gpus.Host.GPUs = make([]wire.GPUFact, wire.MaxGPUs+1)
	big := append([]byte(`{"version":"v1","reasons":["`), bytes.Repeat([]byte("x"), wire.MaxBodyBytes)...)
	big = append(big, `"]}`...)
	tests := []struct {
		name  string
		token string
		body  []byte
		code  int
		msg   string
	}{
		{"ErrUnknown", wire.EnrolTokenPrefix + strings.Repeat("A", 43), bodyOf(good), http.StatusUnauthorized,
			"unknown enrolment token: send /agent in the chat for a new install line"},
		{"ErrNoInstance", e.enrol, bodyOf(noFacts), http.StatusBadRequest,
			"an enrolment token needs the instance facts: this agent is too old; reinstall it with the line /agent gives"},
		{"ErrNoKey", e.enrol, bodyOf(noKey), http.StatusBadRequest,
			"the agent could not tell this host apart (no instance ID, machine-id or host name)"},
		{"ErrVersion", e.enrol, bodyOf(badVersion), http.StatusBadRequest, "unsupported protocol version"},
		{"ErrTooManyGPUs", e.enrol, bodyOf(gpus), http.StatusBadRequest, "more than 16 GPUs"},
		{"ErrMalformed", e.enrol, []byte(`{"version":`), http.StatusBadRequest, "malformed JSON"},
		{"ErrTooLarge", e.enrol, big, http.StatusRequestEntityTooLarge, "body over"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, msg := e.sendRaw(tt.token, tt.body)
			if code != tt.code || !strings.Contains(msg, tt.msg) {
				t.Fatalf("= %d %q; want %d %q", code, msg, tt.code, tt.msg)
			}
			if p := e.pending(); len(p) != 0 || e.store.n() != 0 {
				t.Fatalf("a refused heartbeat stored %+v (%d announcements written)", p, e.store.n())
			}
			var from int
			if ev := e.events(&from); len(ev) != 0 {
				t.Fatalf("a refused heartbeat told %v", ev)
			}
		})
	}
	t.Run("ErrRevokedAtOnce", func(t *testing.T) {
		if got := e.answer(good); got.State != wire.EnrolWaiting {
			t.Fatalf("before the revocation: %+v", got)
		}
		n, err := e.hub.Enrolment().Revoke(ctx, 1)
		if err != nil || n != 1 {
			t.Fatalf("Revoke = %d, %v; want 1", n, err)
		}
		code, _, msg := e.send(e.enrol, good)
		if code != http.StatusUnauthorized || msg != "this enrolment token was revoked: send /agent in the chat for a new install line" {
			t.Fatalf("after the revocation: %d %q", code, msg)
		}
		// The user's rental token is untouched.
		if code, _ := e.beat(e.token, hb(wire.VerdictBusy, 0)); code != http.StatusOK {
			t.Fatalf("the rental's own token after /agent revoke: %d", code)
		}
	})
	t.Run("ErrRateLimited", func(t *testing.T) {
		e := newEnrolEnv(t)
		e.store = &counting{Store: e.db}
		h, err := hub.New(hub.Config{Store: e.store, Now: e.clk.Now, Events: e.rec, RateBurst: 2, RateEvery: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h.Handler())
		defer srv.Close()
		e.srv = srv
		for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
			if code, _, msg := e.send(e.enrol, good); code != want {
				t.Fatalf("heartbeat %d = %d %q; want %d", i, code, msg, want)
			}
		}
	})
}

// TestEnrol_Announce: the first heartbeat of an instance stores it
// pending and tells the listener once; further heartbeats are answered
// from memory (no store write within a minute, no event), a change of
// facts is written at once, and an unchanged instance once a minute.
func TestEnrol_Announce(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	boot := t0.Add(-10 * time.Minute)
	got := e.answer(e.facts("ABC123", boot))
	if got.State != wire.EnrolWaiting || got.Token != "" || got.RetryAfter != 0 {
		t.Fatalf("first answer %+v", got)
	}
	if ev := e.events(&from); !slices.Equal(ev, []string{"announced:runpod:ABC123"}) {
		t.Fatalf("events %v", ev)
	}
	p := e.pending()
	if len(p) != 1 {
		t.Fatalf("pending %+v", p)
	}
	in := p[0]
	if in.Platform != "runpod" || in.PlatformID != "ABC123" || in.Source != "env RUNPOD_POD_ID" || in.Hostname != "host-ABC123" ||
		in.GPUModel != "RTX 4090" || in.GPUCount != 1 || !in.BootAt.Equal(boot) || !in.FirstSeen.Equal(t0) {
		t.Fatalf("stored %+v", in)
	}
	if e.store.n() != 1 {
		t.Fatalf("announcements written %d, want 1", e.store.n())
	}
	for range 2 {
		e.clk.Add(25 * time.Second)
		if got := e.answer(e.facts("ABC123", boot)); got.State != wire.EnrolWaiting {
			t.Fatalf("answer %+v", got)
		}
	}
	if e.store.n() != 1 {
		t.Fatalf("announcements written %d within a minute, want 1", e.store.n())
	}
	e.clk.Add(15 * time.Second)
	e.answer(e.facts("ABC123", boot))
	if e.store.n() != 2 {
		t.Fatalf("announcements written %d after a minute, want 2", e.store.n())
	}
	changed := e.facts("ABC123", boot)
	changed.Host.GPUs = append(changed.Host.GPUs, changed.Host.GPUs[0])
	e.answer(changed)
	if e.store.n() != 3 {
		t.Fatalf("announcements written %d after a change, want 3", e.store.n())
	}
	// A pending instance keeps the facts the user was shown.
	if p := e.pending(); len(p) != 1 || p[0].GPUCount != 1 {
		t.Fatalf("pending after the change %+v", p)
	}
	// The change is not written again at every heartbeat.
	e.clk.Add(10 * time.Second)
	e.answer(changed)
	if e.store.n() != 3 {
		t.Fatalf("announcements written %d after the same change again, want 3", e.store.n())
	}
	if ev := e.events(&from); len(ev) != 0 {
		t.Fatalf("a known instance told again: %v", ev)
	}
	res, err := http.Get(e.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`gpuledger_hub_enrol_heartbeats_total{result="announced"} 1`, `gpuledger_hub_enrol_heartbeats_total{result="waiting"} 5`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(string(b), `gpuledger_hub_heartbeats_total{result="ok"} 1`) {
		t.Errorf("enrolment heartbeats counted as rental heartbeats")
	}
}

// TestEnrol_Facts: facts are clipped and checked: an unknown platform is
// kept as none, a boot in the future is placed at now, one older than
// ledger.MaxBootAge at that age, and the agent's clock offset is taken
// out.
func TestEnrol_Facts(t *testing.T) {
	e := newEnrolEnv(t)
	e.clk.Add(time.Hour)
	now := e.clk.Now()
	odd := e.facts("i-1", now.Add(-time.Hour))
	odd.Instance.Platform = "mycloud"
	odd.Host.Hostname = strings.Repeat("h", 1000)
	odd.Host.GPUs = []wire.GPUFact{{Name: "NVIDIA A40"}, {Name: "NVIDIA A40"}}
	future := e.facts("f-1", now.Add(240*time.Hour))
	ancient := e.facts("a-1", now.Add(-400*24*time.Hour))
	skewed := e.facts("s-1", now.Add(-time.Hour).Add(3*time.Hour)) // the agent's clock is 3 h ahead
	skewed.SentAt = now.Add(3 * time.Hour)
	noGPU := e.facts("n-1", time.Time{})
	noGPU.Host.GPUs = nil
	for _, h := range []wire.HeartbeatRequest{odd, future, ancient, skewed, noGPU} {
		e.answer(h)
	}
	byKey := map[string]ledger.Instance{}
	for _, in := range e.pending() {
		byKey[in.Key] = in
	}
	if in := byKey["unknown:i-1"]; in.Platform != "" || len(in.Hostname) != wire.MaxStrLen || in.GPUModel != "A40" || in.GPUCount != 2 {
		t.Errorf("unknown platform: %+v", in)
	}
	if in := byKey["runpod:f-1"]; !in.BootAt.Equal(now) {
		t.Errorf("a future boot is at %v, want now %v", in.BootAt, now)
	}
	if in := byKey["runpod:a-1"]; !in.BootAt.Equal(now.Add(-ledger.MaxBootAge)) {
		t.Errorf("an ancient boot is at %v, want %v", in.BootAt, now.Add(-ledger.MaxBootAge))
	}
	if in := byKey["runpod:s-1"]; !in.BootAt.Equal(now.Add(-time.Hour)) {
		t.Errorf("a skewed agent's boot is at %v, want %v", in.BootAt, now.Add(-time.Hour))
	}
	if in := byKey["runpod:n-1"]; in.GPUCount != 0 || in.GPUModel != "" || !in.BootAt.IsZero() || in.Key == "" {
		t.Errorf("no GPU, no boot: %+v", in)
	}
	// Adopted, the future boot starts the rental no later than its first
	// announcement, the ancient one no earlier than the user's account.
	ctx := context.Background()
	for key, want := range map[string]time.Time{"runpod:f-1": now, "runpod:a-1": t0} {
		r, err := e.hub.Enrolment().Adopt(ctx, act(now, ""), byKey[key].ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !r.StartedAt().Equal(want) {
			t.Errorf("%s starts at %v, want %v", key, r.StartedAt(), want)
		}
	}
}

func TestEnrol_Held(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	for i := range ledger.MaxPendingInstances {
		if got := e.answer(e.facts("pod"+string(rune('a'+i)), t0)); got.State != wire.EnrolWaiting {
			t.Fatalf("instance %d: %+v", i, got)
		}
	}
	if n := len(e.events(&from)); n != ledger.MaxPendingInstances {
		t.Fatalf("%d announced, want %d", n, ledger.MaxPendingInstances)
	}
	got := e.answer(e.facts("one-too-many", t0))
	if got.State != wire.EnrolHeld || got.RetryAfter != 300 {
		t.Fatalf("over the cap: %+v; want held, retry after 300", got)
	}
	if ev := e.events(&from); len(ev) != 0 {
		t.Fatalf("a held instance was told: %v", ev)
	}
	if n := len(e.pending()); n != ledger.MaxPendingInstances {
		t.Fatalf("%d pending, want %d", n, ledger.MaxPendingInstances)
	}
	// Once the user answers one, the held instance gets in.
	if _, err := e.hub.Enrolment().Ignore(context.Background(), act(t0, ""), e.pending()[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := e.answer(e.facts("one-too-many", t0)); got.State != wire.EnrolWaiting {
		t.Fatalf("after an answer: %+v", got)
	}
}

// adopted announces pod abc123, logs it at $0.79/h and returns the
// instance and rental.
func (e *enrolEnv) adopted(boot time.Time) (ledger.Instance, *ledger.Rental) {
	e.t.Helper()
	e.answer(e.facts("abc123", boot))
	p := e.pending()
	if len(p) != 1 {
		e.t.Fatalf("pending %+v", p)
	}
	offer := &ledger.PriceOffer{Price: ledger.Price{Amount: ledger.MustDecimal("0.79"), Unit: ledger.UnitHour}, Currency: ledger.USD}
	r, err := e.hub.Enrolment().Adopt(context.Background(), act(e.clk.Now(), "tg:1:cb:1"), p[0].ID, offer)
	if err != nil {
		e.t.Fatal(err)
	}
	return p[0], r
}

// TestEnrol_Adopt: once the user logs the instance, its next enrolment
// heartbeat gets the rental's token, a heartbeat with that token is the
// rental's, and the instance coming back with the enrolment token after
// that (its own token used) is told once per boot and answered waiting.
func TestEnrol_Adopt(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	e.clk.Add(time.Hour) // the user's account is from t0
	boot := e.clk.Now().Add(-5 * time.Minute)
	in, r := e.adopted(boot)
	if r.Name != "runpod-abc123" || r.Platform != "runpod" || r.GPUCount != 1 || !r.StartedAt().Equal(boot) || !r.Priced {
		t.Fatalf("rental %s %s ×%d from %v (want %v) priced %v", r.Name, r.Platform, r.GPUCount, r.StartedAt(), boot, r.Priced)
	}
	e.events(&from)
	e.clk.Add(10 * time.Second)
	got := e.answer(e.facts("abc123", boot))
	if got.State != wire.EnrolBound || got.Rental != r.Name || got.Token == "" || wire.IsEnrolToken(got.Token) {
		t.Fatalf("after Adopt: %+v", got)
	}
	// Asked again before the agent switched: the same token.
	if again := e.answer(e.facts("abc123", boot)); again.Token != got.Token {
		t.Fatalf("second hand-over %+v, want the same token", again)
	}
	code, resp, msg := e.send(got.Token, e.facts("abc123", boot))
	if code != http.StatusOK || resp.Rental != r.Name || resp.Enrolment != nil {
		t.Fatalf("the handed-over token: %d %q %+v", code, msg, resp)
	}
	if st, ok := e.hub.AgentState(r.ID); !ok || st.InstanceKey != in.Key || !st.HostBoot.Equal(boot) {
		t.Fatalf("the rental's agent state %+v", st)
	}
	// The hand-over is forgotten; the same instance back with the
	// enrolment token (a new container without its state) is told once.
	for range 3 {
		e.clk.Add(30 * time.Second)
		if got := e.answer(e.facts("abc123", boot)); got.State != wire.EnrolWaiting || got.Token != "" {
			t.Fatalf("returned: %+v, want waiting without a token", got)
		}
	}
	e.clk.Add(15 * time.Minute)
	e.answer(e.facts("abc123", boot))
	if ev := e.events(&from); !slices.Equal(ev, []string{"returned:runpod:abc123:runpod-abc123"}) {
		t.Fatalf("events %v, want one for the boot", ev)
	}
	// A new boot of it is told again.
	e.clk.Add(time.Hour)
	e.answer(e.facts("abc123", e.clk.Now().Add(-time.Minute)))
	if ev := e.events(&from); !slices.Equal(ev, []string{"returned:runpod:abc123:runpod-abc123"}) {
		t.Fatalf("events after a new boot %v", ev)
	}

	t.Run("Reconnect", func(t *testing.T) {
		got, err := e.hub.Enrolment().Reconnect(context.Background(), 1, in.ID)
		if err != nil || got.ID != r.ID {
			t.Fatalf("Reconnect = %v, %v", got, err)
		}
		ans := e.answer(e.facts("abc123", e.clk.Now().Add(-time.Minute)))
		if ans.State != wire.EnrolBound || ans.Rental != r.Name || ans.Token == "" {
			t.Fatalf("after Reconnect: %+v", ans)
		}
		if code, _, _ := e.send(ans.Token, e.facts("abc123", e.clk.Now().Add(-time.Minute))); code != http.StatusOK {
			t.Fatalf("the reconnected token: %d", code)
		}
	})
}

// TestEnrol_RestartBeforeHandover: the server restarted after the user
// logged the instance and before its agent was handed the token (only in
// memory): the agent gets a fresh token, which works.
func TestEnrol_RestartBeforeHandover(t *testing.T) {
	e := newEnrolEnv(t)
	_, r := e.adopted(t0)
	e.restart()
	got := e.answer(e.facts("abc123", t0))
	if got.State != wire.EnrolBound || got.Rental != r.Name || got.Token == "" {
		t.Fatalf("after a restart: %+v", got)
	}
	if code, resp, msg := e.send(got.Token, e.facts("abc123", t0)); code != http.StatusOK || resp.Rental != r.Name {
		t.Fatalf("the fresh token: %d %q", code, msg)
	}
}

func TestEnrol_Ignored(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	e.answer(e.facts("abc123", t0))
	e.events(&from)
	in, err := e.hub.Enrolment().Ignore(context.Background(), act(t0, "tg:1:cb:2"), e.pending()[0].ID)
	if err != nil || in.State != ledger.InstanceIgnored {
		t.Fatalf("Ignore = %+v, %v", in, err)
	}
	for range 2 {
		e.clk.Add(2 * time.Minute)
		if got := e.answer(e.facts("abc123", t0)); got.State != wire.EnrolIgnored || got.RetryAfter != 3600 {
			t.Fatalf("ignored: %+v", got)
		}
	}
	if ev := e.events(&from); len(ev) != 0 {
		t.Fatalf("an ignored instance was told: %v", ev)
	}
}

// TestEnrol_ReleasedAnnouncedAnew: the rental an instance was logged as
// is released; the instance reporting with the enrolment token again,
// from an agent started anew, is a new instance to the user (the agent
// run that reported for the rental is TestEnrol_ReleasedStillReporting).
func TestEnrol_ReleasedAnnouncedAnew(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	ctx := context.Background()
	_, r := e.adopted(t0)
	tok := e.answer(e.facts("abc123", t0)).Token
	if code, _, _ := e.send(tok, e.facts("abc123", t0)); code != http.StatusOK {
		t.Fatal(code)
	}
	// Back without its token (told), then released: within the minute
	// the hub answers from memory, and still sees the release.
	e.clk.Add(10 * time.Second)
	e.answer(e.facts("abc123", t0))
	e.events(&from)
	e.clk.Add(10 * time.Second)
	if _, err := e.db.AppendEvent(ctx, act(e.clk.Now(), ""), r.Name, ledger.Event{Kind: ledger.EventRelease, At: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	e.hub.Refresh(r.ID)
	e.clk.Add(10 * time.Second)
	again := e.facts("abc123", t0)
	again.BootID = "boot2"
	if got := e.answer(again); got.State != wire.EnrolWaiting || got.Token != "" {
		t.Fatalf("after the release: %+v", got)
	}
	if ev := e.events(&from); !slices.Equal(ev, []string{"announced:runpod:abc123"}) {
		t.Fatalf("events %v, want it announced anew", ev)
	}
}

func TestEnrolment_OtherUsersInstance(t *testing.T) {
	e := newEnrolEnv(t)
	ctx := context.Background()
	if _, err := e.db.EnsureUser(ctx, ledger.User{ID: 2, TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	in, _ := e.adopted(t0)
	e.answer(e.facts("other", t0))
	var pending ledger.Instance
	for _, p := range e.pending() {
		pending = p
	}
	other := ledger.Action{UserID: 2, At: t0}
	if _, err := e.hub.Enrolment().Adopt(ctx, other, pending.ID, nil); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Errorf("Adopt by another user: %v, want not found", err)
	}
	if _, err := e.hub.Enrolment().Ignore(ctx, other, pending.ID); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Errorf("Ignore by another user: %v, want not found", err)
	}
	if _, err := e.hub.Enrolment().Reconnect(ctx, 2, in.ID); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Errorf("Reconnect by another user: %v, want not found", err)
	}
	if got, err := e.db.Instance(ctx, 1, pending.ID); err != nil || got.State != ledger.InstancePending {
		t.Errorf("the instance after another user's tries: %+v, %v", got, err)
	}
	if n, err := e.hub.Enrolment().Revoke(ctx, 2); err != nil || n != 0 {
		t.Errorf("Revoke of another user = %d, %v; want 0", n, err)
	}
	if got := e.answer(e.facts("other", t0)); got.State != wire.EnrolWaiting {
		t.Errorf("user 1's token after user 2's revoke: %+v", got)
	}
}

// TestHeartbeat_Clone: a rental logged from an announcement, reported for
// by a host with another instance key (a copy of its image), is refused
// with 409 and nothing is recorded.
func TestHeartbeat_Clone(t *testing.T) {
	e := newEnrolEnv(t)
	_, r := e.adopted(t0)
	tok := e.answer(e.facts("abc123", t0)).Token
	if code, _, _ := e.send(tok, e.facts("abc123", t0)); code != http.StatusOK {
		t.Fatal(code)
	}
	before, _ := e.hub.AgentState(r.ID)
	e.clk.Add(time.Minute)
	code, _, msg := e.send(tok, e.facts("xyz789", t0.Add(time.Hour)))
	if code != http.StatusConflict || !strings.HasPrefix(msg, "this token belongs to another instance (runpod:abc123): a copy?") {
		t.Fatalf("a copy's heartbeat: %d %q; want 409", code, msg)
	}
	after, _ := e.hub.AgentState(r.ID)
	if !after.LastSeen.Equal(before.LastSeen) || after.InstanceKey != "runpod:abc123" {
		t.Fatalf("the refused heartbeat changed the state: %+v", after)
	}
	// An agent that sends no facts is not refused (it predates them).
	old := e.facts("abc123", t0)
	old.Instance = nil
	if code, _, _ := e.send(tok, old); code != http.StatusOK {
		t.Fatalf("a heartbeat without facts: %d", code)
	}
}

// TestHeartbeat_ShutdownAndBoot: a rental's agent reports a shutdown
// (told once per boot; a host shutdown after an agent-only one too) and a
// new boot (told when more than 2 min after the stored one, with the
// shutdown report before it, its time clamped to [last seen, now]); a
// restarted server does not tell a boot again.
func TestHeartbeat_ShutdownAndBoot(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	boot1 := t0.Add(-time.Hour)
	beat := func(boot time.Time, sd *wire.Shutdown) {
		t.Helper()
		h := e.facts("box1pod", boot)
		h.Shutdown = sd
		if code, _, msg := e.send(e.token, h); code != http.StatusOK {
			t.Fatalf("heartbeat %d %q", code, msg)
		}
	}
	beat(boot1, nil)
	e.clk.Add(30 * time.Second)
	beat(boot1.Add(time.Minute), nil) // within 2 min: the same boot
	if ev := e.events(&from); len(ev) != 0 {
		t.Fatalf("events %v", ev)
	}
	e.clk.Add(30 * time.Second)
	beat(boot1, &wire.Shutdown{At: e.clk.Now(), Host: false})
	beat(boot1, &wire.Shutdown{At: e.clk.Now(), Host: false})
	e.clk.Add(30 * time.Second)
	beat(boot1, nil) // only the agent had stopped
	e.clk.Add(30 * time.Second)
	shutAt := e.clk.Now()
	beat(boot1, &wire.Shutdown{At: shutAt, Host: true})
	if ev := e.events(&from); !slices.Equal(ev, []string{"shutdown:box1:false", "shutdown:box1:true"}) {
		t.Fatalf("events %v", ev)
	}
	lastSeen := e.clk.Now()
	e.clk.Add(3 * time.Hour)
	boot2 := e.clk.Now().Add(-time.Minute)
	beat(boot2, nil)
	if ev := e.events(&from); !slices.Equal(ev, []string{"booted:box1:true"}) {
		t.Fatalf("events %v", ev)
	}
	b := e.rec.boots[len(e.rec.boots)-1]
	if !b.BootAt.Equal(boot2) || !b.PrevBoot.Equal(boot1) || !b.LastSeen.Equal(lastSeen) || !b.ShutdownAt.Equal(shutAt) || !b.ShutdownHost {
		t.Fatalf("boot %+v", b)
	}
	st, _ := e.hub.AgentState(e.rid)
	if !st.ShutdownAt.IsZero() || !st.HostBoot.Equal(boot2) || st.InstanceKey != "runpod:box1pod" {
		t.Fatalf("state after the boot %+v", st)
	}

	// A restarted server: the stored boot is the one told.
	e.restart()
	e.clk.Add(30 * time.Second)
	beat(boot2, nil)
	if ev := e.events(&from); len(ev) != 0 {
		t.Fatalf("a restarted server told %v", ev)
	}
	// Silent, then a boot claimed before the last heartbeat: no shutdown
	// report, and the boot is placed at the last heartbeat at the earliest.
	e.clk.Add(time.Hour)
	beat(boot2, nil)
	lastSeen = e.clk.Now()
	e.clk.Add(time.Hour)
	beat(boot2.Add(30*time.Minute), nil)
	if ev := e.events(&from); !slices.Equal(ev, []string{"booted:box1:false"}) {
		t.Fatalf("events %v", ev)
	}
	if b := e.rec.boots[len(e.rec.boots)-1]; !b.BootAt.Equal(lastSeen) || !b.ShutdownAt.IsZero() {
		t.Fatalf("boot %+v: want it at the last heartbeat %v, no shutdown", b, lastSeen)
	}
	// A boot claimed in the future (by an agent clock 55 min behind) is
	// placed at now.
	e.clk.Add(time.Hour)
	h := e.facts("box1pod", e.clk.Now().Add(10*time.Minute))
	h.SentAt = e.clk.Now().Add(-55 * time.Minute)
	if code, _, _ := e.send(e.token, h); code != http.StatusOK {
		t.Fatal(code)
	}
	if ev := e.events(&from); !slices.Equal(ev, []string{"booted:box1:false"}) {
		t.Fatalf("events %v", ev)
	}
	if b := e.rec.boots[len(e.rec.boots)-1]; !b.BootAt.Equal(e.clk.Now()) {
		t.Fatalf("boot %+v: want it at now %v", b, e.clk.Now())
	}
	// A shutdown report told before a restart is not told again after it.
	boot3 := e.clk.Now()
	e.clk.Add(30 * time.Second)
	beat(boot3, &wire.Shutdown{At: e.clk.Now(), Host: true})
	if ev := e.events(&from); !slices.Equal(ev, []string{"shutdown:box1:true"}) {
		t.Fatalf("events %v", ev)
	}
	e.restart()
	e.clk.Add(5 * time.Second)
	beat(boot3, &wire.Shutdown{At: e.clk.Now(), Host: true})
	if ev := e.events(&from); len(ev) != 0 {
		t.Fatalf("a restarted server told %v", ev)
	}
	if st, _ := e.hub.AgentState(e.rid); st.ShutdownAt.IsZero() || !st.ShutdownHost {
		t.Fatalf("the state lost the shutdown report: %+v", st)
	}
}

// TestDownloads_InstallScriptEnrol: install.sh takes an enrolment token
// (its comment says so) and refuses an unknown or revoked one with a
// script that says what to do.
func TestDownloads_InstallScriptEnrol(t *testing.T) {
	d := newDownloadEnv(t, []byte("agent binary"))
	ctx := context.Background()
	tok, _, err := d.hub.Enrolment().Issue(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, body := d.get(t, hub.PathAgentInstall+"?token="+tok)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	for _, want := range []string{"token='" + tok + "'", "with an enrolment token.", "/agent revoke"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(string(body), "for the rental") {
		t.Errorf("the enrolment script says it is for a rental")
	}
	res, body = d.get(t, hub.PathAgentInstall+"?token="+wire.EnrolTokenPrefix+strings.Repeat("B", 43))
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "unknown enrolment token: send /agent in the chat for a new install line") {
		t.Fatalf("unknown: %d %s", res.StatusCode, body)
	}
	if _, err := d.hub.Enrolment().Revoke(ctx, 1); err != nil {
		t.Fatal(err)
	}
	res, body = d.get(t, hub.PathAgentInstall+"?token="+tok)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "this enrolment token was revoked: send /agent in the chat for a new install line") ||
		!strings.Contains(string(body), "exit 1") {
		t.Fatalf("revoked: %d %s", res.StatusCode, body)
	}
}
