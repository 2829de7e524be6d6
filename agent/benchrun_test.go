package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/perf"
)

// benchJSON is what a fake bench child prints.
const benchJSON = `{"started_at":"2026-12-03T10:00:00Z","wall_s":1.2,"gpu_s":0.8,"source":"cuda","gpus":[{"index":0,"name":"NVIDIA H200","model":"H200","bf16_tflops":640.5,"mem_gbps":4280}],"host":{"cpu_cores":16,"disk_write_mbps":1800}}`

// fakeBench writes a shell script that appends its arguments to a log
// (one line per run) and then runs body; it returns the command and the
// log's path.
func fakeBench(t *testing.T, body string) ([]string, string) {
	t.Helper()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	script := filepath.Join(dir, "bench.sh")
	src := "#!/bin/sh\necho \"$*\" >> " + runs + "\n" + body + "\n"
	if err := os.WriteFile(script, []byte(src), 0o700); err != nil {
		t.Fatal(err)
	}
	return []string{script, "bench"}, runs
}

func readRuns(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestRun_BenchWanted: a hub that asks for a bench gets exactly one: the
// daemon runs its bench command once as a child, with --json and the
// simulate file, and posts what it printed with the rental's token; the
// hub then stops asking and nothing runs again.
func TestRun_BenchWanted(t *testing.T) {
	hub := hubtest.New("tok-b", "box1")
	hub.WantBench(true)
	argv, runs := fakeBench(t, "echo '"+benchJSON+"'")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var simPath string
	_, wait := runAgent(t, ctx, hub, simIdleHost, func(c *Config) {
		c.BenchCmd = argv
		c.BenchURL = "https://example.com/1GB.bin"
		c.DiskPath = "/workspace"
		simPath = c.Simulate
	})
	waitUntil(t, hub, "a stored bench", func() bool { return hub.BenchesStored() == 1 })
	n := len(hub.Heartbeats())
	waitUntil(t, hub, "three more heartbeats", func() bool { return len(hub.Heartbeats()) >= n+3 })
	cancel()
	logs := wait()
	got := readRuns(t, runs)
	if len(got) != 1 {
		t.Fatalf("bench child ran %d times, want once: %q\n%s", len(got), got, logs)
	}
	want := "bench --json --simulate " + simPath + " --dir /workspace"
	if got[0] != want {
		t.Errorf("child args %q, want %q", got[0], want)
	}
	posts := hub.BenchPosts()
	if len(posts) != 1 {
		t.Fatalf("%d bench posts, want 1", len(posts))
	}
	p := posts[0]
	if len(p.ID) != 32 || strings.Trim(p.ID, "0123456789abcdef") != "" || p.Version != wire.Version || p.AgentVersion != Version || p.BootID == "" || p.SentAt.IsZero() {
		t.Errorf("report envelope %+v", p)
	}
	if p.Bench.Source != "cuda" || len(p.Bench.GPUs) != 1 || p.Bench.GPUs[0].BF16TFLOPS != 640.5 || p.Bench.Host.DiskWriteMBps != 1800 {
		t.Errorf("bench %+v, want the child's", p.Bench)
	}
	for _, hb := range hub.Heartbeats() {
		if hb.Seq > 0 && len(hb.Host.GPUs) == 0 {
			t.Fatalf("heartbeat %d lost its GPUs while the bench ran", hb.Seq)
		}
	}
}

// TestRun_NoBench: with --no-bench the daemon has no bench runner, and a
// heartbeat answer asking for one starts nothing.
func TestRun_NoBench(t *testing.T) {
	hub := hubtest.New("tok-n", "box1")
	hub.WantBench(true)
	argv, runs := fakeBench(t, "echo '"+benchJSON+"'")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, wait := runAgent(t, ctx, hub, simIdleHost, func(c *Config) { c.BenchCmd, c.NoBench = argv, true })
	waitHeartbeats(t, hub, 4)
	cancel()
	logs := wait()
	if got := readRuns(t, runs); len(got) != 0 || len(hub.BenchPosts()) != 0 {
		t.Fatalf("--no-bench ran the bench %d times and posted %d\n%s", len(got), len(hub.BenchPosts()), logs)
	}
	// The same, deterministically: the daemon made no runner.
	d := newDaemon(t.Context(), Config{Server: "http://x", Token: "t", Interval: time.Second, Sample: time.Second, Simulate: "none.json", NoBench: true})
	defer d.close()
	if d.bench != nil {
		t.Fatal("a daemon with --no-bench has a bench runner")
	}
	d.onResponse(wire.HeartbeatResponse{Rental: "box1", BenchWanted: true})
}

// testRunner is a benchRunner with fast timings, a hub behind the
// reporter's PostBench and a switchable token.
type testRunner struct {
	*benchRunner
	hub   *hubtest.Hub
	tok   *Token
	mu    sync.Mutex
	busyN int // busy answers left; -1 busy for ever
	asked int // busy() calls
}

func newTestRunner(t *testing.T, ctx context.Context, argv []string) *testRunner {
	hub := hubtest.New("tok-r", "box1")
	hub.EnrolToken = "enrol-x"
	tok := NewToken("tok-r")
	rep := &Reporter{Server: "http://hub.test", Current: tok, Client: &http.Client{Transport: handlerTransport{hub.Handler()}, Timeout: 5 * time.Second}}
	tr := &testRunner{hub: hub, tok: tok}
	tr.benchRunner = &benchRunner{ctx: ctx, argv: argv, post: rep.PostBench, token: tok.Get, bootID: "boot1",
		log: slog.New(slog.DiscardHandler), busyWait: time.Hour, poll: time.Millisecond, watchdog: 30 * time.Second, grace: 2 * time.Second,
		tokenPoll: 10 * time.Millisecond, tokenWait: time.Hour,
		busy: func() (bool, bool) {
			tr.mu.Lock()
			defer tr.mu.Unlock()
			tr.asked++
			if tr.busyN == 0 {
				return false, true
			}
			if tr.busyN > 0 {
				tr.busyN--
			}
			return true, true
		}}
	return tr
}

// TestBench_BusyPostpones: while the latest sample is busy the bench
// waits; it runs in full once a sample is not busy.
func TestBench_BusyPostpones(t *testing.T) {
	argv, runs := fakeBench(t, "echo '"+benchJSON+"'")
	r := newTestRunner(t, t.Context(), argv)
	r.busyN = 5
	r.want("box1")
	r.wait()
	if r.asked != 6 {
		t.Errorf("asked busy %d times, want 6 (5 busy, then free)", r.asked)
	}
	got := readRuns(t, runs)
	if len(got) != 1 || strings.Contains(got[0], "--facts-only") {
		t.Fatalf("runs %q, want one full run", got)
	}
	if r.hub.BenchesStored() != 1 {
		t.Fatal("not sent")
	}
	// Asked again for the same rental: nothing runs.
	r.want("box1")
	r.wait()
	if got := readRuns(t, runs); len(got) != 1 {
		t.Fatalf("a second ask for the same rental ran it again: %q", got)
	}
}

// TestBench_BusyTooLongFactsOnly: a GPU busy for the whole wait gets a
// facts-only bench that says why.
func TestBench_BusyTooLongFactsOnly(t *testing.T) {
	argv, runs := fakeBench(t, "echo '"+benchJSON+"'")
	r := newTestRunner(t, t.Context(), argv)
	r.busyN, r.busyWait = -1, 20*time.Millisecond
	r.want("box1")
	r.wait()
	got := readRuns(t, runs)
	if len(got) != 1 || !strings.Contains(got[0], "--facts-only") {
		t.Fatalf("runs %q, want one --facts-only run", got)
	}
	posts := r.hub.BenchPosts()
	if len(posts) != 1 || !hasSkip(posts[0].Bench, "stayed busy") {
		t.Fatalf("posts %+v, want one saying the GPU stayed busy", posts)
	}
}

func hasSkip(b perf.Bench, substr string) bool {
	for _, s := range b.Skipped {
		if strings.Contains(s.Why, substr) {
			return true
		}
	}
	return false
}

// TestBench_HungChildKilled: a child that does not finish is killed
// with its whole process group when the watchdog ends, and a bench that
// measured nothing is sent saying so.
func TestBench_HungChildKilled(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	argv, _ := fakeBench(t, "sleep 60 & echo $! > "+pidFile+"\nwait")
	r := newTestRunner(t, t.Context(), argv)
	// Long enough for the script to start its own child first.
	r.watchdog = 2 * time.Second
	start := time.Now()
	r.want("box1")
	r.wait()
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("took %s: the watchdog did not end the child", el)
	}
	posts := r.hub.BenchPosts()
	if len(posts) != 1 || posts[0].Bench.Source != "none" || !hasSkip(posts[0].Bench, "did not finish") {
		t.Fatalf("posts %+v, want one none bench saying it did not finish", posts)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// The grandchild is gone (or a zombie about to be reaped by init).
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil && !isZombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the child's child %d still runs after the watchdog", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

// TestBench_BadOutput: output that is not a bench, or too much of it, and
// a child that cannot start each give a bench that measured nothing and
// says why; a child that exits 1 with a bench is believed.
func TestBench_BadOutput(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       string // in a Skip; "" the bench is the child's
	}{
		{"garbage", "echo 'Segmentation fault'", "not a bench"},
		{"huge", "head -c 200000 /dev/zero | tr '\\0' 'x'", "more than"},
		{"empty, exit 3", "exit 3", "failed"},
		{"nothing measured, exit 1", "echo '{\"source\":\"none\",\"gpus\":[],\"host\":{},\"skipped\":[{\"what\":\"gpu\",\"gpu\":-1,\"why\":\"no CUDA driver: libcuda.so.1 not found\"}]}'; exit 1", "libcuda.so.1 not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			argv, _ := fakeBench(t, c.body)
			r := newTestRunner(t, t.Context(), argv)
			r.want("box1")
			r.wait()
			posts := r.hub.BenchPosts()
			if len(posts) != 1 || posts[0].Bench.Source != "none" || !hasSkip(posts[0].Bench, c.want) {
				t.Fatalf("posts %+v, want one none bench with %q", posts, c.want)
			}
			if posts[0].Bench.StartedAt.IsZero() || posts[0].Bench.GPUs == nil {
				t.Errorf("bench %+v: want a start time and an empty GPU list", posts[0].Bench)
			}
			if b, _ := json.Marshal(posts[0]); len(b) > wire.MaxBenchBodyBytes {
				t.Errorf("report of %d bytes", len(b))
			}
		})
	}
	r := newTestRunner(t, t.Context(), []string{filepath.Join(t.TempDir(), "missing"), "bench"})
	r.want("box1")
	r.wait()
	if posts := r.hub.BenchPosts(); len(posts) != 1 || !hasSkip(posts[0].Bench, "cannot run the bench") {
		t.Fatalf("missing binary: posts %+v", posts)
	}
}

