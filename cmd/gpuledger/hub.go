package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/scheduler"
)

// reminders is the agent hub and the scheduler, as serve sees them.
type reminders struct {
	cfg  Config
	db   *sqlite.DB
	log  *slog.Logger
	hub  *hub.Hub
	srv  *http.Server
	ln   net.Listener
	tell listener
	// downloads tells /agent whether the agent binary can be downloaded.
	downloads bot.AgentDownloads
	// platforms syncs the users' platform connectors; started with the
	// scheduler, which acts through it.
	platforms *connsync.Syncer
	// dash serves the dashboard under /app/ and makes /dashboard's links;
	// it refuses everyone until the core tells it who is allowed.
	dash *dashboard.Server

	rctx   context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// movedFrom is the console's default address when another program
	// held it and the hub took a free port instead (listenHub).
	movedFrom string
}

// listener forwards the hub's events to the scheduler once it exists
// (the hub starts first, so /agent works before the transport is up).
type listener struct {
	mu sync.Mutex
	s  *scheduler.Scheduler
}

func (l *listener) get() *scheduler.Scheduler {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s
}

func (l *listener) JobFinished(ctx context.Context, r *ledger.Rental, j ledger.JobInfo) {
	if s := l.get(); s != nil {
		s.JobFinished(ctx, r, j)
	}
}

func (l *listener) GPUMismatch(ctx context.Context, r *ledger.Rental, d ledger.GPUDiff) {
	if s := l.get(); s != nil {
		s.GPUMismatch(ctx, r, d)
	}
}

func (l *listener) ReportAfterRelease(ctx context.Context, r *ledger.Rental, at time.Time) {
	if s := l.get(); s != nil {
		s.ReportAfterRelease(ctx, r, at)
	}
}

func (l *listener) OrderUpdated(ctx context.Context, o ledger.Order, r *ledger.Rental) {
	if s := l.get(); s != nil {
		s.OrderUpdated(ctx, o, r)
	}
}

func (l *listener) InstanceAnnounced(ctx context.Context, in ledger.Instance) {
	if s := l.get(); s != nil {
		s.InstanceAnnounced(ctx, in)
	}
}

func (l *listener) InstanceReturned(ctx context.Context, in ledger.Instance, r *ledger.Rental) {
	if s := l.get(); s != nil {
		s.InstanceReturned(ctx, in, r)
	}
}

func (l *listener) HostShutdown(ctx context.Context, r *ledger.Rental, at time.Time, host bool) {
	if s := l.get(); s != nil {
		s.HostShutdown(ctx, r, at, host)
	}
}

func (l *listener) HostBooted(ctx context.Context, r *ledger.Rental, b ledger.Boot) {
	if s := l.get(); s != nil {
		s.HostBooted(ctx, r, b)
	}
}

// hubWriteTimeout is the hub server's write timeout, and how long the agent
// download waits on a client that reads nothing.
const hubWriteTimeout = 30 * time.Second

// startHub opens the agent hub's listener on cfg.Listen and starts serving
// it (heartbeats are buffered and flushed by the hub's Run). Start begins
// the scheduler once the chat transport exists to notify through.
func startHub(ctx context.Context, cfg Config, db *sqlite.DB, log *slog.Logger) (*reminders, error) {
	r := &reminders{cfg: cfg, db: db, log: log}
	h, err := hub.New(hub.Config{Store: db, Listener: &r.tell, Logger: log, TrustedProxies: cfg.TrustedProxies})
	if err != nil {
		return nil, err
	}
	if err := h.Load(ctx); err != nil {
		return nil, err
	}
	r.hub = h
	ln, err := listenHub(cfg, log)
	if err != nil {
		return nil, err
	}
	r.ln = ln
	if got := ln.Addr().String(); cfg.ListenDefault && got != cfg.Listen {
		// The console's default was taken: agents and the install
		// command must be told the port the hub really has.
		r.movedFrom = cfg.Listen
		cfg.Listen = got
		r.cfg = cfg
	}
	if host, port, err := net.SplitHostPort(cfg.Listen); err == nil && port == "0" {
		// Port 0 asks the system for a free port: agents must be told the
		// one it gave, not ":0".
		if _, got, err := net.SplitHostPort(ln.Addr().String()); err == nil {
			cfg.Listen = net.JoinHostPort(host, got)
			r.cfg = cfg
		}
	}
	dash, err := dashboard.New(dashboard.Config{
		Store:      db,
		BotToken:   cfg.TelegramToken,
		PublicURL:  r.PublicURL(),
		MaxAuthAge: cfg.AppAuthMaxAge,
		Logger:     log,
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	r.dash = dash
	handler, downloads := agentHandler(h, dash.Handler(), cfg.AgentBinary, r.PublicURL(), log)
	r.downloads = downloads
	r.srv = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// The agent binary's download moves its own write deadline as it
		// progresses (hub.DownloadConfig.StallTimeout), so this bounds
		// only the short answers.
		WriteTimeout:   hubWriteTimeout,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 16 << 10,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.rctx, r.cancel = rctx, cancel
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		if err := r.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("agent hub stopped", "err", err)
		}
	}()
	go func() {
		defer r.wg.Done()
		if err := h.Run(rctx); err != nil {
			log.Error("agent hub flush", "err", err)
		}
	}()
	log.Info("agent hub listening", "addr", ln.Addr().String(), "public_url", r.PublicURL())
	return r, nil
}

