package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// What the enrolment test expects the bot and the agent to say, in one
// place (the texts of DESIGN.md section 8 and docs/design.md): align
// them here when a wording changes.
const (
	fragInstallLine   = "install.sh?token=enrol-"             // /agent's install line
	fragNewInstance   = "New instance on "                    // + platform: the card
	fragUpSince       = "up since "                           // + the boot time, HH:MM
	fragBtnLogAt      = "Log at "                             // + the offered price
	fragBtnLogLater   = "Log, price later"                    // no price to offer
	fragBtnOtherPrice = "Other price"                         // answered with fragAdoptHelp
	fragBtnNotMine    = "Not mine"                            // silences the instance
	fragAdoptHelp     = "Send /adopt "                        // "Send /adopt ID PRICE, e.g. /adopt 7 0.85"
	fragLoggedAs      = "Logged as "                          // + the rental's name: the card after a tap
	fragShutdownAsk   = "host shut down at"                   // the card when the profile does not say it stops
	fragBtnStoppedAt  = "Stopped at "                         // + HH:MM on that card
	fragBtnStillBills = "Still billing"                       // the other button
	fragResumed       = "started again at"                    // the quiet line of a resume
	fragReturned      = "reports again without its own token" // must not come: the agent kept its binding
	fragRevokedReply  = "revoked"                             // /agent revoke's answer (with the count)
	fragRevokedRefuse = "this enrolment token was revoked"    // the hub's 401 and install.sh's refusal
	fragNewLine       = "/agent"                              // what the refusal says to do
)

// The instances the test poses as, through the environment each platform
// sets (docs/platforms.md). The rental names are the platform and the
// first six characters of the ID, lower-cased (ledger.InstanceRentalName).
var enrolPlatforms = []struct {
	name, platform, id, rental string
	env                        []string
	gpus                       int
}{
	{"runpod", "runpod", "abc123", "runpod-abc123", []string{"RUNPOD_POD_ID=abc123"}, 2},
	{"vast", "vast", "4242001", "vast-424200", []string{"CONTAINER_ID=4242001", "VAST_CONTAINERLABEL=C.4242001"}, 1},
	{"autodl", "autodl", "6f3e9c2a-51b7-4d0e-9a3c-2b8d7e1f4a60", "autodl-6f3e9c",
		[]string{"AutoDLContainerUUID=6f3e9c2a-51b7-4d0e-9a3c-2b8d7e1f4a60"}, 1},
}

// enrolAgent is one gpuledger-agent process posing as an instance, with
// its own simulate file and state directory. Its methods take the test
// (or subtest) they run in.
type enrolAgent struct {
	w        *world
	name     string
	sim      string
	stateDir string
	env      []string // the platform's variables
	args     []string // token flags
	log      *logBuffer
	cmd      *exec.Cmd
}

// newEnrolWorld starts the server with the user only (no rentals), created
// two hours ago so that a boot an hour ago is not clamped to the user's
// creation (ledger.ClampBoot), and no nightly summary fell due since.
func newEnrolWorld(t *testing.T) *world {
	return startWorld(t, func(ctx context.Context, w *world, db *sqlite.DB) {
		db.Now = func() time.Time { return time.Now().Add(-2 * time.Hour) }
		if _, err := db.EnsureUser(ctx, ledger.User{ID: userID, Lang: "en", TZ: "UTC", Settings: fastSettings()}); err != nil {
			t.Fatal(err)
		}
	})
}

var (
	enrolTokenRE  = regexp.MustCompile(`token=(enrol-[A-Za-z0-9_-]+)`)
	leakedTokenRE = regexp.MustCompile(`enrol-[A-Za-z0-9_-]{20,}`)
)

// countAll counts the messages whose text, now or before an edit, holds
// every fragment (a card answered is edited to its outcome).
func (w *world) countAll(frags ...string) int {
	n := 0
	for _, m := range w.fake.Messages(userID) {
		for _, text := range append([]string{m.Text}, m.History...) {
			if hasAll(plainText(text), frags...) {
				n++
				break
			}
		}
	}
	return n
}