// TestBench_NoTokenForTheChild: the child is not handed the agent's
// token through the environment.
func TestBench_NoTokenForTheChild(t *testing.T) {
	t.Setenv("GPULEDGER_AGENT_TOKEN", "secret-token")
	argv, runs := fakeBench(t, "echo \"token=$GPULEDGER_AGENT_TOKEN\" >> $(dirname $0)/runs; echo '"+benchJSON+"'")
	r := newTestRunner(t, t.Context(), argv)
	r.want("box1")
	r.wait()
	got := readRuns(t, runs)
	if len(got) != 2 || got[1] != "token=" {
		t.Fatalf("child saw %q, want an empty token", got)
	}
}

// TestBench_SendRetries: network errors and 5xx are retried with
// backoff and the same ID; 409 (the enrolment token) keeps the report
// until the token changes; 400 drops it.
func TestBench_SendRetries(t *testing.T) {
	rep := wire.BenchReport{Version: wire.Version, ID: "abc123", Bench: perf.Bench{Source: "none", GPUs: []perf.GPU{}}}
	job := benchJob{rental: "box1", tok: "tok-r"}
	t.Run("5xx then 200", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			r.hub.FailBench(3, http.StatusServiceUnavailable)
			if !r.send(t.Context(), rep, job) {
				t.Fatal("send did not finish")
			}
			posts := r.hub.BenchPosts()
			if len(posts) != 4 || r.hub.BenchesStored() != 1 {
				t.Fatalf("%d posts, %d stored; want 4 and 1", len(posts), r.hub.BenchesStored())
			}
			for _, p := range posts {
				if p.ID != "abc123" {
					t.Fatalf("a retry changed the ID: %q", p.ID)
				}
			}
		})
	})
	t.Run("network error then 200", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			var calls int
			post := r.post
			r.post = func(ctx context.Context, tok string, b wire.BenchReport) (wire.BenchResponse, error) {
				if calls++; calls <= 2 {
					return wire.BenchResponse{}, errors.New("dial tcp: connection refused")
				}
				return post(ctx, tok, b)
			}
			start := time.Now()
			if !r.send(t.Context(), rep, job) || calls != 3 || r.hub.BenchesStored() != 1 {
				t.Fatalf("calls %d stored %d", calls, r.hub.BenchesStored())
			}
			if el := time.Since(start); el < time.Second {
				t.Errorf("retried after %s: want a backoff", el)
			}
		})
	})
	t.Run("enrolment token then rental token", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			r.tok.Set("enrol-x")
			done := make(chan bool)
			go func() { done <- r.send(t.Context(), rep, job) }()
			time.Sleep(time.Second)
			synctest.Wait()
			if n := len(r.hub.BenchPosts()); n != 0 {
				t.Fatalf("%d posts with the enrolment token", n)
			}
			r.tok.Set("tok-r")
			if !<-done || r.hub.BenchesStored() != 1 {
				t.Fatal("not sent once the rental token came")
			}
		})
	})
	t.Run("409 then 200", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			r.hub.FailBench(1, http.StatusConflict)
			done := make(chan bool)
			go func() { done <- r.send(t.Context(), rep, job) }()
			time.Sleep(time.Second)
			synctest.Wait()
			if n := len(r.hub.BenchPosts()); n != 1 || r.hub.BenchesStored() != 0 {
				t.Fatalf("%d posts, want 1 refused and kept", n)
			}
			// The hub hands the agent another token of the same rental
			// (re-enrolled), and its first answer names the rental.
			r.hub.Token = "tok-2"
			r.tok.Set("tok-2")
			r.heard("tok-2", "box1")
			if !<-done || r.hub.BenchesStored() != 1 {
				t.Fatal("not sent with the new token")
			}
			if posts := r.hub.BenchPosts(); posts[1].ID != rep.ID {
				t.Fatal("the ID changed")
			}
		})
	})
	t.Run("400 drops", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			r.hub.FailBench(5, http.StatusBadRequest)
			if !r.send(t.Context(), rep, job) {
				t.Fatal("send did not finish")
			}
			if n := len(r.hub.BenchPosts()); n != 1 {
				t.Fatalf("%d posts after a 400, want 1", n)
			}
		})
	})
	t.Run("stopped", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			r.hub.FailBench(1000, http.StatusBadGateway)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan bool)
			go func() { done <- r.send(ctx, rep, job) }()
			time.Sleep(10 * time.Minute)
			cancel()
			if <-done {
				t.Fatal("send said finished after its context ended")
			}
			if n := len(r.hub.BenchPosts()); n < 3 || n > 20 {
				t.Fatalf("%d posts in 10 minutes: want a few, backing off", n)
			}
		})
	})
}

