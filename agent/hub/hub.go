// Package hub is the server side of the agent protocol (DESIGN.md section
// 6): the HTTP handler that receives heartbeats and order results from
// gpuledger-agent, the tokens that tie an agent to a rental, and the
// release orders handed out in heartbeat responses.
//
// The hub keeps each agent's latest state in memory and writes heartbeats
// to the store in batches (Run flushes them), so that thousands of agents
// cost one transaction per flush instead of one per heartbeat. What must
// not be lost (idle intervals opening and closing, in one transaction with
// the agent state they go with; a host's shutdown report or new boot, with
// the state that remembers it was told; orders and their results; the
// stop or release an agent confirmed) is written before the request is
// answered.
// A crash loses at most one flush of heartbeat statistics; Load rebuilds
// each agent's idle state from the open idle interval, so the two agree.
//
// Heartbeats sent with a user's enrolment token announce the instance the
// agent runs on and are answered with its state, until the user logs it
// and the hub hands the agent that rental's own token (enrol.go).
package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// Store is what the hub reads and writes: the ledger's sets of the
// agents, their orders and enrolments, whose contracts they state
// (ledger/sqlite's DB implements them all).
type Store interface {
	ledger.TokenStore
	ledger.BeatStore
	ledger.IdleStore
	ledger.PolicyStore
	ledger.OrderStore
	ledger.RentalLookup
	ledger.LeaseStore
	ledger.EnrolStore
	// BenchStore keeps what the agents' benches, wrapped jobs and first
	// work say each rental delivered (bench.go).
	ledger.BenchStore
	// User gives the account's creation time, which an adopted rental may
	// not start before (ledger.UserStore).
	User(ctx context.Context, id int64) (ledger.User, error)
}

// Config configures a Hub. Store is required.
type Config struct {
	Store Store
	// Events takes what the user should hear about (ledger.AgentEvent:
	// a job finished, a host booted, an order's progress, …) for the
	// scheduler (events.Bus); nil: nobody is told. The hub publishes an
	// event after the request that made it has let go of the hub's locks
	// and before it is answered, so a consumer may call the hub back; a
	// consumer that is behind slows those requests down (the bus's
	// back-pressure) rather than losing what they tell.
	Events ledger.Publisher
	Now    func() time.Time // default time.Now
	Logger *slog.Logger     // default slog.Default()
	// Registry receives the hub's metrics; nil means a new registry
	// (served by Handler's /metrics either way).
	Registry *prometheus.Registry

	// RateBurst and RateEvery limit each token: a bucket of RateBurst
	// requests refilled by one every RateEvery. Defaults 40 and 1s: an
	// agent sends one heartbeat every 30 s, and up to 20 queued ones in a
	// row after an outage, so only a runaway agent is refused.
	RateBurst int
	RateEvery time.Duration
	// FlushEvery is how often Run writes buffered heartbeats. Default 500ms.
	FlushEvery time.Duration
	// OrderTTL is how long an order stays valid. Default 10 min.
	OrderTTL time.Duration
	// StartedTimeout is how long an order may stay started (the release
	// command running) before it is given up as not confirmed. Default 20 min.
	StartedTimeout time.Duration
	// TokenTTL is how long a token looked up is trusted before it is read
	// again (so a /release typed in chat revokes it soon). Default 30s.
	TokenTTL time.Duration
	// UtilThreshold, when set, is sent to agents as their busy threshold.
	UtilThreshold float64
	// TrustedProxies are the reverse proxies in front of the hub
	// (GPULEDGER_TRUSTED_PROXIES): only a request from one of them has its
	// X-Forwarded-For read for the address a heartbeat came from. Empty:
	// the header is ignored and the TCP peer is the address.
	TrustedProxies []netip.Prefix
}

