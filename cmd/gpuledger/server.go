package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/scheduler"
	"github.com/gpuledger/gpuledger/view"
)

// server is what serve runs beside the chat transport, built in one pass
// by newServer: each part is given what it needs in its constructor, and
// nothing is set on one after it is made.
type server struct {
	log    *slog.Logger
	access *bot.Access
	hub    *hub.Hub
	agents *agentServer // the hub's and the dashboard's HTTP server
	sync   *connsync.Syncer
	sched  *scheduler.Scheduler
	dash   *dashboard.Server
	core   *bot.Core
	keys   *vault.Vault // seals a /connect waiting to be handled

	// The loops run beside the transport (start) until close.
	loops sync.WaitGroup
	stop  context.CancelFunc
}

// newServer builds the server's parts, each before those that use it.
// The agent hub publishes what the agents report on the event bus; the
// scheduler, made after it, subscribes in its constructor and handles
// them in its Run; the core, made last, is handed the scheduler (the
// instance cards /undo puts back), the sync and the dashboard. The hub's
// HTTP server is serving when newServer returns, so /agent works before
// the transport does; what the hub publishes meanwhile waits in the bus.
func newServer(ctx context.Context, cfg Config, db *sqlite.DB, owner int64, getenv func(string) string, log *slog.Logger) (s *server, err error) {
	access, err := bot.LoadAccess(ctx, db, cfg.AllowedUsers, owner) // who may use the chat and the dashboard
	if err != nil {
		return nil, err
	}
	bus := events.New(events.Config{Logger: log}) // ordered, one consumer: the scheduler
	buttonKey, err := bot.ButtonSecret(ctx, db)
	if err != nil {
		return nil, err
	}
	buttons := chat.NewButtons(buttonKey, view.ButtonErrors(log)) // sign, route, word errors for the presser
	h, err := newHub(ctx, cfg, db, bus, log)                      // publishes JobFinished, HostBooted, …
	if err != nil {
		return nil, err
	}
	agents, err := listenAgents(cfg, log) // the URL agents are told
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			agents.Close()
		}
	}()
	sync, keys, err := newPlatforms(cfg, db, h, buttons, getenv, log)
	if err != nil {
		return nil, err
	}
	dash, err := newDashboard(cfg, db, agents.PublicURL(), access, log)
	if err != nil {
		return nil, err
	}
	handler, downloads := agentHandler(h, dash.Handler(), cfg.AgentBinary, agents.PublicURL(), log)
	sched, err := scheduler.New(scheduler.Config{
		Store: db, Hub: h, Enrolment: h.Enrolment(), Buttons: buttons, Events: bus, Platforms: sync,
		Logger: log, Location: time.UTC, Tick: cfg.Tick,
		DashboardURL: dash.AppURL, // the nightly summary's Open dashboard button
		Teams:        db,          // a team ledger's cards go to its room, naming the owner
	})
	if err != nil {
		return nil, err
	}
	core, err := bot.New(ctx, bot.Config{
		Store: db, Logger: log, TZ: cfg.TZ, Access: access, Buttons: buttons,
		AutoPolicies: db, TokenRecords: db, Instances: db, SummaryChart: view.SummaryChart,
		PublicURL: agents.PublicURL(), AgentTokens: h.Tokens(), Rentals: h.Tokens(), AgentStates: h.Tokens(),
		AgentDownloads: downloads, Enrolment: h.Enrolment(),
		InstanceCards: sched, Connections: sync, Dashboard: dash,
		Teams: db, TeamOutsiders: cfg.TeamOutsiders, // who a team's invite may admit
		BotName: cfg.botName, // the t.me links of team invites
	})
	if err != nil {
		return nil, err
	}
	agents.serve(handler, log)
	return &server{log: log, access: access, hub: h, agents: agents, sync: sync, sched: sched, dash: dash, core: core, keys: keys}, nil
}

// newHub makes the agent hub, publishing on bus, with the agents' states
// and open orders read back from the store.
func newHub(ctx context.Context, cfg Config, db *sqlite.DB, bus *events.Bus, log *slog.Logger) (*hub.Hub, error) {
	h, err := hub.New(hub.Config{Store: db, Events: bus, Logger: log, TrustedProxies: cfg.TrustedProxies})
	if err != nil {
		return nil, err
	}
	if err := h.Load(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// newDashboard makes the dashboard, letting in whom access lets into the
// chat.
func newDashboard(cfg Config, db *sqlite.DB, publicURL string, access *bot.Access, log *slog.Logger) (*dashboard.Server, error) {
	dash, err := dashboard.New(dashboard.Config{
		Store:      db,
		Benches:    db,
		BotToken:   cfg.TelegramToken,
		PublicURL:  publicURL,
		Allowed:    access.Allowed,
		Personal:   access.Personal, // a team's outsider has no personal month
		Teams:      db,              // the team views, for their current members only
		MaxAuthAge: cfg.AppAuthMaxAge,
		Logger:     log,
	})
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	return dash, nil
}

// start runs the loops beside the transport, which they notify through:
// the hub's flush, the scheduler (and the agents' events), the platform
// sync. They run until close, not until ctx ends: the hub flushes what
// the requests still in progress at shutdown write.
func (s *server) start(ctx context.Context, transport chat.Sender) {
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	run := func(name string, f func(context.Context) error) {
		s.loops.Add(1)
		go func() {
			defer s.loops.Done()
			if err := f(lctx); err != nil && !errors.Is(err, context.Canceled) {
				s.log.Error(name+" stopped", "err", err)
			}
		}()
	}
	run("agent hub flush", s.hub.Run)
	run("scheduler", func(ctx context.Context) error { return s.sched.Run(ctx, transport) })
	// A platform that is down or slow is the sync's own business: its
	// calls run here, never in the chat's or the hub's goroutines.
	run("platform sync", func(ctx context.Context) error { return s.sync.Run(ctx, transport) })
}

// close stops the server, finishing work in flight: the hub's listener
// stops accepting and the requests in progress complete, then the loops
// stop (the hub writes its buffered heartbeats, the scheduler closes its
// subscription) and are waited for, within 10 seconds.
func (s *server) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.agents.Shutdown(ctx); err != nil {
		s.log.Warn("agent hub: shutdown", "err", err)
	}
	if s.stop != nil {
		s.stop()
	}
	done := make(chan struct{})
	go func() { s.loops.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
