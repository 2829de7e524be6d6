// Package hubtest is a small stand-in for the server's agent hub, for tests
// and demos: it decodes heartbeats, hands out signed orders and records
// order results. It is not the real hub (that lives with the server); it
// checks the token and the body limit the same way.
package hubtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// Hub records what agents send. It is safe for concurrent use. Its Handler
// serves the agent endpoints; use it with httptest.NewServer or a real
// listener.
type Hub struct {
	Token  string
	Rental string
	Now    func() time.Time // default time.Now
	// EnrolToken, when set, is accepted as an enrolment token: a
	// heartbeat sent with it is recorded and answered with the answer
	// SetEnrolment set (default waiting), without orders or policy.
	EnrolToken string

	mu         sync.Mutex
	heartbeats []wire.HeartbeatRequest
	results    []wire.OrderResult
	pending    []wire.Order
	policy     wire.Policy
	fail       int    // answer this status to the next heartbeats while > 0 ...
	failCode   int    // ... with this code
	raw        []byte // when set, answer heartbeats with these bytes verbatim
	notify     chan struct{}
	tokens     []string // the bearer token of each recorded heartbeat
	enrol      *wire.EnrolmentAnswer
	refuse     int // when set, Token is answered with this status

	// The bench: wantBench asks for one in heartbeat answers until one is
	// stored; benchPosts are every POST that reached the handler with a
	// decodable body, benchIDs the IDs stored; benchFail answers the next
	// posts benchFailCode.
	wantBench       bool
	benchPosts      []wire.BenchReport
	benchIDs        map[string]bool
	benchFail       int
	benchFailCode   int
	benchRetryAfter string // the failures' Retry-After header; "" none
}

// New returns a hub that accepts token for rental.
func New(token, rental string) *Hub {
	return &Hub{Token: token, Rental: rental, notify: make(chan struct{}, 1)}
}

func (h *Hub) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Handler returns the hub's HTTP handler.
func (h *Hub) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+wire.PathHeartbeat, h.heartbeat)
	mux.HandleFunc(wire.PathOrderResultPattern, h.result)
	mux.HandleFunc("POST "+wire.PathBench, h.bench)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

func (h *Hub) auth(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && tok == h.Token
}

func (h *Hub) bearer(r *http.Request) string {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return tok
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, wire.MaxBodyBytes)
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		code := http.StatusBadRequest
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, "bad body: "+err.Error(), code)
		return false
	}
	return true
}

func (h *Hub) heartbeat(w http.ResponseWriter, r *http.Request) {
	if tok := h.bearer(r); h.EnrolToken != "" && tok == h.EnrolToken {
		h.enrolHeartbeat(w, r)
		return
	}
	h.mu.Lock()
	refuse := h.refuse
	h.mu.Unlock()
	if refuse != 0 && h.auth(r) {
		http.Error(w, "this token belongs to another instance (runpod:abc123): a copy?", refuse)
		return
	}
	if !h.auth(r) {
		http.Error(w, "unknown token", http.StatusUnauthorized)
		return
	}
	var hb wire.HeartbeatRequest
	if !decode(w, r, &hb) {
		return
	}
	h.mu.Lock()
	if h.fail > 0 {
		h.fail--
		code := h.failCode
		h.mu.Unlock()
		http.Error(w, "injected failure", code)
		return
	}
	h.heartbeats = append(h.heartbeats, hb)
	h.tokens = append(h.tokens, h.Token)
	resp := wire.HeartbeatResponse{Rental: h.Rental, Orders: h.pending, Policy: h.policy, BenchWanted: h.wantBench && len(h.benchIDs) == 0}
	h.pending = nil
	raw := h.raw
	h.mu.Unlock()
	h.poke()
	w.Header().Set("Content-Type", "application/json")
	if raw != nil {
		w.Write(raw)
		return
	}
	json.NewEncoder(w).Encode(resp)
}

// enrolHeartbeat records a heartbeat sent with the enrolment token and
// answers it with the enrolment answer alone, as the real hub does.
func (h *Hub) enrolHeartbeat(w http.ResponseWriter, r *http.Request) {
	var hb wire.HeartbeatRequest
	if !decode(w, r, &hb) {
		return
	}
	if hb.Instance == nil {
		http.Error(w, "an enrolment token needs the instance facts", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.heartbeats = append(h.heartbeats, hb)
	h.tokens = append(h.tokens, h.EnrolToken)
	a := wire.EnrolmentAnswer{State: wire.EnrolWaiting}
	if h.enrol != nil {
		a = *h.enrol
	}
	h.mu.Unlock()
	h.poke()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(wire.HeartbeatResponse{Enrolment: &a})
}

// SetEnrolment sets the answer to enrolment heartbeats (nil: waiting).
func (h *Hub) SetEnrolment(a *wire.EnrolmentAnswer) {
	h.mu.Lock()
	h.enrol = a
	h.mu.Unlock()
}

// RefuseToken makes heartbeats sent with Token answer status code (409:
// the token belongs to another instance; 401: unknown); 0 accepts it
// again.
func (h *Hub) RefuseToken(code int) {
	h.mu.Lock()
	h.refuse = code
	h.mu.Unlock()
}

// Tokens returns the token each recorded heartbeat was sent with, in the
// order of Heartbeats.
func (h *Hub) Tokens() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.tokens...)
}

