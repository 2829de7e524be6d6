package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// systemdAskTimeout bounds `systemctl is-system-running` in the shutdown
// report: the agent is being stopped and must not hang on it.
const systemdAskTimeout = 2 * time.Second

// systemdStopping reports whether systemd says the system is going down.
// It asks only where systemd runs (root/run/systemd/system is a
// directory, the check sd_booted(3) makes), and gives up after timeout:
// false means "not known to be stopping".
func systemdStopping(ctx context.Context, root string, timeout time.Duration, ask func(context.Context) string) bool {
	st, err := os.Stat(filepath.Join(root, "/run/systemd/system"))
	if err != nil || !st.IsDir() {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := make(chan string, 1)
	go func() { out <- ask(ctx) }()
	select {
	case s := <-out:
		return strings.TrimSpace(s) == "stopping"
	case <-ctx.Done():
		return false
	}
}

// askSystemctl runs `systemctl is-system-running`. It exits non-zero for
// every state but "running", so only its output counts.
func askSystemctl(ctx context.Context) string {
	out, _ := exec.CommandContext(ctx, "systemctl", "is-system-running").Output()
	return string(out)
}
