package main_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// idleWorld is the real server with one running rental and its agent
// token, and a hand-driven agent that posts heartbeats over HTTP.
type idleWorld struct {
	t      *testing.T
	bin    string
	dir    string
	db     string
	addr   string
	env    []string
	token  string
	rental int64
	seq    uint64
	last   time.Time // when the previous heartbeat's window ended
	srv    *exec.Cmd
}

func newIdleWorld(t *testing.T, bin string) *idleWorld {
	w := &idleWorld{t: t, bin: bin, dir: t.TempDir(), token: "idle-crash-agent-token"}
	w.db = filepath.Join(w.dir, "gpuledger.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 1001, Lang: "en", TZ: "UTC", Settings: ledger.DefaultSettings()}); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).UTC()
	r, err := db.CreateRental(ctx, ledger.Action{UserID: 1001, At: start}, ledger.Rental{
		Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
		Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: start}}})
	if err != nil {
		t.Fatal(err)
	}
	w.rental = r.ID
	if _, err := db.IssueToken(ctx, 1001, "box1", sha256.Sum256([]byte(w.token)), start); err != nil {
		t.Fatal(err)
	}
	db.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.addr = l.Addr().String()
	l.Close()
	fake := tgfake.New(t, "4242:idle-crash-token")
	w.env = append(os.Environ(), "GPULEDGER_DB="+w.db, "TELEGRAM_BOT_TOKEN="+fake.Token(),
		"TELEGRAM_API_ENDPOINT="+fake.Endpoint(), "GPULEDGER_ALLOWED_USERS=1001", "GPULEDGER_LISTEN="+w.addr,
		"GPULEDGER_LOG_FORMAT=json", "GPULEDGER_TZ=UTC")
	return w
}

