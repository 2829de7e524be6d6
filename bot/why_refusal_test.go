package bot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// autoOrder runs box1 idle until the scheduler orders an automatic stop,
// and returns the order's id.
func (w *whyEnv) autoOrder() string {
	w.t.Helper()
	w.idle = t0.Add(25 * time.Minute)
	w.now = t0.Add(time.Hour)
	w.beatIdle()
	w.tick() // the idle warning
	w.now = w.now.Add(35 * time.Minute)
	w.beatIdle()
	w.tick() // the automatic stop
	o, ok := w.hub.OpenOrder(w.rid)
	if !ok {
		w.t.Fatal("no automatic order")
	}
	return o.ID
}

// post sends body to path with box1's token and wants status.
func (w *whyEnv) post(path string, body any, status int) {
	w.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, w.srv.URL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+w.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != status {
		w.t.Fatalf("POST %s: %d, want %d", path, res.StatusCode, status)
	}
	w.s.DrainEvents(context.Background())
}

// TestCore_WhyAgentRefusal: /why shows why the agent refused an order
// and why it refused the server's policy (which reached only the
// server's log), in the user's language: the agent sends its reasons as
// codes with their values, and a Chinese user reads them in Chinese, not
// in the agent's English.
func TestCore_WhyAgentRefusal(t *testing.T) {
	for _, tt := range []struct {
		lang string
		want []string
		not  []string
	}{
		{"en", []string{"the agent found the GPU busy", "gpu0 util max 87% (mean 41% of 6 samples)", "cpu 64%",
			"The agent refused the server", "signature does not verify", "/agent box1", "keeps its own lease"}, nil},
		{"zh", []string{"代理发现 GPU 正忙", "gpu0 利用率最高 87%", "6 次采样平均 41%", "CPU 64%",
			"代理拒绝了服务器的策略", "签名"}, []string{"util", "samples", "signature", "server policy"}},
	} {
		t.Run(tt.lang, func(t *testing.T) {
			w := newWhyEnv(t, tt.lang)
			id := w.autoOrder()
			w.post(wire.PathOrderResult(id), wire.OrderResult{OrderID: id, Outcome: wire.OutcomeRefusedBusy, Verdict: wire.VerdictBusy, At: w.now,
				Message: "gpu0 util max 87% (mean 41% of 6 samples); cpu 64%",
				Notes:   []wire.Note{{Code: wire.NoteGPUUtilMean, Args: []string{"0", "87", "41", "6"}}, {Code: wire.NoteCPU, Args: []string{"64"}}}}, http.StatusNoContent)
			// The agent refuses the server's policy: a heartbeat says so.
			w.now = w.now.Add(time.Minute)
			w.seq++
			w.post(wire.PathHeartbeat, wire.HeartbeatRequest{Version: wire.Version, Seq: w.seq, BootID: "b1", Verdict: wire.VerdictBusy, Samples: 6, BusySamples: 6,
				WindowStart: w.now.Add(-30 * time.Second), WindowEnd: w.now, SentAt: w.now, CanRelease: true,
				Host:              wire.HostFacts{GPUSource: "nvml", GPUs: []wire.GPUFact{{Name: "NVIDIA A100-SXM4-80GB"}}},
				PolicyRefused:     "server policy refused, keeping local settings: wire: policy signature does not verify",
				PolicyRefusedCode: wire.PolicyRefusedBadSignature}, http.StatusOK)
			why := w.say(alice, "/why box1")
			contains(t, why, tt.want...)
			for _, s := range tt.not {
				if strings.Contains(why, s) {
					t.Errorf("the Chinese /why has the agent's English %q:\n%s", s, why)
				}
			}
		})
	}
}