// Hub serves the agent endpoints. It is safe for concurrent use.
type Hub struct {
	store  Store
	events ledger.Publisher
	now    func() time.Time
	log    *slog.Logger
	reg    *prometheus.Registry
	m      *metrics
	cfg    Config

	mu       sync.Mutex
	tokens   *tokenCache[ledger.AgentToken] // rentals' agent tokens
	agents   map[int64]*agent               // by rental id
	beats    []ledger.Beat                  // waiting for the next flush
	dirty    map[int64]bool                 // rentals whose state changed since the flush
	rentals  map[int64]*rentalEntry         // cached rentals
	flushNow chan struct{}

	// The events made under mu, waiting to be published (emit, publish):
	// queuedMu is taken inside mu, never around it; pubTurn lets one
	// publish at a time take them, so they leave in the order they came.
	queuedMu sync.Mutex
	queued   []ledger.AgentEvent
	pubTurn  chan struct{}

	// Enrolment (enrol.go), under mu.
	enrolTokens *tokenCache[ledger.EnrolToken] // users' enrolment tokens
	instances   map[instanceRef]*instanceEntry
	handovers   map[int64]*handover    // rental tokens waiting to be handed over, by instance id
	handoverBy  map[[32]byte]int64     // the same, by token hash
	returned    map[int64]returnedNote // InstanceReturned told, by instance id
	// enrolMu serialises the store work of enrolment heartbeats, so that
	// two heartbeats of one instance neither announce it twice nor issue
	// two hand-over tokens. Taken before mu, never inside it.
	enrolMu sync.Mutex

	// Benches (bench.go). benchMu serialises the store work of bench
	// reports, so that two reports of one rental are never both its
	// first; taken before mu, never inside it. benchOff caches each
	// user's Settings.BenchOff, under mu; benchOffGen counts the
	// UserChanged calls, under mu, so that a read of the store that one
	// overtook does not cache what it read (userBenchOff).
	benchMu     sync.Mutex
	benchOff    map[int64]userBenchOff
	benchOffGen uint64
}

type rentalEntry struct {
	r        *ledger.Rental
	lease    ledger.LeaseEnd // the stored lease end, when leaseOK
	leaseOK  bool
	inst     ledger.Instance // the instance the rental is bound to, when instOK
	instOK   bool
	loadedAt time.Time
}

// agent is the hub's memory of one rental's agent.
type agent struct {
	state          ledger.AgentState
	idleOpen       bool           // an idle interval is open in the store
	period         time.Duration  // the agent's sample interval, as its windows show it
	lastEnd        time.Time      // server-clock end of the last window with samples
	resumed        bool           // loaded at start with a streak open; no heartbeat since
	step           idleStep       // what the heartbeat being recorded does to the idle intervals
	mismatchSaid   ledger.GPUDiff // the GPU mismatch last told
	jobEndReported time.Time      // the job end already reported
	orders         []ledger.Order
	afterRelease   time.Time // the last "reports after release" told
	policyRefused  string    // what the agent last said about refusing the policy
	// The host boot whose shutdown was told (HostShutdown), and whether
	// that report said the operating system was going down.
	shutdownBoot time.Time
	shutdownHost bool
	shutdownTold bool
	// The agent runs (boot ids) that a later one replaced, newest last:
	// one of them reporting again is a second agent on the same token.
	replaced []string

	// What the token made the bot say (see noteBudget).
	notes            []time.Time // agent-triggered messages in the last noteWindow
	notesDroppedSaid time.Time   // when dropping was last logged
	jobToldAt        time.Time   // the last job-finished card
	jobsTold         []string    // jobs (start and command) told, oldest first

	// What the rental delivered (bench.go).
	bench      benchKnown     // whether the store holds a bench for the rental
	runPending *ledger.JobRun // a finished job's run to store after the lock
	// When the runs stored in the last noteWindow were queued, and when
	// dropping more was last logged (jobRunBudget).
	runsStored      []time.Time
	runsDroppedSaid time.Time
	// First sustained work: the streak of work windows so far (its start
	// on the server's clock and its busy seconds), the start to record
	// once the lock is let go, and whether the store has one.
	workFrom      time.Time
	workBusyS     int64
	workPending   time.Time
	firstWorkDone bool
}

