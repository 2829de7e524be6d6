package agent

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuledger/gpuledger/agent/platform"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/clip"
)

// Run runs the agent until ctx ends. It returns nil on a clean stop.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	d := newDaemon(ctx, cfg)
	defer d.close()
	return d.run(ctx)
}

// daemon is one run of the agent: what it reads (the GPUs, the host, the
// wrapped job), what it keeps between heartbeats (the window, the
// rental, the lease, the replay state, the token) and the two parts that
// talk to the hub (the reporter and the order executor). It lives for
// one Run; its goroutines are the sampling loop (run), the reporter
// (Reporter.Run) and the order loop (handleOrders), all stopped by ctx.
type daemon struct {
	cfg Config
	log *slog.Logger

	gpu      GPUSource
	sim      *SimulateSource // the GPU source when it is a simulate file; nil on NVML
	job      *Job            // the wrapped job; nil when none
	host     HostReader      // cached (HostReader.Cached)
	presence *Presence
	witness  *Witness
	sampler  *Sampler
	win      Window // the samples since the last heartbeat

	bootID   string
	seq      atomic.Uint64 // the heartbeats' sequence numbers
	rental   atomic.Value  // string: the rental this agent serves; "" while unknown
	lease    *lease
	state    *State      // replay protection and the policy's record
	tok      *Token      // the token everything uses: an enrolment agent switches it
	gate     *policyGate // only a signed server policy moves the agent
	enrol    *enroller   // nil unless the token is an enrolment token
	reporter *Reporter
	executor *Executor
	bench    *benchRunner // nil with --no-bench

	// orders carries the orders of heartbeat responses to handleOrders;
	// leaseReq asks it for the local lease's release. Both drop rather
	// than block the reporter or the sampling loop.
	orders   chan wire.Order
	leaseReq chan struct{}
	// wantFull asks the next sample for what is only reported (GPU
	// memory, clock-event reasons, processes, host memory, disk), so
	// that every heartbeat carries them once: set at each cut.
	wantFull atomic.Bool

	ienv        platform.Env // where the instance facts are read from
	instanceKey atomic.Value // string: this host's InstanceFacts.Key
	// slow is what changes rarely or never, re-read every hostFactsEvery
	// (readSlow). Written at start and then only by the reporter's
	// goroutine (through cut).
	slow struct {
		at       time.Time
		hostname string
		cores    float64
		memTotal uint64
		instance wire.InstanceFacts
	}
}

// newDaemon opens what the agent reads and wires the reporter, the
// executor and (for an enrolment token) the enroller. Nothing here fails
// the run: a source that cannot be read is logged and reads as unknown.
// The caller closes the daemon.
func newDaemon(ctx context.Context, cfg Config) *daemon {
	d := &daemon{cfg: cfg, log: cfg.Log, bootID: randID(), lease: newLease(cfg.Lease)}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.openSources(ctx)
	d.rental.Store(cfg.Rental)
	state, err := OpenState(cfg.StateDir, time.Now())
	if state.Err() != nil {
		d.log.Error("agent state unusable: orders and server policies will be refused until it is fixed (--state-dir)", "dir", cfg.StateDir, "err", err)
	} else if err != nil {
		d.log.Warn("agent state", "err", err)
	}
	d.state = state
	d.tok = NewToken(cfg.Token)
	d.gate = &policyGate{tok: d.tok, local: cfg.Thresholds.UtilPercent, state: state, log: d.log}
	d.reporter = &Reporter{
		Server:   cfg.Server,
		Current:  d.tok,
		Client:   &http.Client{Timeout: 15 * time.Second},
		Interval: cfg.Interval,
		Log:      d.log,
	}
	d.orders = make(chan wire.Order, 16)
	d.leaseReq = make(chan struct{}, 1)
	d.executor = &Executor{
		Current:           d.tok,
		Rental:            d.currentRental,
		Nonces:            state,
		RecordSince:       state.Since(),
		Sampler:           d.sampler,
		Job:               d.job,
		ReleaseCmd:        cfg.ReleaseCmd,
		PreReleaseCmd:     cfg.PreReleaseCmd,
		PreReleaseTimeout: cfg.PreReleaseTimeout,
		Report:            d.reporter.PostResult,
		Log:               d.log,
	}
	d.openInstance(ctx)
	d.wantFull.Store(true)
	d.reporter.Cut = func() wire.HeartbeatRequest { return d.cut(ctx) }
	d.reporter.Final = func(hb *wire.HeartbeatRequest) { d.final(ctx, hb) }
	if wire.IsEnrolToken(cfg.Token) {
		d.startEnrolment()
	}
	d.reporter.OnResponse = d.onResponse
	if !cfg.NoBench {
		d.bench = d.newBenchRunner(ctx)
	}
	return d
}

