// Package install sets the agent up to run on a host and to start again
// after a reboot where the host allows it: a systemd unit where systemd
// runs and we are root, else a start script run with nohup (containers:
// AutoDL, RunPod, Vast.ai), which the platform's start-up hook can run.
// The token goes only to an owner-only file, never into the unit, the
// script or the output. cmd/gpuledger-agent parses the install command's
// flags into Options and calls Install (docs/deploy.md).
package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options are what to install. The command's flags fill them.
type Options struct {
	Dir      string   // where the nohup files live (absolute; below Root)
	Init     string   // auto (the default), systemd or nohup
	Root     string   // write below Root instead of / (tests, images); implies NoStart
	Hook     string   // a start-up script to append the start line to; empty: none
	Bin      string   // the agent binary the service runs (absolute)
	NoStart  bool     // write the files only
	Token    string   // the agent's token; written only to an owner-only file
	Server   string   // the hub's URL (also among RunArgs)
	StateDir string   // --state-dir among the run flags, if given
	RunArgs  []string // the run flags, without --token
}

// withStateDir returns the run flags with --state-dir dir added unless
// the user gave one: the agent's replay record must outlive restarts, so
// it goes where the service's other files survive.
func (o Options) withStateDir(dir string) []string {
	if o.StateDir != "" {
		return o.RunArgs
	}
	return append(append([]string(nil), o.RunArgs...), "--state-dir", dir)
}

// Install writes the service's files for o and, unless o.NoStart, starts
// the agent and checks it stays up. With Init "auto" it picks systemd
// when systemd runs below o.Root and we are root (or o.Root is not /),
// else nohup, saying on stderr when systemd runs but we are not root.
// stdout gets what was written and how the agent starts again.
func Install(ctx context.Context, o Options, stdout, stderr io.Writer, getenv func(string) string) error {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Init == "" {
		o.Init = "auto"
	}
	if o.Root != "/" {
		o.NoStart = true // files written for another root are not started here
	}
	if !filepath.IsAbs(o.Bin) || !filepath.IsAbs(o.Dir) {
		return fmt.Errorf("install: the binary (%q) and the directory (%q) must be absolute paths", o.Bin, o.Dir)
	}
	mode := o.Init
	if mode == "auto" {
		mode = "nohup"
		if systemdRuns(o.Root) {
			if o.Root == "/" && os.Geteuid() != 0 {
				fmt.Fprintln(stderr, "gpuledger-agent install: systemd runs here but a system unit needs root; starting with nohup instead (run the install as root to survive reboots)")
			} else {
				mode = "systemd"
			}
		}
	}
	switch mode {
	case "systemd":
		return installSystemd(ctx, o, stdout)
	case "nohup":
		return installNohup(ctx, o, stdout, getenv)
	}
	return fmt.Errorf("install: init %q: want auto, systemd or nohup", o.Init)
}

// under returns path p below root.
func under(root, p string) string { return filepath.Join(root, p) }

