package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSystemdStopping(t *testing.T) {
	withSystemd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(withSystemd, "run/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	answer := func(s string) func(context.Context) string { return func(context.Context) string { return s } }
	cases := []struct {
		name string
		root string
		ask  func(context.Context) string
		want bool
	}{
		{"stopping", withSystemd, answer("stopping\n"), true},
		{"running", withSystemd, answer("running\n"), false},
		{"degraded", withSystemd, answer("degraded\n"), false},
		{"no systemd: not asked", t.TempDir(), func(context.Context) string { t.Error("asked without systemd"); return "stopping" }, false},
		{"hangs", withSystemd, func(ctx context.Context) string { <-ctx.Done(); time.Sleep(time.Second); return "stopping" }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			if got := systemdStopping(t.Context(), c.root, 100*time.Millisecond, c.ask); got != c.want {
				t.Errorf("got %v want %v", got, c.want)
			}
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Errorf("took %s, over the timeout", d)
			}
		})
	}
}