// gpuWorkBusy reports whether s is busy with someone's work on the GPU:
// a GPU above the threshold, the wrapped job running or a watched file
// growing (training). A busy CPU, network or disk alone does not hold
// the bench back: it would turn the receipt into facts only for a
// download, while the GPU it measures is free.
func gpuWorkBusy(s *Sample) bool {
	if s.Verdict != wire.VerdictBusy {
		return false
	}
	for _, n := range s.Notes {
		switch n.Code {
		case wire.NoteGPUUtil, wire.NoteGPUUtilMean, wire.NoteJob, wire.NoteWatchGrew:
			return true
		}
	}
	return false
}

// newBenchRunner wires the bench to the daemon's samples, token and
// reporter; it runs nothing until the server asks.
func (d *daemon) newBenchRunner(ctx context.Context) *benchRunner {
	return &benchRunner{ctx: ctx, argv: d.cfg.BenchCmd, simulate: d.cfg.Simulate, url: d.cfg.BenchURL, dir: d.cfg.DiskPath,
		busy: func() (bool, bool) {
			s := d.sampler.Last()
			if s == nil {
				return false, false
			}
			return gpuWorkBusy(s), true
		},
		post: d.reporter.PostBench, token: d.tok.Get, bootID: d.bootID, log: d.log,
		busyWait: benchBusyWait, watchdog: benchWatchdog, grace: benchGrace, poll: d.cfg.Sample, tokenPoll: d.cfg.Interval, tokenWait: benchTokenWait,
	}
}

// openSources opens the GPU source, starts the wrapped job and makes the
// sampler over them and the host.
func (d *daemon) openSources(ctx context.Context) {
	gpu, err := OpenGPU(ctx, d.cfg.Simulate, d.cfg.NVMLTimeout)
	if err != nil {
		d.log.Warn("gpu readings unavailable: verdict will be unknown (never idle)", "err", err)
	}
	d.gpu = gpu
	d.sim, _ = gpu.(*SimulateSource)
	if us, ok := gpu.(interface{ SetUtilSamples(bool) }); ok {
		us.SetUtilSamples(d.cfg.UtilSamples)
	}
	if len(d.cfg.Job) > 0 {
		stdout, stderr := d.cfg.JobStdout, d.cfg.JobStderr
		if stdout == nil {
			stdout = os.Stdout
		}
		if stderr == nil {
			stderr = os.Stderr
		}
		// A job that did not start is kept too: heartbeats report it
		// finished, with the error.
		d.job, err = StartJob(ctx, d.cfg.Job, stdout, stderr)
		if err != nil {
			d.log.Error("wrapped job did not start", "err", err)
		} else {
			d.log.Info("wrapped job started", "pid", d.job.State().PID, "label", d.cfg.JobLabel)
		}
		d.job.setLabel(d.cfg.JobLabel)
	}
	d.host = HostReader{DiskPath: d.cfg.DiskPath}.Cached()
	d.presence = &Presence{}
	d.witness = &Witness{Diskstats: !InContainer()}
	d.sampler = &Sampler{GPU: gpu, Host: d.host, Watch: d.cfg.Watch, Job: d.job, Thresholds: d.cfg.Thresholds, Log: d.log,
		Presence: d.presence, Witness: d.witness}
}

// close releases what openSources opened, in the reverse order.
func (d *daemon) close() {
	d.witness.Close()
	d.presence.Close()
	d.host.Close()
	d.gpu.Close()
}

// currentRental is the rental the agent serves now ("" while unknown).
func (d *daemon) currentRental() string { return d.rental.Load().(string) }

// openInstance reads the instance facts in full, before the first
// heartbeat. An agent never outlives a boot, so what identifies the
// instance (platform, ID, machine-id) is kept from that first read: the
// hub keys the instance, and checks the rental token, by it, and a key
// that changed mid-run (a metadata answer that came late, or not at all
// the second time) would read as a copy of the host. Later reads
// (readSlow) take only the boot time again (the wall clock behind btime
// can be corrected), without DMI or the metadata service.
func (d *daemon) openInstance(ctx context.Context) {
	d.ienv = platform.OS()
	if d.cfg.InstanceEnv != nil {
		d.ienv = *d.cfg.InstanceEnv
	}
	d.ienv.MetadataURL = cmpOr(d.ienv.MetadataURL, d.cfg.MetadataURL)
	// --simulate: the environment poses as a platform; the firmware and
	// the metadata service are this machine's own.
	d.ienv.NoProbe = d.ienv.NoProbe || d.cfg.Simulate != ""
	d.readSlow(ctx, time.Now())
}