// TestGPUWorkBusy: the bench waits for someone's GPU work (a busy GPU,
// the wrapped job, a growing watched file), not for a busy CPU, network
// or disk alone.
func TestGPUWorkBusy(t *testing.T) {
	for _, c := range []struct {
		s    Sample
		want bool
	}{
		{Sample{Verdict: wire.VerdictIdle}, false},
		{Sample{Verdict: wire.VerdictUnknown}, false},
		{Sample{Verdict: wire.VerdictBusy, Notes: []wire.Note{{Code: wire.NoteCPU}, {Code: wire.NoteNet}, {Code: wire.NoteDisk}}}, false},
		{Sample{Verdict: wire.VerdictBusy, Notes: []wire.Note{{Code: wire.NoteCPU}, {Code: wire.NoteGPUUtil}}}, true},
		{Sample{Verdict: wire.VerdictBusy, Notes: []wire.Note{{Code: wire.NoteGPUUtilMean}}}, true},
		{Sample{Verdict: wire.VerdictBusy, Notes: []wire.Note{{Code: wire.NoteJob}}}, true},
		{Sample{Verdict: wire.VerdictBusy, Notes: []wire.Note{{Code: wire.NoteWatchGrew}}}, true},
	} {
		if got := gpuWorkBusy(&c.s); got != c.want {
			t.Errorf("%+v: %v, want %v", c.s, got, c.want)
		}
	}
	// Through Decide: a GPU at 90 % holds the bench back, a busy CPU does not.
	util := func(u float64) Sample {
		return Sample{CPUOK: true, GPUs: []GPUReading{{Index: 0, UtilOK: true, UtilMax: u, UtilMean: u}}}
	}
	s := util(90)
	s.Verdict, _ = Decide(&s, DefaultThresholds)
	if !gpuWorkBusy(&s) {
		t.Errorf("GPU at 90 %%: not busy for the bench (%v %+v)", s.Verdict, s.Notes)
	}
	s = util(0)
	s.CPUPercent = 400
	s.Verdict, _ = Decide(&s, DefaultThresholds)
	if s.Verdict != wire.VerdictBusy || gpuWorkBusy(&s) {
		t.Errorf("CPU at 400 %%: verdict %v, busy for the bench %v; want busy, not for the bench", s.Verdict, gpuWorkBusy(&s))
	}
}

