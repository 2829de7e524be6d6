package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/dashboard"
)

// Config is the server's configuration. Each field comes from an
// environment variable and may be overridden by a flag of the same
// meaning (DESIGN.md section 2). Only this package reads configuration.
type Config struct {
	DB               string        // GPULEDGER_DB
	TelegramToken    string        // TELEGRAM_BOT_TOKEN; never logged
	TelegramEndpoint string        // TELEGRAM_API_ENDPOINT
	AllowedUsers     []int64       // GPULEDGER_ALLOWED_USERS
	Listen           string        // GPULEDGER_LISTEN; default depends on the mode (defaultListen)
	PublicURL        string        // GPULEDGER_PUBLIC_URL
	TZ               string        // GPULEDGER_TZ
	Tick             time.Duration // GPULEDGER_TICK
	LogFormat        string        // GPULEDGER_LOG_FORMAT: auto, text or json
	LogLevel         string        // GPULEDGER_LOG_LEVEL: debug, info, warn, error
	Backup           string        // GPULEDGER_BACKUP_DIR: nightly backups go here; empty: none
	AgentBinary      string        // GPULEDGER_AGENT_BINARY: the agent handed out by /agent/download
	ConsoleUser      int64         // GPULEDGER_CONSOLE_USER: the terminal owner's user ID
	// Sync is how often each platform connector is polled (GPULEDGER_SYNC;
	// a connector stretches it to respect its platform's rate limits).
	Sync time.Duration
	// Secret encrypts the platform keys (GPULEDGER_SECRET; no flag: a flag
	// shows in ps). Empty: the key file beside the database. Never logged.
	Secret       string
	PlatformURLs connector.BaseURLs // GPULEDGER_RUNPOD_URL and the rest, by variable (platforms)
	// AppAuthMaxAge is how old the Telegram sign-in data of the dashboard
	// (initData's auth_date) may be (GPULEDGER_APP_AUTH_MAX_AGE).
	AppAuthMaxAge time.Duration
	// TrustedProxies are the reverse proxies in front of the hub whose
	// X-Forwarded-For is believed for the address a heartbeat came from
	// (GPULEDGER_TRUSTED_PROXIES: IPs and CIDRs, comma-separated; no
	// flag). Empty: the header is ignored.
	TrustedProxies []netip.Prefix
	// ListenDefault is set when neither GPULEDGER_LISTEN nor -listen chose
	// Listen: the console may then move to a free port (startHub).
	ListenDefault bool
	// TeamOutsiders lets a team's invite admit a person who is not in
	// AllowedUsers (GPULEDGER_TEAM_OUTSIDERS=on; off by default). Such a
	// person reaches the teams they joined and nothing else: no ledger of
	// their own, none of the operator's commands.
	TeamOutsiders bool

	// botName is the bot's username as Telegram gave it at start (serve's
	// botName), not configured: the core writes team invites' t.me links
	// with it.
	botName string
}

// Default hub addresses when GPULEDGER_LISTEN and -listen are unset. The
// terminal console is a ledger on one person's machine: its hub listens on
// loopback, so nobody else on the network reaches it. With a Telegram token
// the server is meant to be reached by agents on rented hosts, so its hub
// listens on all interfaces (put it behind HTTPS, docs/deploy.md).
const (
	listenConsole  = "127.0.0.1:8477"
	listenTelegram = ":8477"
)

// defaultEndpoint is the Bot API endpoint in go-telegram-bot-api's format.
const defaultEndpoint = "https://api.telegram.org/bot%s/%s"

