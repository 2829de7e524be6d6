package main

import (
	"context"
	"log/slog"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// reminders is the agent hub and the scheduler, as serve sees them.
type reminders struct{}

// startHub starts the agent hub's listener. Start begins the scheduler
// once the chat transport exists to notify through.
func startHub(ctx context.Context, cfg Config, db *sqlite.DB, log *slog.Logger) (*reminders, error) {
	return &reminders{}, nil
}

// Tokens returns the agent token issuer for /agent, or nil.
func (r *reminders) Tokens() bot.AgentTokens { return nil }

// Start starts the scheduler, notifying through s.
func (r *reminders) Start(ctx context.Context, core *bot.Core, s bot.Sender) error { return nil }

// Close stops the hub and the scheduler, finishing work in flight.
func (r *reminders) Close() error { return nil }
