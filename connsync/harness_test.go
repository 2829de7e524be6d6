package connsync_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/lambda"
	"github.com/gpuledger/gpuledger/connector/lambda/lambdafake"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connector/vast"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/view"
)

const (
	rpKey   = "rpa_TESTKEY0123456789abcdef"
	vastKey = "vastTESTKEY0123456789abcdef"
	lamKey  = "secret_lambdaTESTKEY0123456789"
	uid     = int64(1)
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// clock is an injected clock the tests move.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// sent is a chat.Sender that records what is sent.
type sent struct {
	mu      sync.Mutex
	msgs    []chat.Outgoing
	answers []string
}

func (s *sent) Send(_ context.Context, m chat.Outgoing) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m)
	return len(s.msgs), nil
}

func (s *sent) AnswerCallback(_ context.Context, _, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = append(s.answers, text)
	return nil
}

// take returns the messages sent since the last take.
func (s *sent) take() []chat.Outgoing {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.msgs
	s.msgs = nil
	return m
}

// testButtons returns buttons made as the server makes them, with the
// same key each time (a restart keeps the key): the tests' presses are
// signed, verified and routed, and a handler's error worded, as in
// production.
func testButtons() *chat.Buttons {
	return chat.NewButtons([]byte("connsync-test-button-secret-32by"), view.ButtonErrors(slog.New(slog.DiscardHandler)))
}

// dispatch presses a button with data as the user does, in their
// language and zone, as the core dispatches.
func dispatch(t testing.TB, db *sqlite.DB, btn *chat.Buttons, snd chat.Sender, p chat.ButtonPress) {
	t.Helper()
	p.Lang, p.Loc = chat.LangEN, time.UTC
	if u, err := db.User(context.Background(), p.Update.UserID); err == nil {
		p.Lang, p.Loc = u.Lang, u.Location()
	}
	if err := btn.Dispatch(context.Background(), p, snd); err != nil {
		t.Fatalf("press %s: %v", p.Update.CallbackData, err)
	}
}

// env is one test's world: a real SQLite ledger, the fakes, the syncer.
type env struct {
	t     testing.TB
	ctx   context.Context
	db    *sqlite.DB
	path  string
	rp    *runpodfake.Server
	vf    *vastfake.Server
	lf    *lambdafake.Server
	clk   *clock
	snd   *sent
	btn   *chat.Buttons
	s     *connsync.Syncer
	agent *agents
	// lists counts Instances calls per platform (one per round, however
	// many pages the platform's HTTP answers take).
	lists map[string]*atomic.Int64
	// reads counts the sync's reads of the stored instances' rows.
	reads *atomic.Int64
	// vault and factory make a Syncer (restart).
	vault   *vault.Vault
	factory func(platform, key string) (connector.Client, error)
}

// platforms are the server's platforms, as cmd/gpuledger lists them.
var platforms = connector.Registry{runpod.Spec, vast.Spec, lambda.Spec, autodl.Spec}

// readCounting is the real store, counting the reads of the instances'
// rows the sync makes at the start of a round.
type readCounting struct {
	*sqlite.DB
	n *atomic.Int64
}

func (r readCounting) PlatformInstancesGen(ctx context.Context, userID int64, platform string) ([]ledger.PlatformInstance, int64, error) {
	r.n.Add(1)
	return r.DB.PlatformInstancesGen(ctx, userID, platform)
}

// counting counts a client's Instances calls.
type counting struct {
	connector.Client
	n *atomic.Int64
}

func (c counting) Instances(ctx context.Context) ([]connector.Instance, error) {
	c.n.Add(1)
	return c.Client.Instances(ctx)
}

type agents struct {
	mu sync.Mutex
	m  map[int64]ledger.AgentState
}

func (a *agents) AgentState(id int64) (ledger.AgentState, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st, ok := a.m[id]
	return st, ok
}