// parseConfig reads the environment through getenv and then the flags in
// args. It returns an error that names the variable or flag at fault.
func parseConfig(name string, args []string, getenv func(string) string, stderr io.Writer) (Config, []string, error) {
	c := Config{
		DB:               envOr(getenv, "GPULEDGER_DB", "gpuledger.db"),
		TelegramToken:    getenv("TELEGRAM_BOT_TOKEN"),
		TelegramEndpoint: envOr(getenv, "TELEGRAM_API_ENDPOINT", defaultEndpoint),
		Listen:           getenv("GPULEDGER_LISTEN"),
		PublicURL:        getenv("GPULEDGER_PUBLIC_URL"),
		TZ:               getenv("GPULEDGER_TZ"),
		LogFormat:        envOr(getenv, "GPULEDGER_LOG_FORMAT", "auto"),
		LogLevel:         envOr(getenv, "GPULEDGER_LOG_LEVEL", "info"),
		Backup:           getenv("GPULEDGER_BACKUP_DIR"),
		AgentBinary:      getenv("GPULEDGER_AGENT_BINARY"),
	}
	var errs []error
	tick, err := envDuration(getenv, "GPULEDGER_TICK", 30*time.Second)
	errs = append(errs, err)
	c.Tick = tick
	syncEvery, err := envDuration(getenv, "GPULEDGER_SYNC", 60*time.Second)
	errs = append(errs, err)
	c.Sync = syncEvery
	authAge, err := envDuration(getenv, "GPULEDGER_APP_AUTH_MAX_AGE", dashboard.DefaultMaxAuthAge)
	errs = append(errs, err)
	c.AppAuthMaxAge = authAge
	c.Secret = getenv("GPULEDGER_SECRET")
	urls, err := platforms.ReadBases(getenv)
	errs = append(errs, err)
	c.PlatformURLs = urls
	users, err := parseUserIDs(getenv("GPULEDGER_ALLOWED_USERS"))
	if err != nil {
		errs = append(errs, fmt.Errorf("GPULEDGER_ALLOWED_USERS: %w", err))
	}
	c.AllowedUsers = users
	proxies, err := hub.ParseTrustedProxies(getenv("GPULEDGER_TRUSTED_PROXIES"))
	if err != nil {
		errs = append(errs, fmt.Errorf("GPULEDGER_TRUSTED_PROXIES: %w", err))
	}
	c.TrustedProxies = proxies
	cu, err := envInt(getenv, "GPULEDGER_CONSOLE_USER", 1)
	errs = append(errs, err)
	c.ConsoleUser = cu
	outsiders := getenv("GPULEDGER_TEAM_OUTSIDERS") // parsed after the flags, which may override it
	if err := errors.Join(errs...); err != nil {
		return c, nil, err
	}

	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.DB, "db", c.DB, "SQLite database file (GPULEDGER_DB)")
	fs.StringVar(&c.TelegramToken, "telegram-token", c.TelegramToken, "Telegram bot token; unset runs the terminal console (TELEGRAM_BOT_TOKEN; prefer the variable: flags show in ps)")
	fs.StringVar(&c.TelegramEndpoint, "telegram-endpoint", c.TelegramEndpoint, "Bot API endpoint in the form https://host/bot%s/%s (TELEGRAM_API_ENDPOINT)")
	allowed := fs.String("allowed-users", "", "comma-separated Telegram user IDs allowed to use the bot (GPULEDGER_ALLOWED_USERS)")
	fs.StringVar(&c.Listen, "listen", c.Listen, "agent hub listen address; default "+listenConsole+" in the terminal console, "+listenTelegram+" (all interfaces) with a Telegram token (GPULEDGER_LISTEN)")
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL, "URL agents use to reach the hub (GPULEDGER_PUBLIC_URL)")
	fs.StringVar(&c.TZ, "tz", c.TZ, "time zone for new users, e.g. Asia/Shanghai (GPULEDGER_TZ)")
	fs.DurationVar(&c.Tick, "tick", c.Tick, "how often idle, silent and lease checks run (GPULEDGER_TICK)")
	fs.DurationVar(&c.Sync, "sync", c.Sync, "how often each connected platform's API is polled; a platform's rate limits may stretch it (GPULEDGER_SYNC)")
	fs.DurationVar(&c.AppAuthMaxAge, "app-auth-max-age", c.AppAuthMaxAge, "how old Telegram's sign-in data for the dashboard may be, 1m..24h (GPULEDGER_APP_AUTH_MAX_AGE)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: auto (text on a terminal, else JSON), text or json (GPULEDGER_LOG_FORMAT)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn or error (GPULEDGER_LOG_LEVEL)")
	fs.StringVar(&c.Backup, "backup-dir", c.Backup, "directory for a nightly online backup; empty for none (GPULEDGER_BACKUP_DIR)")
	fs.StringVar(&c.AgentBinary, "agent-binary", c.AgentBinary, "the agent binary served at /agent/download; default gpuledger-agent next to this binary, else /opt/gpuledger/gpuledger-agent (GPULEDGER_AGENT_BINARY)")
	fs.Int64Var(&c.ConsoleUser, "console-user", c.ConsoleUser, "user ID of the terminal console's owner (GPULEDGER_CONSOLE_USER)")
	fs.StringVar(&outsiders, "team-outsiders", outsiders, "on lets a team's invite admit people outside the allowed users, to that team only; default off (GPULEDGER_TEAM_OUTSIDERS)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: gpuledger [serve] [FLAGS]\n\nRun the bot, the agent hub and the scheduler. Flags:\n")
		fs.PrintDefaults()
	}
	rest, err := parseArgs(fs, args)
	if err != nil {
		return c, nil, err
	}
	if *allowed != "" {
		users, err := parseUserIDs(*allowed)
		if err != nil {
			return c, nil, fmt.Errorf("-allowed-users: %w", err)
		}
		c.AllowedUsers = users
	}
	on, err := parseSwitch(outsiders)
	if err != nil {
		return c, nil, fmt.Errorf("GPULEDGER_TEAM_OUTSIDERS / -team-outsiders: %w", err)
	}
	c.TeamOutsiders = on
	if c.Listen == "" {
		// Decided after the flags: the token may come from -telegram-token.
		c.ListenDefault = true
		c.Listen = listenConsole
		if c.TelegramToken != "" {
			c.Listen = listenTelegram
		}
	}
	return c, rest, c.validate()
}

