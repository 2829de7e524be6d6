// Command gpuledger-agent runs on a rented GPU host and tells the gpuledger
// server, truthfully, whether the host is doing work.
//
//	gpuledger-agent [run] --server URL --token TOKEN [flags] [-- COMMAND ARGS...]
//	gpuledger-agent check [--simulate FILE] [--json] [--strict]
//	gpuledger-agent bench [--json] [--simulate FILE] [--download-url URL] [--timeout 10s]
//	gpuledger-agent version
//
// See docs/agent.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpuledger/gpuledger/agent"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // run failed; check read no GPU
	exitUsage   = 2 // bad flags; check --strict with warnings
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := "run"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			// The agent's own help lists the commands; "run --help"
			// lists run's flags.
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		if !strings.HasPrefix(args[0], "-") {
			cmd, args = args[0], args[1:]
		}
	}
	switch cmd {
	case "run":
		return runAgent(ctx, args, stderr, getenv)
	case "check":
		return runCheck(ctx, args, stdout, stderr)
	case "bench":
		return runBench(ctx, args, stdout, stderr, getenv)
	case "install":
		return runInstall(ctx, args, stdout, stderr, getenv)
	case "version", "--version":
		fmt.Fprintf(stdout, "gpuledger-agent %s (%s, %s/%s, nvml %v)\n", agent.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, agent.NVMLAvailable)
		return exitOK
	case "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "gpuledger-agent: unknown command %q\nRun \"gpuledger-agent --help\" for the commands.\n", cmd)
		return exitUsage
	}
}

const usage = `usage: gpuledger-agent [COMMAND] [FLAGS]

Commands:
  run      report to the server whether this host is busy; the default (wraps a job after --)
             e.g. gpuledger-agent run --server https://ledger.example.com --release-cmd "shutdown -h now"
  check    read the GPUs once and say what the agent would see, without a server
             e.g. gpuledger-agent check --json
  bench    measure the GPUs and the host in about 10 s: tensor and FP32 speed, memory and PCIe
           bandwidth, power and clocks, disk and cores, against a healthy card of the model
             e.g. gpuledger-agent bench
  install  install the agent as a service that starts at boot (systemd, else nohup)
             e.g. gpuledger-agent install --server https://ledger.example.com --token TOKEN
  version  print the version, the Go version and whether NVML is linked
             e.g. gpuledger-agent version
  help     print this help (also -h, --help)

The token comes from the chat: /agent NAME gives one rental's own token;
/agent gives an enrolment token (enrol-...), one install line for every
instance you start: the agent announces its instance, and once you log it
in the chat it is handed that rental's own token (kept in the state
directory) and reports with it. Pass either as $GPULEDGER_AGENT_TOKEN
rather than --token (flags show in ps). Run "gpuledger-agent COMMAND --help"
for a command's flags. See docs/agent.md.
`

// usageHint follows a flag error, which the flag package has printed.
const usageHint = "Run \"gpuledger-agent %s --help\" for its flags, \"gpuledger-agent --help\" for the commands.\n"

// plainFloat is a float flag whose default prints as a plain number: the
// flag package's own float flag prints 1048576 as 1.048576e+06.
type plainFloat float64

func (f *plainFloat) String() string {
	if f == nil {
		return "0"
	}
	return strconv.FormatFloat(float64(*f), 'f', -1, 64)
}

