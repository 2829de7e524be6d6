package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/lambda"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/vast"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// PlatformURLs are the platforms' API bases (GPULEDGER_RUNPOD_URL and
// the rest): the documented ones unless set, for tests and self-hosted
// proxies.
type PlatformURLs struct {
	RunPod, RunPodGraphQL, Vast, Lambda, AutoDL string
}

// platformURLVars names each base's variable, in the order they are
// checked and documented.
var platformURLVars = []struct {
	env string
	get func(*PlatformURLs) *string
	def string
}{
	{"GPULEDGER_RUNPOD_URL", func(p *PlatformURLs) *string { return &p.RunPod }, runpod.DefaultBaseURL},
	{"GPULEDGER_RUNPOD_GRAPHQL_URL", func(p *PlatformURLs) *string { return &p.RunPodGraphQL }, runpod.DefaultGraphQLURL},
	{"GPULEDGER_VAST_URL", func(p *PlatformURLs) *string { return &p.Vast }, vast.DefaultBaseURL},
	{"GPULEDGER_LAMBDA_URL", func(p *PlatformURLs) *string { return &p.Lambda }, lambda.DefaultBaseURL},
	{"GPULEDGER_AUTODL_URL", func(p *PlatformURLs) *string { return &p.AutoDL }, autodl.DefaultBase},
}

// readPlatformURLs reads the bases from the environment, refusing one
// that is not an http(s) URL with a host, so a typo shows at start and
// not as a failed /connect.
func readPlatformURLs(getenv func(string) string) (PlatformURLs, error) {
	var p PlatformURLs
	for _, v := range platformURLVars {
		s := getenv(v.env)
		if s == "" {
			s = v.def
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
			return p, fmt.Errorf("%s: %q is not an http(s) URL with a host and no query (e.g. %s)", v.env, s, v.def)
		}
		*v.get(&p) = s
	}
	return p, nil
}

// platformCallTimeout bounds one call to a platform's API.
const platformCallTimeout = 30 * time.Second

// platformClients returns the Factory the sync uses: one HTTP client for
// all platforms (the proxy variables apply, as for Telegram: the
// platforms' APIs may need one from mainland China, and AutoDL's from
// outside it), each connector pointed at its base.
func platformClients(urls PlatformURLs, getenv func(string) string) connsync.Factory {
	hc := &http.Client{
		Timeout:   platformCallTimeout,
		Transport: &http.Transport{Proxy: telegram.ProxyFromEnv(getenv), MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: platformCallTimeout},
	}
	return func(platform, key string) (connector.Client, error) {
		switch platform {
		case "runpod":
			return runpod.New(runpod.Config{APIKey: key, BaseURL: urls.RunPod, GraphQLURL: urls.RunPodGraphQL, HTTPClient: hc})
		case "vast":
			return vast.New(vast.Config{APIKey: key, BaseURL: urls.Vast, HTTPClient: hc})
		case "lambda":
			return lambda.New(lambda.Config{Key: key, BaseURL: urls.Lambda, HTTPClient: hc})
		case "autodl":
			return autodl.New(autodl.Config{Token: key, Base: urls.AutoDL, HTTP: hc})
		}
		return nil, fmt.Errorf("no connector for platform %q (one of %v)", platform, connsync.Supported)
	}
}

// lateButtons signs the sync's buttons with the core's key once the core
// exists: the core takes the sync as its Connections, so the sync is made
// first.
type lateButtons struct {
	mu   sync.Mutex
	core *bot.Core
}

func (l *lateButtons) set(c *bot.Core) {
	l.mu.Lock()
	l.core = c
	l.mu.Unlock()
}

func (l *lateButtons) ButtonData(userID int64, action, payload string) (string, error) {
	l.mu.Lock()
	c := l.core
	l.mu.Unlock()
	if c == nil {
		return "", errors.New("buttons: the chat core has not started")
	}
	return c.ButtonData(userID, action, payload)
}

// newPlatforms opens the vault that seals the platform keys
// (GPULEDGER_SECRET, else the key file beside the database) and makes
// the sync of the users' platform connectors. It returns the vault too:
// the Telegram transport seals with it the stored text of a /connect
// waiting to be handled. It logs where the secret came from, never the
// secret.
func newPlatforms(cfg Config, db *sqlite.DB, agents connsync.Agents, buttons connsync.Buttons, getenv func(string) string, log *slog.Logger) (*connsync.Syncer, *vault.Vault, error) {
	v, err := vault.Open(cfg.Secret, vault.DefaultKeyFile(cfg.DB))
	if err != nil {
		return nil, nil, fmt.Errorf("platform keys: %w", err)
	}
	log.Info("platform keys sealed", "secret_from", v.Source())
	s, err := connsync.New(connsync.Config{
		Store:    db,
		Vault:    v,
		Clients:  platformClients(cfg.PlatformURLs, getenv),
		Buttons:  buttons,
		Agents:   agents,
		Interval: cfg.Sync,
		Logger:   log,
	})
	return s, v, err
}
