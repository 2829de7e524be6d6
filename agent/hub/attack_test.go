package hub_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// Attacks on enrolment: what a leaked enrolment token, a forged rental
// token, a slow network and a crash can do, against the real hub over
// HTTP on a real database.

// TestAttack_EnrolFlood: a leaked enrolment token announcing 1,000
// distinct instances in a burst stores and tells at most
// ledger.MaxPendingInstances, answers the rest held, and the hub's
// memory holds no more instances than were stored; with the default
// rate bucket most of the burst is refused before anything is read.
func TestAttack_EnrolFlood(t *testing.T) {
	e := newEnrolEnv(t)
	h, err := hub.New(hub.Config{Store: e.store, Now: e.clk.Now, Events: e.rec, RateBurst: 5000})
	if err != nil {
		t.Fatal(err)
	}
	e.hub = h
	e.srv = httptest.NewServer(h.Handler())
	t.Cleanup(e.srv.Close)
	var from int
	states := map[string]int{}
	for i := range 1000 {
		f := e.facts(fmt.Sprintf("forged%04d", i), t0)
		f.Instance.MachineID = fmt.Sprintf("m%d", i)
		states[string(e.answer(f).State)]++
	}
	if states[string(wire.EnrolWaiting)] != ledger.MaxPendingInstances || states[string(wire.EnrolHeld)] != 1000-ledger.MaxPendingInstances {
		t.Fatalf("answers %v; want %d waiting, the rest held", states, ledger.MaxPendingInstances)
	}
	if n := len(e.pending()); n != ledger.MaxPendingInstances {
		t.Fatalf("%d pending stored, want %d", n, ledger.MaxPendingInstances)
	}
	if ev := e.events(&from); len(ev) != ledger.MaxPendingInstances {
		t.Fatalf("%d announcements told, want %d", len(ev), ledger.MaxPendingInstances)
	}
	if n := h.InstancesRemembered(); n > ledger.MaxPendingInstances {
		t.Fatalf("the hub remembers %d instances after the flood, want at most %d", n, ledger.MaxPendingInstances)
	}
	toks, err := h.Enrolment().Tokens(context.Background(), 1)
	if err != nil || len(toks) != 1 || toks[0].Instances != ledger.MaxPendingInstances {
		t.Fatalf("token after the flood: %+v, %v", toks, err)
	}

	t.Run("DefaultBucket", func(t *testing.T) {
		e := newEnrolEnv(t)
		limited := 0
		for i := range 1000 {
			code, _, _ := e.send(e.enrol, e.facts(fmt.Sprintf("burst%04d", i), t0))
			if code == http.StatusTooManyRequests {
				limited++
			}
		}
		if limited < 1000-40 {
			t.Fatalf("%d of a burst of 1000 refused by the token's bucket, want at least %d", limited, 1000-40)
		}
	})
}

// TestAttack_ForgedFacts: what an agent claims of its host is kept only
// as plain, short, printable text: control characters (newlines that
// break a card's lines, escapes a terminal obeys, bidirectional
// overrides that reorder what a person reads) are dropped, a 60 KiB
// host name is clipped, a path as the platform is no platform, a boot
// in 1970 or in the future is clamped, and the rental a Log makes of it
// has a valid name.
func TestAttack_ForgedFacts(t *testing.T) {
	e := newEnrolEnv(t)
	e.clk.Add(time.Hour)
	now := e.clk.Now()
	f := e.facts("ab c\n12\x1b[31m", time.Unix(0, 0))
	f.Instance.Platform = "../../etc"
	f.Instance.PlatformSource = "env\x00X\u202eY"
	f.Host.Hostname = "<b>evil</b>\r\n\u202e\x07" + strings.Repeat("h", 60<<10)
	f.Host.GPUs = []wire.GPUFact{{Name: "NVIDIA A40\n<i>x</i>"}}
	if got := e.answer(f); got.State != wire.EnrolWaiting {
		t.Fatalf("answer %+v", got)
	}
	p := e.pending()
	if len(p) != 1 {
		t.Fatalf("pending %+v", p)
	}
	in := p[0]
	for what, s := range map[string]string{"key": in.Key, "id": in.PlatformID, "source": in.Source, "host": in.Hostname, "gpu": in.GPUModel} {
		if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u202e' }) >= 0 {
			t.Errorf("stored %s %q holds control characters", what, s)
		}
	}
	if in.Platform != "" || len(in.Hostname) > wire.MaxStrLen || !in.BootAt.Equal(now.Add(-ledger.MaxBootAge)) {
		t.Errorf("stored %+v", in)
	}
	offer := &ledger.PriceOffer{Price: ledger.Price{Amount: ledger.MustDecimal("0.5"), Unit: ledger.UnitHour}, Currency: ledger.USD}
	r, err := e.hub.Enrolment().Adopt(context.Background(), act(now, ""), in.ID, offer)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.ValidateName(r.Name); err != nil || !r.StartedAt().Equal(t0) || r.Platform != ledger.UnknownPlatform {
		t.Fatalf("rental %q (%v) from %v on %q", r.Name, err, r.StartedAt(), r.Platform)
	}
	// A known platform with an ID of spaces, newlines, a path and markup:
	// the rental's name keeps its letters and digits.
	g := e.facts("odd", now)
	g.Instance.ID = " ../x y\nz<b>\u202e"
	e.answer(g)
	var odd ledger.Instance
	for _, p := range e.pending() {
		odd = p
	}
	r2, err := e.hub.Enrolment().Adopt(context.Background(), act(now, ""), odd.ID, offer)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.ValidateName(r2.Name); err != nil || r2.Name != "runpod-xyzb" {
		t.Fatalf("rental %q (%v), want runpod-xyzb", r2.Name, err)
	}
}