func (f *plainFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("not a number")
	}
	*f = plainFloat(v)
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runAgent(ctx context.Context, args []string, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("gpuledger-agent run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := agent.Config{Thresholds: agent.DefaultThresholds}
	var watch stringList
	var logFormat, logLevel, cpuProfile string
	fs.StringVar(&cfg.Server, "server", "", "server URL, e.g. http://server:8477 (required)")
	fs.StringVar(&cfg.Token, "token", "", "agent token: a rental's (/agent NAME) or an enrolment token (enrol-..., /agent) (default $GPULEDGER_AGENT_TOKEN; prefer the variable: flags show in ps)")
	fs.StringVar(&cfg.Rental, "rental", "", "refuse orders for any other rental (default: the name the server gives)")
	fs.DurationVar(&cfg.Interval, "interval", 30*time.Second, "heartbeat interval")
	fs.DurationVar(&cfg.Sample, "sample", 5*time.Second, "sample interval")
	fs.StringVar(&cfg.ReleaseCmd, "release-cmd", "", `what "release" runs on this host via /bin/sh -c, e.g. "shutdown -h now"; unset: only report`)
	fs.StringVar(&cfg.PreReleaseCmd, "pre-release-cmd", "", "run before the release command (e.g. a checkpoint sync); non-zero exit aborts the release")
	fs.DurationVar(&cfg.PreReleaseTimeout, "pre-release-timeout", 10*time.Minute, "time limit of --pre-release-cmd")
	fs.Var(&watch, "watch", "a log or checkpoint file (or directory) whose growth counts as progress; repeatable")
	fs.DurationVar(&cfg.Lease, "lease", 0, "local deadline: at its end release if not busy, even when the server is unreachable")
	fs.StringVar(&cfg.Simulate, "simulate", "", "read GPU samples from this JSON file, re-read at every sample")
	fs.BoolVar(&cfg.UtilSamples, "util-samples", false, "read the NVML utilisation history at every sample, not only when a GPU looks quiet and may hold a CUDA context (then often enough that none of NVML's 14 s of it is lost: every 10 s at --sample 5s); about 2.3 ms of CPU per GPU per read on an H200")
	fs.Float64Var(&cfg.Thresholds.UtilPercent, "util-threshold", agent.DefaultThresholds.UtilPercent, "GPU utilisation (percent) above which the host is busy")
	fs.Float64Var(&cfg.Thresholds.CPUPercent, "cpu-threshold", agent.DefaultThresholds.CPUPercent, "CPU (percent of one core) above which the host is busy; 0 disables")
	fs.Var((*plainFloat)(&cfg.Thresholds.NetBytesPerS), "net-threshold", "network `bytes/s` (in+out) above which the host is busy; 0 disables")
	fs.Var((*plainFloat)(&cfg.Thresholds.DiskBytesPerS), "disk-io-threshold", "disk I/O `bytes/s` (read+written by this container) above which the host is busy; 0 disables")
	fs.DurationVar(&cfg.NVMLTimeout, "nvml-timeout", 10*time.Second, "give up on a GPU read after this long (verdict unknown)")
	fs.StringVar(&cfg.DiskPath, "disk-path", "/", "report free space of the filesystem holding this path")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "where the agent keeps what refuses replayed orders, and an enrolment agent its rental token, across restarts (default $GPULEDGER_AGENT_STATE_DIR, else systemd's $STATE_DIRECTORY, else $HOME/.gpuledger)")
	fs.StringVar(&logFormat, "log-format", "text", "text or json")
	fs.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&cfg.JobLabel, "label", "", "name the job wrapped after -- (letters, digits, '.', '_', '-'; at most 64): runs with one label are your own benchmark (/compare)")
	fs.BoolVar(&cfg.NoBench, "no-bench", false, "never run the bench, even when the server asks for one (once per rental)")
	fs.StringVar(&cfg.BenchURL, "bench-url", getenv("GPULEDGER_BENCH_URL"), "the bench's download URL, http(s) (default $GPULEDGER_BENCH_URL; none when unset)")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (for footprint work)")
	dashdash := slices.Index(args, "--")
	var job []string
	if dashdash >= 0 {
		args, job = args[:dashdash], args[dashdash+1:]
		if len(job) == 0 {
			fmt.Fprintln(stderr, "gpuledger-agent: nothing after --")
			return exitUsage
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, usageHint, "run")
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gpuledger-agent: unexpected argument %q (put a command to wrap after --)\n", fs.Arg(0))
		return exitUsage
	}
	if cfg.Token == "" {
		cfg.Token = getenv("GPULEDGER_AGENT_TOKEN")
	}
	if cfg.StateDir == "" {
		cfg.StateDir = defaultStateDir(getenv)
	}
	cfg.MetadataURL = getenv("GPULEDGER_AGENT_METADATA_URL")
	cfg.Watch, cfg.Job = watch, job
	log, err := newLogger(stderr, logFormat, logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "gpuledger-agent:", err)
		return exitUsage
	}
	cfg.Log = log
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "gpuledger-agent:", err)
		return exitUsage
	}
	if quietRuntime(getenv) {
		gcCtx, stopGC := context.WithCancel(ctx)
		defer stopGC()
		go collect(gcCtx, collectEvery, collectCheck)
	}
	if cpuProfile != "" {
		stopProfile, err := startCPUProfile(cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "gpuledger-agent:", err)
			return exitUsage
		}
		defer stopProfile()
	}
	if err := agent.Run(ctx, cfg); err != nil {
		log.Error("agent failed", "err", err)
		return exitFailure
	}
	return exitOK
}

