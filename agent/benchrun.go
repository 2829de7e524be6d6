package agent

import (
	"bytes"
	"cmp"
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
	// benchGrace is how long a child stopped with SIGTERM (the watchdog,
	// the daemon stopping) has to remove its disk test's file and exit
	// before its process group is killed; it also bounds how long a
	// grandchild may hold the child's output open after it exited.
	benchGrace = 5 * time.Second
	// benchTokenWait bounds how long a bench waits for a token the hub
	// takes (401, 409, the enrolment token): then it is dropped, and the
	// next bench_wanted asks again, rather than blocking every other
	// rental's bench for ever.
	benchTokenWait = 3 * time.Hour
	// benchRateWait and benchRateTries: a 429 whose Retry-After is at
	// most benchRateWait is the hub's rate limit on the token (seconds),
	// waited out up to benchRateTries times; a longer one (an hour: the
	// rental holds as many benches as the hub stores) drops the bench.
	benchRateWait  = time.Minute
	benchRateTries = 5
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
	// url is passed on in the child's environment as
	// GPULEDGER_BENCH_URL, never on its command line: any local user
	// reads that in ps, and a presigned URL's query is a secret.
	url string
	dir string // passed on as --dir: the disk the agent reports (--disk-path)
	// busy reports whether the latest sample is busy with someone's
	// GPU work (gpuWorkBusy), and whether there is a sample at all.
	busy func() (busy, seen bool)
	// post sends a report with the token given, not whatever token is
	// current by then: send checked which rental that token is for.
	post   func(ctx context.Context, tok string, rep wire.BenchReport) (wire.BenchResponse, error)
	token  func() string
	bootID string
	log    *slog.Logger

	busyWait, poll, watchdog, grace, tokenPoll, tokenWait time.Duration

	mu      sync.Mutex
	running bool
	done    map[string]bool // rentals benched (sent or given up) in this run
	// namedTok and named are the latest heartbeat answer's token and
	// the rental it named (heard): which rental a token is for.
	namedTok, named string
	wg              sync.WaitGroup
}

// benchJob is the rental a bench is for and the token it was asked
// with: the report goes to that rental only, whatever token the agent
// holds by the time it is sent.
type benchJob struct{ rental, tok string }

// heard notes that the hub's answer to a heartbeat sent with tok named
// rental (the daemon calls it for every answer that is not an
// enrolment one). It never blocks.
func (r *benchRunner) heard(tok, rental string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.namedTok, r.named = tok, rental
}