// readSlow reads what changes rarely or never (hostname, CPU quota,
// memory size, the instance facts): every few minutes, not at every
// heartbeat.
func (d *daemon) readSlow(ctx context.Context, now time.Time) {
	first := d.slow.at.IsZero()
	d.slow.at = now
	d.slow.hostname, _ = os.Hostname()
	d.slow.cores = d.host.CPUCores()
	if m, err := d.host.ReadMemory(); err == nil {
		d.slow.memTotal = m.TotalBytes
	}
	if first {
		d.slow.instance = platform.Detect(context.WithoutCancel(ctx), d.ienv)
		d.instanceKey.Store(d.slow.instance.Key(d.slow.hostname))
		return
	}
	again := d.ienv
	again.NoProbe = true
	if b := platform.Detect(ctx, again).BootedAt; !b.IsZero() {
		d.slow.instance.BootedAt = b
	}
}

// instance returns the instance facts for a heartbeat: a simulate file
// may move the boot time.
func (d *daemon) instance() *wire.InstanceFacts {
	in := d.slow.instance
	if d.sim != nil {
		if si, err := d.sim.Instance(); err == nil && !si.BootedAt.IsZero() {
			in.BootedAt = si.BootedAt
		}
	}
	return &in
}

// hostFacts returns the host facts for a heartbeat, re-reading the slow
// ones when they are hostFactsEvery old.
func (d *daemon) hostFacts(ctx context.Context) wire.HostFacts {
	if now := time.Now(); now.Sub(d.slow.at) >= hostFactsEvery {
		d.readSlow(ctx, now)
	}
	f, _ := d.gpu.Facts(ctx)
	hf := wire.HostFacts{Hostname: d.slow.hostname, GPUSource: f.Source, DriverVersion: f.DriverVersion,
		CUDADriverVersion: f.CUDADriverVersion, CPUCores: d.slow.cores, MemoryTotalBytes: d.slow.memTotal}
	// A copy: the source keeps its facts.
	hf.GPUs = append([]wire.GPUFact(nil), f.GPUs[:min(len(f.GPUs), wire.MaxGPUs)]...)
	for i := range hf.GPUs {
		hf.GPUs[i].Name, hf.GPUs[i].UUID = clip.Bytes(hf.GPUs[i].Name, 128, ""), clip.Bytes(hf.GPUs[i].UUID, 64, "")
	}
	return hf
}

// cut is the reporter's Cut: the heartbeat for the window that just
// ended. The next sample then reads in full.
func (d *daemon) cut(ctx context.Context) wire.HeartbeatRequest {
	defer d.wantFull.Store(true)
	hb := wire.HeartbeatRequest{Version: wire.Version, AgentVersion: Version, Seq: d.seq.Add(1), BootID: d.bootID,
		Host: d.hostFacts(ctx), CanRelease: d.cfg.ReleaseCmd != ""}
	hb.Instance = d.instance()
	w := d.win.Cut()
	w.fill(&hb)
	w.idleTo(&hb, d.sampler.now())
	hb.LeaseUntil = d.lease.until()
	hb.PolicyRefused, hb.PolicyRefusedCode = d.gate.refusal(), d.gate.refusalCode()
	return hb
}

// final is the reporter's Final: the last heartbeat, when the agent
// stops on a signal, says whether the host itself is going down.
func (d *daemon) final(ctx context.Context, hb *wire.HeartbeatRequest) {
	sd := &wire.Shutdown{At: time.Now().UTC().Round(0)}
	if d.sim != nil {
		si, _ := d.sim.Instance()
		sd.Host = si.HostStopping
	} else {
		sd.Host = systemdStopping(context.WithoutCancel(ctx), "/", systemdAskTimeout, askSystemctl)
	}
	hb.Shutdown = sd
}

// startEnrolment sets up the enroller of an enrolment token: it takes
// the saved binding or announces the instance, and switches the token
// and the rental when the user logs it.
func (d *daemon) startEnrolment() {
	d.enrol = &enroller{enrolToken: d.cfg.Token, tok: d.tok, dir: d.cfg.StateDir,
		key: func() string { return d.instanceKey.Load().(string) },
		setRental: func(r string) {
			// Unbound: back to what --rental said, if anything.
			d.rental.Store(cmpOr(r, d.cfg.Rental))
		},
		now: time.Now, log: d.log}
	if d.state.Err() != nil {
		d.enrol.dir = "" // the state dir is unusable: keep the binding in memory
	}
	d.enrol.start()
	d.reporter.OnRefused = d.enrol.onRefused
}

