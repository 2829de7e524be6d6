package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/wire"
)

const (
	simBusy = `{"gpus": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-1", "memory_total_mib": 24564, "memory_used_mib": 18000, "utilization": 97, "power_w": 420, "temperature_c": 71}], "host": {"cpu_percent": 1, "net_bytes_per_s": 0}}`
	simIdle = `{"gpus": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-1", "memory_total_mib": 24564, "memory_used_mib": 0, "utilization": 0, "power_w": 20, "temperature_c": 35}], "host": {"cpu_percent": 1, "net_bytes_per_s": 0}}`
)

// buildAgent builds the real binary once per test.
func buildAgent(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "gpuledger-agent")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_CFLAGS=-Wno-deprecated-declarations")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil { // atomic: the agent never reads half a file
		t.Fatal(err)
	}
}

// waitFor waits (bounded) until cond holds over the hub's recorded state.
func waitFor(t *testing.T, hub *hubtest.Hub, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-hub.Changed():
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestE2E_Binary(t *testing.T) {
	bin := buildAgent(t)
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.json")
	writeFile(t, sim, simBusy)

	t.Run("Version", func(t *testing.T) {
		out, err := exec.Command(bin, "version").Output()
		if err != nil || !strings.HasPrefix(string(out), "gpuledger-agent ") {
			t.Fatalf("%s %v", out, err)
		}
	})
	t.Run("Check", func(t *testing.T) {
		out, err := exec.Command(bin, "check", "--simulate", sim).CombinedOutput()
		if err != nil {
			t.Fatalf("check: %v\n%s", err, out)
		}
		for _, want := range []string{"NVIDIA GeForce RTX 4090", "24.0 GiB", "GPU memory already in use"} {
			if !bytes.Contains(out, []byte(want)) {
				t.Fatalf("check output lacks %q:\n%s", want, out)
			}
		}
		cmd := exec.Command(bin, "check", "--simulate", filepath.Join(dir, "missing.json"))
		if err := cmd.Run(); cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("check with nothing readable: %v", err)
		}
	})
	t.Run("Bench", func(t *testing.T) { testE2EBench(t, bin) })
	t.Run("Run", func(t *testing.T) {
		hub := hubtest.New("e2e-token", "box1")
		srv := httptest.NewServer(hub.Handler())
		defer srv.Close()
		marker := filepath.Join(dir, "released")
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "run", "--server", srv.URL, "--simulate", sim,
			"--sample", "100ms", "--interval", "300ms",
			"--release-cmd", "echo $GPULEDGER_ORDER_ACTION > "+marker,
			"--", "sh", "-c", "sleep 0.5; exit 3")
		cmd.Env = append(os.Environ(), "GPULEDGER_AGENT_TOKEN=e2e-token", "HOME="+dir)
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if t.Failed() {
				t.Logf("agent log:\n%s", logs.String())
			}
		}()
		last := func() wire.HeartbeatRequest {
			hbs := hub.Heartbeats()
			if len(hbs) == 0 {
				return wire.HeartbeatRequest{}
			}
			return hbs[len(hbs)-1]
		}
		waitFor(t, hub, "a busy heartbeat with the job running", func() bool {
			hb := last()
			return hb.Verdict == wire.VerdictBusy && hb.Job != nil && hb.Job.Running
		})
		hb := last()
		if hb.Host.GPUSource != "simulate" || len(hb.GPUs) != 1 || hb.GPUs[0].UtilMean == nil || *hb.GPUs[0].UtilMean != 97 || hb.Host.GPUs[0].Name != "NVIDIA GeForce RTX 4090" {
			t.Fatalf("heartbeat %+v", hb)
		}
		waitFor(t, hub, "the job's exit code", func() bool {
			hb := last()
			return hb.Job != nil && hb.Job.Exited && hb.Job.ExitCode != nil && *hb.Job.ExitCode == 3
		})
		if last().Verdict != wire.VerdictBusy {
			t.Fatal("job exited but GPU still busy: verdict must stay busy")
		}
		// An order while busy is refused.
		busyOrder := hub.NewOrder(wire.ActionStop, time.Minute)
		hub.Queue(busyOrder)
		waitFor(t, hub, "a busy refusal", func() bool {
			for _, r := range hub.Results() {
				if r.OrderID == busyOrder.ID && r.Outcome == wire.OutcomeRefusedBusy {
					return true
				}
			}
			return false
		})
		writeFile(t, sim, simIdle)
		waitFor(t, hub, "an idle heartbeat", func() bool {
			hb := last()
			return hb.Verdict == wire.VerdictIdle && hb.IdleSince != nil
		})
		// A forged order is rejected; a genuine one releases.
		forged := hub.NewOrder(wire.ActionRelease, time.Minute)
		forged.Signature = wire.SignOrder("not-the-token", forged)
		good := hub.NewOrder(wire.ActionStop, time.Minute)
		hub.Queue(forged)
		hub.Queue(good)
		waitFor(t, hub, "the release to finish", func() bool {
			for _, r := range hub.Results() {
				if r.OrderID == good.ID && r.Outcome == wire.OutcomeDone {
					return true
				}
			}
			return false
		})
		if b, err := os.ReadFile(marker); err != nil || string(b) != "stop\n" {
			t.Fatalf("marker %q %v", b, err)
		}
		var forgedOutcome string
		for _, r := range hub.Results() {
			if r.OrderID == forged.ID {
				forgedOutcome = r.Outcome
			}
		}
		if forgedOutcome != wire.OutcomeRejectedSignature {
			t.Fatalf("forged order outcome %q", forgedOutcome)
		}
		// Stop cleanly on SIGTERM; the token never appears in the log.
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("agent exit: %v", err)
		}
		if strings.Contains(logs.String(), "e2e-token") {
			t.Fatal("token in log")
		}
	})
}

func TestRun_Usage(t *testing.T) {
	var out, errb bytes.Buffer
	env := func(string) string { return "" }
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"frobnicate"}, exitUsage, "unknown command"},
		{[]string{"run", "--server", "http://x:1"}, exitUsage, "token"},
		{[]string{"run", "--server", "ftp://x", "--token", "t"}, exitUsage, "--server"},
		{[]string{"run", "--server", "http://x:1", "--token", "t", "stray"}, exitUsage, "unexpected argument"},
		{[]string{"run", "--server", "http://x:1", "--token", "t", "--"}, exitUsage, "nothing after --"},
		{[]string{"run", "--server", "http://x:1", "--token", "t", "--sample", "1m", "--interval", "30s"}, exitUsage, "shorter"},
		{[]string{"version"}, exitOK, ""},
	}
	for _, c := range cases {
		out.Reset()
		errb.Reset()
		if got := run(t.Context(), c.args, &out, &errb, env); got != c.code || !strings.Contains(errb.String(), c.msg) {
			t.Errorf("%v: code %d stderr %q", c.args, got, errb.String())
		}
	}
}
