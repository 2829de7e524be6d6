// Package scheduler runs the reminder loop: cron jobs that read the ledger
// and the agents' reports and tell users what their rentals are doing
// (idle cards with one-tap release, silent agents, finished jobs, lease
// ends, long runs, the nightly summary, budget and balance alerts), and
// the automatic stop or release a user chose with /autorelease, taken only
// under DESIGN.md section 7's conditions.
//
// Jobs are plain func(ctx) error adapted to cron.Job in one place (adapt),
// run by robfig/cron with seconds, an explicit location, and a chain that
// recovers panics and skips a run while the previous one is still going.
// Time comes from Config.Now, so tests drive the checks with an injected
// clock and call the jobs directly.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// Store is what the scheduler reads and writes: the ledger's sets, whose
// contracts they state (ledger/sqlite's DB implements them all), so a
// test can stand in for any method by embedding a real store.
type Store interface {
	// Users, their rentals and the changes a button or a lease end makes.
	ledger.UserStore
	ledger.RentalStore
	ledger.JournalStore
	Book(ctx context.Context, userID int64) (*ledger.Book, error)
	// The agents: tokens, lease ends, automatic actions, what they reported.
	ledger.TokenStore
	ledger.LeaseStore
	ledger.PolicyStore
	ledger.BeatStore
	// Cards and notices already sent.
	ledger.NotifyStore
	// Announced instances.
	ledger.EnrolStore
	// Each rental's standing answer about an agent whose reports
	// contradicted its platform's list (trust.go).
	ledger.TrustStore
	// What each rental delivered: its benches and first work, for the
	// receipt card (receipt.go).
	ledger.BenchStore
}

// Hub is what the scheduler needs of the agent hub (agent/hub.Hub).
type Hub interface {
	AgentState(rentalID int64) (ledger.AgentState, bool)
	IssueOrder(ctx context.Context, rentalID int64, action ledger.OrderAction, origin ledger.OrderOrigin) (ledger.Order, error)
	OpenOrder(rentalID int64) (ledger.Order, bool)
	ExpireOrders(ctx context.Context) error
	CloseIdleAt(ctx context.Context, rentalID int64, t time.Time) error
	Refresh(rentalID int64)
}

// Config configures a Scheduler. Store and Buttons are required;
// Hub may be nil (no agents: only leases, long runs, summaries, budget).
type Config struct {
	Store Store
	Hub   Hub
	// Enrolment is the hub's side of the enrolment cards' buttons (Log,
	// Not mine, Reconnect, Revoke); nil: the buttons say enrolment is off.
	Enrolment Enrolment
	// Sender delivers to a user's private chat (chat ID = user ID) when
	// the jobs are driven without Run (tests); a server gives Run the
	// chat transport instead, which is built after the scheduler.
	Sender chat.Sender
	// Buttons signs the cards' buttons; New registers their actions with
	// it, so a press reaches the scheduler verified.
	Buttons *chat.Buttons
	// ChatID maps a user to the chat their notifications go to. Default:
	// the user ID (a Telegram private chat).
	ChatID   func(userID int64) int64
	Now      func() time.Time // default time.Now
	Logger   *slog.Logger     // default slog.Default()
	Location *time.Location   // the cron's zone; default time.Local
	// Tick is how often the idle, silent, lease and order checks run
	// (GPULEDGER_TICK). Default 30s.
	Tick time.Duration
	// FreshWithin is the age beyond which a heartbeat is not fresh enough
	// for an automatic action. Default 3 × Tick, at least 90s.
	FreshWithin time.Duration
	// LeaseWarn is how long before a lease's end the reminder comes.
	// Default 30 min.
	LeaseWarn time.Duration
	// BeatsKept is how long raw heartbeats are kept (the hourly roll-up is
	// kept for good). Default 24h.
	BeatsKept time.Duration
	// NoChart leaves the 14-day PNG out of the nightly summary (it is
	// there by default).
	NoChart bool
	// DashboardURL returns the dashboard's Mini App URL for the nightly
	// summary's [Open dashboard] web-app button (dashboard.Server's
	// AppURL: "" when the public URL is not https); nil or "": no button.
	DashboardURL func() string
	// Platforms acts through the connected platforms' APIs (Release now,
	// the automatic actions, the silent alert's way out) and reconciles
	// them in the nightly summary (connsync.Syncer); nil: none.
	Platforms Platforms
	// Events brings the agents' events (events.Bus): New subscribes, Run
	// handles them in order (events.go); nil: none come.
	Events ledger.Subscriber
	// Teams keeps the teams: their rooms (where a team ledger's cards
	// go), members (the owner a card names), limits and approvals
	// (approval.go). Nil: the Store when it implements ledger.TeamStore.
	Teams ledger.TeamStore
}

