package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/perf"
)

// The bench in the daemon: when a heartbeat's answer says BenchWanted
// (the server holds no bench for this rental), the daemon runs
// "gpuledger-agent bench --json" once, as a child process of its own
// binary, and posts the result (wire.PathBench). Never in-process: the
// bench loads libcuda and runs kernels, and a CUDA call cannot be
// interrupted, so a hung one is ended by killing the child (the
// watchdog), and the daemon's own footprint at rest stays what it was:
// nothing of the bench runs, or is mapped, until the server asks.

// Bench timings.
const (
	// benchBusyWait is how long the bench waits for the GPU to stop
	// being busy with someone's work before it runs facts only.
	benchBusyWait = 10 * time.Minute
	// benchWatchdog ends a child that has not finished: the bench
	// itself stops at 10 s, JIT and host tests included.
	benchWatchdog = 30 * time.Second
	// benchMaxOut bounds what is read of the child's output: a report
	// must fit wire.MaxBenchBodyBytes with its envelope.
	benchMaxOut = wire.MaxBenchBodyBytes - 2<<10
	// benchMaxErr bounds what is kept of the child's stderr for the log.
	benchMaxErr = 2 << 10
)

// benchRunner runs the bench once per rental when the server asks and
// sends the result until the server has it. It starts at most one
// goroutine at a time, and only when asked; the daemon waits for it
// when it stops.
type benchRunner struct {
	ctx context.Context // the daemon's: ends the runner and kills the child
	// argv is the child's command before the bench's flags: the agent's
	// own binary and "bench". Nil: os.Executable().
	argv     []string
	simulate string // passed on as --simulate
	url      string // passed on as --download-url
	dir      string // passed on as --dir: the disk the agent reports (--disk-path)
	// busy reports whether the latest sample is busy with someone's
	// GPU work (gpuWorkBusy), and whether there is a sample at all.
	busy   func() (busy, seen bool)
	post   func(context.Context, wire.BenchReport) (wire.BenchResponse, error)
	token  func() string
	bootID string
	log    *slog.Logger

	busyWait, poll, watchdog, tokenPoll time.Duration

	mu      sync.Mutex
	running bool
	done    map[string]bool // rentals benched (sent or given up) in this run
	wg      sync.WaitGroup
}

// want asks for the bench of rental. It never blocks: the bench runs on
// its own goroutine, once per rental, one at a time.
func (r *benchRunner) want(rental string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running || r.done[rental] || r.ctx.Err() != nil {
		return
	}
	r.running = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		finished := r.run(rental)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.running = false
		if finished {
			if r.done == nil {
				r.done = map[string]bool{}
			}
			r.done[rental] = true
		}
	}()
}

// wait waits for a bench goroutine still running (the daemon stops).
func (r *benchRunner) wait() { r.wg.Wait() }

// run waits for a GPU not busy, runs the child and sends its bench. It
// reports whether it finished (sent, or refused for good) rather than
// being stopped.
func (r *benchRunner) run(rental string) bool {
	ctx := r.ctx
	factsOnly, ok := r.waitNotBusy(ctx)
	if !ok {
		return false
	}
	r.log.Info("running the bench the server asked for", "rental", rental, "facts_only", factsOnly)
	b, ok := r.runChild(ctx, factsOnly)
	if !ok {
		return false
	}
	if factsOnly {
		b.Skipped = append(b.Skipped, perf.Skip{What: "gpu", GPU: -1,
			Why: fmt.Sprintf("the GPU stayed busy with someone's work for %s after the server asked: facts only, no load on the GPU and no disk test", r.busyWait.Round(time.Second))})
	}
	rep := wire.BenchReport{Version: wire.Version, ID: benchID(), AgentVersion: Version, BootID: r.bootID, Bench: b}
	return r.send(ctx, rep)
}

// waitNotBusy waits for a sample not busy with someone's GPU work; after
// busyWait it gives up and asks for facts only. ok is false when ctx
// ended.
func (r *benchRunner) waitNotBusy(ctx context.Context) (factsOnly, ok bool) {
	until := time.Now().Add(r.busyWait)
	for said := false; ; said = true {
		if busy, seen := r.busy(); seen && !busy {
			return false, true
		}
		if !time.Now().Before(until) {
			return true, true
		}
		if !said {
			r.log.Info("the bench waits for the GPU to be free of someone's work", "at_most", r.busyWait)
		}
		if !sleepCtx(ctx, r.poll) {
			return false, false
		}
	}
}