// defaultStateDir is where the agent keeps its state when --state-dir is
// not given: $GPULEDGER_AGENT_STATE_DIR, else the directory systemd made
// for the unit (StateDirectory=, in $STATE_DIRECTORY), else
// $HOME/.gpuledger, the install script's directory. "" when none is set:
// the agent then refuses orders and says why.
func defaultStateDir(getenv func(string) string) string {
	if d := getenv("GPULEDGER_AGENT_STATE_DIR"); d != "" {
		return d
	}
	if d := getenv("STATE_DIRECTORY"); d != "" {
		// systemd may list several, colon-separated: the first is ours.
		d, _, _ = strings.Cut(d, ":")
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".gpuledger")
	}
	return ""
}

// Runtime settings of a running agent, unless GOMAXPROCS, GOGC or
// GOMEMLIMIT say otherwise.
const (
	// One P: a sample's goroutines then run one after another on the
	// thread the ticker woke, with no other thread woken or spinning
	// (cross-CPU wake-ups are what a sample costs most in a VM). A hung
	// NVML call in C does not hold the P: the runtime hands it on.
	agentMaxProcs = 1
	// agentMemLimit is a safety net only, far above what the agent uses
	// (a live heap under 1 MiB). A tight limit is worse than none: the
	// runtime's own memory (stacks, metadata) counts toward it, and a
	// limit near that makes the runtime collect at nearly every
	// allocation: on the H200 host a 4 MiB limit meant 85 collections in
	// two minutes (gctrace), nearly all of the agent's CPU.
	agentMemLimit = 64 << 20
	// collectEvery: the agent collects garbage itself once this much has
	// been allocated since the last collection, checked every
	// collectCheck. At ten times the default sample and heartbeat rates
	// (--simulate) the agent allocated under 1 MiB in a minute: under
	// 6 MiB an hour at the defaults.
	collectEvery = 1 << 20
	collectCheck = time.Minute
)

// quietRuntime keeps the Go runtime from costing more than the agent's
// work. With the default GOGC the runtime forces a collection every two
// minutes whatever the allocation rate (30 an hour) and lets the heap
// double before collecting. With GOGC off, the runtime never collects on
// its own below the safety limit; collect (started by the caller) does it
// after every collectEvery bytes allocated, and hands the freed pages back
// to the system, so the heap's resident memory stays near the live heap.
// It reports whether the caller should run collect.
func quietRuntime(getenv func(string) string) (manualGC bool) {
	if getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > agentMaxProcs {
		runtime.GOMAXPROCS(agentMaxProcs)
	}
	if getenv("GOGC") == "" && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(agentMemLimit)
		debug.SetGCPercent(-1)
		return true
	}
	return false
}

// collect runs a collection, and returns freed memory to the system, each
// time the heap has allocated every bytes since the last one; it checks
// every check until ctx ends. (Freeing start-up's garbage at once was
// tried: on the H200 host it changed RSS by less than run-to-run noise
// and cost a collection.)
func collect(ctx context.Context, every uint64, check time.Duration) {
	m := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(m)
	last := m[0].Value.Uint64()
	t := time.NewTicker(check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(m)
		if now := m[0].Value.Uint64(); now-last >= every {
			debug.FreeOSMemory()
			last = now
		}
	}
}

// startCPUProfile profiles the whole run into path; the returned func
// stops the profile and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gpuledger-agent check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg agent.CheckConfig
	var asJSON, strict bool
	fs.StringVar(&cfg.Simulate, "simulate", "", "read GPUs from this JSON file instead of NVML")
	fs.DurationVar(&cfg.NVMLTimeout, "nvml-timeout", 10*time.Second, "give up on a GPU read after this long")
	fs.StringVar(&cfg.DiskPath, "disk-path", "/", "report free space of the filesystem holding this path")
	fs.Uint64Var(&cfg.NoisyMemMiB, "noisy-mem-mib", 1024, "warn when a GPU has more than this much memory in use at start")
	fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	fs.BoolVar(&strict, "strict", false, "exit 2 when there are warnings")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, usageHint, "check")
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gpuledger-agent check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	rep, err := agent.Check(ctx, cfg)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep.JSON())
	} else {
		rep.Print(stdout)
	}
	switch {
	case err != nil:
		fmt.Fprintln(stderr, "gpuledger-agent check:", err)
		return exitFailure
	case strict && len(rep.Warnings) > 0:
		return exitUsage
	}
	return exitOK
}
