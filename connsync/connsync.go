// Package connsync connects users' platform accounts to their ledgers:
// it checks and keeps the API keys (/connect), polls each connector on its
// own schedule within the platform's rate limits, turns what the platform
// lists into rentals, stops, resumes, releases, price notices and
// balances, stops or terminates instances through the API when asked, and
// reconciles the ledger against what the platform billed.
//
// It sits beside the scheduler: the connectors (connector/...) only say
// what a platform answered; this package decides what that changes in the
// ledger, and tells the user. A platform that is down, slow or rate
// limiting changes nothing and never slows the chat or the hub: every
// call runs in the sync loop's own goroutines with a bounded context.
package connsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/teamroom"
)

// Factory makes a Client for one platform account from its API key. The
// server builds it from the GPULEDGER_*_URL variables (cmd/gpuledger);
// tests point it at the fake platforms. An error means the key cannot be
// used at all (empty, spaces in it), before any call.
type Factory func(platform, key string) (connector.Client, error)

// Store is what the sync reads and writes: the ledger's sets, whose
// contracts they state. ledger/sqlite's DB implements them all, and tests
// use a real one.
type Store interface {
	ledger.ConnectorStore
	ledger.PlatformStore
	// The outbox: the notices the sync writes with its changes.
	ledger.OutboxStore
	ledger.UserStore
	ledger.RentalStore
	ledger.JournalStore
	Book(ctx context.Context, userID int64) (*ledger.Book, error)
	// Notices sent once (MarkNotice).
	ledger.NotifyStore
	// The agent's own claim of the platform ID of a rental adopted from
	// an enrolment (InstanceByRental).
	ledger.EnrolStore
	// Each rental's standing answer about its agent (AutoWay).
	ledger.TrustStore
}

// Agents gives what a rental's agent last reported (agent/hub.Hub): the
// agent says whether the GPUs are busy, the platform whether it bills.
type Agents interface {
	AgentState(rentalID int64) (ledger.AgentState, bool)
}

