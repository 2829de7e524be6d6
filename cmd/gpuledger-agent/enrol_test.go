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

const testEnrolToken = "enrol-Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWo"

// TestInstall_EnrolToken: an enrolment token installs like a rental's
// (owner-only token file, nothing in the unit or start.sh), and on a
// RunPod pod the state (the binding the hub hands over) goes to
// /workspace, the only directory that survives a stop.
func TestInstall_EnrolToken(t *testing.T) {
	if _, err := parseInstallArgs([]string{"--server", "http://s", "--token", testEnrolToken}, envMap(map[string]string{"HOME": "/h"})); err != nil {
		t.Fatalf("enrolment token refused: %v", err)
	}
	t.Run("RunPod", func(t *testing.T) {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, "workspace"), 0o755)
		var out, errb bytes.Buffer
		code := runInstall(context.Background(), []string{"--root", root, "--dir", "/root/.gpuledger", "--bin", "/root/.gpuledger/gpuledger-agent", "--server", "http://s:8477"},
			&out, &errb, envMap(map[string]string{"GPULEDGER_AGENT_TOKEN": testEnrolToken, "RUNPOD_POD_ID": "abc123"}))
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		start, err := os.ReadFile(filepath.Join(root, "root/.gpuledger/start.sh"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(start), "'--state-dir' '/workspace/.gpuledger'") {
			t.Errorf("start.sh does not keep the state in /workspace:\n%s", start)
		}
		env, err := os.ReadFile(filepath.Join(root, "root/.gpuledger/agent.env"))
		if err != nil || !strings.Contains(string(env), "GPULEDGER_AGENT_TOKEN="+testEnrolToken+"\n") {
			t.Fatalf("agent.env: %v %q", err, env)
		}
		if strings.Contains(string(start), testEnrolToken) || strings.Contains(out.String(), testEnrolToken) || strings.Contains(errb.String(), testEnrolToken) {
			t.Error("the enrolment token is in start.sh or the install's output")
		}
	})
	t.Run("RunPodWithoutWorkspace", func(t *testing.T) {
		root := t.TempDir()
		var out, errb bytes.Buffer
		code := runInstall(context.Background(), []string{"--root", root, "--dir", "/root/.gpuledger", "--bin", "/b/gpuledger-agent", "--server", "http://s:8477"},
			&out, &errb, envMap(map[string]string{"GPULEDGER_AGENT_TOKEN": testEnrolToken, "RUNPOD_POD_ID": "abc123"}))
		start, _ := os.ReadFile(filepath.Join(root, "root/.gpuledger/start.sh"))
		if code != exitOK || !strings.Contains(string(start), "'--state-dir' '/root/.gpuledger'") {
			t.Fatalf("exit %d, start.sh:\n%s", code, start)
		}
	})
	t.Run("Systemd", func(t *testing.T) {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755)
		var out, errb bytes.Buffer
		code := runInstall(context.Background(), []string{"--root", root, "--bin", "/opt/gpuledger-agent", "--server", "https://l.example"},
			&out, &errb, envMap(map[string]string{"HOME": "/root", "GPULEDGER_AGENT_TOKEN": testEnrolToken}))
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		unit, _ := os.ReadFile(filepath.Join(root, "etc/systemd/system/gpuledger-agent.service"))
		if !strings.Contains(string(unit), "--state-dir /var/lib/gpuledger-agent") || strings.Contains(string(unit), testEnrolToken) {
			t.Errorf("unit:\n%s", unit)
		}
		env, _ := os.ReadFile(filepath.Join(root, "etc/gpuledger/agent.env"))
		if !strings.Contains(string(env), "GPULEDGER_AGENT_TOKEN="+testEnrolToken+"\n") {
			t.Errorf("agent.env %q", env)
		}
	})
}

