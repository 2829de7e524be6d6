package main_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// consoleDefault is the console's default hub address (config.go).
const consoleDefault = "127.0.0.1:8477"

// envWithout returns the process's environment without the variables
// named, so a test's server sees only what the test sets.
func envWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && name != n
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}

// TestConsole_DefaultPortTaken runs the real binary in console mode, as
// the README's first command does, while another program holds the
// console's default hub address: with GPULEDGER_LISTEN unset it takes a
// free port, says so, and the install command /agent prints names that
// port; with GPULEDGER_LISTEN naming the taken address it fails, saying
// which address is in use and which setting chose it.
func TestConsole_DefaultPortTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary; run without -short")
	}
	bin := buildServer(t)
	// Occupy the default. If another program already holds it, it is
	// taken all the same, which is what the test needs.
	if ln, err := net.Listen("tcp", consoleDefault); err == nil {
		defer ln.Close()
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("occupy %s: %v", consoleDefault, err)
	}
	base := envWithout("GPULEDGER_LISTEN", "TELEGRAM_BOT_TOKEN", "GPULEDGER_PUBLIC_URL")
	run := func(t *testing.T, env []string, stdin string) (int, string, string) {
		t.Helper()
		data := t.TempDir()
		env = append(append([]string{}, base...), append(env, "GPULEDGER_DB="+filepath.Join(data, "ledger.db"), "GPULEDGER_TZ=UTC",
			"GPULEDGER_AGENT_BINARY="+filepath.Join(data, "no-agent-here"))...)
		return runBinEnv(t, bin, data, env, stdin)
	}

	t.Run("DefaultMoves", func(t *testing.T) {
		code, out, errs := run(t, nil, "/rent box1 autodl 4090 1.88/h\n/agent box1\n")
		if code != 0 {
			t.Fatalf("exit %d with the default port taken\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		m := regexp.MustCompile(`http://127\.0\.0\.1:(\d+)/agent/install\.sh`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no install command on 127.0.0.1 in the output:\n%s", out)
		}
		if m[1] == "8477" || m[1] == "0" {
			t.Errorf("the install command names port %s, not the port the hub took:\n%s", m[1], out)
		}
		if !strings.Contains(errs, consoleDefault) || !strings.Contains(errs, "127.0.0.1:"+m[1]) {
			t.Errorf("stderr does not say the hub moved from %s to 127.0.0.1:%s:\n%s", consoleDefault, m[1], errs)
		}
	})
	t.Run("ErrChosenTaken", func(t *testing.T) {
		code, out, errs := run(t, []string{"GPULEDGER_LISTEN=" + consoleDefault}, "/status\n")
		if code == 0 || !strings.Contains(errs, "GPULEDGER_LISTEN") || !strings.Contains(errs, consoleDefault) || !strings.Contains(errs, "in use") {
			t.Errorf("exit %d with GPULEDGER_LISTEN on a taken address, want a failure naming it and the setting\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
	})
}

// runBinEnv is runBin with exactly env as the environment.
func runBinEnv(t *testing.T, bin, dir string, env []string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("%v: %v\n%s", args, err, errb.String())
	return 0, "", ""
}