// onResponse is the reporter's OnResponse, on the reporter's goroutine:
// it must not block.
func (d *daemon) onResponse(resp wire.HeartbeatResponse) {
	if d.enrol != nil {
		d.enrol.onResponse(resp)
	}
	// Only a signed policy moves the agent (policyGate); its rental,
	// being signed, is the best source of the rental's name.
	if eff, ok := d.gate.take(resp.Policy, d.currentRental(), time.Now()); ok {
		if d.currentRental() == "" {
			d.rental.Store(resp.Policy.Rental)
		}
		d.sampler.SetUtilThreshold(eff.threshold)
		d.lease.setServer(eff.lease)
	}
	// The bench: only once the agent reports for a rental (never on an
	// enrolment answer), once per rental, on its own goroutine. Every
	// answer tells it which rental the token is for: a bench is sent
	// with a token of the rental it measured only.
	if resp.Enrolment == nil && resp.Rental != "" && d.bench != nil {
		d.bench.heard(d.tok.Get(), resp.Rental)
	}
	if resp.BenchWanted && resp.Enrolment == nil && d.bench != nil {
		d.bench.want(cmpOr(resp.Rental, d.currentRental()))
	}
	if resp.Rental != "" {
		if cur := d.currentRental(); cur == "" {
			d.rental.Store(resp.Rental)
		} else if cur != resp.Rental {
			d.log.Warn("server names another rental for this token; keeping the first", "kept", cur, "server_says", resp.Rental)
		}
	}
	for i, o := range resp.Orders {
		if i >= 16 {
			d.log.Warn("too many orders in one response; ignoring the rest", "count", len(resp.Orders))
			break
		}
		select {
		case d.orders <- o:
		default:
			d.log.Warn("order queue full; order dropped", "order", o.ID)
		}
	}
}

// run starts the reporter and the order loop and runs the sampling loop
// on the caller's goroutine until ctx ends; it then waits for both, and
// for a wrapped job still running, before it returns.
func (d *daemon) run(ctx context.Context) error {
	f, _ := d.gpu.Facts(ctx)
	d.log.Info("agent started", "version", Version, "server", d.cfg.Server, "sample", d.cfg.Sample, "interval", d.cfg.Interval,
		"gpu_source", f.Source, "release_cmd_set", d.cfg.ReleaseCmd != "", "lease", d.cfg.Lease, "state_dir", d.cfg.StateDir,
		"enrolment", d.enrol != nil, "platform", d.slow.instance.Platform, "platform_source", d.slow.instance.PlatformSource, "instance_id", d.slow.instance.ID,
		"booted_at", d.slow.instance.BootedAt.Format(time.RFC3339))

	var wg sync.WaitGroup
	// The reporter: heartbeats every Interval, owned by run; it stops
	// when ctx ends, after its last heartbeat (Final), and run waits.
	wg.Go(func() { d.reporter.Run(ctx) })
	// The order loop: owned by run; stops when ctx ends, and run waits.
	wg.Go(func() { d.handleOrders(ctx) })
	d.sample(ctx)
	wg.Wait()
	// Only the reporter starts a bench, and it has stopped.
	if d.bench != nil {
		d.bench.wait()
	}
	if d.job != nil && d.job.Alive() {
		<-d.job.Done()
	}
	d.log.Info("agent stopped")
	return nil
}

// handleOrders carries out the orders of heartbeat responses and the
// local lease's release, one at a time, until ctx ends. It is the only
// goroutine that releases the host.
func (d *daemon) handleOrders(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case o := <-d.orders:
			d.executor.HandleOrder(ctx, o)
		case <-d.leaseReq:
			out := d.executor.Release(ctx, LocalLeaseID, wire.ActionRelease)
			d.lease.done(out, d.log)
		}
	}
}

// sample is the sampling loop, on run's goroutine: a sample every
// cfg.Sample into the window, and the lease's check, until ctx ends.
func (d *daemon) sample(ctx context.Context) {
	tick := time.NewTicker(d.cfg.Sample)
	defer tick.Stop()
	for {
		level := ReadFast
		if d.wantFull.Swap(false) {
			level = ReadFull
		}
		d.win.Add(d.sampler.SampleLevel(ctx, level))
		if d.lease.check(time.Now(), d.cfg.ReleaseCmd != "", d.log) {
			select {
			case d.leaseReq <- struct{}{}:
			default:
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