func (h *Hub) result(w http.ResponseWriter, r *http.Request) {
	if !h.auth(r) {
		http.Error(w, "unknown token", http.StatusUnauthorized)
		return
	}
	var res wire.OrderResult
	if !decode(w, r, &res) {
		return
	}
	if res.OrderID != r.PathValue("id") {
		http.Error(w, "order id mismatch", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.results = append(h.results, res)
	h.mu.Unlock()
	h.poke()
	w.WriteHeader(http.StatusNoContent)
}

// bench stores a bench report as the real hub does (once per ID): 401
// for an unknown token, 409 for the enrolment token, 413 over
// wire.MaxBenchBodyBytes, 400 for a body that is not a report.
func (h *Hub) bench(w http.ResponseWriter, r *http.Request) {
	if tok := h.bearer(r); h.EnrolToken != "" && tok == h.EnrolToken {
		http.Error(w, "an enrolment token has no rental yet: send the bench with the rental's token", http.StatusConflict)
		return
	}
	if !h.auth(r) {
		http.Error(w, "unknown token", http.StatusUnauthorized)
		return
	}
	var rep wire.BenchReport
	r.Body = http.MaxBytesReader(w, r.Body, wire.MaxBenchBodyBytes)
	if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
		code := http.StatusBadRequest
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, "bad body: "+err.Error(), code)
		return
	}
	if rep.ID == "" || len(rep.ID) > 64 {
		http.Error(w, "a bench report needs an id of at most 64 bytes", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.benchPosts = append(h.benchPosts, rep)
	if h.benchFail > 0 {
		h.benchFail--
		code, after := h.benchFailCode, h.benchRetryAfter
		h.mu.Unlock()
		h.poke()
		if after != "" {
			w.Header().Set("Retry-After", after)
		}
		http.Error(w, "injected failure", code)
		return
	}
	stored := !h.benchIDs[rep.ID]
	if h.benchIDs == nil {
		h.benchIDs = map[string]bool{}
	}
	h.benchIDs[rep.ID] = true
	h.mu.Unlock()
	h.poke()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(wire.BenchResponse{Rental: h.Rental, Stored: stored})
}

// WantBench makes heartbeat answers ask for a bench (BenchWanted) until
// one is stored.
func (h *Hub) WantBench(on bool) {
	h.mu.Lock()
	h.wantBench = on
	h.mu.Unlock()
}

// FailBench makes the next n bench posts fail with status code (they
// are still recorded in BenchPosts).
func (h *Hub) FailBench(n, code int) {
	h.mu.Lock()
	h.benchFail, h.benchFailCode = n, code
	h.mu.Unlock()
}

// FailBenchRetryAfter is FailBench with a Retry-After header (seconds)
// on the failures, as the hub's 429s carry one.
func (h *Hub) FailBenchRetryAfter(n, code int, retryAfter string) {
	h.mu.Lock()
	h.benchFail, h.benchFailCode, h.benchRetryAfter = n, code, retryAfter
	h.mu.Unlock()
}

// BenchPosts returns every bench report posted with the rental's token
// and a decodable body, retries included.
func (h *Hub) BenchPosts() []wire.BenchReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]wire.BenchReport(nil), h.benchPosts...)
}

// BenchesStored returns how many distinct bench reports are stored.
func (h *Hub) BenchesStored() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.benchIDs)
}

func (h *Hub) poke() {
	select {
	case h.notify <- struct{}{}:
	default:
	}
}

// Changed is signalled (without blocking, coalesced) after every recorded
// heartbeat or result, so tests can wait without sleeping.
func (h *Hub) Changed() <-chan struct{} { return h.notify }

// Heartbeats returns a copy of the heartbeats received.
func (h *Hub) Heartbeats() []wire.HeartbeatRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]wire.HeartbeatRequest(nil), h.heartbeats...)
}

// Results returns a copy of the order results received.
func (h *Hub) Results() []wire.OrderResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]wire.OrderResult(nil), h.results...)
}

// SetPolicy sets the policy sent with every response.
func (h *Hub) SetPolicy(p wire.Policy) {
	h.mu.Lock()
	h.policy = p
	h.mu.Unlock()
}

// SignedPolicy returns p for the hub's rental, issued now, valid for ttl
// and signed with the hub's token, as the real hub sends it.
func (h *Hub) SignedPolicy(p wire.Policy, ttl time.Duration) wire.Policy {
	now := h.now().UTC()
	p.Rental, p.IssuedAt, p.ExpiresAt = h.Rental, now, now.Add(ttl)
	p.Signature = wire.SignPolicy(h.Token, p)
	return p
}

// FailNext makes the next n heartbeats fail with status code.
func (h *Hub) FailNext(n, code int) {
	h.mu.Lock()
	h.fail, h.failCode = n, code
	h.mu.Unlock()
}

// AnswerRaw makes heartbeats answer with raw bytes (nil restores JSON).
func (h *Hub) AnswerRaw(raw []byte) {
	h.mu.Lock()
	h.raw = raw
	h.mu.Unlock()
}

// Queue hands o out with the next heartbeat response, as is (so tests can
// queue unsigned or tampered orders).
func (h *Hub) Queue(o wire.Order) {
	h.mu.Lock()
	h.pending = append(h.pending, o)
	h.mu.Unlock()
}

// NewOrder returns an order for the hub's rental, valid for ttl and signed
// with the hub's token.
func (h *Hub) NewOrder(action string, ttl time.Duration) wire.Order {
	now := h.now().UTC()
	o := wire.Order{ID: "o-" + randHex(6), Rental: h.Rental, Action: action,
		IssuedAt: now, ExpiresAt: now.Add(ttl), Nonce: randHex(12)}
	o.Signature = wire.SignOrder(h.Token, o)
	return o
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