// New returns a hub for cfg. Call Load before serving and run Run.
func New(cfg Config) (*Hub, error) {
	if cfg.Store == nil {
		return nil, errors.New("hub: config: Store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.RateBurst <= 0 {
		cfg.RateBurst = 40
	}
	if cfg.RateEvery <= 0 {
		cfg.RateEvery = time.Second
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = 500 * time.Millisecond
	}
	if cfg.OrderTTL <= 0 {
		cfg.OrderTTL = 10 * time.Minute
	}
	if cfg.OrderTTL > wire.MaxOrderLifetime {
		return nil, fmt.Errorf("hub: config: OrderTTL %s is over the protocol's %s", cfg.OrderTTL, wire.MaxOrderLifetime)
	}
	if cfg.StartedTimeout <= 0 {
		cfg.StartedTimeout = 20 * time.Minute
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = 30 * time.Second
	}
	h := &Hub{
		store:    cfg.Store,
		events:   cfg.Events,
		now:      cfg.Now,
		log:      cfg.Logger,
		reg:      cfg.Registry,
		cfg:      cfg,
		tokens:   newTokenCache("token", cfg.Store.TokenByHash, (*ledger.AgentToken).Valid),
		agents:   map[int64]*agent{},
		dirty:    map[int64]bool{},
		rentals:  map[int64]*rentalEntry{},
		flushNow: make(chan struct{}, 1),
		pubTurn:  make(chan struct{}, 1),

		enrolTokens: newTokenCache("enrolment token", cfg.Store.EnrolTokenByHash, (*ledger.EnrolToken).Valid),
		instances:   map[instanceRef]*instanceEntry{},
		handovers:   map[int64]*handover{},
		handoverBy:  map[[32]byte]int64{},
		returned:    map[int64]returnedNote{},
		benchOff:    map[int64]userBenchOff{},
	}
	m, err := newMetrics(cfg.Registry, h.agentsSeen)
	if err != nil {
		return nil, err
	}
	h.m = m
	return h, nil
}

// Load reads the agents' states and the open orders from the store, so a
// restarted server knows when each agent last reported and still hands out
// orders issued before the restart.
func (h *Hub) Load(ctx context.Context) error {
	states, err := h.store.AgentStates(ctx)
	if err != nil {
		return fmt.Errorf("hub: load: %w", err)
	}
	orders, err := h.store.OpenOrders(ctx, 0)
	if err != nil {
		return fmt.Errorf("hub: load: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range states {
		a := h.agentLocked(s.RentalID)
		a.state = s
		// The store rebuilt the idle fields from the open interval.
		a.idleOpen = s.Verdict == ledger.VerdictIdle && !s.IdleSince.IsZero()
		a.resumed = a.idleOpen
		if s.Job.Exited && s.Job.EndedAt.IsZero() {
			a.jobEndReported = s.LastSeen
		} else if s.Job.Exited {
			a.jobEndReported = s.Job.EndedAt
		}
	}
	for _, o := range orders {
		a := h.agentLocked(o.RentalID)
		a.orders = append(a.orders, o)
	}
	return nil
}

func (h *Hub) agentLocked(rentalID int64) *agent {
	a := h.agents[rentalID]
	if a == nil {
		a = &agent{state: ledger.AgentState{RentalID: rentalID}}
		h.agents[rentalID] = a
	}
	return a
}

// Handler returns the HTTP handler: the agent endpoints, /healthz and
// /metrics.
func (h *Hub) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+wire.PathHeartbeat, h.serveHeartbeat)
	mux.HandleFunc(wire.PathOrderResultPattern, h.serveResult)
	mux.HandleFunc("POST "+wire.PathBench, h.serveBench)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.Handle("GET /metrics", metricsHandler(h.reg))
	return mux
}

