package scheduler_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// agentSim produces the heartbeats of a real agent run with --sample and
// --interval: samples on one ticker, heartbeats cut on another whose ticks
// start together and drift a little apart, so that with interval = sample a
// window holds 0, 1 or 2 samples. The verdict of every sample is v.
type agentSim struct {
	e              *env
	sample, every  time.Duration
	rng            *rand.Rand
	nextSample     time.Time
	nextCut        time.Time
	window         []simSample
	streak         time.Time // first idle sample of the agent's streak
	seq            uint64
	boot           string
	busy           bool // the samples are busy
	lastCut, start time.Time
}

type simSample struct {
	at   time.Time
	busy bool
}

func newAgentSim(e *env, sample, every time.Duration) *agentSim {
	now := e.clk.Now()
	return &agentSim{e: e, sample: sample, every: every, rng: rand.New(rand.NewPCG(1, 2)),
		nextSample: now.Add(sample), nextCut: now.Add(every), boot: "sim1", start: now}
}

// run advances the clock by d, taking samples and sending heartbeats as
// they fall due, and runs the scheduler's checks every tick.
func (a *agentSim) run(d, tick time.Duration) {
	end := a.e.clk.Now().Add(d)
	nextTick := a.e.clk.Now().Add(tick)
	for {
		// The cut ticker jitters by up to ±15% of a sample interval.
		cut := a.nextCut.Add(time.Duration((a.rng.Float64() - 0.5) * 0.3 * float64(a.sample)))
		t := earliest(a.nextSample, cut, nextTick)
		if t.After(end) {
			a.e.clk.Add(end.Sub(a.e.clk.Now()))
			return
		}
		a.e.clk.Add(t.Sub(a.e.clk.Now()))
		switch t {
		case a.nextSample:
			a.window = append(a.window, simSample{t, a.busy})
			if a.busy {
				a.streak = time.Time{}
			} else if a.streak.IsZero() {
				a.streak = t
			}
			a.nextSample = a.nextSample.Add(a.sample)
		case cut:
			a.cut(t)
			a.nextCut = a.nextCut.Add(a.every)
		default:
			a.e.tick()
			nextTick = nextTick.Add(tick)
		}
	}
}

func (a *agentSim) cut(now time.Time) {
	a.seq++
	h := wire.HeartbeatRequest{Version: wire.Version, Seq: a.seq, BootID: a.boot, SentAt: now, Samples: len(a.window),
		Host: wire.HostFacts{GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: "NVIDIA GeForce RTX 4090"}}}}
	for _, sm := range a.window {
		if sm.busy {
			h.BusySamples++
		} else {
			h.IdleSamples++
		}
	}
	switch n := len(a.window); {
	case n == 0:
		// What the agent sends for a window without samples.
		h.Verdict, h.Reasons = wire.VerdictUnknown, []string{"no samples in this window"}
	case a.window[n-1].busy:
		h.Verdict = wire.VerdictBusy
	default:
		h.Verdict = wire.VerdictIdle
		since := a.streak
		h.IdleSince, h.IdleSeconds = &since, int64(now.Sub(a.streak)/time.Second)
	}
	if n := len(a.window); n > 0 {
		h.WindowStart, h.WindowEnd = a.window[0].at, a.window[n-1].at
	}
	a.window = a.window[:0]
	a.e.send(h)
	a.e.s.DrainEvents(context.Background())
}

func earliest(ts ...time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.Before(m) {
			m = t
		}
	}
	return m
}

// TestIdleStreak_HeartbeatEverySample: an agent with --interval 1s
// --sample 1s on an idle host makes one idle interval, and the idle card
// comes after idle_warn (1 minute).
func TestIdleStreak_HeartbeatEverySample(t *testing.T) {
	for _, c := range []struct {
		name          string
		sample, every time.Duration
	}{
		{"1s/1s", time.Second, time.Second},
		{"5s/5s", 5 * time.Second, 5 * time.Second},
		{"sample5s/interval1s", 5 * time.Second, time.Second},
		{"sample5s/interval30s", 5 * time.Second, 30 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, func(s *ledger.Settings) { s.IdleWarn = time.Minute })
			e.clk.Add(time.Hour)
			a := newAgentSim(e, c.sample, c.every)
			a.run(100*time.Second, 5*time.Second)
			r, err := e.db.RentalByID(context.Background(), e.rid)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Idle) != 1 {
				t.Errorf("idle intervals = %d, want one streak: %+v", len(r.Idle), r.Idle)
			}
			cards := e.chat.NewMessages()
			if len(cards) != 1 || !strings.Contains(cards[0].Text, "idle 1m") {
				t.Fatalf("cards after 100 s idle with idle_warn 1m = %+v, want one idle card", cards)
			}
			// A busy sample ends the streak; idle again starts a new one.
			a.busy = true
			a.run(3*c.every+2*c.sample, 5*time.Second)
			a.busy = false
			a.run(30*time.Second, 5*time.Second)
			r, _ = e.db.RentalByID(context.Background(), e.rid)
			if len(r.Idle) != 2 || r.Idle[0].To.IsZero() || !r.Idle[1].To.IsZero() {
				t.Fatalf("after busy and idle again: intervals %+v, want one closed and one open", r.Idle)
			}
		})
	}
}
