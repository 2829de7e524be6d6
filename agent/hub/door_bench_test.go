package hub

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// BenchmarkDoor_Heartbeat measures the door on a rental agent's busy
// heartbeat with instance facts and a person connected: decoding alone
// (decode, the part that was there before the door) against decoding,
// checking and cleaning (door), so that the door's own cost can be read
// beside the whole heartbeat's (BenchmarkHeartbeat_Kinds).
//
//	go test -run '^$' -bench BenchmarkDoor_Heartbeat -benchmem -count 10 ./agent/hub/
func BenchmarkDoor_Heartbeat(b *testing.B) {
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	u := 87.0
	body, err := json.Marshal(wire.HeartbeatRequest{Version: wire.Version, Seq: 7, BootID: "3f2a9c1e5b7d4a60",
		SentAt: t0, WindowStart: t0.Add(-30 * time.Second), WindowEnd: t0, Samples: 6, BusySamples: 6,
		Verdict: wire.VerdictBusy, Reasons: []string{"gpu0 util 87%"}, Work: "rsync running",
		Host: wire.HostFacts{Hostname: "ip-10-0-0-1", GPUSource: "nvml",
			GPUs: []wire.GPUFact{{Name: "NVIDIA GeForce RTX 4090", UUID: "GPU-1"}}},
		GPUs:     []wire.GPUSummary{{Index: 0, UUID: "GPU-1", Samples: 6, UtilMean: &u, UtilMax: &u}},
		Sessions: []wire.Session{{Kind: wire.SessionSSH, Client: "10.0.0.5", User: "alice"}},
		Instance: &wire.InstanceFacts{Platform: "runpod", PlatformSource: "env RUNPOD_POD_ID", ID: "abc123", BootedAt: t0},
	})
	if err != nil {
		b.Fatal(err)
	}
	request := func() *http.Request {
		return httptest.NewRequest(http.MethodPost, wire.PathHeartbeat, bytes.NewReader(body))
	}
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var hb wire.HeartbeatRequest
			if ok, _ := decodeBody(httptest.NewRecorder(), request(), &hb); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("door", func(b *testing.B) {
		for b.Loop() {
			if hb, _ := readHeartbeat(httptest.NewRecorder(), request(), checkHeartbeat); hb == nil {
				b.Fatal("refused")
			}
		}
	})
}
