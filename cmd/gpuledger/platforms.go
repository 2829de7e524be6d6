package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/lambda"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/vast"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// platforms are the platforms the server has a connector for, one line
// each, in the order /connect lists them. The URL variables, the clients,
// what /connect accepts, which platforms can stop and the key help all
// derive from this list (docs/platforms.md, "Adding or changing a
// platform").
var platforms = connector.Registry{
	runpod.Spec,
	vast.Spec,
	lambda.Spec,
	autodl.Spec,
}

// platformCallTimeout bounds one call to a platform's API.
const platformCallTimeout = 30 * time.Second

// platformClients returns the Factory the sync uses: one HTTP client for
// all platforms (the proxy variables apply, as for Telegram: the
// platforms' APIs may need one from mainland China, and AutoDL's from
// outside it), each connector pointed at its base.
func platformClients(urls connector.BaseURLs, getenv func(string) string) connsync.Factory {
	hc := &http.Client{
		Timeout:   platformCallTimeout,
		Transport: &http.Transport{Proxy: telegram.ProxyFromEnv(getenv), MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: platformCallTimeout},
	}
	return platforms.Clients(urls, hc)
}

// newPlatforms opens the vault that seals the platform keys
// (GPULEDGER_SECRET, else the key file beside the database) and makes
// the sync of the users' platform connectors. It returns the vault too:
// the Telegram transport seals with it the stored text of a /connect
// waiting to be handled. It logs where the secret came from, never the
// secret.
func newPlatforms(cfg Config, db *sqlite.DB, agents connsync.Agents, buttons *chat.Buttons, getenv func(string) string, log *slog.Logger) (*connsync.Syncer, *vault.Vault, error) {
	v, err := vault.Open(cfg.Secret, vault.DefaultKeyFile(cfg.DB))
	if err != nil {
		return nil, nil, fmt.Errorf("platform keys: %w", err)
	}
	log.Info("platform keys sealed", "secret_from", v.Source())
	s, err := connsync.New(connsync.Config{
		Store:     db,
		Vault:     v,
		Platforms: platforms,
		Clients:   platformClients(cfg.PlatformURLs, getenv),
		Buttons:   buttons,
		Agents:    agents,
		Interval:  cfg.Sync,
		Logger:    log,
	})
	return s, v, err
}
