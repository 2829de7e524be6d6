// Command gpuledger is the gpuledger server: the chat bot (Telegram, or the
// terminal when no token is set), the ledger, the agent hub and the
// scheduler, plus the export, backup and version subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

const usage = `usage: gpuledger [COMMAND] [FLAGS] [ARGS]

Commands (flags may come before or after the arguments):
  serve        run the bot, agent hub and scheduler (the default; no Telegram token: a chat in this terminal)
                 e.g. TELEGRAM_BOT_TOKEN=123:abc gpuledger serve --db /data/gpuledger.db
  export       print one user's (or with --team NAME a team's) ledger with computed charges, as JSON or CSV
                 e.g. gpuledger export --format csv --as-of "2026-11-30 23:59" > ledger.csv
  backup FILE  write a consistent copy of the database to a new FILE, safe while the server runs
                 e.g. gpuledger backup /backups/ledger.db --db /data/gpuledger.db
  healthcheck  exit 0 when the running server answers /healthz (the Docker HEALTHCHECK)
                 e.g. gpuledger healthcheck --listen :8477
  version      print the version
                 e.g. gpuledger version
  help         print this help (also -h, --help)

Run "gpuledger COMMAND --help" for a command's flags. Every flag of serve can
also be set through the environment variable named in its help.
`

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	sub := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			// The server's own help lists the commands; "serve --help"
			// lists serve's flags.
			fmt.Fprint(stdout, usage)
			return 0
		}
		if !strings.HasPrefix(args[0], "-") {
			sub, args = args[0], args[1:]
		}
	}
	var err error
	switch sub {
	case "serve":
		err = runServe(ctx, args, stdin, stdout, stderr, getenv)
	case "export":
		err = runExport(ctx, args, stdout, stderr, getenv)
	case "backup":
		err = runBackup(ctx, args, stdout, stderr, getenv)
	case "healthcheck":
		err = runHealthcheck(ctx, args, stdout, stderr, getenv)
	case "version":
		fmt.Fprintf(stdout, "gpuledger %s\n", version)
		return 0
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "gpuledger: unknown command %q\nRun \"gpuledger --help\" for the commands.\n", sub)
		return 2
	}
	var uerr usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "Run \"gpuledger %s --help\" for its flags, \"gpuledger --help\" for the commands.\n", sub)
		return 2
	case errors.As(err, &uerr):
		fmt.Fprintf(stderr, "gpuledger %s: %v\nRun \"gpuledger %s --help\" for its usage.\n", sub, err, sub)
		return 2
	}
	fmt.Fprintf(stderr, "gpuledger %s: %v\n", sub, err)
	return 1
}