// Run flushes buffered heartbeats every FlushEvery, and publishes the
// events a request could not (its client left while the consumer was
// behind), until ctx ends; then it does both once more and returns.
func (h *Hub) Run(ctx context.Context) error {
	t := time.NewTicker(h.cfg.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			h.publish(fctx)
			return h.Flush(fctx)
		case <-t.C:
		case <-h.flushNow:
		}
		h.publish(ctx)
		if err := h.Flush(ctx); err != nil && ctx.Err() == nil {
			h.log.Error("hub: flush heartbeats", "err", err)
		}
	}
}

// emit queues ev for publish. It never waits, so it may be called with
// mu held.
func (h *Hub) emit(ev ledger.AgentEvent) {
	if h.events == nil {
		return
	}
	h.queuedMu.Lock()
	h.queued = append(h.queued, ev)
	h.queuedMu.Unlock()
}

// publish hands the queued events to Events, oldest first, waiting (on
// ctx) while the consumer is behind. It is called with no lock held, at
// the end of each request that may have emitted, before the answer. An
// event the consumer no longer takes (it stopped) is logged and dropped;
// when ctx ends first, the rest stay queued for the next publish (Run's
// tick at the latest).
func (h *Hub) publish(ctx context.Context) {
	if h.events == nil {
		return
	}
	select {
	case h.pubTurn <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-h.pubTurn }()
	for {
		h.queuedMu.Lock()
		if len(h.queued) == 0 {
			h.queuedMu.Unlock()
			return
		}
		ev := h.queued[0]
		h.queuedMu.Unlock()
		err := h.events.Publish(ctx, ev)
		if err != nil && ctx.Err() != nil {
			return
		}
		if err != nil {
			h.log.Error("hub: an event was not delivered", "event", fmt.Sprintf("%T", ev), "err", err)
		}
		h.queuedMu.Lock()
		h.queued = h.queued[1:]
		h.queuedMu.Unlock()
	}
}

// Flush writes the buffered heartbeats and agent states to the store, and
// moves each open idle interval's evidence end to its state's IdleUntil.
func (h *Hub) Flush(ctx context.Context) error {
	h.mu.Lock()
	beats := h.beats
	h.beats = nil
	states := make([]ledger.AgentState, 0, len(h.dirty))
	for id := range h.dirty {
		if a := h.agents[id]; a != nil {
			states = append(states, a.state)
		}
	}
	clear(h.dirty)
	h.mu.Unlock()
	if len(beats) == 0 && len(states) == 0 {
		return nil
	}
	if err := h.store.SaveBeats(ctx, beats, states); err != nil {
		// Put them back for the next try (a busy disk is no reason to
		// lose heartbeats), bounded.
		h.mu.Lock()
		if len(h.beats) < 200_000 {
			h.beats = append(beats, h.beats...)
		}
		for _, s := range states {
			h.dirty[s.RentalID] = true
		}
		h.mu.Unlock()
		return fmt.Errorf("hub: flush: %w", err)
	}
	return nil
}

// AgentState returns the latest state of a rental's agent and whether one
// was ever seen.
func (h *Hub) AgentState(rentalID int64) (ledger.AgentState, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.agents[rentalID]
	if a == nil || !a.state.Seen() {
		return ledger.AgentState{}, false
	}
	return a.state, true
}

// States returns the states of every agent seen.
func (h *Hub) States() []ledger.AgentState {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ledger.AgentState, 0, len(h.agents))
	for _, a := range h.agents {
		if a.state.Seen() {
			out = append(out, a.state)
		}
	}
	return out
}

func (h *Hub) agentsSeen() float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	n := 0
	for _, a := range h.agents {
		if a.state.Seen() && now.Sub(a.state.LastSeen) < 10*time.Minute {
			n++
		}
	}
	return float64(n)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func hashToken(tok string) [32]byte { return sha256.Sum256([]byte(tok)) }
