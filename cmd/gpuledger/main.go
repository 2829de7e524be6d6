// Command gpuledger is the gpuledger server: the chat bot (Telegram, or the
// terminal when no token is set), the ledger, the agent hub and the
// scheduler, plus the export, backup and version subcommands.
package main

import (
	"context"
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

const usage = `usage: gpuledger [COMMAND] [FLAGS]

commands:
  serve      run the bot, agent hub and scheduler (the default)
  export     print the ledger with computed charges: export [--format json|csv] [--as-of TIME] [--user ID]
  backup     write a consistent online copy of the database: backup FILE
  healthcheck  exit 0 when the running server answers /healthz (the Docker HEALTHCHECK)
  version    print the version

Run "gpuledger COMMAND -h" for a command's flags. Every flag can also be set
through the environment variable named in its help.
`

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	sub := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
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
		fmt.Fprintf(stderr, "gpuledger: unknown command %q\n\n%s", sub, usage)
		return 2
	}
	if err != nil {
		if err == errUsage {
			return 2
		}
		fmt.Fprintf(stderr, "gpuledger %s: %v\n", sub, err)
		return 1
	}
	return 0
}
