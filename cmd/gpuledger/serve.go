package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/console"
	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// runServe runs the server until ctx ends (SIGINT, SIGTERM) or, in
// terminal mode, until the end of standard input.
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	cfg, rest, err := parseConfig("serve", args, getenv, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q: serve takes only flags", rest[0])
	}
	terminal := cfg.TelegramToken == ""
	log := newLogger(cfg, stderr, terminal)
	slog.SetDefault(log)

	db, err := sqlite.Open(ctx, cfg.DB, sqlite.WithLogger(log))
	if err != nil {
		return err
	}
	defer db.Close()
	log.Info("database open", "path", cfg.DB)
	backupOpts, err := backupOptionsFromEnv(cfg.Backup, cfg.TZ, getenv)
	if err != nil {
		return err
	}
	stopBackups, err := sqlite.StartNightly(ctx, db, backupOpts, log)
	if err != nil {
		return fmt.Errorf("GPULEDGER_BACKUP_DIR: %w", err)
	}
	defer stopBackups()

	var owner int64 // the terminal's user owns the ledger without claiming it
	if terminal {
		owner = cfg.ConsoleUser
	} else {
		cfg.botName = botName(ctx, cfg, db, getenv, log)
	}
	srv, err := newServer(ctx, cfg, db, owner, getenv, log)
	if err != nil {
		return err
	}
	defer srv.close()
	if code := srv.access.ClaimCode(); code != "" {
		// The one place a secret is logged: it is useless once claimed,
		// and the owner needs to read it here.
		log.Warn("no owner yet: send this to the bot to claim it", "command", "/start "+code)
	} else if !terminal && srv.access.WaitingForClaim() {
		log.Warn("no owner yet: send /start CODE with the code printed at first start, or set GPULEDGER_ALLOWED_USERS")
	}

	if terminal {
		files, err := consoleFilesDir(cfg.DB)
		if err != nil {
			return err
		}
		c, err := console.New(console.Config{
			In:      stdin,
			Out:     stdout,
			Handler: srv.core,
			UserID:  cfg.ConsoleUser,
			Dir:     files,
			Logger:  log,
		})
		if err != nil {
			return err
		}
		srv.start(ctx, c)
		if r, ok := stdin.(*os.File); ok && isTerminal(r) {
			// Only a person at a terminal is greeted: a script piped in
			// gets nothing but the replies.
			fmt.Fprintf(stdout, "gpuledger %s — your GPU rental ledger (database %s; exports and charts go to %s).\n"+
				"Type /help for the commands, e.g. /rent box1 autodl 4090 1.88/h; 输入 /help 查看命令。Ctrl-D quits.\n", version, cfg.DB, files)
			if from := srv.agents.MovedFrom(); from != "" {
				fmt.Fprintf(stdout, "The agent hub listens on %s: %s is in use by another program (set GPULEDGER_LISTEN to choose). 代理服务改用 %s。\n",
					srv.agents.Addr(), from, srv.agents.Addr())
			}
		}
		return c.Run(ctx)
	}

	commands := map[string][]telegram.Command{}
	for _, lang := range []string{"en", "zh"} {
		key := lang
		if lang == "en" {
			key = ""
		}
		for _, ci := range bot.CommandList(lang) {
			commands[key] = append(commands[key], telegram.Command{Command: ci.Command, Description: ci.Description})
		}
	}
	t, err := telegram.New(telegram.Config{
		Token:    cfg.TelegramToken,
		Endpoint: cfg.TelegramEndpoint,
		Client:   telegram.NewHTTPClient(60*time.Second, telegram.ProxyFromEnv(getenv)),
		Handler:  srv.core,
		Store:    db,
		// A /connect waiting to be handled is stored sealed, never in
		// the clear, and still finishes after a restart.
		Sealer:   srv.keys,
		Allowed:  srv.access.Allowed,
		Logger:   log,
		Commands: commands,
		// The bot's menu button opens the dashboard where Telegram can
		// (an https public URL); otherwise it is reset to the commands.
		MenuApp: telegram.MenuApp{URL: srv.dash.AppURL()},
	})
	if err != nil {
		return err
	}
	srv.start(ctx, t)
	log.Info("serving Telegram", "endpoint_host", endpointHost(cfg.TelegramEndpoint))
	return t.Run(ctx)
}

// botNameWait bounds how long a start waits for Telegram to say the
// bot's username: a server started while Telegram is unreachable must
// still start (the transport keeps trying on its own).
const botNameWait = 5 * time.Second

// botName returns the bot's username for the core (the t.me links of team
// invites): Telegram's getMe, else the name an earlier start stored, else
// "" (invites then carry their code without a link), logged.
func botName(ctx context.Context, cfg Config, db *sqlite.DB, getenv func(string) string, log *slog.Logger) string {
	nctx, cancel := context.WithTimeout(ctx, botNameWait)
	defer cancel()
	name, err := telegram.BotName(nctx, db, cfg.TelegramToken, cfg.TelegramEndpoint, telegram.NewHTTPClient(botNameWait, telegram.ProxyFromEnv(getenv)))
	if err != nil {
		log.Warn("the bot's username is not known yet: team invites carry their code without a t.me link until a start that reaches Telegram", "err", err)
	}
	return name
}

// consoleFilesDir is where the terminal console writes the files the chat
// sends (exports, charts): a gpuledger-files directory beside the
// database, the user's data, rather than wherever the server was started.
// Each saved file's full path is printed with it.
func consoleFilesDir(db string) (string, error) {
	abs, err := filepath.Abs(db)
	if err != nil {
		return "", fmt.Errorf("console files: %w", err)
	}
	dir := filepath.Join(filepath.Dir(abs), "gpuledger-files")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("console files: create %s (beside the database): %w", dir, err)
	}
	return dir, nil
}

// newLogger returns the process logger: text on a terminal, JSON
// otherwise (or as configured). In console mode logs go to stderr so that
// they do not mix with the conversation on stdout.
func newLogger(cfg Config, w io.Writer, console bool) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	if console && cfg.LogLevel == "info" {
		// The terminal is the conversation: keep the log to what matters.
		level = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: level}
	format := cfg.LogFormat
	if format == "auto" {
		format = "json"
		if isTerminal(w) {
			format = "text"
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// endpointHost returns the endpoint without the token placeholder's
// surroundings, for logging (the token itself never appears in it).
func endpointHost(endpoint string) string {
	for i := 0; i+2 < len(endpoint); i++ {
		if endpoint[i:i+3] == "/bo" {
			return endpoint[:i]
		}
	}
	return endpoint
}