// rentalOf returns the rental the latest answer named for tok; ok is
// false when no answer to a heartbeat with tok came yet.
func (r *benchRunner) rentalOf(tok string) (rental string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if tok == "" || tok != r.namedTok {
		return "", false
	}
	return r.named, true
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
	j := benchJob{rental: rental, tok: r.token()}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		finished := r.run(j)
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
// being stopped or given up.
func (r *benchRunner) run(j benchJob) bool {
	ctx := r.ctx
	factsOnly, ok := r.waitNotBusy(ctx)
	if !ok {
		return false
	}
	r.log.Info("running the bench the server asked for", "rental", j.rental, "facts_only", factsOnly)
	b, ok := r.runChild(ctx, factsOnly)
	if !ok {
		return false
	}
	if factsOnly {
		b.Skipped = append(b.Skipped, perf.Skip{What: "gpu", GPU: -1,
			Why: fmt.Sprintf("the GPU stayed busy with someone's work for %s after the server asked: facts only, no load on the GPU and no disk test", r.busyWait.Round(time.Second))})
	}
	rep := wire.BenchReport{Version: wire.Version, ID: benchID(), AgentVersion: Version, BootID: r.bootID, Bench: b}
	return r.send(ctx, rep, j)
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
// A child that hangs is stopped after the watchdog: its process group
// gets SIGTERM, so the bench removes its disk test's file on its way
// out, and SIGKILL grace later; one that prints no bench, or too much,
// gives a bench that measured nothing and says why: the server then
// stops asking. ok is false when ctx ended (the agent stops: nothing is
// sent, and the child is stopped the same way).
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
	if r.dir != "" {
		args = append(args, "--dir", r.dir)
	}
	cctx, cancel := context.WithTimeout(ctx, r.watchdog)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], args...)
	// Its own process group, so the watchdog ends whatever it started:
	// SIGTERM first (the bench's context ends, its disk test removes its
	// file), SIGKILL to the leader grace later (WaitDelay), and to the
	// whole group once Run returns.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = cmp.Or(r.grace, benchGrace)
	cmd.Env = benchEnv(os.Environ(), r.url)
	stdout := &cappedBuffer{max: benchMaxOut}
	stderr := &cappedBuffer{max: benchMaxErr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if cmd.Process != nil && (cctx.Err() != nil || errors.Is(err, exec.ErrWaitDelay)) {
		// Whatever of the group outlived the grace (a grandchild
		// ignoring SIGTERM, or holding the output open). The group's ID
		// cannot be reused while any of it lives.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	switch {
	case ctx.Err() != nil:
		return perf.Bench{}, false
	case cctx.Err() != nil:
		return none("the bench did not finish in %s: it was stopped", r.watchdog.Round(time.Second))
	case stdout.over:
		return none("the bench printed more than %d bytes: not a bench", benchMaxOut)
	}
	if err != nil {
		var ee *exec.ExitError
		switch {
		case errors.Is(err, exec.ErrWaitDelay):
			// The bench exited 0, but something it started held its
			// output open past the grace: what it printed is whole.
			r.log.Debug("the bench's output stayed open after it exited", "err", err)
		case !errors.As(err, &ee):
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

// send posts rep, the bench of j.rental, until the server has it: again
// with the same ID after a network error or a 5xx (backoff), after a new
// token when the server answers 409 (the agent still holds its
// enrolment token: the report is kept until the rental's token arrives)
// or 401; never again after a 429 (the rental holds as many benches as
// the hub stores) or any other refusal (400, 413). A token other than
// j's carries the report only once a heartbeat answer named j.rental as
// its rental: the agent may have been logged as another rental since,
// and the report must not be stored under that one. Waiting for a token
// ends after tokenWait. send reports whether it finished (sent, or
// refused for good) rather than being stopped, given up or dropped for
// another rental: the next bench_wanted for j.rental asks again.
func (r *benchRunner) send(ctx context.Context, rep wire.BenchReport, j benchJob) bool {
	var backoff time.Duration
	limited := 0         // 429s with a short Retry-After waited out
	var giveUp time.Time // when waiting for a token ends; zero: not waiting yet
	tokenWait := cmp.Or(r.tokenWait, benchTokenWait)
	wait := func(cond func() bool) bool {
		if giveUp.IsZero() {
			giveUp = time.Now().Add(tokenWait)
		}
		for !cond() {
			if !time.Now().Before(giveUp) {
				r.log.Warn("no token the server takes for the bench came; dropping it (the server asks again if it still wants one)",
					"rental", j.rental, "waited", tokenWait, "id", rep.ID)
				return false
			}
			if !sleepCtx(ctx, min(r.tokenPoll, time.Until(giveUp))) {
				return false
			}
		}
		return true
	}
	for {
		tok := r.token()
		if wire.IsEnrolToken(tok) {
			// No rental yet: the hub would answer 409.
			if !wait(func() bool { return r.token() != tok }) {
				return false
			}
			continue
		}
		if tok != j.tok {
			named, ok := r.rentalOf(tok)
			if !ok {
				// A new token, whose rental no answer named yet.
				if !wait(func() bool { _, ok := r.rentalOf(tok); return ok || r.token() != tok }) {
					return false
				}
				continue
			}
			if named != j.rental || j.rental == "" {
				r.log.Warn("the agent now reports for another rental; dropping the bench measured for the one before",
					"bench_for", j.rental, "now", named, "id", rep.ID)
				return false
			}
			j.tok = tok // the same rental's new token
		}
		rep.SentAt = time.Now().UTC().Round(0)
		resp, err := r.post(ctx, tok, rep)
		switch {
		case err == nil:
			if resp.Rental != "" && j.rental != "" && resp.Rental != j.rental {
				r.log.Error("the server stored the bench under another rental than the one it measured", "bench_for", j.rental, "stored_for", resp.Rental, "id", rep.ID)
			}
			r.log.Info("bench sent", "id", rep.ID, "rental", resp.Rental, "stored", resp.Stored, "bounded", resp.Bounded, "source", rep.Bench.Source)
			return true
		case ctx.Err() != nil:
			return false
		case errors.Is(err, ErrConflict), errors.Is(err, ErrUnauthorized):
			r.log.Info("the server does not take the bench with this token yet; keeping it for the next token", "err", err)
			if !wait(func() bool { return r.token() != tok }) {
				return false
			}
		case errors.Is(err, ErrTooMany):
			// A short Retry-After is the hub's rate limit on the token:
			// wait it out, a few times. A long one (or none) is the
			// rental holding as many benches as the hub stores: a retry,
			// however late, is refused the same way.
			var tm *TooManyError
			if errors.As(err, &tm) && tm.RetryAfter > 0 && tm.RetryAfter <= benchRateWait && limited < benchRateTries {
				limited++
				r.log.Info("the server limits this token's posts; sending the bench again", "retry_in", tm.RetryAfter, "id", rep.ID)
				if !sleepCtx(ctx, tm.RetryAfter) {
					return false
				}
				continue
			}
			r.log.Warn("the server stores no more benches for this rental; dropping it", "err", err, "id", rep.ID)
			return true
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

// benchEnv is the child's environment: the daemon's, without the
// agent's token (the bench needs none) and with GPULEDGER_BENCH_URL set
// to url, or removed when url is "" (the daemon's --bench-url is the
// only URL the bench fetches).
func benchEnv(environ []string, url string) []string {
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, "GPULEDGER_AGENT_TOKEN=") || strings.HasPrefix(kv, "GPULEDGER_BENCH_URL=")
	})
	if url != "" {
		env = append(env, "GPULEDGER_BENCH_URL="+url)
	}
	return env
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