// TestAttack_HandoverRace: the user taps Log while two agents with the
// same enrolment token and the same instance key (a copy started at the
// same time) heartbeat. Both may be handed the rental's token before
// either reports with it; once both report with it, the one replaced by
// the other is refused 409 (it falls back to the enrolment token and is
// told to the user as returned), so the two never both report for the
// rental silently.
func TestAttack_HandoverRace(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	_, r := e.adopted(t0)
	e.events(&from)
	agentHB := func(boot string) wire.HeartbeatRequest {
		h := e.facts("abc123", t0)
		h.BootID = boot
		return h
	}
	a, b := agentHB("agent-a"), agentHB("agent-b")
	ta, tb := e.answer(a).Token, e.answer(b).Token
	if ta == "" || ta != tb {
		t.Fatalf("hand-over tokens %q %q", ta, tb)
	}
	codes := map[string][]int{}
	for i := range 4 {
		e.clk.Add(15 * time.Second)
		for _, h := range []wire.HeartbeatRequest{a, b} {
			h.Seq = uint64(i + 1)
			code, _, _ := e.send(ta, h)
			codes[h.BootID] = append(codes[h.BootID], code)
		}
	}
	refused := 0
	for _, c := range append(codes["agent-a"], codes["agent-b"]...) {
		if c == http.StatusConflict {
			refused++
		}
	}
	if refused == 0 {
		t.Fatalf("both agents report for %s with one token: %v", r.Name, codes)
	}
	if c := codes["agent-b"]; c[len(c)-1] != http.StatusOK {
		t.Fatalf("the agent that reported last was refused: %v", codes)
	}
	// The refused one falls back to the enrolment token: the user is
	// asked about it (once), and it gets no token.
	if got := e.answer(a); got.State != wire.EnrolWaiting || got.Token != "" {
		t.Fatalf("the refused agent with the enrolment token: %+v", got)
	}
	if ev := e.events(&from); len(ev) != 1 || !strings.HasPrefix(ev[0], "returned:") {
		t.Fatalf("events %v, want the returned instance told", ev)
	}
	// An agent that restarts (a new process, a new boot id) is not a copy.
	c := agentHB("agent-b2")
	c.Seq = 1
	e.clk.Add(15 * time.Second)
	if code, _, msg := e.send(ta, c); code != http.StatusOK {
		t.Fatalf("a restarted agent: %d %q", code, msg)
	}
}

// TestAttack_LateShutdownClaim: a rental's agent silent for ten hours
// then reports that the host shut down ten hours ago. An agent sends its
// shutdown report as it stops, so a report that old is a forger's (or a
// host that went silent, which is told as silence): it is placed at most
// two minutes before it arrived, and cannot take the silent hours off
// the bill by itself.
func TestAttack_LateShutdownClaim(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	h := e.facts("late1", t0)
	if code, _, _ := e.send(e.token, h); code != http.StatusOK {
		t.Fatal(code)
	}
	e.clk.Add(10 * time.Hour)
	h = e.facts("late1", t0)
	h.Shutdown = &wire.Shutdown{At: t0, Host: true}
	if code, _, _ := e.send(e.token, h); code != http.StatusOK {
		t.Fatal(code)
	}
	if ev := e.events(&from); len(ev) != 1 || ev[0] != "shutdown:box1:true" {
		t.Fatalf("events %v", ev)
	}
	if at := e.rec.shuts[len(e.rec.shuts)-1]; at.Before(e.clk.Now().Add(-2 * time.Minute)) {
		t.Fatalf("a shutdown reported ten hours late is placed at %v, %v before it arrived", at, e.clk.Now().Sub(at))
	}
}

