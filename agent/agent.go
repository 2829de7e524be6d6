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
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuledger/gpuledger/agent/platform"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/clip"
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
	if c.Thresholds.DiskBytesPerS < 0 {
		return fmt.Errorf("agent: --disk-io-threshold %v: want 0 (off) or more", c.Thresholds.DiskBytesPerS)
	}
	return nil
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

// Run runs the agent until ctx ends. It returns nil on a clean stop.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	gpu, err := OpenGPU(ctx, cfg.Simulate, cfg.NVMLTimeout)
	if err != nil {
		log.Warn("gpu readings unavailable: verdict will be unknown (never idle)", "err", err)
	}
	defer gpu.Close()
	if us, ok := gpu.(interface{ SetUtilSamples(bool) }); ok {
		us.SetUtilSamples(cfg.UtilSamples)
	}

	var job *Job
	if len(cfg.Job) > 0 {
		stdout, stderr := cfg.JobStdout, cfg.JobStderr
		if stdout == nil {
			stdout = os.Stdout
		}
		if stderr == nil {
			stderr = os.Stderr
		}
		job, err = StartJob(ctx, cfg.Job, stdout, stderr)
		if err != nil {
			log.Error("wrapped job did not start", "err", err)
		} else {
			log.Info("wrapped job started", "pid", job.State().PID)
		}
	}

	host := HostReader{DiskPath: cfg.DiskPath}.Cached()
	defer host.Close()
	presence := &Presence{}
	defer presence.Close()
	witness := &Witness{Diskstats: !InContainer()}
	defer witness.Close()
	sampler := &Sampler{GPU: gpu, Host: host, Watch: cfg.Watch, Job: job, Thresholds: cfg.Thresholds, Log: log,
		Presence: presence, Witness: witness}
	var win Window
	bootID := randID()
	var seq atomic.Uint64
	var rental atomic.Value // string
	rental.Store(cfg.Rental)
	lease := newLease(cfg.Lease)
	state, err := OpenState(cfg.StateDir, time.Now())
	if state.Err() != nil {
		log.Error("agent state unusable: orders and server policies will be refused until it is fixed (--state-dir)", "dir", cfg.StateDir, "err", err)
	} else if err != nil {
		log.Warn("agent state", "err", err)
	}
	// tok is the token everything uses: an enrolment agent switches it.
	tok := NewToken(cfg.Token)
	gate := &policyGate{tok: tok, local: cfg.Thresholds.UtilPercent, state: state, log: log}

	reporter := &Reporter{
		Server:   cfg.Server,
		Current:  tok,
		Client:   &http.Client{Timeout: 15 * time.Second},
		Interval: cfg.Interval,
		Log:      log,
	}
	orders := make(chan wire.Order, 16)
	exec := &Executor{
		Current:           tok,
		Rental:            func() string { return rental.Load().(string) },
		Nonces:            state,
		RecordSince:       state.Since(),
		Sampler:           sampler,
		Job:               job,
		ReleaseCmd:        cfg.ReleaseCmd,
		PreReleaseCmd:     cfg.PreReleaseCmd,
		PreReleaseTimeout: cfg.PreReleaseTimeout,
		Report:            reporter.PostResult,
		Log:               log,
	}
	// What changes rarely or never (hostname, CPU quota, memory size) is
	// read again every few minutes, not at every heartbeat.
	// The instance facts too: read in full at start, before the first
	// heartbeat. An agent never outlives a boot, so what identifies the
	// instance (platform, ID, machine-id) is kept from that first read:
	// the hub keys the instance, and checks the rental token, by it, and
	// a key that changed mid-run (a metadata answer that came late, or
	// not at all the second time) would read as a copy of the host.
	// Later reads take only the boot time again (the wall clock behind
	// btime can be corrected), without DMI or the metadata service.
	ienv := platform.OS()
	if cfg.InstanceEnv != nil {
		ienv = *cfg.InstanceEnv
	}
	ienv.MetadataURL = cmpOr(ienv.MetadataURL, cfg.MetadataURL)
	// --simulate: the environment poses as a platform; the firmware and
	// the metadata service are this machine's own.
	ienv.NoProbe = ienv.NoProbe || cfg.Simulate != ""
	sim, _ := gpu.(*SimulateSource)
	var slow struct {
		at       time.Time
		hostname string
		cores    float64
		memTotal uint64
		instance wire.InstanceFacts
	}
	var instanceKey atomic.Value // string: this host's InstanceFacts.Key
	readSlow := func(now time.Time) {
		first := slow.at.IsZero()
		slow.at = now
		slow.hostname, _ = os.Hostname()
		slow.cores = host.CPUCores()
		if m, err := host.ReadMemory(); err == nil {
			slow.memTotal = m.TotalBytes
		}
		if first {
			slow.instance = platform.Detect(context.WithoutCancel(ctx), ienv)
			instanceKey.Store(slow.instance.Key(slow.hostname))
		} else {
			again := ienv
			again.NoProbe = true
			if b := platform.Detect(ctx, again).BootedAt; !b.IsZero() {
				slow.instance.BootedAt = b
			}
		}
	}
	readSlow(time.Now())
	instance := func() *wire.InstanceFacts {
		in := slow.instance
		if sim != nil {
			if si, err := sim.Instance(); err == nil && !si.BootedAt.IsZero() {
				in.BootedAt = si.BootedAt
			}
		}
		return &in
	}
	hostFacts := func() wire.HostFacts {
		if now := time.Now(); now.Sub(slow.at) >= hostFactsEvery {
			readSlow(now)
		}
		f, _ := gpu.Facts(ctx)
		hf := wire.HostFacts{Hostname: slow.hostname, GPUSource: f.Source, DriverVersion: f.DriverVersion,
			CUDADriverVersion: f.CUDADriverVersion, CPUCores: slow.cores, MemoryTotalBytes: slow.memTotal}
		// A copy: the source keeps its facts.
		hf.GPUs = append([]wire.GPUFact(nil), f.GPUs[:min(len(f.GPUs), wire.MaxGPUs)]...)
		for i := range hf.GPUs {
			hf.GPUs[i].Name, hf.GPUs[i].UUID = clip.Bytes(hf.GPUs[i].Name, 128, ""), clip.Bytes(hf.GPUs[i].UUID, 64, "")
		}
		return hf
	}
	// The first sample after each cut reads what is only reported (GPU
	// memory, clock-event reasons, processes, host memory, disk), so that
	// every heartbeat carries them once.
	var wantFull atomic.Bool
	wantFull.Store(true)
	reporter.Cut = func() wire.HeartbeatRequest {
		defer wantFull.Store(true)
		hb := wire.HeartbeatRequest{Version: wire.Version, AgentVersion: Version, Seq: seq.Add(1), BootID: bootID,
			Host: hostFacts(), CanRelease: cfg.ReleaseCmd != ""}
		hb.Instance = instance()
		w := win.Cut()
		w.fill(&hb)
		w.idleTo(&hb, sampler.now())
		hb.LeaseUntil = lease.until()
		hb.PolicyRefused, hb.PolicyRefusedCode = gate.refusal(), gate.refusalCode()
		return hb
	}
	// The last heartbeat, when the agent stops on a signal, says whether
	// the host itself is going down.
	reporter.Final = func(hb *wire.HeartbeatRequest) {
		sd := &wire.Shutdown{At: time.Now().UTC().Round(0)}
		if sim != nil {
			si, _ := sim.Instance()
			sd.Host = si.HostStopping
		} else {
			sd.Host = systemdStopping(context.WithoutCancel(ctx), "/", systemdAskTimeout, askSystemctl)
		}
		hb.Shutdown = sd
	}
	var enrol *enroller
	if wire.IsEnrolToken(cfg.Token) {
		enrol = &enroller{enrolToken: cfg.Token, tok: tok, dir: cfg.StateDir,
			key: func() string { return instanceKey.Load().(string) },
			setRental: func(r string) {
				// Unbound: back to what --rental said, if anything.
				rental.Store(cmpOr(r, cfg.Rental))
			},
			now: time.Now, log: log}
		if state.Err() != nil {
			enrol.dir = "" // the state dir is unusable: keep the binding in memory
		}
		enrol.start()
		reporter.OnRefused = enrol.onRefused
	}
	reporter.OnResponse = func(resp wire.HeartbeatResponse) {
		if enrol != nil {
			enrol.onResponse(resp)
		}
		// Only a signed policy moves the agent (policyGate); its rental,
		// being signed, is the best source of the rental's name.
		if eff, ok := gate.take(resp.Policy, rental.Load().(string), time.Now()); ok {
			if rental.Load().(string) == "" {
				rental.Store(resp.Policy.Rental)
			}
			sampler.SetUtilThreshold(eff.threshold)
			lease.setServer(eff.lease)
		}
		if resp.Rental != "" {
			if cur := rental.Load().(string); cur == "" {
				rental.Store(resp.Rental)
			} else if cur != resp.Rental {
				log.Warn("server names another rental for this token; keeping the first", "kept", cur, "server_says", resp.Rental)
			}
		}
		for i, o := range resp.Orders {
			if i >= 16 {
				log.Warn("too many orders in one response; ignoring the rest", "count", len(resp.Orders))
				break
			}
			select {
			case orders <- o:
			default:
				log.Warn("order queue full; order dropped", "order", o.ID)
			}
		}
	}

	log.Info("agent started", "version", Version, "server", cfg.Server, "sample", cfg.Sample, "interval", cfg.Interval,
		"gpu_source", func() string { f, _ := gpu.Facts(ctx); return f.Source }(), "release_cmd_set", cfg.ReleaseCmd != "", "lease", cfg.Lease, "state_dir", cfg.StateDir,
		"enrolment", enrol != nil, "platform", slow.instance.Platform, "platform_source", slow.instance.PlatformSource, "instance_id", slow.instance.ID,
		"booted_at", slow.instance.BootedAt.Format(time.RFC3339))

	var wg sync.WaitGroup
	leaseReq := make(chan struct{}, 1)
	wg.Go(func() { reporter.Run(ctx) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case o := <-orders:
				exec.HandleOrder(ctx, o)
			case <-leaseReq:
				out := exec.Release(ctx, LocalLeaseID, wire.ActionRelease)
				lease.done(out, log)
			}
		}
	})
	// The sampling loop runs here.
	tick := time.NewTicker(cfg.Sample)
	defer tick.Stop()
	for {
		level := ReadFast
		if wantFull.Swap(false) {
			level = ReadFull
		}
		s := sampler.SampleLevel(ctx, level)
		win.Add(s)
		if lease.check(time.Now(), cfg.ReleaseCmd != "", log) {
			select {
			case leaseReq <- struct{}{}:
			default:
			}
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			if job != nil && job.Alive() {
				<-job.Done()
			}
			log.Info("agent stopped")
			return nil
		case <-tick.C:
		}
	}
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