// runChild runs the bench as a child process and returns its bench.
// A child that hangs is killed (its whole process group) after the
// watchdog; one that prints no bench, or too much, gives a bench that
// measured nothing and says why: the server then stops asking. ok is
// false when ctx ended (the agent stops: nothing is sent).
func (r *benchRunner) runChild(ctx context.Context, factsOnly bool) (perf.Bench, bool) {
	started := time.Now()
	none := func(format string, args ...any) (perf.Bench, bool) {
		why := fmt.Sprintf(format, args...)
		r.log.Warn("the bench measured nothing", "why", why)
		return perf.Bench{StartedAt: started.UTC().Round(0), WallSeconds: time.Since(started).Seconds(), Source: "none",
			GPUs: []perf.GPU{}, Skipped: []perf.Skip{{What: "bench", GPU: -1, Why: why}}}, true
	}
	argv := r.argv
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return none("cannot find the agent's own binary to run the bench: %v", err)
		}
		argv = []string{exe, "bench"}
	}
	args := append(slices.Clone(argv[1:]), "--json")
	if factsOnly {
		args = append(args, "--facts-only")
	}
	if r.simulate != "" {
		args = append(args, "--simulate", r.simulate)
	}
	if r.url != "" {
		args = append(args, "--download-url", r.url)
	}
	if r.dir != "" {
		args = append(args, "--dir", r.dir)
	}
	cctx, cancel := context.WithTimeout(ctx, r.watchdog)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], args...)
	// Its own process group, so the watchdog ends whatever it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	// The bench needs no token: it is not handed one.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GPULEDGER_AGENT_TOKEN=") })
	stdout := &cappedBuffer{max: benchMaxOut}
	stderr := &cappedBuffer{max: benchMaxErr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return perf.Bench{}, false
	case cctx.Err() != nil:
		return none("the bench did not finish in %s: it was killed", r.watchdog.Round(time.Second))
	case stdout.over:
		return none("the bench printed more than %d bytes: not a bench", benchMaxOut)
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return none("cannot run the bench: %v", err)
		}
		// Exit 1 is "nothing measured", with a bench on stdout all the same.
		r.log.Debug("the bench exited non-zero", "err", err, "stderr", strings.TrimSpace(stderr.buf.String()))
	}
	var b perf.Bench
	if jerr := json.Unmarshal(stdout.buf.Bytes(), &b); jerr != nil {
		if err != nil {
			return none("the bench failed (%v) and printed no bench", err)
		}
		return none("the bench printed something that is not a bench: %v", jerr)
	}
	if b.StartedAt.IsZero() {
		b.StartedAt = started.UTC().Round(0)
	}
	if b.GPUs == nil {
		b.GPUs = []perf.GPU{}
	}
	return b, true
}

// send posts rep until the server has it: again with the same ID after
// a network error or a 5xx (backoff), after a new token when the server
// answers 409 (the agent still holds its enrolment token: the report is
// kept until the rental's token arrives) or 401; never again after any
// other refusal (400, 413). It reports whether it finished rather than
// being stopped.
func (r *benchRunner) send(ctx context.Context, rep wire.BenchReport) bool {
	var backoff time.Duration
	for {
		tok := r.token()
		if wire.IsEnrolToken(tok) {
			// No rental yet: the hub would answer 409.
			if !r.waitToken(ctx, tok) {
				return false
			}
			continue
		}
		rep.SentAt = time.Now().UTC().Round(0)
		resp, err := r.post(ctx, rep)
		switch {
		case err == nil:
			r.log.Info("bench sent", "id", rep.ID, "rental", resp.Rental, "stored", resp.Stored, "bounded", resp.Bounded, "source", rep.Bench.Source)
			return true
		case ctx.Err() != nil:
			return false
		case errors.Is(err, ErrConflict), errors.Is(err, ErrUnauthorized):
			r.log.Info("the server does not take the bench with this token yet; keeping it for the next token", "err", err)
			if !r.waitToken(ctx, tok) {
				return false
			}
		case errors.Is(err, ErrPermanent):
			r.log.Error("the server refused the bench; dropping it", "err", err, "id", rep.ID)
			return true
		default:
			backoff = nextBackoff(backoff)
			d := jitter(backoff)
			r.log.Warn("sending the bench failed; will retry", "err", err, "retry_in", d.Round(time.Millisecond))
			if !sleepCtx(ctx, d) {
				return false
			}
		}
	}
}

// waitToken waits until the current token is not old. false: ctx ended.
func (r *benchRunner) waitToken(ctx context.Context, old string) bool {
	for r.token() == old {
		if !sleepCtx(ctx, r.tokenPoll) {
			return false
		}
	}
	return true
}

// sleepCtx sleeps d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// benchID is a bench report's ID: random, so a retry is recognised.
func benchID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// cappedBuffer keeps the first max bytes written and notes that more
// came; it never fails a write, so the child is not killed by a broken
// pipe halfway through.
type cappedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if len(p) > room {
		c.over = true
	}
	if room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