func (w *idleWorld) start() {
	w.t.Helper()
	cmd := exec.Command(w.bin, "serve")
	cmd.Env, cmd.Dir = w.env, w.dir
	logf, err := os.OpenFile(filepath.Join(w.dir, "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { logf.Close() })
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	w.srv = cmd
	for range 200 {
		if res, err := http.Get("http://" + w.addr + "/healthz"); err == nil {
			res.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.t.Fatalf("the server did not start (log in %s)", w.dir)
}

func (w *idleWorld) kill() {
	w.srv.Process.Kill() // SIGKILL
	w.srv.Wait()
}

// beat posts one heartbeat whose window runs from the previous one's end
// (the last second for the first), with six samples of verdict v, and
// returns once it is acknowledged.
func (w *idleWorld) beat(v wire.Verdict) {
	w.t.Helper()
	w.seq++
	now := time.Now()
	from := now.Add(-time.Second)
	if !w.last.IsZero() {
		from = w.last
	}
	w.last = now
	h := wire.HeartbeatRequest{Version: wire.Version, Seq: w.seq, BootID: "boot1", Verdict: v, SentAt: now,
		WindowStart: from, WindowEnd: now, Samples: 6,
		Host: wire.HostFacts{GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: "NVIDIA GeForce RTX 4090"}}}}
	if v == wire.VerdictIdle {
		h.IdleSamples = 6
	} else {
		h.BusySamples = 6
	}
	b, _ := json.Marshal(h)
	req, _ := http.NewRequest(http.MethodPost, "http://"+w.addr+wire.PathHeartbeat, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+w.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		w.t.Fatalf("heartbeat: %s", res.Status)
	}
}

// beats posts n heartbeats of verdict v a little apart.
func (w *idleWorld) beats(v wire.Verdict, n int) { w.beatsEvery(v, n, 300*time.Millisecond) }

func (w *idleWorld) beatsEvery(v wire.Verdict, n int, d time.Duration) {
	for range n {
		w.beat(v)
		time.Sleep(d)
	}
}

// intervals returns the rental's idle intervals and its agent's state as
// a restarted server loads them.
func (w *idleWorld) intervals() ([]ledger.Interval, ledger.AgentState) {
	w.t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, w.db)
	if err != nil {
		w.t.Fatal(err)
	}
	defer db.Close()
	r, err := db.RentalByID(ctx, w.rental)
	if err != nil {
		w.t.Fatal(err)
	}
	sts, err := db.AgentStates(ctx)
	if err != nil || len(sts) != 1 {
		w.t.Fatalf("agent states = %+v, %v", sts, err)
	}
	return r.Idle, sts[0]
}

func open(ivs []ledger.Interval) int {
	n := 0
	for _, iv := range ivs {
		if iv.To.IsZero() {
			n++
		}
	}
	return n
}

func fmtIntervals(ivs []ledger.Interval) string {
	var b bytes.Buffer
	for _, iv := range ivs {
		fmt.Fprintf(&b, "[%s, %s) ", iv.From.Format(time.TimeOnly), iv.To.Format(time.TimeOnly))
	}
	return b.String()
}

// TestCrash_IdleIntervalsAgreeWithState kills the real server with
// SIGKILL right after it acknowledged an idle→busy and a busy→idle
// heartbeat, before its batched flush, restarts it, and checks that the
// idle intervals and the agent state still agree: an acknowledged idle
// spell is kept, a closed one is not reopened, an open one is closed by
// the next busy heartbeat.
func TestCrash_IdleIntervalsAgreeWithState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server binary several times; run without -short")
	}
	bin := buildServer(t)
	t.Run("KilledAfterBusyToIdle", func(t *testing.T) {
		w := newIdleWorld(t, bin)
		w.start()
		w.beats(wire.VerdictBusy, 3)
		time.Sleep(time.Second) // the busy state is flushed
		w.beat(wire.VerdictIdle)
		w.kill() // acknowledged, not yet flushed
		ivs, st := w.intervals()
		if open(ivs) != 1 || st.Verdict != ledger.VerdictIdle || !st.IdleSince.Equal(ivs[len(ivs)-1].From) {
			t.Errorf("after the kill: intervals %s, state %s since %s; want one open interval and an idle state from its start",
				fmtIntervals(ivs), st.Verdict, st.IdleSince)
		}
		w.start()
		w.beats(wire.VerdictBusy, 3)
		time.Sleep(time.Second)
		w.kill()
		ivs, st = w.intervals()
		if len(ivs) != 1 || open(ivs) != 0 || st.Verdict != ledger.VerdictBusy {
			t.Fatalf("busy after the restart: intervals %s, state %s; want the idle spell kept and closed", fmtIntervals(ivs), st.Verdict)
		}
	})
	t.Run("KilledAfterIdleToBusy", func(t *testing.T) {
		w := newIdleWorld(t, bin)
		w.start()
		w.beats(wire.VerdictIdle, 5)
		time.Sleep(time.Second) // the idle state is flushed
		w.beat(wire.VerdictBusy)
		w.kill() // acknowledged, not yet flushed
		ivs, st := w.intervals()
		if len(ivs) != 1 || open(ivs) != 0 || st.Verdict == ledger.VerdictIdle {
			t.Errorf("after the kill: intervals %s, state %s; want the interval closed and no idle state", fmtIntervals(ivs), st.Verdict)
		}
		if len(ivs) != 1 {
			t.FailNow()
		}
		closedAt := ivs[0].To
		// Idle again after the restart: a new streak is recorded.
		w.start()
		w.beats(wire.VerdictIdle, 5)
		time.Sleep(time.Second)
		w.kill()
		ivs, st = w.intervals()
		if len(ivs) != 2 || open(ivs) != 1 || !ivs[0].To.Equal(closedAt) || st.Verdict != ledger.VerdictIdle || !st.IdleSince.Equal(ivs[1].From) {
			t.Fatalf("idle after the restart: intervals %s, state %s since %s; want the first closed at %s and a new open one",
				fmtIntervals(ivs), st.Verdict, st.IdleSince, closedAt.Format(time.TimeOnly))
		}
	})
	t.Run("KilledDuringIdle", func(t *testing.T) {
		// An idle streak that outlives a restart of the server stays one
		// streak, though the state loaded is a flush behind the last
		// heartbeat acknowledged.
		w := newIdleWorld(t, bin)
		w.start()
		w.beatsEvery(wire.VerdictIdle, 3, 2500*time.Millisecond)
		w.beat(wire.VerdictIdle)
		w.kill()
		w.start()
		w.beatsEvery(wire.VerdictIdle, 3, 2500*time.Millisecond)
		time.Sleep(time.Second)
		w.kill()
		ivs, st := w.intervals()
		if len(ivs) != 1 || open(ivs) != 1 || st.Verdict != ledger.VerdictIdle || !st.IdleSince.Equal(ivs[0].From) {
			t.Fatalf("idle through a restart: intervals %s, state %s since %s; want one open streak", fmtIntervals(ivs), st.Verdict, st.IdleSince)
		}
	})
}