// TestHelp_EnrolToken: the help says where both kinds of token come from.
func TestHelp_EnrolToken(t *testing.T) {
	var out, errb bytes.Buffer
	run(t.Context(), []string{"--help"}, &out, &errb, func(string) string { return "" })
	for _, want := range []string{"enrolment token", "/agent NAME", "enrol-"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	errb.Reset()
	run(t.Context(), []string{"install", "--help"}, &out, &errb, func(string) string { return "" })
	if !strings.Contains(out.String(), "enrolment token") {
		t.Errorf("install --help lacks the enrolment token:\n%s", out.String())
	}
}

// TestE2E_Enrolment runs the real binary with an enrolment token, posing
// as a RunPod pod by its environment: its heartbeats carry the instance
// facts, it reports with the rental's token once the hub hands it over
// (and keeps it in binding.json), and its last heartbeat on SIGTERM
// carries the shutdown report the simulate file asks for.
func TestE2E_Enrolment(t *testing.T) {
	bin := buildAgent(t)
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.json")
	writeFile(t, sim, strings.TrimSuffix(simIdle, "}")+`, "booted_at": "2026-12-01T10:02:00Z", "host_stopping": true}`)
	const rentalToken = "cmVudGFsLXRva2VuLW9mLXJ1bnBvZC1hYmMxMjN4eXo"
	hub := hubtest.New(rentalToken, "runpod-abc123")
	hub.EnrolToken = testEnrolToken
	srv := httptest.NewServer(hub.Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	state := filepath.Join(dir, "state")
	cmd := exec.CommandContext(ctx, bin, "run", "--server", srv.URL, "--simulate", sim, "--sample", "100ms", "--interval", "300ms", "--state-dir", state)
	cmd.Env = append(os.Environ(), "GPULEDGER_AGENT_TOKEN="+testEnrolToken, "HOME="+dir,
		"RUNPOD_POD_ID=abc123xyz", "RUNPOD_DC_ID=EU-RO-1", "CONTAINER_ID=", "VAST_CONTAINERLABEL=", "AutoDLContainerUUID=")
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
	waitFor(t, hub, "an enrolment heartbeat", func() bool { return len(hub.Heartbeats()) >= 1 })
	hb := hub.Heartbeats()[0]
	in := hb.Instance
	if in == nil || in.Platform != "runpod" || in.ID != "abc123xyz" || in.PlatformSource != "env RUNPOD_POD_ID" ||
		!in.BootedAt.Equal(time.Date(2026, 12, 1, 10, 2, 0, 0, time.UTC)) {
		t.Fatalf("instance %+v", in)
	}
	if in.Key(hb.Host.Hostname) != "runpod:abc123xyz" {
		t.Fatalf("key %q", in.Key(hb.Host.Hostname))
	}
	hub.SetEnrolment(&wire.EnrolmentAnswer{State: wire.EnrolBound, Rental: "runpod-abc123", Token: rentalToken})
	last := func() string {
		toks := hub.Tokens()
		if len(toks) == 0 {
			return ""
		}
		return toks[len(toks)-1]
	}
	waitFor(t, hub, "a heartbeat with the rental token", func() bool { return last() == rentalToken })
	b, err := os.ReadFile(filepath.Join(state, "binding.json"))
	if err != nil || !strings.Contains(string(b), `"instance_key":"runpod:abc123xyz"`) {
		t.Fatalf("binding.json %q %v", b, err)
	}
	n := len(hub.Heartbeats())
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agent exit: %v", err)
	}
	hbs, toks := hub.Heartbeats(), hub.Tokens()
	if len(hbs) <= n {
		t.Fatal("no final heartbeat")
	}
	final := hbs[len(hbs)-1]
	if final.Shutdown == nil || !final.Shutdown.Host || toks[len(toks)-1] != rentalToken {
		t.Fatalf("final heartbeat's shutdown %+v (rental token %v)", final.Shutdown, toks[len(toks)-1] == rentalToken)
	}
	for _, want := range []string{"logged as runpod-abc123; reporting with its own token", "platform=runpod"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if strings.Contains(logs.String(), testEnrolToken) || strings.Contains(logs.String(), rentalToken) {
		t.Fatal("a token is in the log")
	}
}