// systemdRuns reports whether systemd is the init system below root: the
// check sd_booted(3) makes.
func systemdRuns(root string) bool {
	st, err := os.Stat(under(root, "/run/systemd/system"))
	return err == nil && st.IsDir()
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, with the given mode, creating the directory (mode dirMode).
func writeFileAtomic(path string, data []byte, mode, dirMode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func envFile(token string) []byte {
	return []byte("# gpuledger agent token: keep this file owner-only (0600).\nGPULEDGER_AGENT_TOKEN=" + token + "\n")
}

// Paths of the systemd installation, below --root.
const (
	unitPath       = "/etc/systemd/system/gpuledger-agent.service"
	systemdEnvPath = "/etc/gpuledger/agent.env"
	// systemdStateDir is what StateDirectory=gpuledger-agent makes.
	systemdStateDir = "/var/lib/gpuledger-agent"
)

// systemdUnit returns the unit that runs bin with the run flags.
func systemdUnit(bin, envPath string, runArgs []string) string {
	words := []string{systemdQuote(bin), "run"}
	for _, a := range runArgs {
		words = append(words, systemdQuote(a))
	}
	return `[Unit]
Description=gpuledger agent: reports this GPU host's activity to the gpuledger server
Documentation=https://github.com/gpuledger/gpuledger/blob/main/docs/deploy.md
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
# The token lives in an owner-only file, not on the command line.
EnvironmentFile=` + envPath + `
ExecStart=` + strings.Join(words, " ") + `
Restart=on-failure
RestartSec=15s
# The release command (e.g. shutdown -h now) needs root; the agent runs as root.
# /var/lib/gpuledger-agent keeps the replay record of orders across restarts.
StateDirectory=gpuledger-agent
StateDirectoryMode=0700
KillMode=mixed
TimeoutStopSec=30s

[Install]
WantedBy=multi-user.target
`
}

// systemdQuote quotes one ExecStart word: double quotes with \ and "
// escaped, % doubled (a specifier) and $ doubled (a variable).
func systemdQuote(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	s = strings.ReplaceAll(s, "$", "$$")
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\;") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

func installSystemd(ctx context.Context, o Options, stdout io.Writer) error {
	env := under(o.Root, systemdEnvPath)
	if err := writeFileAtomic(env, envFile(o.Token), 0o600, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", env, err)
	}
	unit := under(o.Root, unitPath)
	if err := writeFileAtomic(unit, []byte(systemdUnit(o.Bin, systemdEnvPath, o.withStateDir(systemdStateDir))), 0o644, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", unit, err)
	}
	fmt.Fprintf(stdout, "wrote %s (token in %s, mode 0600)\n", unit, env)
	if o.NoStart {
		fmt.Fprintln(stdout, "not started (--no-start); start it with: systemctl daemon-reload && systemctl enable --now gpuledger-agent")
		return nil
	}
	for _, args := range [][]string{{"daemon-reload"}, {"enable", "gpuledger-agent.service"}, {"restart", "gpuledger-agent.service"}} {
		cmd := exec.CommandContext(ctx, "systemctl", args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("systemctl %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
	}
	// A bad flag makes the agent exit at once: look again after a moment.
	time.Sleep(2 * time.Second)
	out, err := exec.CommandContext(ctx, "systemctl", "is-active", "gpuledger-agent.service").Output()
	if err != nil || strings.TrimSpace(string(out)) != "active" {
		logs, _ := exec.CommandContext(ctx, "journalctl", "-u", "gpuledger-agent", "-n", "20", "--no-pager").CombinedOutput()
		return fmt.Errorf("the service did not stay up (%s):\n%s", strings.TrimSpace(string(out)), logs)
	}
	fmt.Fprintln(stdout, "started: systemctl status gpuledger-agent; logs: journalctl -u gpuledger-agent -f")
	fmt.Fprintln(stdout, "it starts again at every boot.")
	return nil
}

// shQuote quotes s for a POSIX shell.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// startScript returns DIR/start.sh: start the agent in the background
// unless it already runs; safe to run at every container start.
func startScript(dir, bin string, runArgs []string) string {
	words := []string{shQuote(bin), "run"}
	for _, a := range runArgs {
		words = append(words, shQuote(a))
	}
	return `#!/bin/sh
# Starts gpuledger-agent in the background unless it already runs.
# Written by "gpuledger-agent install"; run it at every start of this
# host or container (docs/deploy.md says where each platform runs it).
dir=` + shQuote(dir) + `
pid=$(cat "$dir/agent.pid" 2>/dev/null || true)
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q gpuledger-agent "/proc/$pid/cmdline" 2>/dev/null; then
	echo "gpuledger-agent already runs (pid $pid)"
	exit 0
fi
# Keep one old log, at most about 10 MB each.
if [ -f "$dir/agent.log" ] && [ "$(wc -c <"$dir/agent.log")" -gt 10000000 ]; then
	mv -f "$dir/agent.log" "$dir/agent.log.1"
fi
set -a
. "$dir/agent.env"
set +a
nohup ` + strings.Join(words, " ") + ` >>"$dir/agent.log" 2>&1 </dev/null &
echo $! >"$dir/agent.pid"
echo "gpuledger-agent started (pid $!, log $dir/agent.log)"
`
}

// runpodStateDir is the state directory on a RunPod pod with a volume.
const runpodStateDir = "/workspace/.gpuledger"

// within reports whether path p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// hookLine is what --hook appends to a start-up script.
func hookLine(dir string) string {
	return "sh " + shQuote(filepath.Join(dir, "start.sh")) + " >/dev/null 2>&1 # gpuledger-agent"
}

func installNohup(ctx context.Context, o Options, stdout io.Writer, getenv func(string) string) error {
	dir := under(o.Root, o.Dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	env := filepath.Join(dir, "agent.env")
	if err := writeFileAtomic(env, envFile(o.Token), 0o600, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", env, err)
	}
	start := filepath.Join(dir, "start.sh")
	stateDir := o.Dir
	if ws := runpodStateDir; getenv("RUNPOD_POD_ID") != "" && !within(o.Dir, "/workspace") && isDir(under(o.Root, "/workspace")) {
		// Only /workspace survives a pod's stop: the replay record and
		// an enrolment agent's rental token must too.
		stateDir = ws
		if o.StateDir == "" {
			fmt.Fprintf(stdout, "state kept in %s: on RunPod only /workspace survives a stop\n", ws)
		}
	}
	if err := writeFileAtomic(start, []byte(startScript(o.Dir, o.Bin, o.withStateDir(stateDir))), 0o700, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", start, err)
	}
	fmt.Fprintf(stdout, "wrote %s (token in %s, mode 0600)\n", start, env)
	if o.Hook != "" {
		added, err := appendHook(under(o.Root, o.Hook), hookLine(o.Dir))
		if err != nil {
			return fmt.Errorf("--hook %s: %w", o.Hook, err)
		}
		if added {
			fmt.Fprintf(stdout, "added to %s: %s\n", o.Hook, hookLine(o.Dir))
		} else {
			fmt.Fprintf(stdout, "%s already starts the agent\n", o.Hook)
		}
	}
	if !o.NoStart {
		stopPrevious(dir)
		cmd := exec.CommandContext(ctx, "/bin/sh", start)
		cmd.Stdout, cmd.Stderr = stdout, stdout
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", start, err)
		}
		// A bad flag or an unreachable server shows in the first seconds.
		time.Sleep(1500 * time.Millisecond)
		if pid, ok := runningPid(dir); !ok {
			log, _ := os.ReadFile(filepath.Join(dir, "agent.log"))
			return fmt.Errorf("the agent exited at once (pid %d); its log:\n%s", pid, tail(log, 2000))
		}
	}
	if o.Hook == "" {
		fmt.Fprint(stdout, hookAdvice(o.Dir, getenv))
	}
	return nil
}

// appendHook appends line to the script at path unless it is there,
// creating an executable sh script when there is none.
func appendHook(path, line string) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if bytes.Contains(old, []byte(line)) {
		return false, nil
	}
	var b bytes.Buffer
	if len(old) == 0 {
		b.WriteString("#!/bin/sh\n")
	} else {
		b.Write(old)
		if old[len(old)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	b.WriteString(line + "\n")
	mode := os.FileMode(0o755)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm() | 0o100
	}
	return true, writeFileAtomic(path, b.Bytes(), mode, 0o755)
}

// runningPid returns the pid in DIR/agent.pid and whether that process
// is a live gpuledger-agent.
func runningPid(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "agent.pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if syscall.Kill(pid, 0) != nil {
		return pid, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err == nil && !bytes.Contains(cmdline, []byte("gpuledger-agent")) {
		return pid, false // the pid was reused by another program
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// A zombie (exited, not yet reaped) does not run.
		if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
			return pid, false
		}
	}
	return pid, true
}

// stopPrevious stops an agent started earlier from dir, so a reinstall
// runs the new binary and token.
func stopPrevious(dir string) {
	pid, ok := runningPid(dir)
	if !ok {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for range 50 {
		if _, ok := runningPid(dir); !ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// hookAdvice says how to start the agent again after the host or
// container restarts, for the platform this looks like.
func hookAdvice(dir string, getenv func(string) string) string {
	line := hookLine(dir)
	var b strings.Builder
	b.WriteString("\nNo systemd here: the agent runs until this container or host stops.\n")
	b.WriteString("To start it again at every start, run this line from the platform's start-up hook:\n    " + line + "\n")
	switch {
	case getenv("RUNPOD_POD_ID") != "":
		b.WriteString("RunPod: put it in the template's Container Start Command before the image's own start,\n" +
			"e.g. bash -c '" + filepath.Join(dir, "start.sh") + "; /start.sh', or in /post_start.sh where the image runs it.\n" +
			"Only /workspace survives a stop: install with GPULEDGER_AGENT_DIR=/workspace/.gpuledger.\n")
	case getenv("VAST_CONTAINERLABEL") != "" || getenv("CONTAINER_ID") != "":
		b.WriteString("Vast.ai: add it to the instance's on-start script (the template's On-start Script field).\n")
	default:
		if st, err := os.Stat("/root/autodl-tmp"); err == nil && st.IsDir() {
			b.WriteString("AutoDL: there is no start-up hook; run it after each power-on, or add it to ~/.bashrc\n" +
				"(or rerun install with --hook ~/.bashrc) so that it starts when you first log in.\n")
		}
	}
	b.WriteString("See docs/deploy.md.\n")
	return b.String()
}
