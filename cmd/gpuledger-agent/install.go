package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/agent/install"
)

// installUsage documents `gpuledger-agent install`.
const installUsage = `usage: gpuledger-agent install [--dir DIR] [--init auto|systemd|nohup] [--hook FILE]
                               [--root DIR] [--no-start] [--bin PATH]
                               --server URL [--token TOKEN] [run flags...]

Starts the agent and arranges for it to start again after a reboot where
the host allows it. The run flags (--server, --release-cmd, --interval, ...)
are those of "gpuledger-agent run". The token comes from --token or
$GPULEDGER_AGENT_TOKEN and is written only to an owner-only file: a
rental's own token (/agent NAME) or an enrolment token (enrol-..., /agent),
with which the agent announces this instance and takes its rental's token
once it is logged in the chat. On a RunPod pod with /workspace the state
(that token, the replay record) is kept in /workspace/.gpuledger, the one
directory that survives a stop.

  --init systemd  write /etc/systemd/system/gpuledger-agent.service and
                  enable it (needs root); the token goes to /etc/gpuledger/agent.env
  --init nohup    write DIR/start.sh, which starts the agent in the background
                  unless it already runs, and run it; containers (AutoDL,
                  RunPod, Vast.ai) have no systemd: add DIR/start.sh to the
                  platform's start-up hook (--hook FILE appends it there)
  --init auto     systemd when systemd runs and we are root, else nohup (default)
  --dir DIR       where the nohup files live (default $HOME/.gpuledger)
  --root DIR      write below DIR instead of / (for tests and images); implies --no-start
  --no-start      write the files only
  --bin PATH      the agent binary the service runs (default: this one)
See docs/deploy.md.
`

// installFlags are install's own flags, all taking a value except
// --no-start. Every run flag takes a value, so "-name value" pairs split
// unambiguously.
var installFlags = map[string]bool{"dir": true, "init": true, "root": true, "hook": true, "bin": true, "no-start": false}

// parseInstallArgs splits args into install's flags and run's flags.
func parseInstallArgs(args []string, getenv func(string) string) (install.Options, error) {
	o := install.Options{Init: "auto", Root: "/"}
	if home := getenv("HOME"); home != "" {
		o.Dir = filepath.Join(home, ".gpuledger")
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return o, errors.New("install does not wrap a job (nothing after --): the service only reports; use run -- COMMAND for a job")
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return o, fmt.Errorf("unexpected argument %q: flags only, e.g. install --server https://ledger.example.com", a)
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesVal, own := installFlags[name]
		if name == "h" || name == "help" {
			return o, flagHelp
		}
		if own && !takesVal {
			if hasVal {
				b, err := strconv.ParseBool(val)
				if err != nil {
					return o, fmt.Errorf("--%s=%s: want true or false", name, val)
				}
				o.NoStart = b
			} else {
				o.NoStart = true
			}
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return o, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			val = args[i]
		}
		switch name {
		case "dir":
			o.Dir = val
		case "init":
			o.Init = val
		case "root":
			o.Root = val
		case "hook":
			o.Hook = val
		case "bin":
			o.Bin = val
		case "token":
			o.Token = val
		default:
			if name == "server" {
				o.Server = val
			}
			o.RunArgs = append(o.RunArgs, "--"+name, val)
		}
	}
	if o.Token == "" {
		o.Token = getenv("GPULEDGER_AGENT_TOKEN")
	}
	var errs []error
	switch o.Init {
	case "auto", "systemd", "nohup":
	default:
		errs = append(errs, fmt.Errorf("--init %q: want auto, systemd or nohup", o.Init))
	}
	if o.Server == "" {
		errs = append(errs, errors.New("--server is required, e.g. --server https://ledger.example.com"))
	}
	if o.Token == "" {
		errs = append(errs, errors.New("no token: pass --token TOKEN or set GPULEDGER_AGENT_TOKEN (the install line /agent or /agent NAME shows does this)"))
	} else if !safeToken(o.Token) {
		errs = append(errs, errors.New("the token has characters a gpuledger token never has: copy the install line again from /agent (or /agent NAME)"))
	}
	if o.Dir == "" {
		errs = append(errs, errors.New("--dir is required when $HOME is unset"))
	}
	if o.Root != "/" {
		o.NoStart = true
	}
	for i := 0; i+1 < len(o.RunArgs); i += 2 {
		if o.RunArgs[i] == "--state-dir" {
			o.StateDir = o.RunArgs[i+1]
		}
	}
	return o, errors.Join(errs...)
}

var flagHelp = errors.New("help")

// safeToken accepts the tokens the server issues: base64url, and an
// enrolment token's "enrol-" prefix (wire.EnrolTokenPrefix) is of the
// same characters.
func safeToken(t string) bool {
	if len(t) > 256 {
		return false
	}
	for _, c := range t {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// runInstall parses the install command's flags and installs (package
// agent/install). It returns the exit status.
func runInstall(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	o, err := parseInstallArgs(args, getenv)
	if errors.Is(err, flagHelp) {
		fmt.Fprint(stdout, installUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "gpuledger-agent install: %v\n", err)
		return exitUsage
	}
	if o.Bin == "" {
		if o.Bin, err = os.Executable(); err != nil {
			fmt.Fprintf(stderr, "gpuledger-agent install: cannot find my own binary (pass --bin): %v\n", err)
			return exitFailure
		}
	}
	if o.Bin, err = filepath.Abs(o.Bin); err != nil {
		fmt.Fprintf(stderr, "gpuledger-agent install: --bin: %v\n", err)
		return exitUsage
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		fmt.Fprintf(stderr, "gpuledger-agent install: --dir: %v\n", err)
		return exitUsage
	}
	if err := install.Install(ctx, o, stdout, stderr, getenv); err != nil {
		fmt.Fprintf(stderr, "gpuledger-agent install: %v\n", err)
		return exitFailure
	}
	return exitOK
}
