package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestPlatformTrust runs the real server and the real agent against
// RunPod's fake: box1 is a pod synced from RunPod with /autorelease box1
// release. An agent token alone must never terminate it: the agent must
// show it runs on the pod (its ID, GPU and address).
func TestPlatformTrust(t *testing.T) {
	t.Run("StrangerNeverTerminates", func(t *testing.T) {
		// The outside reproduction: someone holding only box1's token runs
		// the agent in simulate mode elsewhere, with no release command, no
		// instance ID and a GPU RunPod does not list for the pod.
		w, rp := trustWorld(t, "198.51.100.7")
		w.startSimAgent("NVIDIA GeForce RTX 4090", nil)
		// Past the warning and the grace: either the card says it was not
		// done automatically, or RunPod was called.
		acted := func() bool {
			return rp.Calls("DELETE /v1/pods/pod1abc")+rp.Calls("POST /v1/pods/pod1abc/stop") > 0
		}
		deadline := time.Now().Add(60 * time.Second)
		for !acted() && !w.sent("Not done automatically") && time.Now().Before(deadline) {
			time.Sleep(300 * time.Millisecond)
		}
		if n, m := rp.Calls("DELETE /v1/pods/pod1abc"), rp.Calls("POST /v1/pods/pod1abc/stop"); n != 0 || m != 0 {
			t.Fatalf("RunPod got %d terminates and %d stops from a stranger's token, want none\n%s", n, m, w.transcript())
		}
		w.waitMessage("Not done automatically", time.Second)
		w.waitMessage("contradicts RunPod", time.Second)
		if r := rentalOf(w.export(), "box1"); r == nil || r["state"] != "running" {
			t.Fatalf("box1 = %+v, want running", r)
		}
	})
	t.Run("OwnAgentTerminates", func(t *testing.T) {
		// The pod's own agent: RunPod's variables name the pod, the GPU is
		// the listed one, and it reports from the address RunPod lists.
		w, rp := trustWorld(t, "127.0.0.1")
		w.startSimAgent("NVIDIA A100-SXM4-40GB", []string{"RUNPOD_POD_ID=pod1abc"})
		deadline := time.Now().Add(60 * time.Second)
		for rp.Calls("DELETE /v1/pods/pod1abc") == 0 && time.Now().Before(deadline) {
			time.Sleep(300 * time.Millisecond)
		}
		if n := rp.Calls("DELETE /v1/pods/pod1abc"); n != 1 {
			t.Fatalf("RunPod got %d terminates from the pod's own idle agent, want 1\n%s", n, w.transcript())
		}
	})
}

// trustWorld starts the server with RunPod connected and its pod box1
// (one A100, public address addr) logged, released automatically 5 s
// after the idle warning; it asks the bot for box1's agent token.
func trustWorld(t *testing.T, addr string) (*world, *runpodfake.Server) {
	t.Helper()
	rp := runpodfake.New(rpKey)
	t.Cleanup(rp.Close)
	pod := runpodfake.NewPod("pod1abc", "box1", "RUNNING", json.Number("1.19"), "A100", 1, time.Now().Add(-time.Hour).Truncate(time.Second))
	pod["publicIp"] = addr
	rp.SetPods(pod)
	w := startWorldEnv(t, []string{
		"GPULEDGER_RUNPOD_URL=" + rp.RESTURL(),
		"GPULEDGER_RUNPOD_GRAPHQL_URL=" + rp.GraphQLURL(),
		"GPULEDGER_SYNC=10s",
	}, func(ctx context.Context, w *world, db *sqlite.DB) {
		if _, err := db.EnsureUser(ctx, ledger.User{ID: userID, Lang: "en", TZ: "UTC", Settings: fastSettings()}); err != nil {
			t.Fatal(err)
		}
	})
	w.fake.SendText(userID, userID, "/connect runpod "+rpKey)
	w.waitMessage(fragConnected, 20*time.Second)
	if name := w.waitRentalByPlatformID(t, "pod1abc", 30*time.Second); name != "box1" {
		t.Fatalf("the pod was logged as %q, want box1", name)
	}
	w.setPolicy(ledger.AutoPolicy{Action: ledger.AutoRelease, After: 5 * time.Second})
	w.token = w.agentTokenFor(t, "box1")
	return w, rp
}

// startSimAgent runs the agent in simulate mode with idle GPUs of model
// gpu, without a release command, with env added to its environment.
func (w *world) startSimAgent(gpu string, env []string) {
	w.t.Helper()
	b, _ := json.Marshal(map[string]any{
		"gpus": []map[string]any{{"name": gpu, "uuid": "GPU-1", "memory_total_mib": 40960, "memory_used_mib": 0,
			"utilization": 0, "power_w": 50, "temperature_c": 40}},
		"host": map[string]any{"cpu_percent": 1, "net_bytes_per_s": 0},
	})
	if err := os.WriteFile(w.sim, b, 0o600); err != nil {
		w.t.Fatal(err)
	}
	cmd := exec.Command(w.agent, "run", "--server", "http://"+w.addr, "--simulate", w.sim, "--sample", "200ms", "--interval", "500ms")
	cmd.Env = append(append(os.Environ(), "GPULEDGER_AGENT_TOKEN="+w.token,
		"GPULEDGER_AGENT_STATE_DIR="+filepath.Join(w.dir, "agent-state")), env...)
	cmd.Stdout, cmd.Stderr = w.agLog, w.agLog
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.agentPr = cmd
	w.t.Cleanup(w.stopAgent)
}

// sent reports whether a message to the user holds text.
func (w *world) sent(text string) bool {
	for _, m := range w.fake.Messages(userID) {
		if strings.Contains(m.Text, text) {
			return true
		}
	}
	return false
}
