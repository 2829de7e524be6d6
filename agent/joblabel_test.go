package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
)

// TestRun_JobLabel: run --label L -- CMD reports L in every heartbeat's
// job, while it runs and after it ended.
func TestRun_JobLabel(t *testing.T) {
	hub := hubtest.New("tok-l", "box1")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The job runs until the test lets it end.
	end := filepath.Join(t.TempDir(), "end")
	_, wait := runAgent(t, ctx, hub, simIdleHost, func(c *Config) {
		c.Job, c.JobLabel = []string{"sh", "-c", "while [ ! -e " + end + " ]; do sleep 0.05; done"}, "yolo-epoch.v2"
	})
	waitUntil(t, hub, "a heartbeat with the job running", func() bool {
		hbs := hub.Heartbeats()
		return len(hbs) > 0 && hbs[len(hbs)-1].Job != nil && hbs[len(hbs)-1].Job.Running
	})
	if err := os.WriteFile(end, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, hub, "a heartbeat after the job ended", func() bool {
		hbs := hub.Heartbeats()
		return len(hbs) > 0 && hbs[len(hbs)-1].Job != nil && hbs[len(hbs)-1].Job.Exited
	})
	cancel()
	wait()
	var running, exited int
	for _, hb := range hub.Heartbeats() {
		if hb.Job == nil {
			continue // a window without a sample (the last one, cut at stop)
		}
		if hb.Job.Label != "yolo-epoch.v2" {
			t.Fatalf("heartbeat %d job %+v, want the label", hb.Seq, hb.Job)
		}
		if hb.Job.Running {
			running++
		} else {
			exited++
		}
	}
	if running == 0 || exited == 0 {
		t.Fatalf("%d heartbeats with the job running, %d after: want both", running, exited)
	}
}

// TestConfig_Label: a bad label, or a label without a job, is refused
// with the rule.
func TestConfig_Label(t *testing.T) {
	base := Config{Server: "http://x", Token: "t", Interval: time.Second, Sample: time.Second, Job: []string{"true"}}
	for _, c := range []struct {
		label string
		job   bool
		want  string // "" valid
	}{
		{"yolo-epoch", true, ""},
		{"a.b_c-9", true, ""},
		{strings.Repeat("x", 64), true, ""},
		{strings.Repeat("x", 65), true, "at most"},
		{"has space", true, "letters, digits"},
		{"semi;colon", true, "letters, digits"},
		{"中文", true, "letters, digits"},
		{"yolo", false, "after --"},
	} {
		cfg := base
		cfg.JobLabel = c.label
		if !c.job {
			cfg.Job = nil
		}
		err := cfg.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("label %q job %v: %v, want %q", c.label, c.job, err, c.want)
		}
	}
	cfg := base
	cfg.BenchURL = "file:///etc/passwd"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "http") {
		t.Errorf("--bench-url file://: %v", err)
	}
}
