// Package e2e runs the real binaries together: the gpuledger server
// against a fake Telegram Bot API, and gpuledger-agent with a simulated
// GPU, to check the reminder loop from a heartbeat to a released rental in
// the exported ledger.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

const (
	userID  = 4242
	tgToken = "123456:e2e-test-token"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// build compiles both binaries once for all tests, or skips: the test needs
// the go tool (it is absent from some CI images that run prebuilt tests).
func build(t *testing.T) (server, agent string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipping: the go tool is not in PATH, so the binaries cannot be built; install Go to run the end-to-end tests")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "gpuledger-e2e-bin")
		if buildErr != nil {
			return
		}
		for pkg, src := range map[string]string{"gpuledger": "../cmd/gpuledger", "gpuledger-agent": "../cmd/gpuledger-agent",
			"sshd": "./internal/fakesshd"} {
			cmd := exec.Command(goTool, "build", "-o", filepath.Join(binDir, pkg), src)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "gpuledger"), filepath.Join(binDir, "gpuledger-agent")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// logBuffer collects a process's output for failure reports.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type world struct {
	t       *testing.T
	dir     string
	db      string
	addr    string
	fake    *tgfake.Server
	server  string
	agent   string
	srvLog  *logBuffer
	agLog   *logBuffer
	sim     string
	marker  string
	agentPr *exec.Cmd
	token   string
	rid     int64
}

// settings of the test user: short enough to finish in seconds.
func fastSettings() ledger.Settings {
	s := ledger.DefaultSettings()
	s.IdleWarn = 3 * time.Second
	s.Silent = 4 * time.Second
	// The summary is due twelve hours from now: not during the test.
	now := time.Now().UTC()
	s.SummaryAt = (now.Hour()*60 + now.Minute() + 720) % 1440
	return s
}

// newWorld prepares a database with the user and a running rental box1
// started an hour ago, starts the fake Bot API and the server.
func newWorld(t *testing.T) *world {
	w := startWorld(t, func(ctx context.Context, w *world, db *sqlite.DB) {
		if _, err := db.EnsureUser(ctx, ledger.User{ID: userID, Lang: "en", TZ: "UTC", Settings: fastSettings()}); err != nil {
			t.Fatal(err)
		}
		r, err := db.CreateRental(ctx, ledger.Action{UserID: userID}, ledger.Rental{
			Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true,
			Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
			Events: []ledger.Event{{Kind: ledger.EventStart, At: time.Now().Add(-time.Hour)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		w.rid = r.ID
	})
	w.setGPU(90)
	w.token = w.agentToken()
	return w
}

// startWorld builds the binaries, lets seed write the database before the
// server opens it, then starts the fake Bot API and the server.
func startWorld(t *testing.T, seed func(ctx context.Context, w *world, db *sqlite.DB)) *world {
	return startWorldEnv(t, nil, seed)
}

// startWorldEnv is startWorld with more of the server's environment.
func startWorldEnv(t *testing.T, env []string, seed func(ctx context.Context, w *world, db *sqlite.DB)) *world {
	server, agent := build(t)
	w := &world{t: t, dir: t.TempDir(), server: server, agent: agent, srvLog: &logBuffer{}, agLog: &logBuffer{}}
	w.db = filepath.Join(w.dir, "ledger.db")
	w.sim = filepath.Join(w.dir, "gpu.json")
	w.marker = filepath.Join(w.dir, "released")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	seed(ctx, w, db)
	db.Close()

	w.fake = tgfake.New(t, tgToken)
	w.addr = freeAddr(t)
	cmd := exec.Command(server, "serve")
	cmd.Env = append(os.Environ(),
		"TELEGRAM_BOT_TOKEN="+tgToken,
		"TELEGRAM_API_ENDPOINT="+w.fake.Endpoint(),
		"GPULEDGER_DB="+w.db,
		fmt.Sprintf("GPULEDGER_ALLOWED_USERS=%d", userID),
		"GPULEDGER_LISTEN="+w.addr,
		"GPULEDGER_TICK=1s",
		"GPULEDGER_LOG_FORMAT=text",
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = w.srvLog, w.srvLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("server log:\n%s", w.srvLog)
			t.Logf("agent log:\n%s", w.agLog)
		}
	})
	return w
}

// setGPU writes the simulated GPU's utilisation.
func (w *world) setGPU(util int) {
	w.t.Helper()
	b := fmt.Sprintf(`{"gpus": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-1", "memory_total_mib": 24564, "memory_used_mib": %d, "utilization": %d, "power_w": 300, "temperature_c": 60}], "host": {"cpu_percent": 1, "net_bytes_per_s": 0}}`, util*200, util)
	tmp := w.sim + ".tmp"
	if err := os.WriteFile(tmp, []byte(b), 0o644); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Rename(tmp, w.sim); err != nil {
		w.t.Fatal(err)
	}
}

var tokenRE = regexp.MustCompile(`[A-Za-z0-9_-]{43}`)

// agentToken asks the bot for box1's token with /agent, as a user would.
func (w *world) agentToken() string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w.fake.SendText(userID, userID, "/agent box1")
	var tok string
	err := w.fake.WaitFor(ctx, func() bool {
		for _, m := range w.fake.Messages(userID) {
			if s := tokenRE.FindString(m.Text); s != "" && strings.Contains(m.Text, "box1") {
				tok = s
				return true
			}
		}
		return false
	})
	if err != nil {
		w.t.Fatalf("no token from /agent: %v; messages %+v", err, w.fake.Messages(userID))
	}
	return tok
}

// startAgent runs gpuledger-agent with the simulated GPU and a release
// command that writes the marker file.
func (w *world) startAgent() { w.startAgentEvery(200*time.Millisecond, 500*time.Millisecond) }

// startAgentEvery is startAgent with the given --sample and --interval.
func (w *world) startAgentEvery(sample, interval time.Duration) {
	w.t.Helper()
	cmd := exec.Command(w.agent, "run", "--server", "http://"+w.addr, "--simulate", w.sim,
		"--sample", sample.String(), "--interval", interval.String(), "--release-cmd", "date +%s > "+w.marker)
	cmd.Env = append(os.Environ(), "GPULEDGER_AGENT_TOKEN="+w.token, "GPULEDGER_AGENT_STATE_DIR="+filepath.Join(filepath.Dir(w.marker), "agent-state"))
	cmd.Stdout, cmd.Stderr = w.agLog, w.agLog
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.agentPr = cmd
	w.t.Cleanup(w.stopAgent)
}

func (w *world) stopAgent() {
	if w.agentPr == nil {
		return
	}
	w.agentPr.Process.Kill()
	w.agentPr.Wait()
	w.agentPr = nil
}

// waitMessage waits for a message to the user whose text contains want
// (edits included) and returns it.
func (w *world) waitMessage(want string, timeout time.Duration) tgfake.Message {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got tgfake.Message
	err := w.fake.WaitFor(ctx, func() bool {
		for _, m := range w.fake.Messages(userID) {
			if strings.Contains(m.Text, want) {
				got = m
				return true
			}
		}
		return false
	})
	if err != nil {
		var texts []string
		for _, m := range w.fake.Messages(userID) {
			texts = append(texts, m.Text)
		}
		w.t.Fatalf("no message with %q within %s; messages:\n%s", want, timeout, strings.Join(texts, "\n---\n"))
	}
	return got
}

func (w *world) count(want string) int {
	n := 0
	for _, m := range w.fake.Messages(userID) {
		if strings.Contains(m.Text, want) {
			n++
		}
	}
	return n
}

func button(m tgfake.Message, text string) string {
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.Text == text {
				return b.Data
			}
		}
	}
	return ""
}