func (c *Config) validate() error {
	var errs []error
	if c.DB == "" {
		errs = append(errs, errors.New("GPULEDGER_DB / -db: must not be empty"))
	}
	if c.Tick < time.Second || c.Tick > time.Hour {
		errs = append(errs, fmt.Errorf("GPULEDGER_TICK / -tick: %s is out of range 1s..1h", c.Tick))
	}
	if c.Sync < 10*time.Second || c.Sync > time.Hour {
		errs = append(errs, fmt.Errorf("GPULEDGER_SYNC / -sync: %s is out of range 10s..1h", c.Sync))
	}
	if c.AppAuthMaxAge < time.Minute || c.AppAuthMaxAge > 24*time.Hour {
		errs = append(errs, fmt.Errorf("GPULEDGER_APP_AUTH_MAX_AGE / -app-auth-max-age: %s is out of range 1m..24h (e.g. 1h)", c.AppAuthMaxAge))
	}
	if c.TelegramToken != "" && strings.Count(c.TelegramEndpoint, "%s") != 2 {
		errs = append(errs, errors.New("TELEGRAM_API_ENDPOINT / -telegram-endpoint: must contain two %s, for the token and the method, e.g. https://api.telegram.org/bot%s/%s"))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("GPULEDGER_LISTEN / -listen: %q is not host:port (e.g. :8477)", c.Listen))
	}
	if c.PublicURL != "" {
		// Agents are handed this URL by /agent: one that cannot work would
		// only show when an install fails on a rented host.
		if err := hub.CheckPublicURL(c.PublicURL); err != nil {
			errs = append(errs, fmt.Errorf("GPULEDGER_PUBLIC_URL / -public-url: %w", err))
		}
	}
	if c.TZ != "" {
		if _, err := time.LoadLocation(c.TZ); err != nil {
			errs = append(errs, fmt.Errorf("GPULEDGER_TZ / -tz: unknown time zone %q (use an IANA name like Asia/Shanghai)", c.TZ))
		}
	}
	switch c.LogFormat {
	case "auto", "text", "json":
	default:
		errs = append(errs, fmt.Errorf("GPULEDGER_LOG_FORMAT / -log-format: %q is not auto, text or json", c.LogFormat))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("GPULEDGER_LOG_LEVEL / -log-level: %q is not debug, info, warn or error", c.LogLevel))
	}
	return errors.Join(errs...)
}

// publicURL returns the URL agents are told to use.
func (c *Config) publicURL() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	host, port, _ := net.SplitHostPort(c.Listen)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func envDuration(getenv func(string) string, key string, def time.Duration) (time.Duration, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return def, fmt.Errorf("%s: %q is not a duration (e.g. 30s)", key, v)
	}
	return d, nil
}

func envInt(getenv func(string) string, key string, def int64) (int64, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def, fmt.Errorf("%s: %q is not an integer", key, v)
	}
	return n, nil
}

// parseSwitch parses a setting that is on or off ("" is off; any case).
func parseSwitch(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on":
		return true, nil
	case "off", "":
		return false, nil
	}
	return false, fmt.Errorf("%q is not on or off", v)
}

// parseUserIDs parses "123, 456" into IDs.
func parseUserIDs(s string) ([]int64, error) {
	var ids []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("%q is not a Telegram user ID (a positive number; ask @userinfobot for yours)", f)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
