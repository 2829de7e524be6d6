package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSim(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sim.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	host := HostReader{ProcRoot: "testdata/proc", CgroupRoot: "testdata/cgroup2"}
	tests := []struct {
		name     string
		sim      string
		want     []string // substrings of warnings
		wantNone bool
		err      error
	}{
		{"Clean", `{"gpus":[{"name":"NVIDIA H200","uuid":"GPU-1","memory_total_mib":143771,"memory_used_mib":0,"utilization":0,"clock_event_reasons":1}]}`, nil, true, nil},
		{"PowerCapUnderLoadIsNormal", `{"gpus":[{"name":"g","uuid":"u","memory_total_mib":100,"memory_used_mib":0,"utilization":0,"clock_event_reasons":4}]}`, nil, true, nil},
		{"NoisyNeighbourMemory", `{"gpus":[{"name":"g","uuid":"u","memory_total_mib":24564,"memory_used_mib":4096,"utilization":0}]}`, []string{"4.0 GiB of GPU memory already in use"}, false, nil},
		{"NoisyNeighbourProcess", `{"gpus":[{"name":"g","uuid":"u","memory_total_mib":24564,"memory_used_mib":10,"utilization":0,"processes":[{"pid":4242,"used_memory_mib":10}]}]}`, []string{"pid 4242"}, false, nil},
		{"BusyAtStart", `{"gpus":[{"name":"g","uuid":"u","memory_total_mib":24564,"memory_used_mib":10,"utilization":60}]}`, []string{"utilisation up to 60%"}, false, nil},
		{"ThermalTrouble", `{"gpus":[{"name":"g","uuid":"u","memory_total_mib":24564,"memory_used_mib":0,"utilization":0,"clock_event_reasons":100}]}`, []string{"sw_thermal_slowdown, hw_thermal_slowdown"}, false, nil},
		{"ErrNothingRead/NoGPUs", `{"gpus":[]}`, []string{"no GPUs seen"}, false, ErrNothingRead},
		{"ErrNothingRead/Malformed", `{"gpus":`, []string{"cannot read the GPUs"}, false, ErrNothingRead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Check(t.Context(), CheckConfig{Simulate: writeSim(t, tt.sim), Host: host, DiskPath: "/", MinDiskFreeBytes: 1})
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			all := strings.Join(r.Warnings, "\n")
			if tt.wantNone && len(r.Warnings) > 0 {
				t.Fatalf("unexpected warnings:\n%s", all)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Fatalf("warning %q missing from:\n%s", w, all)
				}
			}
			var b strings.Builder
			r.Print(&b)
			if !strings.Contains(b.String(), "Host:") {
				t.Fatal(b.String())
			}
			if r.JSON() == nil {
				t.Fatal("no json")
			}
		})
	}
}