// TestBench_URLNotOnArgv: the download URL reaches the child in its
// environment (GPULEDGER_BENCH_URL), never on its command line, which
// any local user reads in ps; without one the daemon's environment's is
// not passed on either.
func TestBench_URLNotOnArgv(t *testing.T) {
	t.Setenv("GPULEDGER_BENCH_URL", "https://other.example/x")
	const url = "https://user:pw@bucket.example/1GB.bin?X-Amz-Signature=s3cret"
	for _, c := range []struct{ url, env string }{{url, url}, {"", ""}} {
		argv, runs := fakeBench(t, "echo \"url=$GPULEDGER_BENCH_URL\" >> $(dirname $0)/runs; echo '"+benchJSON+"'")
		r := newTestRunner(t, t.Context(), argv)
		r.url = c.url
		r.want("box1")
		r.wait()
		got := readRuns(t, runs)
		if len(got) != 2 || got[1] != "url="+c.env {
			t.Fatalf("url %q: child saw %q, want its environment to say %q", c.url, got, c.env)
		}
		if strings.Contains(got[0], "s3cret") || strings.Contains(got[0], "example") || strings.Contains(got[0], "download") {
			t.Errorf("the URL is on the child's command line: %q", got[0])
		}
	}
}

// TestBench_StopTermFirst: a child the watchdog or the daemon's stop
// ends gets SIGTERM first, so it can remove its disk test's file, and
// SIGKILL only after the grace, with whatever it started.
func TestBench_StopTermFirst(t *testing.T) {
	// The script makes a file it removes on SIGTERM, as the bench's
	// disk test does, and waits on a child of its own.
	const body = `f=$(dirname $0)/.gpuledger-bench-0123456789abcdef
trap 'rm -f "$f"; kill $s 2>/dev/null; exit 1' TERM
: > "$f"
sleep 60 & s=$!
echo $s > $(dirname $0)/pid
wait`
	t.Run("watchdog", func(t *testing.T) {
		argv, _ := fakeBench(t, body)
		r := newTestRunner(t, t.Context(), argv)
		r.watchdog = time.Second
		r.want("box1")
		r.wait()
		posts := r.hub.BenchPosts()
		if len(posts) != 1 || !hasSkip(posts[0].Bench, "did not finish") {
			t.Fatalf("posts %+v, want one saying it did not finish", posts)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(argv[0]), ".gpuledger-bench-0123456789abcdef")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the child's file is left (%v): it was not given SIGTERM first", err)
		}
	})
	t.Run("daemon stops", func(t *testing.T) {
		argv, _ := fakeBench(t, body)
		ctx, cancel := context.WithCancel(t.Context())
		r := newTestRunner(t, ctx, argv)
		r.want("box1")
		pidFile := filepath.Join(filepath.Dir(argv[0]), "pid")
		deadline := time.Now().Add(10 * time.Second)
		for _, err := os.Stat(pidFile); err != nil; _, err = os.Stat(pidFile) {
			if time.Now().After(deadline) {
				t.Fatal("the child did not start")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		r.wait()
		if n := len(r.hub.BenchPosts()); n != 0 {
			t.Errorf("%d posts after the daemon stopped", n)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(argv[0]), ".gpuledger-bench-0123456789abcdef")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the child's file is left (%v)", err)
		}
	})
	t.Run("ignores SIGTERM", func(t *testing.T) {
		argv, _ := fakeBench(t, "trap '' TERM\nsleep 60 & echo $! > $(dirname $0)/pid\nwait; wait; wait")
		r := newTestRunner(t, t.Context(), argv)
		r.watchdog, r.grace = time.Second, 500*time.Millisecond
		start := time.Now()
		r.want("box1")
		r.wait()
		if el := time.Since(start); el > 10*time.Second {
			t.Fatalf("took %s: the child ignoring SIGTERM was not killed after the grace", el)
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(argv[0]), "pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(pid, 0) == nil && !isZombie(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("the child's child %d (ignoring SIGTERM) still runs after the grace", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// TestBench_OutputHeldOpen: a bench printed in full by a child that
// exited 0 is believed though something it started held its output
// open past the grace (exec.ErrWaitDelay); that straggler is killed.
func TestBench_OutputHeldOpen(t *testing.T) {
	argv, _ := fakeBench(t, "sleep 60 & echo $! > $(dirname $0)/pid\necho '"+benchJSON+"'")
	r := newTestRunner(t, t.Context(), argv)
	r.grace = 300 * time.Millisecond
	r.want("box1")
	r.wait()
	posts := r.hub.BenchPosts()
	if len(posts) != 1 || posts[0].Bench.Source != "cuda" || len(posts[0].Bench.GPUs) != 1 {
		t.Fatalf("posts %+v, want the child's bench", posts)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(argv[0]), "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil && !isZombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the process holding the output, %d, still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countingHandler counts the records whose message contains substr.
type countingHandler struct {
	slog.Handler
	substr string
	mu     *sync.Mutex
	n      *int
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h countingHandler) Handle(ctx context.Context, rec slog.Record) error {
	if strings.Contains(rec.Message, h.substr) {
		h.mu.Lock()
		*h.n++
		h.mu.Unlock()
	}
	return nil
}

// TestBench_SendEnds: send ends where retrying would loop: a 429 (the
// rental holds as many benches as the hub stores) drops the report with
// one log line; a token refused for longer than tokenWait gives up; a
// token that an answer names for another rental drops it, before any
// post with that token, while a new token of the same rental carries it.
func TestBench_SendEnds(t *testing.T) {
	rep := wire.BenchReport{Version: wire.Version, ID: "abc123", Bench: perf.Bench{Source: "none", GPUs: []perf.GPU{}}}
	job := benchJob{rental: "box1", tok: "tok-r"}
	// tokens records the token of every post.
	tokens := func(r *testRunner) *[]string {
		var mu sync.Mutex
		var got []string
		post := r.post
		r.post = func(ctx context.Context, tok string, b wire.BenchReport) (wire.BenchResponse, error) {
			mu.Lock()
			got = append(got, tok)
			mu.Unlock()
			return post(ctx, tok, b)
		}
		return &got
	}
	t.Run("429 final", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			var mu sync.Mutex
			var said int
			r.log = slog.New(countingHandler{Handler: slog.DiscardHandler, substr: "no more benches", mu: &mu, n: &said})
			r.hub.FailBench(1000, http.StatusTooManyRequests)
			done := make(chan bool)
			go func() { done <- r.send(t.Context(), rep, job) }()
			time.Sleep(24 * time.Hour)
			synctest.Wait()
			select {
			case ok := <-done:
				if !ok {
					t.Error("send did not finish after a 429")
				}
			default:
				t.Fatalf("send still runs a day after a 429 (%d posts)", len(r.hub.BenchPosts()))
			}
			if n := len(r.hub.BenchPosts()); n != 1 || said != 1 {
				t.Fatalf("%d posts and %d log lines after a 429, want 1 and 1", n, said)
			}
		})
	})
	t.Run("429 with a short Retry-After is the rate limit: waited out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			r.hub.FailBenchRetryAfter(2, http.StatusTooManyRequests, "5")
			done := make(chan bool)
			go func() { done <- r.send(t.Context(), rep, job) }()
			time.Sleep(time.Minute)
			synctest.Wait()
			select {
			case ok := <-done:
				if !ok || r.hub.BenchesStored() != 1 || len(r.hub.BenchPosts()) != 3 {
					t.Fatalf("finished %v with %d stored of %d posts, want stored on the third post", ok, r.hub.BenchesStored(), len(r.hub.BenchPosts()))
				}
			default:
				t.Fatalf("send still runs a minute after two 429s of Retry-After 5 (%d posts)", len(r.hub.BenchPosts()))
			}
		})
	})
	t.Run("429 with an hour's Retry-After is the rental's full: dropped", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			r.hub.FailBenchRetryAfter(1000, http.StatusTooManyRequests, "3600")
			if ok := r.send(t.Context(), rep, job); !ok || len(r.hub.BenchPosts()) != 1 {
				t.Fatalf("finished %v after %d posts, want dropped after 1", ok, len(r.hub.BenchPosts()))
			}
		})
	})
	t.Run("401 gives up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			r.tokenWait, r.tokenPoll = 3*time.Hour, time.Minute
			r.hub.FailBench(1000, http.StatusUnauthorized)
			done := make(chan bool)
			go func() { done <- r.send(t.Context(), rep, job) }()
			time.Sleep(2 * time.Hour)
			synctest.Wait()
			select {
			case <-done:
				t.Fatal("gave up before tokenWait")
			default:
			}
			time.Sleep(2 * time.Hour)
			synctest.Wait()
			select {
			case ok := <-done:
				if ok {
					t.Error("a bench given up reads as finished: the next ask would not run it")
				}
			default:
				t.Fatal("still waiting for a token 4 hours after a 401")
			}
			if n := len(r.hub.BenchPosts()); n != 1 {
				t.Fatalf("%d posts, want 1", n)
			}
		})
	})
	t.Run("another rental's token", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			got := tokens(r)
			// Logged as box2 since the bench was asked for box1.
			r.hub.Token, r.hub.Rental = "tok-b", "box2"
			r.tok.Set("tok-b")
			done := make(chan bool)
			go func() { done <- r.send(t.Context(), rep, job) }()
			time.Sleep(time.Minute)
			synctest.Wait()
			if len(*got) != 0 {
				t.Fatalf("posted with %q before any answer named its rental", *got)
			}
			r.heard("tok-b", "box2")
			if <-done || len(*got) != 0 || r.hub.BenchesStored() != 0 {
				t.Fatalf("box1's bench posted with box2's token: %q, %d stored", *got, r.hub.BenchesStored())
			}
		})
	})
	t.Run("same rental's new token", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRunner(t, t.Context(), nil)
			got := tokens(r)
			r.hub.Token = "tok-2"
			r.tok.Set("tok-2")
			r.heard("tok-2", "box1")
			if !r.send(t.Context(), rep, job) || r.hub.BenchesStored() != 1 || len(*got) != 1 || (*got)[0] != "tok-2" {
				t.Fatalf("posts with %q, %d stored: want one with tok-2", *got, r.hub.BenchesStored())
			}
		})
	})
}

