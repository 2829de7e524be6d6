package install

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const testToken = "tok_ABCdef-0123456789abcdefghijklmnopqrstuv"

func envMap(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestSystemdQuote(t *testing.T) {
	for in, want := range map[string]string{
		"--interval":      "--interval",
		"shutdown -h now": `"shutdown -h now"`,
		`say "hi"`:        `"say \"hi\""`,
		"100%":            "100%%",
		"$HOME/x":         "$$HOME/x",
		"":                `""`,
	} {
		if got := systemdQuote(in); got != want {
			t.Errorf("systemdQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestInstall_Systemd writes the unit into a temporary root, as on a VM
// where systemd runs, and checks the unit and where the token went.
func TestInstall_Systemd(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755) // what sd_booted looks for
	var out, errb bytes.Buffer
	o := Options{Root: root, Dir: "/root/.gpuledger", Bin: "/opt/gpuledger/gpuledger-agent", Server: "https://l.example", Token: testToken,
		RunArgs: []string{"--server", "https://l.example", "--release-cmd", "shutdown -h now", "--pre-release-cmd", `rsync -a /ckpt "backup:/ckpt 100%"`}}
	if err := Install(context.Background(), o, &out, &errb, envMap(nil)); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	unit, err := os.ReadFile(filepath.Join(root, "etc/systemd/system/gpuledger-agent.service"))
	if err != nil {
		t.Fatalf("no unit: %v (stdout %s)", err, out.String())
	}
	u := string(unit)
	wantExec := `ExecStart=/opt/gpuledger/gpuledger-agent run --server https://l.example --release-cmd "shutdown -h now" --pre-release-cmd "rsync -a /ckpt \"backup:/ckpt 100%%\"" --state-dir /var/lib/gpuledger-agent`
	for _, want := range []string{wantExec, "StateDirectory=gpuledger-agent", "EnvironmentFile=/etc/gpuledger/agent.env", "Restart=on-failure", "WantedBy=multi-user.target", "After=network-online.target"} {
		if !strings.Contains(u, want+"\n") {
			t.Errorf("unit lacks %q:\n%s", want, u)
		}
	}
	if strings.Contains(u, testToken) {
		t.Error("the token is in the unit (world-readable, shown by systemctl cat)")
	}
	envPath := filepath.Join(root, "etc/gpuledger/agent.env")
	env, err := os.ReadFile(envPath)
	if err != nil || !strings.Contains(string(env), "GPULEDGER_AGENT_TOKEN="+testToken+"\n") {
		t.Fatalf("env file: %v %q", err, env)
	}
	if st, _ := os.Stat(envPath); st.Mode().Perm() != 0o600 {
		t.Errorf("env file mode %v, want 0600", st.Mode().Perm())
	}
	if st, _ := os.Stat(filepath.Dir(envPath)); st.Mode().Perm() != 0o700 {
		t.Errorf("env dir mode %v, want 0700", st.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(root, "root/.gpuledger/start.sh")); err == nil {
		t.Error("systemd install also wrote the nohup script")
	}
	if systemdAnalyze, err := exec.LookPath("systemd-analyze"); err == nil {
		cmd := exec.Command(systemdAnalyze, "verify", "--root="+root, "/etc/systemd/system/gpuledger-agent.service")
		// A temporary root lacks the rest of the system (sysinit.target,
		// the binary): only complaints about the unit's own text count.
		b, _ := cmd.CombinedOutput()
		for _, line := range strings.Split(string(b), "\n") {
			for _, bad := range []string{"Unknown key", "Unknown section", "Invalid", "Failed to parse", "Ignoring", "Missing", "bad unit file setting"} {
				if strings.Contains(line, bad) {
					t.Errorf("systemd-analyze verify: %s", line)
				}
			}
		}
	}
}

// TestInstall_AutoWithoutSystemd picks nohup where systemd does not run
// (a container) and tells how to start the agent again.
func TestInstall_AutoWithoutSystemd(t *testing.T) {
	root := t.TempDir()
	var out, errb bytes.Buffer
	o := Options{Root: root, Dir: "/root/.gpuledger", Bin: "/root/.gpuledger/gpuledger-agent", Server: "http://s:8477", Token: testToken,
		NoStart: true, RunArgs: []string{"--server", "http://s:8477"}}
	if err := Install(context.Background(), o, &out, &errb, envMap(map[string]string{"RUNPOD_POD_ID": "abc"})); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if _, err := os.Stat(filepath.Join(root, "etc/systemd/system/gpuledger-agent.service")); err == nil {
		t.Error("wrote a systemd unit where systemd does not run")
	}
	start, err := os.ReadFile(filepath.Join(root, "root/.gpuledger/start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(start), "nohup '/root/.gpuledger/gpuledger-agent' run '--server' 'http://s:8477' '--state-dir' '/root/.gpuledger' >>") {
		t.Errorf("start.sh:\n%s", start)
	}
	if strings.Contains(string(start), testToken) {
		t.Error("the token is in start.sh")
	}
	for _, want := range []string{"No systemd here", "sh '/root/.gpuledger/start.sh'", "RunPod", "/workspace"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("advice lacks %q:\n%s", want, out.String())
		}
	}
}

// TestInstall_Nohup starts a stand-in agent with nohup, checks that
// start.sh does not start a second one, that a reinstall replaces the
// first, and that --hook appends its line once.
func TestInstall_Nohup(t *testing.T) {
	dir := t.TempDir()
	// A stand-in for the agent: a script named gpuledger-agent that
	// records its arguments and token, then waits to be stopped.
	bin := filepath.Join(dir, "bin", "gpuledger-agent")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	script := "#!/bin/sh\nprintf '%s\\n' \"$GPULEDGER_AGENT_TOKEN\" \"$@\" > \"$0.args\"\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	hook := filepath.Join(dir, "onstart.sh")
	os.WriteFile(hook, []byte("#!/bin/bash\necho mine"), 0o755)
	env := envMap(map[string]string{"HOME": dir, "GPULEDGER_AGENT_TOKEN": testToken})
	install := func() {
		t.Helper()
		var out, errb bytes.Buffer
		o := Options{Init: "nohup", Dir: state, Bin: bin, Hook: hook, Server: "http://127.0.0.1:1", Token: testToken,
			RunArgs: []string{"--server", "http://127.0.0.1:1", "--release-cmd", "echo it's released"}}
		if err := Install(context.Background(), o, &out, &errb, env); err != nil {
			t.Fatalf("%v: %s\n%s", err, errb.String(), out.String())
		}
	}
	install()
	pid1, ok := runningPid(state)
	if !ok {
		t.Fatalf("the agent does not run after install")
	}
	t.Cleanup(func() {
		if pid, ok := runningPid(state); ok {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	args, _ := os.ReadFile(bin + ".args")
	if want := testToken + "\nrun\n--server\nhttp://127.0.0.1:1\n--release-cmd\necho it's released\n--state-dir\n" + state + "\n"; string(args) != want {
		t.Errorf("the agent got %q, want %q", args, want)
	}

	// start.sh at the next container start: one agent, not two.
	out, err := exec.Command("/bin/sh", filepath.Join(state, "start.sh")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "already runs") {
		t.Fatalf("start.sh again: %v %s", err, out)
	}
	if pid, _ := runningPid(state); pid != pid1 {
		t.Fatalf("start.sh started a second agent (%d, was %d)", pid, pid1)
	}

	// A reinstall stops the old agent and starts the new one.
	install()
	pid2, ok := runningPid(state)
	if !ok || pid2 == pid1 {
		t.Fatalf("after reinstall: pid %d (running %v), first was %d", pid2, ok, pid1)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid1, 0) == nil && time.Now().Before(deadline) {
		// it may linger as a zombie of the shell that started it
		if st, err := os.ReadFile("/proc/" + itoa(pid1) + "/stat"); err == nil && bytes.Contains(st, []byte(") Z")) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	h, _ := os.ReadFile(hook)
	if n := strings.Count(string(h), "# gpuledger-agent"); n != 1 || !strings.HasPrefix(string(h), "#!/bin/bash\necho mine\n") {
		t.Errorf("hook after two installs:\n%s", h)
	}
	for _, f := range []string{"agent.env", "start.sh"} {
		if st, err := os.Stat(filepath.Join(state, f)); err != nil || st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v, mode %v; want owner-only", f, err, st.Mode().Perm())
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestInstall_NohupAgentExits reports an agent that dies at once (a bad
// flag) with its log, instead of claiming success.
func TestInstall_NohupAgentExits(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "gpuledger-agent")
	os.WriteFile(bin, []byte("#!/bin/sh\necho 'flag provided but not defined: -intervall' >&2\nexit 2\n"), 0o755)
	var out, errb bytes.Buffer
	o := Options{Init: "nohup", Dir: filepath.Join(dir, "s"), Bin: bin, Server: "http://s", Token: testToken,
		RunArgs: []string{"--server", "http://s", "--intervall", "5s"}}
	err := Install(context.Background(), o, &out, &errb, envMap(nil))
	if err == nil || !strings.Contains(err.Error(), "exited at once") || !strings.Contains(err.Error(), "-intervall") {
		t.Fatalf("err = %v; want a failure with the agent's log", err)
	}
}

// TestStartScript_Shellcheck holds start.sh to POSIX sh.
func TestStartScript_Shellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed (apt-get install shellcheck; scripts/ship-lint-dockerfile.sh installs it)")
	}
	cmd := exec.Command(sc, "--shell=sh", "--severity=style", "--exclude=SC1091", "-")
	cmd.Stdin = strings.NewReader(startScript("/root/.gpuledger", "/root/.gpuledger/gpuledger-agent", []string{"--server", "http://s", "--release-cmd", "it's done"}))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shellcheck: %v\n%s", err, out)
	}
}

// TestInstall_ErrOptions: options the command would never pass (a
// relative path, an unknown init) are refused and nothing is written.
func TestInstall_ErrOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"RelativeBin", Options{Init: "nohup", Dir: "/root/.gpuledger", Bin: "gpuledger-agent"}, "absolute"},
		{"RelativeDir", Options{Init: "nohup", Dir: ".gpuledger", Bin: "/b/gpuledger-agent"}, "absolute"},
		{"UnknownInit", Options{Init: "upstart", Dir: "/root/.gpuledger", Bin: "/b/gpuledger-agent"}, `"upstart"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			c.o.Root, c.o.Token = root, testToken
			var out, errb bytes.Buffer
			err := Install(context.Background(), c.o, &out, &errb, envMap(nil))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one saying %s", err, c.want)
			}
			if ents, _ := os.ReadDir(root); len(ents) != 0 {
				t.Errorf("wrote %v below the root", ents)
			}
		})
	}
}