// Scheduler runs the jobs. It is safe for concurrent use; its button
// handlers may be called while the jobs run.
type Scheduler struct {
	cfg   Config
	store Store
	hub   Hub
	now   func() time.Time
	log   *slog.Logger

	mu       sync.Mutex
	lastHold map[int64]string // the last hold reason recorded per rental, to record changes only
	// peopleRefused is when a rental's agent last refused an automatic
	// order because someone was connected: no new one until a heartbeat
	// after it says who is there.
	peopleRefused map[int64]time.Time
	rentMu        sync.Map // per-rental *sync.Mutex: a button press and a tick never interleave
	// merged is each user's merged new-instance card (its message ID),
	// edited in place as instances arrive; after a restart a new one is
	// sent.
	merged map[int64]int
	// inFlight are the rentals with an action through a platform's API
	// running: two presses make one action.
	inFlight map[int64]bool
	// acts tracks those actions' goroutines; actCtx bounds them, and ends
	// when Run's context does (Run waits for them).
	acts      sync.WaitGroup
	actCtx    context.Context
	actCancel context.CancelFunc

	// events is the subscription to Config.Events, read by Run.
	events ledger.Subscription
	// snd is the chat sender, set once (useSender) before sndReady closes.
	snd      chat.Sender
	sndOnce  sync.Once
	sndReady chan struct{}
}

// New returns a Scheduler for cfg.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Store == nil || cfg.Buttons == nil {
		return nil, errors.New("scheduler: config: Store and Buttons are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 30 * time.Second
	}
	if cfg.Tick < time.Second {
		return nil, fmt.Errorf("scheduler: config: Tick %s is under a second", cfg.Tick)
	}
	if cfg.FreshWithin <= 0 {
		cfg.FreshWithin = max(3*cfg.Tick, 90*time.Second)
	}
	if cfg.LeaseWarn <= 0 {
		cfg.LeaseWarn = 30 * time.Minute
	}
	if cfg.BeatsKept <= 0 {
		cfg.BeatsKept = 24 * time.Hour
	}
	if cfg.ChatID == nil {
		cfg.ChatID = func(id int64) int64 { return id }
	}
	actCtx, actCancel := context.WithCancel(context.Background())
	s := &Scheduler{cfg: cfg, store: cfg.Store, hub: cfg.Hub, now: cfg.Now, log: cfg.Logger,
		lastHold: map[int64]string{}, peopleRefused: map[int64]time.Time{}, merged: map[int64]int{},
		inFlight: map[int64]bool{}, actCtx: actCtx, actCancel: actCancel}
	s.handleButtons(cfg.Buttons)
	s.sndReady = make(chan struct{})
	if cfg.Sender != nil {
		s.useSender(cfg.Sender)
	}
	if cfg.Events != nil {
		// Subscribed now, not in Run: what the hub publishes before Run
		// starts is kept for it.
		s.events = cfg.Events.Subscribe()
	}
	return s, nil
}

// Job is one scheduled task.
type Job func(ctx context.Context) error

// adapt turns a Job into a cron.Job: each run gets a context derived from
// the scheduler's (cancelled when it stops) with a timeout, and its error
// is logged with the job's name. This is the only place jobs meet cron.
func (s *Scheduler) adapt(ctx context.Context, name string, timeout time.Duration, j Job) cron.Job {
	return cron.FuncJob(func() {
		if ctx.Err() != nil {
			return
		}
		jctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := j(jctx); err != nil && ctx.Err() == nil {
			s.log.Error("scheduler: job failed", "job", name, "err", err)
		}
	})
}

// cronLogger adapts slog to cron.Logger.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }
func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, "err", err)...)
}

// Specs of the jobs (cron with seconds).
const (
	specSummary = "0 * * * * *"    // every minute: summaries due (in each user's zone)
	specMoney   = "30 */5 * * * *" // every 5 minutes: budget, runway, deadlines
	specHousek  = "15 7 * * * *"   // hourly: prune raw heartbeats
)