// Config configures a Syncer. Store, Vault, Platforms, Clients and
// Buttons are required.
type Config struct {
	Store Store
	Vault *vault.Vault
	// Platforms are the platforms /connect accepts, in the order they are
	// listed, with what each can do (cmd/gpuledger lists them once).
	Platforms connector.Registry
	Clients   Factory
	// Buttons signs the questions' buttons; New registers their actions
	// with it, so a press reaches the sync verified.
	Buttons *chat.Buttons
	// Agents is the hub's view of the agents; nil: no agent is known.
	Agents Agents
	// Interval is how often each connector is polled (GPULEDGER_SYNC);
	// a connector whose MinInterval is longer is polled at that instead.
	// Default 60s.
	Interval time.Duration
	// ConfirmWithin bounds how long a stop or terminate is re-read before
	// it is reported "not confirmed". Default 3 min.
	ConfirmWithin time.Duration
	// CallTimeout bounds one platform call. Default 30s.
	CallTimeout time.Duration
	// ChatID maps a user to the chat their notices go to. Default: the
	// user ID (a Telegram private chat).
	ChatID func(userID int64) int64
	Now    func() time.Time // default time.Now
	Logger *slog.Logger     // default slog.Default()
	// Sleep waits d or until ctx ends, between the re-reads that confirm
	// a stop (Act). Default: a timer. Tests advance their clock instead.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Syncer runs the connectors. It is safe for concurrent use: the chat
// calls Connect and Reconcile while the loop runs.
type Syncer struct {
	cfg   Config
	store Store
	now   func() time.Time
	log   *slog.Logger

	mu  sync.Mutex
	snd chat.Sender // set by Run; nil before: notices wait for the next round
	// conns is the loop's per-connector schedule and backoff state, by
	// connKey.
	conns map[connKey]*connState
	// kick wakes Run at once (a new connector is due now); buffered 1.
	kick chan struct{}
	// wg holds the rounds Run started, so it returns only after them.
	wg sync.WaitGroup
	// slots bounds how many connectors are polled at once.
	slots chan struct{}
}

// MaxParallel is how many connectors the loop polls at once: enough that
// one slow platform does not hold the others back, few enough that a
// burst of rounds stays cheap for the server and the platforms.
const MaxParallel = 4

// connKey names one connector.
type connKey struct {
	user     int64
	platform string
}

// connState is the loop's memory of one connector between rounds. The
// schedule is in memory only: after a restart each connector is polled
// at once, which a platform's limits allow (one list call). The outage
// the user was told of is also stored (ledger.Connector.Outage) and
// taken back on the connector's first round after a restart.
type connState struct {
	next     time.Time // not polled before this
	failures int       // consecutive failed rounds, for the backoff
	incident string    // the failure kind the user was last told of ("" none)
	restored bool      // the stored outage was taken (restoreOutage), or a new key made it moot
	lock     sync.Mutex

	// The fields below are the sync loop's (loop.go, apply.go); s.mu
	// guards busy, the round's own goroutine the rest.
	busy         bool                 // a round of this connector is started or under way
	round        sync.Mutex           // held by a round: SyncNow and the loop never overlap
	failingSince time.Time            // the first failed round of the current run of failures
	lastGood     time.Time            // the end of the last clean round
	lastBalance  time.Time            // when the balance was last read
	missing      map[string]int       // PlatformID → consecutive valid lists without it
	seen         map[string]time.Time // PlatformID → the last valid list that held it (persisted lazily)
	// known are the connector's stored instances at generation knownGen
	// (ledger.PlatformStore.PlatformGeneration), kept between rounds only
	// when the round's end proved them the stored rows (FinishSyncRound's
	// current); nil: read them. A round uses them only when the stored
	// generation is still knownGen, so a change behind the sync (an
	// /undo's trigger, a button press, another process) is read again.
	known    []ledger.PlatformInstance
	knownGen int64
	// flood is the connector's flood card (flood.go), read from the store
	// once (floodRead) and then kept; held are the new instances the last
	// round listed, for [Show them]. Both under the connector's lock.
	flood     *ledger.SyncFlood
	floodRead bool
	held      []connector.Instance
	// answered is when the user's last answer to a flood card was
	// carried out: the day's count of new rentals starts there, so the
	// instances they chose to log do not bring the next one a card. In
	// memory only: after a restart the count is the whole day's, which
	// only errs towards a card.
	answered time.Time
}

// New returns a Syncer for cfg.
func New(cfg Config) (*Syncer, error) {
	if cfg.Store == nil || cfg.Vault == nil || len(cfg.Platforms) == 0 || cfg.Clients == nil || cfg.Buttons == nil {
		return nil, errors.New("connsync: config: Store, Vault, Platforms, Clients and Buttons are required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 60 * time.Second
	}
	if cfg.Interval < time.Second || cfg.Interval > 24*time.Hour {
		return nil, fmt.Errorf("connsync: config: Interval %s is out of range 1s..24h", cfg.Interval)
	}
	if cfg.ConfirmWithin <= 0 {
		cfg.ConfirmWithin = 3 * time.Minute
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 30 * time.Second
	}
	if cfg.ChatID == nil {
		cfg.ChatID = func(id int64) int64 { return id }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Syncer{cfg: cfg, store: cfg.Store, now: cfg.Now, log: cfg.Logger, conns: map[connKey]*connState{},
		kick: make(chan struct{}, 1), slots: make(chan struct{}, MaxParallel)}
	s.handleButtons(cfg.Buttons)
	return s, nil
}

// Platforms are the platforms /connect accepts, in the order they are
// listed: the chat lists them and says where each one's key is made.
func (s *Syncer) Platforms() connector.Registry { return s.cfg.Platforms }

// supports reports whether platform is one /connect accepts.
func (s *Syncer) supports(platform string) bool { return s.cfg.Platforms.Supports(platform) }

// client opens the user's key for platform and makes its Client. The key
// lives only in this call's memory; it is never logged or returned.
func (s *Syncer) client(c ledger.Connector) (connector.Client, error) {
	key, err := s.cfg.Vault.Open(c.KeyEnc, vault.ConnectorAD(c.UserID, c.Platform))
	if err != nil {
		return nil, fmt.Errorf("connsync: %s of user %d: %w", c.Platform, c.UserID, &keyUnopened{err: err})
	}
	cl, err := s.cfg.Clients(c.Platform, string(key))
	clear(key)
	if err != nil {
		return nil, fmt.Errorf("connsync: %s client: %w", c.Platform, err)
	}
	return cl, nil
}

// lockConn holds one connector's lock: a sync round, a stop through the
// API and a button press for that connector never interleave, so a state
// the platform lists is applied to the ledger once.
func (s *Syncer) lockConn(userID int64, platform string) func() {
	st := s.connState(userID, platform)
	st.lock.Lock()
	return st.lock.Unlock
}

// connState returns the loop's state of one connector, creating it.
func (s *Syncer) connState(userID int64, platform string) *connState {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := connKey{userID, platform}
	st := s.conns[k]
	if st == nil {
		st = &connState{missing: map[string]int{}, seen: map[string]time.Time{}}
		s.conns[k] = st
	}
	return st
}

// SetSender sets where notices go when rounds run outside Run (Round and
// SyncNow from a test or a command); Run sets it itself. A store that
// keeps teams has snd wrapped to follow a team's room (teamroom.Sender),
// as the scheduler's cards do: a notice to a room Telegram moved to a
// supergroup goes to the new ID and moves the room; one to a room that
// let the bot go unbinds it, tells the owners once and goes to the first
// owner privately.
func (s *Syncer) SetSender(snd chat.Sender) {
	if ts, ok := s.store.(ledger.TeamStore); ok {
		snd = teamroom.Wrap(snd, teamroom.Config{Teams: ts, Store: s.store, ChatID: s.cfg.ChatID, Now: s.now, Logger: s.log})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snd = snd
}

// sender returns the chat sender Run was given; nil before.
func (s *Syncer) sender() chat.Sender {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snd
}