// revokingStore revokes the user's enrolment tokens in the database just
// before an announcement is written: /agent revoke while a heartbeat is
// in flight, after the hub checked the token from its cache.
type revokingStore struct{ hub.Store }

func (s revokingStore) Announce(ctx context.Context, in ledger.Instance) (ledger.Instance, bool, error) {
	if _, err := s.Store.RevokeEnrolTokens(ctx, in.UserID, time.Now()); err != nil {
		return ledger.Instance{}, false, err
	}
	return s.Store.Announce(ctx, in)
}

// TestAttack_Revocation: a token revoked while its agent's heartbeat is
// in flight is refused 401 and stores nothing; an enrolment token used
// as a rental's token on the order result path is refused like any
// unknown token, without a crash and without reading anything.
func TestAttack_Revocation(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	h, err := hub.New(hub.Config{Store: revokingStore{e.db}, Now: e.clk.Now, Events: e.rec})
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := h.Enrolment().Issue(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)
	e.srv = srv
	e.hub = h
	code, _, msg := e.send(tok, e.facts("inflight", t0))
	if code != http.StatusUnauthorized || msg != "this enrolment token was revoked: send /agent in the chat for a new install line" {
		t.Fatalf("revoked in flight: %d %q", code, msg)
	}
	if p := e.pending(); len(p) != 0 {
		t.Fatalf("stored %+v", p)
	}
	if ev := e.events(&from); len(ev) != 0 {
		t.Fatalf("told %v", ev)
	}
	// And at once on the next heartbeat, from the cache dropped.
	if code, _, _ := e.send(tok, e.facts("inflight", t0)); code != http.StatusUnauthorized {
		t.Fatalf("the next heartbeat: %d", code)
	}

	t.Run("EnrolTokenOnOrderResult", func(t *testing.T) {
		e := newEnrolEnv(t)
		for _, path := range []string{wire.PathOrderResult("o-1"), wire.PathOrderResult("../../x")} {
			code, body := e.post(path, e.enrol, []byte(`{"order_id":"o-1","state":"done"}`))
			if code != http.StatusUnauthorized && code != http.StatusNotFound {
				t.Fatalf("%s with an enrolment token: %d %s", path, code, body)
			}
			if code == http.StatusUnauthorized && !strings.Contains(string(body), "an enrolment token only announces its instance") {
				t.Errorf("%s with an enrolment token: %s", path, body)
			}
		}
		if got := e.answer(e.facts("abc123", t0)); got.State != wire.EnrolWaiting {
			t.Fatalf("the enrolment token afterwards: %+v", got)
		}
	})
}

// TestAttack_EnrolBodies: bodies that are not an enrolment heartbeat are
// refused 400 with what was wrong, store nothing and tell nothing; extra
// fields are ignored.
func TestAttack_EnrolBodies(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		code       int
		msg        string
	}{
		{"Empty", ``, http.StatusBadRequest, "malformed JSON"},
		{"Null", `null`, http.StatusBadRequest, "needs the instance facts"},
		{"Array", `[1,2]`, http.StatusBadRequest, "malformed JSON"},
		{"InstanceNull", `{"version":"v1","instance":null}`, http.StatusBadRequest, "needs the instance facts"},
		{"InstanceString", `{"version":"v1","instance":"runpod:abc"}`, http.StatusBadRequest, "malformed JSON"},
		{"InstanceEmpty", `{"version":"v1","instance":{}}`, http.StatusBadRequest, "could not tell this host apart"},
		{"BootNotATime", `{"version":"v1","instance":{"id":"a","booted_at":"yesterday"}}`, http.StatusBadRequest, "malformed JSON"},
		{"BootNumber", `{"version":"v1","instance":{"id":"a","booted_at":12}}`, http.StatusBadRequest, "malformed JSON"},
		{"GPUsObject", `{"version":"v1","host":{"gpus":{"0":{}}},"instance":{"id":"a"}}`, http.StatusBadRequest, "malformed JSON"},
		{"SeqNegative", `{"version":"v1","seq":-1,"instance":{"id":"a"}}`, http.StatusBadRequest, "malformed JSON"},
		{"Trailing", `{"version":"v1","instance":{"id":"a"}} {"x":1}`, http.StatusBadRequest, "malformed JSON"},
		{"Deep", strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat(`}`, 10001), http.StatusBadRequest, "malformed JSON"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnrolEnv(t)
			code, _, msg := e.sendRaw(e.enrol, []byte(tt.body))
			if code != tt.code || !strings.Contains(msg, tt.msg) {
				t.Fatalf("= %d %q; want %d %q", code, msg, tt.code, tt.msg)
			}
			if p := e.pending(); len(p) != 0 || e.store.n() != 0 {
				t.Fatalf("stored %+v", p)
			}
		})
	}
	t.Run("ExtraFields", func(t *testing.T) {
		e := newEnrolEnv(t)
		body := `{"version":"v1","rental":"box1","orders":[{"id":"o-1"}],"instance":{"platform":"runpod","id":"xf1","key":"runpod:other","user_id":2,"extra":[1]},"admin":true}`
		code, resp, msg := e.sendRaw(e.enrol, []byte(body))
		if code != http.StatusOK || resp.Enrolment == nil || resp.Enrolment.State != wire.EnrolWaiting || resp.Rental != "" {
			t.Fatalf("= %d %q %+v", code, msg, resp)
		}
		if p := e.pending(); len(p) != 1 || p[0].Key != "runpod:xf1" || p[0].UserID != 1 {
			t.Fatalf("stored %+v", p)
		}
	})
}

