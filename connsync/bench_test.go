package connsync_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connector/vast"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
)

// BenchmarkSyncRound is one sync round of one user with RunPod (50 pods)
// and Vast.ai (50 instances) connected, in the steady state (all bound,
// nothing changed): it must cost exactly one list call per platform
// (Vast.ai's list is 2 pages of 25: http-req/round counts those).
// cpu-ms/round is the process's CPU (user+system) per round, the fakes'
// serving and JSON included: an upper bound of the server's share.
//
//	go test -run '^$' -bench BenchmarkSyncRound -benchtime 200x -count 5 ./connsync/
func BenchmarkSyncRound(b *testing.B) {
	b.Run("round", func(b *testing.B) { benchSyncRound(b, false) })
	// The baseline in the same run: the same two list calls straight
	// through the connectors, with no sync around them. round minus
	// lists-only is the sync's own CPU besides the HTTP and JSON.
	b.Run("lists-only", func(b *testing.B) { benchSyncRound(b, true) })
	// Both in each iteration, one after the other, each timed by the
	// process's CPU: the difference is measured under the same load,
	// which on a shared machine moves more between two runs than the
	// sync's own work weighs.
	b.Run("paired", benchSyncPaired)
}

// cpuNow is the process's CPU time so far (user+system).
func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// steadyEnv is the benchmarks' world: RunPod and Vast.ai connected with
// 50 instances each, all logged and settled by two rounds, with nothing
// said since; and bare clients of both platforms, for the baseline of
// list calls without the sync.
func steadyEnv(b *testing.B) (*env, []connector.Client) {
	e := newEnv(b)
	var pods []runpodfake.Pod
	var insts []map[string]any
	for i := range 50 {
		pods = append(pods, runpodfake.NewPod(fmt.Sprintf("pod%03d", i), fmt.Sprintf("rp%d", i), "RUNNING", "0.79", "A40", 2, t0.Add(-time.Hour)))
		insts = append(insts, vastfake.Instance(1000+i))
	}
	e.rp.SetPods(pods...)
	e.vf.SetInstances(insts...)
	e.connect("runpod")
	e.connect("vast")
	e.round() // logs the 100 rentals
	e.round() // settles their stored state
	if n := len(e.book().Rentals); n != 100 {
		b.Fatalf("%d rentals after the first round, want 100", n)
	}
	e.snd.take()
	rpc, err := runpod.New(runpod.Config{APIKey: rpKey, BaseURL: e.rp.RESTURL(), GraphQLURL: e.rp.GraphQLURL()})
	if err != nil {
		b.Fatal(err)
	}
	vc, err := vast.New(vast.Config{APIKey: vastKey, BaseURL: e.vf.Base(), PageGap: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	return e, []connector.Client{rpc, vc}
}

func benchSyncPaired(b *testing.B) {
	e, bare := steadyEnv(b)
	rp0, vast0 := e.lists["runpod"].Load(), e.lists["vast"].Load()
	var inRounds, inLists time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := cpuNow()
		e.round()
		t1 := cpuNow()
		for _, c := range bare {
			if _, err := c.Instances(e.ctx); err != nil {
				b.Fatal(err)
			}
		}
		inRounds, inLists = inRounds+t1-t0, inLists+cpuNow()-t1
	}
	b.StopTimer()
	if rp, vs := e.lists["runpod"].Load()-rp0, e.lists["vast"].Load()-vast0; rp != int64(b.N) || vs != int64(b.N) {
		b.Fatalf("%d RunPod and %d Vast.ai list calls in %d rounds, want one each per round", rp, vs, b.N)
	}
	if ms := e.snd.take(); len(ms) != 0 {
		b.Fatalf("steady rounds said %q", texts(ms))
	}
	per := func(d time.Duration) float64 { return float64((d / time.Duration(b.N)).Microseconds()) / 1000 }
	b.ReportMetric(per(inRounds), "round-cpu-ms")
	b.ReportMetric(per(inLists), "lists-cpu-ms")
	b.ReportMetric(per(inRounds-inLists), "sync-cpu-ms")
}

func benchSyncRound(b *testing.B, listsOnly bool) {
	e, bare := steadyEnv(b)
	rp0, vast0 := e.lists["runpod"].Load(), e.lists["vast"].Load()
	http0 := e.rp.Calls("GET /v1/pods") + e.vf.Calls("GET /api/v1/instances/")
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for range b.N {
		if !listsOnly {
			e.round()
			continue
		}
		for _, c := range bare {
			if _, err := c.Instances(e.ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	rp, vs := e.lists["runpod"].Load()-rp0, e.lists["vast"].Load()-vast0
	if listsOnly {
		// The baseline's calls bypass the sync's counting clients: two a
		// round by construction, reported as such.
		rp, vs = int64(b.N), int64(b.N)
	} else if rp != int64(b.N) || vs != int64(b.N) {
		b.Fatalf("%d RunPod and %d Vast.ai list calls in %d rounds, want one each per round", rp, vs, b.N)
	}
	if ms := e.snd.take(); len(ms) != 0 {
		b.Fatalf("steady rounds said %q", texts(ms))
	}
	cpu := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) / time.Duration(b.N)
	b.ReportMetric(float64(rp+vs)/float64(b.N), "list-calls/round")
	b.ReportMetric(float64(e.rp.Calls("GET /v1/pods")+e.vf.Calls("GET /api/v1/instances/")-http0)/float64(b.N), "http-req/round")
	b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu-ms/round")
}
