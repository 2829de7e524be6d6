//go:build ship

package shiptest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"net/http"
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
)

const simIdle = `{"gpus": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-1", "memory_total_mib": 24564, "memory_used_mib": 0, "utilization": 0, "power_w": 20, "temperature_c": 35}], "host": {"cpu_percent": 1, "net_bytes_per_s": 0}}`

var (
	tagRE     = regexp.MustCompile(`<[^>]+>`)
	installRE = regexp.MustCompile(`curl [^\n]*/agent/install\.sh\?token=[A-Za-z0-9_-]+[^\n]*\| *sh`)
)

// TestInstallScript_EndToEnd is what a user does on a fresh rented host:
// /agent box1 in the chat, then the install command it shows, run with
// sh. The script downloads the agent from the server, checks its
// SHA-256, starts it in the background, and the first heartbeat arrives.
func TestInstallScript_EndToEnd(t *testing.T) {
	for _, tool := range []string{"sh", "curl", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: the install script needs it (apt-get install curl coreutils)", tool)
		}
	}
	serverBin := build(t, "./cmd/gpuledger")
	agentBin := build(t, "./cmd/gpuledger-agent") // CGO_ENABLED=0: --simulate needs no NVML
	dir := t.TempDir()
	fake := tgfake.New(t, "4242:install-test-token")
	srv := startServer(t, serverBin, dir, []string{
		"GPULEDGER_DB=" + filepath.Join(dir, "gpuledger.db"),
		"TELEGRAM_BOT_TOKEN=" + fake.Token(),
		"TELEGRAM_API_ENDPOINT=" + fake.Endpoint(),
		"GPULEDGER_ALLOWED_USERS=42",
		"GPULEDGER_AGENT_BINARY=" + agentBin,
	})
	base := "http://" + srv.addr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if res, body := get(t, base+"/agent/download.sha256"); res.StatusCode != http.StatusOK {
		t.Fatalf("GET /agent/download.sha256: %d %s: the server does not hand out the agent (cmd/gpuledger/hub.go must serve agentHandler)", res.StatusCode, body)
	}
	if out, err := exec.Command(agentBin, "install", "-h").CombinedOutput(); err != nil || !strings.Contains(string(out), "--init") {
		t.Fatalf("gpuledger-agent install -h: %v %s: the agent has no install command (cmd/gpuledger-agent/main.go must call runInstall)", err, out)
	}

	// The token, as a user gets it.
	say := func(text string) string {
		t.Helper()
		n := len(fake.Messages(42))
		fake.SendText(42, 42, text)
		if err := fake.WaitFor(ctx, func() bool { return len(fake.Messages(42)) > n }); err != nil {
			t.Fatalf("no reply to %q:\n%s", text, readFile(srv.log))
		}
		return html.UnescapeString(tagRE.ReplaceAllString(fake.Messages(42)[n].Text, ""))
	}
	say("/rent box1 autodl 4090 1.88/h")
	reply := say("/agent box1")
	m := tokenRE.FindStringSubmatch(reply)
	if m == nil {
		t.Fatalf("no token in the /agent reply: %q", reply)
	}
	token := m[1]
	command := installRE.FindString(reply)
	if command == "" {
		t.Errorf("the /agent reply does not show the install command (curl .../agent/install.sh?token=... | sh): %q", reply)
		command = "curl -fsSL '" + base + "/agent/install.sh?token=" + token + "' | sh"
	}
	t.Logf("install command: %s", strings.ReplaceAll(command, token, "TOKEN"))

	sim := filepath.Join(dir, "sim.json")
	os.WriteFile(sim, []byte(simIdle), 0o644)
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	state := filepath.Join(home, ".gpuledger")
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(state, "agent.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	})
	run := func(home, command string, extra ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Env = append([]string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + home,
			"GPULEDGER_AGENT_INIT=nohup",
			"GPULEDGER_AGENT_ARGS=--simulate '" + sim + "' --interval 1s --sample 200ms",
		}, extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(home, command)
	if err != nil {
		t.Fatalf("the install command failed: %v\n%s\nserver log:\n%s", err, out, readFile(srv.log))
	}
	t.Logf("install output:\n%s", strings.ReplaceAll(out, token, "TOKEN"))

	// The first heartbeat.
	if err := waitFor(ctx, func() bool {
		v, err := metric(srv.addr, `gpuledger_hub_heartbeats_total{result="ok"}`)
		return err == nil && v >= 1
	}); err != nil {
		t.Fatalf("no heartbeat from the installed agent: %v\nagent log:\n%s\nserver log:\n%s",
			err, readFile(filepath.Join(state, "agent.log")), readFile(srv.log))
	}

	// What the script left behind.
	installed, err := os.ReadFile(filepath.Join(state, "gpuledger-agent"))
	if err != nil {
		t.Fatal(err)
	}
	_, sumLine := get(t, base+"/agent/download.sha256")
	sum := sha256.Sum256(installed)
	if want := hex.EncodeToString(sum[:]) + "  gpuledger-agent\n"; string(sumLine) != want {
		t.Errorf("installed binary's sha256 line %q, server says %q", want, sumLine)
	}
	if st, err := os.Stat(filepath.Join(state, "agent.env")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("agent.env: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	for name, text := range map[string]string{"server log": readFile(srv.log), "agent log": readFile(filepath.Join(state, "agent.log")), "start.sh": readFile(filepath.Join(state, "start.sh"))} {
		if strings.Contains(text, token) {
			t.Errorf("the agent token appears in the %s", name)
		}
	}
	if !strings.Contains(readFile(srv.log), "/agent/install.sh?token=REDACTED") {
		t.Errorf("the server log lacks the redacted install request:\n%s", readFile(srv.log))
	}

	t.Run("ErrChecksumMismatch", func(t *testing.T) {
		// A script whose checksum does not match what the server sends
		// (as when something in between changes the file) installs nothing.
		res, body := get(t, base+"/agent/install.sh?token="+token)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("install.sh: %d %s", res.StatusCode, body)
		}
		bad := regexp.MustCompile(`sha256='[0-9a-f]{64}'`).ReplaceAll(body, []byte("sha256='"+strings.Repeat("0", 64)+"'"))
		if bytes.Equal(bad, body) {
			t.Fatal("no checksum line to change in the script")
		}
		script := filepath.Join(dir, "bad-install.sh")
		os.WriteFile(script, bad, 0o600)
		home2 := filepath.Join(dir, "home2")
		os.MkdirAll(home2, 0o700)
		out, err := run(home2, "sh '"+script+"'")
		if err == nil || !strings.Contains(out, "checksum mismatch") {
			t.Fatalf("err %v, output %q; want a checksum mismatch", err, out)
		}
		if _, err := os.Stat(filepath.Join(home2, ".gpuledger", "gpuledger-agent")); err == nil {
			t.Error("a binary that failed the checksum was installed")
		}
		if m, _ := filepath.Glob(filepath.Join(home2, ".gpuledger", ".download.*")); len(m) != 0 {
			t.Errorf("the failed download was left behind: %v", m)
		}
	})
	t.Run("ErrUnknownToken", func(t *testing.T) {
		out, err := run(filepath.Join(dir, "home3"), "curl -sS '"+base+"/agent/install.sh?token="+strings.Repeat("x", 43)+"' | sh")
		if err == nil || !strings.Contains(out, "unknown agent token") {
			t.Fatalf("err %v, output %q; want the server's refusal", err, out)
		}
	})
}
