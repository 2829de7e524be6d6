package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"
)

// agentServer is the HTTP server of the agent hub and the dashboard. Its
// listener is opened before the parts that print the URL agents are told
// (PublicURL: the dashboard's links, /agent's install command), and it
// serves before the chat transport starts, so /agent works at once.
type agentServer struct {
	cfg Config // Listen as the listener has it (port 0 and a moved default resolved)
	ln  net.Listener
	srv *http.Server
	// done is closed when Serve returns; nil before serve.
	done chan struct{}

	// movedFrom is the console's default address when another program
	// held it and the hub took a free port instead (listenHub).
	movedFrom string
}

// hubWriteTimeout is the hub server's write timeout, and how long the agent
// download waits on a client that reads nothing.
const hubWriteTimeout = 30 * time.Second

// listenAgents opens the hub's listener on cfg.Listen (listenHub) and logs
// the address and the URL agents will be told.
func listenAgents(cfg Config, log *slog.Logger) (*agentServer, error) {
	ln, err := listenHub(cfg, log)
	if err != nil {
		return nil, err
	}
	a := &agentServer{cfg: cfg, ln: ln}
	if got := ln.Addr().String(); cfg.ListenDefault && got != cfg.Listen {
		// The console's default was taken: agents and the install
		// command must be told the port the hub really has.
		a.movedFrom = cfg.Listen
		a.cfg.Listen = got
	}
	if host, port, err := net.SplitHostPort(a.cfg.Listen); err == nil && port == "0" {
		// Port 0 asks the system for a free port: agents must be told the
		// one it gave, not ":0".
		if _, got, err := net.SplitHostPort(ln.Addr().String()); err == nil {
			a.cfg.Listen = net.JoinHostPort(host, got)
		}
	}
	log.Info("agent hub listening", "addr", ln.Addr().String(), "public_url", a.PublicURL())
	return a, nil
}

// serve serves handler (the hub's endpoints and the dashboard) until
// Shutdown.
func (a *agentServer) serve(handler http.Handler, log *slog.Logger) {
	a.srv = &http.Server{
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
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		if err := a.srv.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("agent hub stopped", "err", err)
		}
	}()
}

// Shutdown stops accepting and waits, until ctx ends, for the requests in
// progress to complete.
func (a *agentServer) Shutdown(ctx context.Context) error {
	if a.srv == nil {
		return a.ln.Close()
	}
	err := a.srv.Shutdown(ctx)
	<-a.done
	return err
}

// Close closes the listener of a server that never served.
func (a *agentServer) Close() error { return a.Shutdown(context.Background()) }

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
func (a *agentServer) MovedFrom() string { return a.movedFrom }

// Addr returns the address the hub listens on.
func (a *agentServer) Addr() string { return a.ln.Addr().String() }

// PublicURL returns the URL agents are told to use: GPULEDGER_PUBLIC_URL,
// or else the address the hub listens on, with the port the system gave
// when it was asked for port 0.
func (a *agentServer) PublicURL() string { return a.cfg.publicURL() }