// enrolToken sends /agent (no name) and returns the enrolment token of the
// install line in the answer, one not in seen.
func (w *world) enrolToken(t *testing.T, seen ...string) string {
	t.Helper()
	before := len(w.fake.Messages(userID))
	w.fake.SendText(userID, userID, "/agent")
	var tok string
	w.waitAfter(t, before, 20*time.Second, "an install line with an enrolment token", func(m tgfake.Message) bool {
		if !strings.Contains(m.Text, fragInstallLine) {
			return false
		}
		for _, sm := range enrolTokenRE.FindAllStringSubmatch(m.Text, -1) {
			if !contains(seen, sm[1]) {
				tok = sm[1]
				return true
			}
		}
		return false
	})
	return tok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// plainText is a message's text without its HTML markup, as the user
// reads it: the fragments are matched against that.
func plainText(s string) string { return html.UnescapeString(tagRE.ReplaceAllString(s, "")) }

// waitAfter waits for a message sent after the first `after` messages (or
// any message edited since) that pred accepts, and returns it as it
// stands, its text as plain text.
func (w *world) waitAfter(t *testing.T, after int, timeout time.Duration, what string, pred func(tgfake.Message) bool) tgfake.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got tgfake.Message
	err := w.fake.WaitFor(ctx, func() bool {
		msgs := w.fake.Messages(userID)
		for i, m := range msgs {
			m.Text = plainText(m.Text)
			if (i >= after || len(m.History) > 0) && pred(m) {
				got = m
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no message with %s within %s; messages:\n%s", what, timeout, w.transcript())
	}
	return got
}

// waitText waits for a message after the first `after` whose plain text
// holds every fragment, ignoring case (a platform may be shown by its
// name, "RunPod", or its key).
func (w *world) waitText(t *testing.T, after int, timeout time.Duration, frags ...string) tgfake.Message {
	t.Helper()
	return w.waitAfter(t, after, timeout, fmt.Sprintf("%q", frags), func(m tgfake.Message) bool {
		return hasAll(m.Text, frags...)
	})
}

func hasAll(text string, frags ...string) bool {
	text = strings.ToLower(text)
	for _, f := range frags {
		if !strings.Contains(text, strings.ToLower(f)) {
			return false
		}
	}
	return true
}

func (w *world) transcript() string {
	var texts []string
	for _, m := range w.fake.Messages(userID) {
		var bs []string
		for _, row := range m.Buttons {
			for _, b := range row {
				bs = append(bs, "["+b.Text+"]")
			}
		}
		texts = append(texts, fmt.Sprintf("#%d %s %s", m.ID, m.Text, strings.Join(bs, " ")))
	}
	return strings.Join(texts, "\n---\n")
}

// buttonPrefix returns the text and data of the first button whose text
// starts with prefix.
func buttonPrefix(m tgfake.Message, prefix string) (text, data string) {
	for _, row := range m.Buttons {
		for _, b := range row {
			if strings.HasPrefix(b.Text, prefix) {
				return b.Text, b.Data
			}
		}
	}
	return "", ""
}

// press presses the button of m whose text starts with prefix.
func (w *world) press(t *testing.T, m tgfake.Message, prefix string) {
	t.Helper()
	text, data := buttonPrefix(m, prefix)
	if data == "" {
		t.Fatalf("no button %q on message %d %q; buttons %+v", prefix, m.ID, m.Text, m.Buttons)
	}
	t.Logf("pressing [%s] on message %d", text, m.ID)
	w.fake.PressButton(userID, userID, m.ID, data)
}

// agentEnv is the test's environment without anything that would make the
// agent think it runs on a platform (the machine running the test may be
// one) or carry another token.
func agentEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "RUNPOD_"), strings.HasPrefix(k, "VAST_"), k == "CONTAINER_ID",
			strings.HasPrefix(k, "AutoDL"), strings.HasPrefix(k, "GPULEDGER_AGENT_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// enrolAgents are the agents of one test, stopped and reported on when
// it ends (register with the test itself, not a subtest: an agent lives
// on across subtests).
type enrolAgents struct {
	w   *world
	all []*enrolAgent
}

func newEnrolAgents(t *testing.T, w *world) *enrolAgents {
	as := &enrolAgents{w: w}
	t.Cleanup(func() {
		for _, a := range as.all {
			a.kill()
			if leakedTokenRE.MatchString(a.log.String()) {
				t.Errorf("agent %s logged an enrolment token", a.name)
			}
			if t.Failed() {
				t.Logf("agent %s log:\n%s", a.name, a.log)
			}
		}
	})
	return as
}

// add prepares an agent posing as an instance with the given platform
// variables and token flags; start runs it.
func (as *enrolAgents) add(t *testing.T, name string, env, args []string) *enrolAgent {
	t.Helper()
	dir := filepath.Join(as.w.dir, "agent-"+name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	a := &enrolAgent{w: as.w, name: name, sim: filepath.Join(dir, "sim.json"), stateDir: filepath.Join(dir, "state"),
		env: env, args: args, log: &logBuffer{}}
	as.all = append(as.all, a)
	return a
}

// setSim writes the agent's simulate file: gpus busy A40s (busy, so no
// idle cards interleave), the boot time the instance claims and whether
// a stop is the host going down.
func (a *enrolAgent) setSim(t *testing.T, gpus int, bootedAt time.Time, hostStopping bool) {
	t.Helper()
	var gs []string
	for i := range gpus {
		gs = append(gs, fmt.Sprintf(`{"name": "NVIDIA A40", "uuid": "GPU-%s-%d", "memory_total_mib": 46068, "memory_used_mib": 20000, "utilization": 90, "power_w": 250, "temperature_c": 60}`, a.name, i))
	}
	b := fmt.Sprintf(`{"gpus": [%s], "host": {"cpu_percent": 1, "net_bytes_per_s": 0}, "booted_at": %q, "host_stopping": %t}`,
		strings.Join(gs, ", "), bootedAt.UTC().Format(time.RFC3339), hostStopping)
	tmp := a.sim + ".tmp"
	if err := os.WriteFile(tmp, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, a.sim); err != nil {
		t.Fatal(err)
	}
}

func (a *enrolAgent) start(t *testing.T) {
	t.Helper()
	args := append([]string{"run", "--server", "http://" + a.w.addr, "--simulate", a.sim,
		"--sample", "200ms", "--interval", "500ms", "--state-dir", a.stateDir}, a.args...)
	cmd := exec.Command(a.w.agent, args...)
	cmd.Env = agentEnv(a.env...)
	cmd.Stdout, cmd.Stderr = a.log, a.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.cmd = cmd
}

// term stops the agent with SIGTERM, as an operating system going down
// does, and waits for it to exit.
func (a *enrolAgent) term(t *testing.T) {
	t.Helper()
	if a.cmd == nil {
		return
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		a.cmd.Process.Kill()
		<-done
		t.Errorf("agent %s did not exit within 10 s of SIGTERM", a.name)
	}
	a.cmd = nil
}

func (a *enrolAgent) kill() {
	if a.cmd == nil {
		return
	}
	a.cmd.Process.Kill()
	a.cmd.Wait()
	a.cmd = nil
}

// waitLog waits until the agent's log holds every fragment (any case).
func (a *enrolAgent) waitLog(t *testing.T, timeout time.Duration, frags ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l := strings.ToLower(a.log.String())
		ok := true
		for _, f := range frags {
			ok = ok && strings.Contains(l, strings.ToLower(f))
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %s did not log %q within %s; its log:\n%s", a.name, frags, timeout, a.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exportedRental waits until the export holds the rental (and, if state is
// not empty, in that state) and returns it with the export's as_of.
func (w *world) exportedRental(t *testing.T, name, state string, timeout time.Duration) (map[string]any, time.Time) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		exp := w.exportJSON(t)
		r := rentalOf(exp, name)
		if r != nil && (state == "" || r["state"] == state) {
			asOf, err := time.Parse(time.RFC3339, fmt.Sprint(exp["as_of"]))
			if err != nil {
				t.Fatalf("export as_of %v: %v", exp["as_of"], err)
			}
			return r, asOf
		}
		if time.Now().After(deadline) {
			t.Fatalf("export has no rental %s in state %q within %s: %+v\nmessages:\n%s", name, state, timeout, r, w.transcript())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// exportJSON is export for a subtest.
func (w *world) exportJSON(t *testing.T) map[string]any {
	t.Helper()
	cmd := exec.Command(w.server, "export", "--format", "json", "--user", fmt.Sprint(userID))
	cmd.Env = append(os.Environ(), "GPULEDGER_DB="+w.db)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("export output: %v\n%s", err, out)
	}
	return v
}

func timeField(t *testing.T, r map[string]any, key string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, fmt.Sprint(r[key]))
	if err != nil {
		t.Fatalf("rental %v: %s = %v: %v", r["name"], key, r[key], err)
	}
	return at
}

func moneyField(t *testing.T, r map[string]any, key string) float64 {
	t.Helper()
	ch, _ := r["charges"].(map[string]any)
	v, err := strconv.ParseFloat(fmt.Sprint(ch[key]), 64)
	if err != nil {
		t.Fatalf("rental %v: charges.%s = %v: %v", r["name"], key, ch[key], err)
	}
	return v
}

// TestEnrolment runs the real server against the fake Bot API and real
// agents with --simulate, each posing as an instance through the
// environment its platform sets: /agent gives an install line with an
// enrolment token; an agent started with it on RunPod, Vast.ai and AutoDL
// brings a "New instance" card; one tap logs the rental from the boot time
// the instance claims, and the agent reports with the rental's own token;
// a shutdown of the host is asked about (RunPod's profile does not say a
// shutdown stops billing), "Stopped at" records the stop, and a new boot
// records the resume, with compute billed for the running time only; a
// second instance is offered the first one's price, and "Not mine"
// silences it even across a restart; /agent revoke revokes both tokens and
// an agent with a revoked one is told so, as is install.sh.
func TestEnrolment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server and five agents for about a minute; run without -short")
	}
	w := newEnrolWorld(t)
	agents := newEnrolAgents(t, w)
	tokA := w.enrolToken(t)

	// One boot an hour ago, on the minute so the card shows HH:MM exactly.
	boot1 := time.Now().UTC().Add(-time.Hour).Truncate(time.Minute)
	byName := map[string]*enrolAgent{}
	bound := map[string]bool{} // the agent got its rental's token
	t.Run("platforms", func(t *testing.T) {
		for i, p := range enrolPlatforms {
			t.Run(p.name, func(t *testing.T) {
				before := len(w.fake.Messages(userID))
				a := agents.add(t, p.name, p.env, []string{"--token", tokA})
				a.setSim(t, p.gpus, boot1, false)
				a.start(t)
				byName[p.name] = a

				card := w.waitText(t, before, 30*time.Second, fragNewInstance+p.platform, p.id[:6])
				// Within an hour after midnight the boot was yesterday, and
				// the card says so: "up since yesterday 23:09".
				if !hasAll(card.Text, fragUpSince+boot1.Format("15:04")) && !hasAll(card.Text, fragUpSince+"yesterday "+boot1.Format("15:04")) {
					t.Errorf("card %q: want %q with the claimed boot %s", card.Text, fragUpSince, boot1.Format("15:04"))
				}
				if want := fmt.Sprintf("%d× A40", p.gpus); !strings.Contains(card.Text, want) {
					t.Errorf("card %q does not name the GPUs (%s)", card.Text, want)
				}
				if _, d := buttonPrefix(card, fragBtnOtherPrice); d == "" {
					t.Fatalf("card without [%s]: %+v", fragBtnOtherPrice, card.Buttons)
				}
				if _, d := buttonPrefix(card, fragBtnNotMine); d == "" {
					t.Fatalf("card without [%s]: %+v", fragBtnNotMine, card.Buttons)
				}
				// Nothing logged yet: no money without a tap.
				if r := rentalOf(w.exportJSON(t), p.rental); r != nil {
					t.Fatalf("rental %s exists before any tap: %+v", p.rental, r)
				}

				if i == 0 {
					// No earlier rental on RunPod: no price to offer.
					// Other price, then /adopt ID PRICE. 36/h is a cent a
					// second, so the money below reads in seconds.
					if _, d := buttonPrefix(card, fragBtnLogLater); d == "" {
						t.Errorf("card without [%s] (nothing to offer): %+v", fragBtnLogLater, card.Buttons)
					}
					n := len(w.fake.Messages(userID))
					w.press(t, card, fragBtnOtherPrice)
					help := w.waitText(t, n, 20*time.Second, fragAdoptHelp)
					m := regexp.MustCompile(`/adopt (\d+) `).FindStringSubmatch(help.Text)
					if m == nil {
						t.Fatalf("no instance ID in %q", help.Text)
					}
					w.fake.SendText(userID, userID, "/adopt "+m[1]+" 36/h")
				} else {
					w.press(t, card, fragBtnLogLater)
				}
				w.waitText(t, before, 20*time.Second, fragLoggedAs+p.rental)

				r, _ := w.exportedRental(t, p.rental, "running", 20*time.Second)
				if got := timeField(t, r, "started_at"); !got.Equal(boot1) {
					t.Errorf("%s started at %s, want the boot the instance claimed, %s", p.rental, got, boot1)
				}
				if r["platform"] != p.platform {
					t.Errorf("%s platform = %v, want %s", p.rental, r["platform"], p.platform)
				}
				if r["gpu"] != "A40" {
					t.Errorf("%s gpu = %v, want A40 (from NVML's \"NVIDIA A40\")", p.rental, r["gpu"])
				}
				if fmt.Sprint(r["gpu_count"]) != strconv.Itoa(p.gpus) {
					t.Errorf("%s gpu_count = %v, want %d", p.rental, r["gpu_count"], p.gpus)
				}
				// The hand-over: the agent saves the rental's token.
				deadline := time.Now().Add(10 * time.Second)
				for {
					if _, err := os.Stat(filepath.Join(a.stateDir, "binding.json")); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no binding.json in %s 10 s after the tap", a.stateDir)
					}
					time.Sleep(200 * time.Millisecond)
				}
				bound[p.name] = true
			})
		}
	})
	// Only RunPod's agent is needed further on.
	for name, a := range byName {
		if name != "runpod" {
			a.kill()
		}
	}
	if !bound["runpod"] {
		t.Fatal("runpod-abc123 was not logged and bound: the steps below need it")
	}

	t.Run("stop and resume", func(t *testing.T) {
		a := byName["runpod"]
		const rental = "runpod-abc123"
		time.Sleep(2 * time.Second) // a few heartbeats with the rental's own token
		before := len(w.fake.Messages(userID))
		a.setSim(t, 2, boot1, true)
		time.Sleep(time.Second) // read at the next sample
		down := time.Now().UTC()
		a.term(t)
		ask := w.waitText(t, before, 20*time.Second, rental, fragShutdownAsk)
		if _, d := buttonPrefix(ask, fragBtnStillBills); d == "" {
			t.Errorf("shutdown card without [%s]: %+v", fragBtnStillBills, ask.Buttons)
		}
		w.press(t, ask, fragBtnStoppedAt)
		w.exportedRental(t, rental, "stopped", 20*time.Second)

		// The instance starts again 10 s after it went down; the agent
		// starts a little later, as from a start-up hook.
		boot2 := down.Add(10 * time.Second).Truncate(time.Second)
		time.Sleep(time.Until(boot2.Add(2 * time.Second)))
		before = len(w.fake.Messages(userID))
		a.setSim(t, 2, boot2, false)
		a.start(t)
		w.waitText(t, before, 20*time.Second, rental, fragResumed)
		r, asOf := w.exportedRental(t, rental, "running", 20*time.Second)

		// Compute = price × running time: boot1 to the shutdown, then
		// boot2 to as_of, at $36/h ($0.01 a second).
		ran := down.Sub(boot1) + asOf.Sub(boot2)
		if got := fmt.Sprint(r["running_seconds"]); math.Abs(parseF(t, got)-ran.Seconds()) > 3 {
			t.Errorf("running_seconds = %s, want about %.0f (%s up, down %s, %s up)", got, ran.Seconds(),
				down.Sub(boot1), boot2.Sub(down), asOf.Sub(boot2))
		}
		want := ran.Seconds() * 36 / 3600
		t.Logf("running_seconds %v, compute %v; expected %.0f s and %.2f (up %s, down %s, up %s)", r["running_seconds"],
			r["charges"].(map[string]any)["compute"], ran.Seconds(), want, down.Sub(boot1), boot2.Sub(down), asOf.Sub(boot2))
		if got := moneyField(t, r, "compute"); math.Abs(got-want) > 0.031 {
			t.Errorf("compute = %.2f, want about %.2f (36/h over %s; %.2f if the stop had not been recorded)",
				got, want, ran, asOf.Sub(boot1).Seconds()*36/3600)
		}
		if n := w.countAll(fragReturned); n != 0 {
			t.Errorf("the restarted agent did not report with its saved rental token: %d %q messages", n, fragReturned)
		}
	})

	tokB := w.enrolToken(t, tokA)
	t.Run("not mine", func(t *testing.T) {
		before := len(w.fake.Messages(userID))
		a := agents.add(t, "other", []string{"RUNPOD_POD_ID=def456", "GPULEDGER_AGENT_TOKEN=" + tokB}, nil)
		a.setSim(t, 2, boot1, false)
		a.start(t)
		card := w.waitText(t, before, 30*time.Second, fragNewInstance+"runpod", "def456")
		// The user's last price for RunPod A40s, for as many GPUs.
		if text, _ := buttonPrefix(card, fragBtnLogAt); !strings.Contains(text, "36") {
			t.Errorf("card offers %q, want [%s$36…/h] from runpod-abc123: %+v", text, fragBtnLogAt, card.Buttons)
		}
		w.press(t, card, fragBtnNotMine)
		time.Sleep(3 * time.Second)
		a.kill()
		a.start(t) // a restart announces it again: still nothing
		time.Sleep(4 * time.Second)
		if n := w.countAll(fragNewInstance, "def456"); n != 1 {
			t.Errorf("%d cards for def456 after Not mine and a restart, want the one:\n%s", n, w.transcript())
		}
		if r := rentalOf(w.exportJSON(t), "runpod-def456"); r != nil {
			t.Errorf("Not mine logged a rental: %+v", r)
		}
	})

	t.Run("revoke", func(t *testing.T) {
		before := len(w.fake.Messages(userID))
		w.fake.SendText(userID, userID, "/agent revoke")
		reply := w.waitText(t, before, 20*time.Second, fragRevokedReply)
		if !strings.Contains(reply.Text, "2") {
			t.Errorf("/agent revoke answered %q; want how many were revoked (2)", reply.Text)
		}

		a := agents.add(t, "late", []string{"RUNPOD_POD_ID=ghi789"}, []string{"--token", tokA})
		a.setSim(t, 1, time.Now().UTC().Add(-time.Minute), false)
		a.start(t)
		a.waitLog(t, 20*time.Second, fragRevokedRefuse, fragNewLine)
		time.Sleep(2 * time.Second)
		if n := w.countAll(fragNewInstance, "ghi789"); n != 0 {
			t.Errorf("a revoked enrolment token announced an instance: %d cards", n)
		}

		res, err := http.Get("http://" + w.addr + "/agent/install.sh?token=" + url.QueryEscape(tokB))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK || !strings.Contains(string(body), fragRevokedRefuse) {
			t.Errorf("install.sh with a revoked enrolment token: %d %q; want a refusal saying %q", res.StatusCode, body, fragRevokedRefuse)
		}
		if strings.Contains(w.srvLog.String(), tokA) || strings.Contains(w.srvLog.String(), tokB) {
			t.Error("the server logged an enrolment token")
		}
	})
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return f
}