// listenHub opens the hub's listener on cfg.Listen. In the terminal
// console, when the address is the default (neither GPULEDGER_LISTEN nor
// -listen set) and another program holds it, it listens on a free port
// of the same host instead and says so: the console is one person's
// ledger, and the README's first command must not fail because something
// else took 8477. An address that was chosen, or the Telegram server's
// default (agents on rented hosts and Docker's port mapping expect it),
// is not moved: a taken one is an error that says so.
func listenHub(cfg Config, log *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err == nil {
		return ln, nil
	}
	inUse := errors.Is(err, syscall.EADDRINUSE)
	if inUse && cfg.ListenDefault && cfg.TelegramToken == "" {
		host, _, _ := net.SplitHostPort(cfg.Listen)
		if ln, ferr := net.Listen("tcp", net.JoinHostPort(host, "0")); ferr == nil {
			log.Warn("agent hub: the console's default address is in use by another program: listening on a free port instead (set GPULEDGER_LISTEN to choose one)",
				"default", cfg.Listen, "addr", ln.Addr().String())
			return ln, nil
		}
	}
	switch {
	case inUse && cfg.ListenDefault:
		return nil, fmt.Errorf("agent hub: %s, the default address, is in use by another program: stop it, or set GPULEDGER_LISTEN (-listen) to a free address: %w", cfg.Listen, err)
	case inUse:
		return nil, fmt.Errorf("agent hub: %s (GPULEDGER_LISTEN / -listen) is in use by another program: stop it, or choose a free address (127.0.0.1:0 takes any free port): %w", cfg.Listen, err)
	}
	return nil, fmt.Errorf("agent hub: listen on %s (GPULEDGER_LISTEN): %w", cfg.Listen, err)
}

// MovedFrom returns the default address the console's hub could not take
// because another program held it, or "" when the hub listens where it was
// asked to.
func (r *reminders) MovedFrom() string { return r.movedFrom }

// Addr returns the address the hub listens on.
func (r *reminders) Addr() string { return r.ln.Addr().String() }

// PublicURL returns the URL agents are told to use: GPULEDGER_PUBLIC_URL,
// or else the address the hub listens on, with the port the system gave
// when it was asked for port 0.
func (r *reminders) PublicURL() string { return r.cfg.publicURL() }

// Tokens returns the hub's token service: it issues /agent's tokens, is
// told of rentals that chat commands stop or release, and gives /why the
// agents' states.
func (r *reminders) Tokens() *hub.Tokens { return r.hub.Tokens() }

// Enrolment returns the hub's enrolment service: /agent's enrolment
// tokens, /agent revoke, /adopt, and the enrolment cards' buttons.
func (r *reminders) Enrolment() *hub.Enrolment { return r.hub.Enrolment() }

// InstanceCard gives /undo the card of an instance that waits for an
// answer again (bot.InstanceCards), from the scheduler; none while the
// scheduler has not started (the reply's /adopt line still logs it).
func (r *reminders) InstanceCard(ctx context.Context, userID, instanceID int64) (chat.Outgoing, bool, error) {
	s := r.tell.get()
	if s == nil {
		return chat.Outgoing{}, false, nil
	}
	return s.InstanceCard(ctx, userID, instanceID)
}

// Downloads returns what tells /agent whether the agent binary can be
// downloaded; nil when downloads are off.
func (r *reminders) Downloads() bot.AgentDownloads { return r.downloads }

// Start starts the scheduler, notifying through s; it registers its card
// buttons with buttons as it is made.
func (r *reminders) Start(ctx context.Context, buttons *chat.Buttons, s chat.Sender) error {
	sch, err := scheduler.New(scheduler.Config{
		Store:     r.db,
		Hub:       r.hub,
		Enrolment: r.hub.Enrolment(),
		Sender:    s,
		Buttons:   buttons,
		Logger:    r.log,
		Location:  time.UTC,
		Tick:      r.cfg.Tick,
		Platforms: r.platforms,
		// The nightly summary's Open dashboard button.
		DashboardURL: r.dash.AppURL,
	})
	if err != nil {
		return err
	}
	r.tell.mu.Lock()
	r.tell.s = sch
	r.tell.mu.Unlock()
	sctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(r.rctx, cancel) // Close stops it too
	r.wg.Add(2)
	go func() {
		// A platform that is down or slow is the sync's own business: its
		// calls run here, never in the chat's or the hub's goroutines.
		defer r.wg.Done()
		if err := r.platforms.Run(sctx, s); err != nil && !errors.Is(err, context.Canceled) {
			r.log.Error("platform sync stopped", "err", err)
		}
	}()
	go func() {
		defer r.wg.Done()
		defer stop()
		defer cancel()
		if err := sch.Run(sctx); err != nil {
			r.log.Error("scheduler stopped", "err", err)
		}
	}()
	return nil
}

// Close stops the hub and the scheduler, finishing work in flight: the
// listener stops accepting, requests in progress complete, buffered
// heartbeats are written.
func (r *reminders) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	r.cancel()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return err
}
