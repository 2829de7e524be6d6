package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func gcCycles() uint64 {
	m := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

var sink [][]byte

// With GOGC off the runtime collects nothing on its own; collect must do it
// once enough has been allocated, and not before.
func TestCollect(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { collect(ctx, 4<<20, 5*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	waitGC := func(after uint64, why string) uint64 {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for gcCycles() == after {
			if time.Now().After(deadline) {
				t.Fatal(why)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return gcCycles()
	}
	before := gcCycles()
	time.Sleep(50 * time.Millisecond)
	if n := gcCycles() - before; n != 0 {
		t.Fatalf("%d collections with nothing allocated", n)
	}
	for range 64 {
		sink = append(sink, make([]byte, 128<<10)) // 8 MiB in all
	}
	sink = nil
	waitGC(before, "no collection after 8 MiB allocated with a 4 MiB budget")
}

func TestQuietRuntime(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if quietRuntime(env(map[string]string{"GOGC": "100"})) {
		t.Fatal("GOGC set by the user: the agent must not take over collection")
	}
	if !quietRuntime(env(nil)) {
		t.Fatal("no GOGC or GOMEMLIMIT: the agent should collect itself")
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC %d, want off", got)
	}
	if got := debug.SetMemoryLimit(-1); got != agentMemLimit {
		t.Fatalf("memory limit %d, want %d", got, agentMemLimit)
	}
}
