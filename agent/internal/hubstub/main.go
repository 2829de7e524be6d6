// Command hubstub is a stand-in agent hub for demos and hardware proofs: it
// accepts heartbeats for one token (agent/hubtest) and writes one JSON line
// per heartbeat to --log, with the time it arrived and the fields a person
// reads in a verdict timeline. It is not the server.
//
//	hubstub --listen 127.0.0.1:18477 --token T --log heartbeats.jsonl [--bench]
//
// With --bench it asks the agent for its bench (BenchWanted) until one
// arrives, and logs the bench as a line of its own ({"received", "bench_id",
// "bench"}).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/perf"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18477", "address to listen on")
	token := flag.String("token", "", "the agent token to accept (required)")
	rental := flag.String("rental", "proof", "rental name given to the agent")
	logPath := flag.String("log", "heartbeats.jsonl", "file to append one JSON line per heartbeat to")
	bench := flag.Bool("bench", false, "ask the agent for its bench until one arrives, and log it")
	flag.Parse()
	if *token == "" {
		fmt.Fprintln(os.Stderr, "hubstub: --token is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *token, *rental, *logPath, *bench); err != nil {
		fmt.Fprintln(os.Stderr, "hubstub:", err)
		os.Exit(1)
	}
}

// line is what a timeline needs from one heartbeat.
type line struct {
	Received    time.Time         `json:"received"`
	Seq         uint64            `json:"seq"`
	Verdict     wire.Verdict      `json:"verdict"`
	Reasons     []string          `json:"reasons"`
	Work        string            `json:"work,omitempty"`
	IdleSeconds int64             `json:"idle_seconds"`
	Samples     int               `json:"samples"`
	Busy        int               `json:"busy_samples"`
	Idle        int               `json:"idle_samples"`
	Unknown     int               `json:"unknown_samples"`
	GPUs        []wire.GPUSummary `json:"gpus"`
	Bytes       int               `json:"bytes"`
}

// benchLine is a bench the agent sent.
type benchLine struct {
	Received time.Time  `json:"received"`
	ID       string     `json:"bench_id"`
	Bench    perf.Bench `json:"bench"`
}

func run(ctx context.Context, listen, token, rental, logPath string, wantBench bool) error {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer f.Close()
	hub := hubtest.New(token, rental)
	hub.WantBench(wantBench)
	inner := hub.Handler()
	enc := json.NewEncoder(f)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		if r.URL.Path == wire.PathBench {
			if bs := hub.BenchPosts(); len(bs) > 0 {
				b := bs[len(bs)-1]
				enc.Encode(benchLine{Received: time.Now().UTC(), ID: b.ID, Bench: b.Bench})
			}
			return
		}
		if r.URL.Path != wire.PathHeartbeat {
			return
		}
		hbs := hub.Heartbeats()
		if len(hbs) == 0 {
			return
		}
		hb := hbs[len(hbs)-1]
		b, _ := json.Marshal(hb)
		enc.Encode(line{Received: time.Now().UTC(), Seq: hb.Seq, Verdict: hb.Verdict, Reasons: hb.Reasons, Work: hb.Work,
			IdleSeconds: hb.IdleSeconds, Samples: hb.Samples, Busy: hb.BusySamples, Idle: hb.IdleSamples,
			Unknown: hb.UnknownSamples, GPUs: hb.GPUs, Bytes: len(b)})
	})
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	fmt.Fprintf(os.Stderr, "hubstub: listening on %s, logging to %s\n", ln.Addr(), logPath)
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