// export runs gpuledger export --format json against the live database.
func (w *world) export() map[string]any {
	w.t.Helper()
	cmd := exec.Command(w.server, "export", "--format", "json", "--user", fmt.Sprint(userID))
	cmd.Env = append(os.Environ(), "GPULEDGER_DB="+w.db)
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("export: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		w.t.Fatalf("export output: %v\n%s", err, out)
	}
	return v
}

func rentalOf(exp map[string]any, name string) map[string]any {
	rs, _ := exp["rentals"].([]any)
	for _, r := range rs {
		m, _ := r.(map[string]any)
		if m["name"] == name {
			return m
		}
	}
	return nil
}

func TestReleaseNow(t *testing.T) {
	w := newWorld(t)
	w.startAgent()
	time.Sleep(5 * time.Second) // busy: no card
	if n := w.count("idle"); n != 0 {
		t.Fatalf("%d idle messages while the GPU was busy", n)
	}
	w.setGPU(0)
	card := w.waitMessage("spent idle", 20*time.Second)
	data := button(card, "Release now")
	if data == "" || button(card, "Snooze 1h") == "" || button(card, "Keep") == "" {
		t.Fatalf("card buttons = %+v", card.Buttons)
	}
	pressed := time.Now()
	w.fake.PressButton(userID, userID, card.ID, data)
	w.fake.PressButton(userID, userID, card.ID, data) // a second press: still one release
	w.waitMessage("confirmed by its agent", 20*time.Second)
	b, err := os.ReadFile(w.marker)
	if err != nil {
		t.Fatalf("release command did not run: %v", err)
	}
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Fatalf("release command ran %d times", n)
	}
	r := rentalOf(w.export(), "box1")
	if r == nil || r["state"] != "released" {
		t.Fatalf("exported rental = %+v", r)
	}
	at, err := time.Parse(time.RFC3339, fmt.Sprint(r["released_at"]))
	if err != nil || at.Before(pressed.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
		t.Fatalf("released_at %v (%v); pressed at %s", r["released_at"], err, pressed.Format(time.RFC3339))
	}
	if secs, _ := r["idle_seconds"].(float64); secs <= 0 {
		t.Errorf("idle_seconds = %v, want the idle time before the release", r["idle_seconds"])
	}
}

