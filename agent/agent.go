// Package agent is the on-instance daemon: it samples the GPUs (NVML, or a
// simulate file), the host and an optional wrapped job, decides whether the
// rented host is doing work, reports heartbeats to the server and carries
// out signed release orders and a local lease.
//
// The NVML backend needs cgo on Linux (backend_nvml.go); other builds get a
// stub, so the package builds and tests everywhere.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/platform"
	"github.com/gpuledger/gpuledger/agent/wire"
)

// Version is the agent's version, reported in heartbeats; set at build time
// with -ldflags "-X github.com/gpuledger/gpuledger/agent.Version=...".
var Version = "0.1.0-dev"

// Config is the agent's configuration; cmd/gpuledger-agent fills it from
// flags and the environment.
type Config struct {
	Server string // base URL of the server's agent hub
	// Token is the rental's agent token, or an enrolment token
	// (wire.IsEnrolToken): the agent then announces its instance and
	// switches to the rental's own token once the user logs it. Never
	// logged.
	Token             string
	Rental            string        // optional: refuse orders for other rentals even before the server names one
	Interval          time.Duration // heartbeat interval; default 30 s
	Sample            time.Duration // sample interval; default 5 s
	ReleaseCmd        string
	PreReleaseCmd     string
	PreReleaseTimeout time.Duration
	Watch             []string
	Lease             time.Duration // 0: none
	Simulate          string        // path of a simulate file; "" reads NVML
	UtilSamples       bool          // read every NVML utilisation sample at every sample (gap-free; about 2.3 ms CPU per GPU on an H200)
	Thresholds        Thresholds
	NVMLTimeout       time.Duration // watchdog for NVML reads; default 10 s
	DiskPath          string
	Job               []string // command to wrap; empty for none
	JobStdout         io.Writer
	JobStderr         io.Writer
	Log               *slog.Logger

	// StateDir holds the state file that keeps replay protection across
	// restarts (State), and an enrolment agent's binding.json. Unusable
	// or "": orders and server policies are refused (fail safe); the
	// agent still reports.
	StateDir string

	// MetadataURL replaces the clouds' metadata address
	// (GPULEDGER_AGENT_METADATA_URL, for tests); "" uses the real one.
	MetadataURL string
	// JobLabel names the wrapped job (run --label): runs with the same
	// label are the user's own benchmark. "" none; else ValidLabel.
	JobLabel string
	// NoBench ignores the server's ask for a bench (--no-bench).
	NoBench bool
	// BenchURL is the bench's download URL (--bench-url,
	// $GPULEDGER_BENCH_URL); "" none.
	BenchURL string
	// BenchCmd is the bench's command before its flags; nil runs this
	// binary's "bench" (os.Executable()). Tests put a script there.
	BenchCmd []string

	// InstanceEnv, when set, is what the instance facts are read from
	// (tests pose as a platform); nil reads this process's environment
	// and the root file system.
	InstanceEnv *platform.Env
}

// Validate checks the configuration and names the offending field.
func (c *Config) Validate() error {
	if c.Server == "" {
		return errors.New("agent: --server is required")
	}
	u, err := url.Parse(c.Server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("agent: --server %q: want http(s)://host[:port]", c.Server)
	}
	if c.Token == "" {
		return errors.New("agent: --token (or GPULEDGER_AGENT_TOKEN) is required")
	}
	if c.Sample <= 0 || c.Interval <= 0 {
		return errors.New("agent: --sample and --interval must be positive")
	}
	if c.Interval < c.Sample {
		return fmt.Errorf("agent: --interval %s is shorter than --sample %s", c.Interval, c.Sample)
	}
	if c.Lease < 0 {
		return errors.New("agent: --lease must not be negative")
	}
	if c.Thresholds.UtilPercent < 0 || c.Thresholds.UtilPercent >= 100 {
		return fmt.Errorf("agent: --util-threshold %v: want 0 to 100", c.Thresholds.UtilPercent)
	}
	if c.BenchURL != "" {
		if u, err := url.Parse(c.BenchURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("agent: --bench-url (or $GPULEDGER_BENCH_URL): want an http:// or https:// URL with a host")
		}
	}
	if c.JobLabel != "" && len(c.Job) == 0 {
		return errors.New("agent: --label names a wrapped job: put the command after --")
	}
	if c.JobLabel != "" && !ValidLabel(c.JobLabel) {
		return fmt.Errorf("agent: --label %q: want 1 to %d of letters, digits, '.', '_' or '-' (at most %[2]d bytes)", c.JobLabel, wire.MaxLabelLen)
	}
	if c.Thresholds.DiskBytesPerS < 0 {
		return fmt.Errorf("agent: --disk-io-threshold %v: want 0 (off) or more", c.Thresholds.DiskBytesPerS)
	}
	return nil
}