// TestBench_RentalSwitchFreesRunner: a bench waiting for a token is
// dropped once an answer names another rental for the agent's token,
// and that rental's bench then runs (the runner is not held for ever).
func TestBench_RentalSwitchFreesRunner(t *testing.T) {
	argv, runs := fakeBench(t, "echo '"+benchJSON+"'")
	r := newTestRunner(t, t.Context(), argv)
	r.hub.FailBench(1, http.StatusUnauthorized)
	r.want("box1")
	deadline := time.Now().Add(10 * time.Second)
	for len(r.hub.BenchPosts()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no post")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Re-enrolled as box2: a new token, which an answer names.
	r.hub.Token, r.hub.Rental = "tok-b", "box2"
	r.tok.Set("tok-b")
	r.heard("tok-b", "box2")
	r.wait()
	if n := r.hub.BenchesStored(); n != 0 {
		t.Fatalf("box1's bench stored under box2 (%d)", n)
	}
	r.want("box2")
	r.wait()
	if got := readRuns(t, runs); len(got) != 2 || r.hub.BenchesStored() != 1 {
		t.Fatalf("runs %q, %d stored: want box2's bench run and stored", got, r.hub.BenchesStored())
	}
	posts := r.hub.BenchPosts()
	if posts[len(posts)-1].ID == posts[0].ID {
		t.Error("box2 was sent box1's report")
	}
}

// TestDaemon_BenchHearsRental: every answer to a rental's heartbeat
// tells the bench runner which rental the token is for; an enrolment
// answer does not.
func TestDaemon_BenchHearsRental(t *testing.T) {
	d := newDaemon(t.Context(), Config{Server: "http://x", Token: "tok-a", Interval: time.Second, Sample: time.Second, Simulate: "none.json"})
	defer d.close()
	if _, ok := d.bench.rentalOf("tok-a"); ok {
		t.Fatal("a rental known before any answer")
	}
	d.onResponse(wire.HeartbeatResponse{Rental: "box1"})
	if got, ok := d.bench.rentalOf("tok-a"); !ok || got != "box1" {
		t.Fatalf("rentalOf = %q, %v after an answer naming box1", got, ok)
	}
	d.onResponse(wire.HeartbeatResponse{Rental: "box9", Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolWaiting}})
	if got, _ := d.bench.rentalOf("tok-a"); got != "box1" {
		t.Fatalf("an enrolment answer moved the rental to %q", got)
	}
}
