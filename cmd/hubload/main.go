// Command hubload measures the agent hub under load on loopback: it
// creates a database with many rentals and agent tokens, serves the real
// hub (with the scheduler's checks running), and sends heartbeats from
// simulated agents as fast as the given concurrency allows, then reports
// heartbeats per second, latency percentiles and the process's CPU time.
//
//	go run ./cmd/hubload -agents 10000 -duration 30s -conc 64
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/scheduler"
	"github.com/gpuledger/gpuledger/view"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hubload:", err)
		os.Exit(1)
	}
}

type discard struct{}

func (discard) Send(context.Context, chat.Outgoing) (int, error)     { return 1, nil }
func (discard) AnswerCallback(context.Context, string, string) error { return nil }

func run() error {
	agents := flag.Int("agents", 10000, "simulated agents (one rental and token each)")
	users := flag.Int("users", 100, "users the rentals belong to")
	dur := flag.Duration("duration", 30*time.Second, "how long to send")
	conc := flag.Int("conc", 64, "concurrent senders")
	tick := flag.Duration("tick", 5*time.Second, "scheduler check interval while loading")
	dir := flag.String("dir", "", "directory for the database (default: a temporary one)")
	flag.Parse()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	if *dir == "" {
		d, err := os.MkdirTemp("", "hubload")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	db, err := sqlite.Open(ctx, filepath.Join(*dir, "load.db"), sqlite.WithLogger(log))
	if err != nil {
		return err
	}
	defer db.Close()
	h, err := hub.New(hub.Config{Store: db, Logger: log})
	if err != nil {
		return err
	}
	fmt.Printf("setting up %d rentals and tokens for %d users...\n", *agents, *users)
	start := time.Now()
	for u := 1; u <= *users; u++ {
		if _, err := db.EnsureUser(ctx, ledger.User{ID: int64(u), TZ: "UTC"}); err != nil {
			return err
		}
	}
	tokens := make([]string, *agents)
	for i := range tokens {
		u := int64(i%*users + 1)
		name := fmt.Sprintf("box%d", i)
		_, err := db.CreateRental(ctx, ledger.Action{UserID: u}, ledger.Rental{Name: name, Platform: "autodl", GPU: "RTX 4090",
			GPUCount: 1, Mode: ledger.PerSecond, Priced: true, Currency: ledger.CNY,
			Price:  ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
			Events: []ledger.Event{{Kind: ledger.EventStart, At: time.Now().Add(-time.Hour)}}})
		if err != nil {
			return err
		}
		if tokens[i], err = h.Tokens().Issue(ctx, u, name); err != nil {
			return err
		}
	}
	fmt.Printf("setup took %s\n", time.Since(start).Round(time.Millisecond))

	sch, err := scheduler.New(scheduler.Config{Store: db, Hub: h, Sender: discard{}, Buttons: chat.NewButtons([]byte("hubload-button-secret"), view.ButtonErrors(log)), Logger: log, Tick: *tick, NoChart: true})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var checks, checkNS atomic.Int64
	go h.Run(rctx)
	go func() {
		t := time.NewTicker(*tick)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				t0 := time.Now()
				if err := sch.Checks(rctx); err != nil && rctx.Err() == nil {
					log.Warn("checks", "err", err)
				}
				checks.Add(1)
				checkNS.Add(int64(time.Since(t0)))
			}
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + wire.PathHeartbeat

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: *conc * 2, MaxIdleConnsPerHost: *conc * 2, IdleConnTimeout: time.Minute}}
	u50, u90 := 12.0, 40.0
	template := wire.HeartbeatRequest{Version: wire.Version, AgentVersion: "load", BootID: "load",
		Host: wire.HostFacts{Hostname: "h", GPUSource: "simulate", DriverVersion: "550.54", CUDADriverVersion: "12.4",
			GPUs: []wire.GPUFact{{Index: 0, Name: "NVIDIA GeForce RTX 4090", UUID: "GPU-1", MemoryTotalMiB: 24564}}, CPUCores: 16, MemoryTotalBytes: 64 << 30},
		GPUs:    []wire.GPUSummary{{Index: 0, UUID: "GPU-1", Samples: 6, UtilMean: &u90, UtilMax: &u90}},
		Verdict: wire.VerdictBusy, Reasons: []string{"gpu0 util 90%"}, Samples: 6, BusySamples: 6,
		HostStats: wire.HostSummary{CPUPercentMean: &u50, CPUPercentMax: &u50, CPUSource: "proc"}}

	seqs := make([]atomic.Uint64, *agents)
	var next atomic.Int64
	var ok, fail atomic.Int64
	lat := make([][]time.Duration, *conc)
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	deadline := time.Now().Add(*dur)
	began := time.Now()
	var wg sync.WaitGroup
	for w := range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hb := template
			for time.Now().Before(deadline) {
				i := int(next.Add(1)-1) % *agents
				hb.Seq = seqs[i].Add(1)
				now := time.Now()
				hb.SentAt, hb.WindowStart, hb.WindowEnd = now, now.Add(-30*time.Second), now
				b, _ := json.Marshal(hb)
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
				req.Header.Set("Authorization", "Bearer "+tokens[i])
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					fail.Add(1)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				lat[w] = append(lat[w], time.Since(t0))
				if res.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					fail.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cancel()
	if err := h.Flush(ctx); err != nil {
		return err
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(float64(len(all))*p))]
	}
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
	states, _ := db.AgentStates(ctx)
	fi, _ := os.Stat(filepath.Join(*dir, "load.db"))
	avgCheck := time.Duration(0)
	if n := checks.Load(); n > 0 {
		avgCheck = time.Duration(checkNS.Load() / n)
	}
	fmt.Printf("agents %d, concurrency %d, %s\n", *agents, *conc, elapsed.Round(time.Millisecond))
	fmt.Printf("heartbeats ok %d, failed %d: %.0f/s\n", ok.Load(), fail.Load(), float64(ok.Load())/elapsed.Seconds())
	fmt.Printf("latency p50 %s, p90 %s, p99 %s, max %s\n", pct(.5), pct(.9), pct(.99), pct(1))
	fmt.Printf("CPU (server, clients and scheduler in one process): %s = %.2f cores of %d\n", cpu.Round(time.Millisecond), cpu.Seconds()/elapsed.Seconds(), nCPU())
	fmt.Printf("scheduler checks during the run: %d, mean %s each\n", checks.Load(), avgCheck.Round(time.Millisecond))
	fmt.Printf("agent states stored %d, database %d MB\n", len(states), fi.Size()>>20)
	return nil
}

func nCPU() int {
	var set int
	b, err := os.ReadFile("/sys/fs/cgroup/cpu.max")
	if err == nil {
		var q, p int
		if n, _ := fmt.Sscanf(string(b), "%d %d", &q, &p); n == 2 && p > 0 {
			return q / p
		}
	}
	_ = set
	return runtimeNumCPU()
}

func runtimeNumCPU() int { return runtime.NumCPU() }