// ValidLabel reports whether s is a usable job label: 1 to
// wire.MaxLabelLen bytes of [A-Za-z0-9._-] (the ledger's rule).
func ValidLabel(s string) bool {
	if s == "" || len(s) > wire.MaxLabelLen {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// OpenGPU returns the GPU source the configuration asks for: the simulate
// file, or NVML. When NVML cannot be used it returns a source whose every
// read fails (the verdict is then unknown, never idle) and the reason.
func OpenGPU(ctx context.Context, simulate string, timeout time.Duration) (GPUSource, error) {
	if simulate != "" {
		return &SimulateSource{Path: simulate}, nil
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	src, err := OpenNVML(ctx, timeout)
	if err != nil {
		return NoGPU(err), err
	}
	return src, nil
}

// SetUtilThreshold changes the GPU utilisation threshold for later
// samples: the server's signed policy, never above the local one.
func (s *Sampler) SetUtilThreshold(p float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Thresholds.UtilPercent = p
}

// hostFactsEvery is how often heartbeats re-read the host facts that
// change rarely or never.
const hostFactsEvery = 10 * time.Minute

// cmpOr returns a unless it is empty, else b.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func randID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// lease is the local deadline, enforced even when the server is
// unreachable. The deadline is kept on the monotonic clock; the server's
// lease_until (wall clock) is converted once when received.
type lease struct {
	mu        sync.Mutex
	deadline  time.Time // monotonic; zero: no lease
	local     time.Time // the --lease deadline (monotonic); zero: none
	server    time.Time // the server's lease_until in force (wall clock); zero: none
	warned10  bool
	warned1   bool
	lastTry   time.Time
	finished  bool
	noCmdSaid bool
}

func newLease(d time.Duration) *lease {
	l := &lease{}
	if d > 0 {
		l.deadline = time.Now().Add(d)
		l.local = l.deadline
	}
	return l
}

// setServer applies the lease of a signed server policy: until replaces
// the local deadline; nil (the user no longer wants a release at the
// lease's end) goes back to the --lease deadline, if any. Only a change
// starts the warnings and attempts afresh.
func (l *lease) setServer(until *time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case until == nil && l.server.IsZero(), until != nil && until.Equal(l.server):
		return
	case until == nil:
		l.server, l.deadline = time.Time{}, l.local
	default:
		l.server, l.deadline = *until, time.Now().Add(time.Until(*until))
	}
	l.warned10, l.warned1, l.finished = false, false, false
}

func (l *lease) until() *time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.deadline.IsZero() {
		return nil
	}
	t := l.deadline.Round(0)
	return &t
}

// check logs warnings before the deadline and reports whether a release
// attempt is due now (at most once a minute after the deadline, until one
// succeeds).
func (l *lease) check(now time.Time, canRelease bool, log *slog.Logger) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.deadline.IsZero() || l.finished {
		return false
	}
	left := l.deadline.Sub(now)
	switch {
	case left > 10*time.Minute:
		return false
	case left > time.Minute:
		if !l.warned10 {
			l.warned10 = true
			log.Warn("lease ends soon; the host will be released if idle", "in", left.Round(time.Second), "release_cmd_set", canRelease)
		}
		return false
	case left > 0:
		if !l.warned1 {
			l.warned1 = true
			log.Warn("lease ends in under a minute", "in", left.Round(time.Second), "release_cmd_set", canRelease)
		}
		return false
	}
	if !canRelease {
		if !l.noCmdSaid {
			l.noCmdSaid = true
			log.Warn("lease ended; no --release-cmd, so the agent only reports")
		}
		return false
	}
	if !l.lastTry.IsZero() && now.Sub(l.lastTry) < time.Minute {
		return false
	}
	l.lastTry = now
	return true
}

func (l *lease) done(outcome string, log *slog.Logger) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch outcome {
	case wire.OutcomeDone, wire.OutcomeReleaseStarted:
		l.finished = true
	default:
		log.Warn("lease ended but the host was not released; will retry", "outcome", outcome)
	}
}