func newEnv(t testing.TB) *env {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sqlite.Open(ctx, path, sqlite.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.EnsureUser(ctx, ledger.User{ID: uid, Lang: "en", TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(strings.Repeat("ab", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, lists: map[string]*atomic.Int64{"runpod": {}, "vast": {}, "lambda": {}}, ctx: ctx, db: db, path: path, rp: runpodfake.New(rpKey), vf: vastfake.New(vastKey), lf: lambdafake.New(lamKey),
		clk: &clock{t: t0}, snd: &sent{}, reads: &atomic.Int64{}, agent: &agents{m: map[int64]ledger.AgentState{}}}
	t.Cleanup(e.rp.Close)
	t.Cleanup(e.vf.Close)
	t.Cleanup(e.lf.Close)
	e.vf.SetInstances()
	factory := func(platform, key string) (connector.Client, error) {
		var (
			c   connector.Client
			err error
		)
		switch platform {
		case "runpod":
			c, err = runpod.New(runpod.Config{APIKey: key, BaseURL: e.rp.RESTURL(), GraphQLURL: e.rp.GraphQLURL()})
		case "vast":
			c, err = vast.New(vast.Config{APIKey: key, BaseURL: e.vf.Base(), PageGap: time.Millisecond})
		case "lambda":
			c, err = lambda.New(lambda.Config{Key: key, BaseURL: e.lf.URL})
		default:
			return nil, fmt.Errorf("no fake for %s", platform)
		}
		if err != nil {
			return nil, err
		}
		return counting{c, e.lists[platform]}, nil
	}
	e.vault, e.factory = v, factory
	e.restart()
	return e
}

// restart replaces the Syncer with a new one over the same store, as a
// restart of the server does: whatever the loop kept in memory is gone.
func (e *env) restart() {
	e.t.Helper()
	e.btn = testButtons()
	s, err := connsync.New(connsync.Config{Store: readCounting{e.db, e.reads}, Vault: e.vault, Platforms: platforms, Clients: e.factory, Buttons: e.btn, Agents: e.agent,
		Now: e.clk.Now, CallTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		e.t.Fatal(err)
	}
	s.SetSender(e.snd)
	e.s = s
}

// connect connects platform with the fake's key.
func (e *env) connect(platform string) {
	e.t.Helper()
	key := map[string]string{"runpod": rpKey, "vast": vastKey, "lambda": lamKey}[platform]
	if _, err := e.s.Connect(e.ctx, uid, platform, key); err != nil {
		e.t.Fatalf("connect %s: %v", platform, err)
	}
}

// round moves the clock past every interval and runs one round.
func (e *env) round() {
	e.t.Helper()
	if err := e.s.Round(e.ctx); err != nil {
		e.t.Fatalf("round: %v", err)
	}
	e.clk.Add(61 * time.Second)
}

// book returns the user's ledger.
func (e *env) book() *ledger.Book {
	e.t.Helper()
	b, err := e.db.Book(e.ctx, uid)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// rental returns the user's rental called name.
func (e *env) rental(name string) *ledger.Rental {
	e.t.Helper()
	r, err := e.db.Rental(e.ctx, uid, name)
	if err != nil {
		e.t.Fatalf("rental %s: %v", name, err)
	}
	return r
}

// snapshot is the ledger's rentals as text, to show that nothing changed.
func (e *env) snapshot() string {
	var b strings.Builder
	for _, r := range e.book().Rentals {
		fmt.Fprintf(&b, "%s %s %s %s %d|", r.Name, r.PlatformID, r.State(), r.Price, len(r.Events))
	}
	return b.String()
}

// press presses the button with data.
func (e *env) press(data, key string) {
	e.t.Helper()
	dispatch(e.t, e.db, e.btn, e.snd, chat.ButtonPress{Update: chat.Update{Key: key, Kind: chat.KindCallback, UserID: uid, ChatID: uid, MessageID: 1, CallbackID: "cb", CallbackData: data},
		Now: e.clk.Now()})
}

func pod(id, name, status, price string, started time.Time) runpodfake.Pod {
	return runpodfake.NewPod(id, name, status, price, "A40", 2, started)
}

func texts(ms []chat.Outgoing) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Text)
		b.WriteString("\n")
	}
	return b.String()
}