func TestSnoozeAndSilentAgent(t *testing.T) {
	w := newWorld(t)
	w.startAgent()
	w.setGPU(0)
	card := w.waitMessage("spent idle", 20*time.Second)
	w.fake.PressButton(userID, userID, card.ID, button(card, "Snooze 1h"))
	w.waitMessage("Snoozed until", 10*time.Second)
	time.Sleep(4 * time.Second)
	// No new card while snoozed (edits of the same message are fine).
	var cards int
	for _, m := range w.fake.Messages(userID) {
		if strings.Contains(m.Text, "spent idle") {
			cards++
		}
	}
	if cards != 1 {
		t.Fatalf("%d idle cards while snoozed, want 1", cards)
	}
	// The agent dies: one silent alert, and never a release.
	w.stopAgent()
	w.waitMessage("has been silent", 20*time.Second)
	time.Sleep(3 * time.Second)
	if n := w.count("has been silent"); n != 1 {
		t.Fatalf("%d silent alerts, want 1", n)
	}
	if _, err := os.Stat(w.marker); err == nil {
		t.Fatal("a silent agent led to a release")
	}
	if r := rentalOf(w.export(), "box1"); r["state"] != "running" {
		t.Fatalf("state after silence = %v", r["state"])
	}
}

func TestAutoReleaseAfterGrace(t *testing.T) {
	w := newWorld(t)
	// The policy is set in the store with a grace of 6 s (chat accepts
	// 1 minute at least; the rule is the same). wait_for=none: whoever is
	// connected to the machine running the test does not hold it.
	w.setPolicy(ledger.AutoPolicy{Action: ledger.AutoRelease, After: 6 * time.Second, WaitFor: ledger.WaitNone})
	w.startAgent()
	// Busy for a while: no warning, no release.
	time.Sleep(6 * time.Second)
	if _, err := os.Stat(w.marker); err == nil {
		t.Fatal("released while busy")
	}
	w.setGPU(0)
	w.waitMessage("Auto-release at", 20*time.Second)
	warned := time.Now()
	w.waitMessage("confirmed by its agent", 30*time.Second)
	b, err := os.ReadFile(w.marker)
	if err != nil {
		t.Fatal("no release")
	}
	var ran int64
	fmt.Sscan(string(b), &ran)
	if got := time.Unix(ran, 0); got.Before(warned.Add(5 * time.Second)) {
		t.Fatalf("released at %s, only %s after the warning (grace 6s)", got, got.Sub(warned))
	}
	if r := rentalOf(w.export(), "box1"); r["state"] != "released" {
		t.Fatalf("state = %v", r["state"])
	}
}

// setPolicy stores box1's /autorelease policy.
func (w *world) setPolicy(p ledger.AutoPolicy) {
	w.t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, w.db)
	if err != nil {
		w.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SetAutoPolicy(ctx, userID, "box1", p); err != nil {
		w.t.Fatal(err)
	}
}