// Run starts the jobs, notifying through snd (the chat transport; nil
// when Config.Sender was given), and handles the agents' events on its
// own goroutine, in order, until ctx ends; then it waits for running jobs
// to finish. At start it catches up on summaries missed while the server
// was down.
func (s *Scheduler) Run(ctx context.Context, snd chat.Sender) error {
	if s.events != nil {
		defer s.events.Close()
	}
	switch {
	case snd != nil && s.cfg.Sender != nil:
		return errors.New("scheduler: Run: a sender was given in Config already")
	case snd == nil && s.cfg.Sender == nil:
		return errNoSender
	case snd != nil:
		s.useSender(snd)
	}
	l := cronLogger{s.log}
	c := cron.New(cron.WithSeconds(), cron.WithLocation(s.cfg.Location),
		cron.WithChain(cron.Recover(l), cron.SkipIfStillRunning(l)), cron.WithLogger(l))
	jobs := []struct {
		spec    string
		name    string
		timeout time.Duration
		job     Job
	}{
		{fmt.Sprintf("@every %s", s.cfg.Tick), "checks", 10 * time.Minute, s.Checks},
		{specSummary, "summaries", 10 * time.Minute, s.Summaries},
		{specMoney, "money", 10 * time.Minute, s.MoneyAlerts},
		{specHousek, "housekeeping", 30 * time.Minute, s.Housekeeping},
	}
	for _, j := range jobs {
		if _, err := c.AddJob(j.spec, s.adapt(ctx, j.name, j.timeout, j.job)); err != nil {
			return fmt.Errorf("scheduler: job %s (%q): %w", j.name, j.spec, err)
		}
	}
	// Catch up first: a summary due while the server was down goes out now,
	// marked late.
	if err := s.Summaries(ctx); err != nil {
		s.log.Error("scheduler: summary catch-up", "err", err)
	}
	c.Start()
	s.consume(ctx)
	<-c.Stop().Done()
	// Actions through a platform's API end with the scheduler: each is
	// cancelled, says so on its card, and is waited for.
	s.actCancel()
	s.acts.Wait()
	return nil
}

// Checks runs the frequent checks: orders that expired, idle rentals (and
// the automatic actions), silent agents, finished leases and long runs.
// Each rental is checked on its own: one failure does not stop the rest.
func (s *Scheduler) Checks(ctx context.Context) error {
	var errs []error
	if s.hub != nil {
		if err := s.hub.ExpireOrders(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	rentals, err := s.store.LiveRentals(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	users := map[int64]*ledger.User{}
	for _, r := range rentals {
		if ctx.Err() != nil {
			break
		}
		u := users[r.UserID]
		if u == nil {
			uu, err := s.store.User(ctx, r.UserID)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			u = &uu
			users[r.UserID] = u
		}
		if err := s.checkRental(ctx, u, r); err != nil {
			errs = append(errs, fmt.Errorf("rental %d: %w", r.ID, err))
		}
	}
	if err := s.flushPending(ctx, users); err != nil {
		errs = append(errs, err)
	}
	if err := s.teamChecks(ctx, rentals, users); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (s *Scheduler) lockRental(id int64) func() {
	m, _ := s.rentMu.LoadOrStore(id, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

func (s *Scheduler) checkRental(ctx context.Context, u *ledger.User, r *ledger.Rental) error {
	defer s.lockRental(r.ID)()
	now := s.now()
	var errs []error
	var st ledger.AgentState
	seen := false
	if s.hub != nil {
		st, seen = s.hub.AgentState(r.ID)
	}
	if seen {
		errs = append(errs, s.checkTrust(ctx, u, r, st, now), s.checkIdle(ctx, u, r, st, now), s.checkSilent(ctx, u, r, st, now))
	} else if r.State() == ledger.Running {
		errs = append(errs, s.checkLongRun(ctx, u, r, now))
	}
	errs = append(errs, s.checkLease(ctx, u, r, seen, now))
	return errors.Join(errs...)
}

// Housekeeping prunes raw heartbeats older than BeatsKept (their hourly
// roll-up stays).
func (s *Scheduler) Housekeeping(ctx context.Context) error {
	n, err := s.store.PruneBeats(ctx, s.now().Add(-s.cfg.BeatsKept))
	if err != nil {
		return err
	}
	if n > 0 {
		s.log.Info("scheduler: pruned raw heartbeats", "rows", n)
	}
	return nil
}