// kill replaces the hub by a new one on the same database without
// flushing what the old one held in memory: the server was killed.
func (e *enrolEnv) kill() {
	e.t.Helper()
	h, err := hub.New(hub.Config{Store: e.store, Now: e.clk.Now, Events: e.rec})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := h.Load(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.hub = h
	e.srv.Close()
	e.srv = httptest.NewServer(h.Handler())
	e.t.Cleanup(e.srv.Close)
}

// TestAttack_CrashAroundShutdown: the server is killed right after it
// answered a host's shutdown report (before any flush), and the agent
// sends the report again (its answer was lost with the server): the
// shutdown is not told twice, and the next boot is told once with the
// report before it.
func TestAttack_CrashAroundShutdown(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	boot1 := t0.Add(-time.Hour)
	if code, _, _ := e.send(e.token, e.facts("crash1", boot1)); code != http.StatusOK {
		t.Fatal(code)
	}
	if err := e.hub.Flush(context.Background()); err != nil { // Run flushes every 500 ms
		t.Fatal(err)
	}
	e.clk.Add(30 * time.Second)
	shut := e.facts("crash1", boot1)
	shut.Shutdown = &wire.Shutdown{At: e.clk.Now(), Host: true}
	if code, _, _ := e.send(e.token, shut); code != http.StatusOK {
		t.Fatal(code)
	}
	if ev := e.events(&from); len(ev) != 1 || ev[0] != "shutdown:box1:true" {
		t.Fatalf("events %v", ev)
	}
	e.kill()
	e.clk.Add(5 * time.Second)
	if code, _, _ := e.send(e.token, shut); code != http.StatusOK {
		t.Fatal(code)
	}
	if ev := e.events(&from); len(ev) != 0 {
		t.Fatalf("after the crash the same shutdown report was told again: %v", ev)
	}
	e.kill()
	e.clk.Add(3 * time.Hour)
	if code, _, _ := e.send(e.token, e.facts("crash1", e.clk.Now().Add(-time.Minute))); code != http.StatusOK {
		t.Fatal(code)
	}
	if ev := e.events(&from); len(ev) != 1 || ev[0] != "booted:box1:true" {
		t.Fatalf("the boot after the crash: %v, want it told once with its shutdown report", ev)
	}
}

// TestAttack_CrashAfterHandover: the agent was handed the rental's token
// and the server was killed before the agent reported with it. The token
// works after the restart, and an enrolment heartbeat of the instance
// after that (a new container without its state) is not handed a second
// token silently.
func TestAttack_CrashAfterHandover(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	_, r := e.adopted(t0)
	tok := e.answer(e.facts("abc123", t0)).Token
	e.events(&from)
	e.kill()
	if code, resp, msg := e.send(tok, e.facts("abc123", t0)); code != http.StatusOK || resp.Rental != r.Name {
		t.Fatalf("the handed-over token after the crash: %d %q", code, msg)
	}
	e.clk.Add(30 * time.Second)
	again := e.facts("abc123", t0)
	again.BootID = "new-container"
	if got := e.answer(again); got.State != wire.EnrolWaiting || got.Token != "" {
		t.Fatalf("the instance back with the enrolment token: %+v", got)
	}
	if ev := e.events(&from); len(ev) != 1 || !strings.HasPrefix(ev[0], "returned:") {
		t.Fatalf("events %v", ev)
	}
}

// TestAttack_DelayedEnrolHeartbeat: on a slow network the agent's
// enrolment heartbeat answered with the rental's token may be preceded
// by an earlier one that arrives after the agent already reports with
// that token. That late heartbeat comes from the same agent run (its
// boot id) that now reports for the rental: it is no copy, and the user
// is not asked about one.
func TestAttack_DelayedEnrolHeartbeat(t *testing.T) {
	e := newEnrolEnv(t)
	var from int
	e.adopted(t0)
	late := e.facts("abc123", t0) // sent first, arrives last
	tok := e.answer(e.facts("abc123", t0)).Token
	if code, _, _ := e.send(tok, e.facts("abc123", t0)); code != http.StatusOK {
		t.Fatal(code)
	}
	e.events(&from)
	e.clk.Add(2 * time.Second)
	if got := e.answer(late); got.State != wire.EnrolWaiting || got.Token != "" {
		t.Fatalf("the late heartbeat: %+v", got)
	}
	if ev := e.events(&from); len(ev) != 0 {
		t.Fatalf("a late heartbeat of the agent that reports for the rental was told as a copy: %v", ev)
	}
	// Another agent run with the enrolment token is still told.
	other := e.facts("abc123", t0)
	other.BootID = "another-run"
	e.answer(other)
	if ev := e.events(&from); len(ev) != 1 || !strings.HasPrefix(ev[0], "returned:") {
		t.Fatalf("another run: %v", ev)
	}
}

// TestAttack_PendingFactsSwapped: after the user was shown a pending
// instance (1× RTX 4090, up since an hour ago), someone holding the
// enrolment token announces the same key with 16 GPUs and a boot a month
// back. The Log press logs what the card showed, not the later claim.
func TestAttack_PendingFactsSwapped(t *testing.T) {
	e := newEnrolEnv(t)
	e.clk.Add(40 * 24 * time.Hour)
	boot := e.clk.Now().Add(-time.Hour)
	e.answer(e.facts("swap1", boot))
	e.clk.Add(2 * time.Minute)
	forged := e.facts("swap1", e.clk.Now().Add(-30*24*time.Hour))
	forged.Host.GPUs = make([]wire.GPUFact, wire.MaxGPUs)
	for i := range forged.Host.GPUs {
		forged.Host.GPUs[i] = wire.GPUFact{Name: "NVIDIA H100 80GB HBM3"}
	}
	e.answer(forged)
	p := e.pending()
	if len(p) != 1 {
		t.Fatalf("pending %+v", p)
	}
	if p[0].GPUCount != 1 || p[0].GPUModel != "RTX 4090" || !p[0].BootAt.Equal(boot) {
		t.Fatalf("the pending instance after a later claim: %d× %s up since %v; want 1× RTX 4090 since %v", p[0].GPUCount, p[0].GPUModel, p[0].BootAt, boot)
	}
	r, err := e.hub.Enrolment().Adopt(context.Background(), act(e.clk.Now(), ""), p[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.GPUCount != 1 || !r.StartedAt().Equal(boot) {
		t.Fatalf("logged %d× %s from %v", r.GPUCount, r.GPU, r.StartedAt())
	}
}

// TestAttack_RedeliveredLogAfterCrash: the Log press was carried out,
// the server was killed, and the chat redelivers the same update (same
// action key) to the new server: nothing more is logged, and the
// instance's agent still gets one working token for the one rental.
func TestAttack_RedeliveredLogAfterCrash(t *testing.T) {
	e := newEnrolEnv(t)
	ctx := context.Background()
	in, r := e.adopted(t0) // key tg:1:cb:1
	e.kill()
	_, err := e.hub.Enrolment().Adopt(ctx, act(e.clk.Now(), "tg:1:cb:1"), in.ID, nil)
	if c := ledger.ErrorCode(err); c != ledger.EDUPLICATE && c != ledger.ECONFLICT {
		t.Fatalf("the redelivered press: %v, want a duplicate or a conflict", err)
	}
	b, err := e.db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range b.Rentals {
		if x.Name == r.Name || strings.HasPrefix(x.Name, r.Name+"-") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d rentals logged from one press", n)
	}
	got := e.answer(e.facts("abc123", t0))
	if got.State != wire.EnrolBound || got.Rental != r.Name {
		t.Fatalf("after the crash: %+v", got)
	}
	if code, _, msg := e.send(got.Token, e.facts("abc123", t0)); code != http.StatusOK {
		t.Fatalf("the token: %d %q", code, msg)
	}
}
