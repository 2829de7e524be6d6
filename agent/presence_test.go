package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hubtest"
	"github.com/gpuledger/gpuledger/agent/wire"
)

// fakeProc builds a /proc root from testdata/presence: the net files and
// each pids/PID's comm and cmdline copied, and its fds list made into
// /proc/PID/fd symlinks. An empty fds file leaves the fd directory out
// (unreadable, as a process of another user is).
func fakeProc(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src := "testdata/presence"
	cp := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cp(src+"/net/tcp", root+"/net/tcp")
	cp(src+"/net/tcp6", root+"/net/tcp6")
	pids, err := os.ReadDir(src + "/pids")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		d := src + "/pids/" + p.Name()
		cp(d+"/comm", root+"/"+p.Name()+"/comm")
		cp(d+"/cmdline", root+"/"+p.Name()+"/cmdline")
		f, err := os.Open(d + "/fds")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		made := false
		for sc.Scan() {
			fd, target, ok := strings.Cut(sc.Text(), " ")
			if !ok {
				continue
			}
			if !made {
				os.MkdirAll(root+"/"+p.Name()+"/fd", 0o755)
				made = true
			}
			if err := os.Symlink(target, root+"/"+p.Name()+"/fd/"+fd); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	os.WriteFile(root+"/self", []byte("not a pid"), 0o644)
	return root
}

func TestParseProcNetTCP(t *testing.T) {
	b, err := os.ReadFile("testdata/presence/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	socks, err := parseProcNetTCP(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(socks) != 14 {
		t.Fatalf("got %d sockets, want 14", len(socks))
	}
	s := socks[4]
	if s.local != netip.MustParseAddrPort("172.17.0.2:22") || s.remote != netip.MustParseAddrPort("1.2.3.4:54000") ||
		s.state != tcpEstablished || s.inode != 2001 {
		t.Fatalf("line 4: %+v", s)
	}
	if socks[0].state != tcpListen || socks[0].local.Port() != 22 || !socks[0].local.Addr().IsUnspecified() {
		t.Fatalf("line 0: %+v", socks[0])
	}

	b, err = os.ReadFile("testdata/presence/net/tcp6")
	if err != nil {
		t.Fatal(err)
	}
	socks, err = parseProcNetTCP(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := socks[2]; got.local != netip.MustParseAddrPort("172.17.0.2:8080") ||
		got.remote != netip.MustParseAddrPort("[2001:db8::1]:51000") || got.inode != 2008 {
		t.Fatalf("tcp6 line 2: %+v (local %s remote %s)", got, got.local, got.remote)
	}

	for _, bad := range []string{
		"hdr\n   0: 0100007F:0016 00000000:0000 0A\n",
		"hdr\n   0: 0100007X:0016 00000000:0000 0A 0:0 0:0 0 0 0 12\n",
		"hdr\n   0: 0100007F:0016 00000000:0000 0A 0:0 0:0 0 0 0 x\n",
		"hdr\n   0: 01007F:0016 00000000:0000 0A 0:0 0:0 0 0 0 1\n",
	} {
		if _, err := parseProcNetTCP([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if s, err := parseProcNetTCP([]byte("only a header\n")); err != nil || len(s) != 0 {
		t.Fatalf("header only: %v %v", s, err)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		comm, cmd string
		want      kind
	}{
		{"sshd", "sshd: root@pts/0", KindSSH},
		{"dropbear", "/usr/sbin/dropbear -F -p 22", KindSSH},
		{"jupyter-lab", "/usr/bin/python3\x00/usr/local/bin/jupyter-lab\x00--allow-root", KindJupyter},
		{"python3", "python3\x00-m\x00jupyterlab", KindJupyter},
		{"python", "python\x00-m\x00ipykernel_launcher\x00-f\x00/root/.local/share/jupyter/runtime/kernel-1.json", ""},
		{"node", "/root/.vscode-server/bin/abc/node\x00/root/.vscode-server/bin/abc/out/server-main.js", KindVSCode},
		{"node", "/usr/lib/code-server/lib/node\x00/usr/lib/code-server", KindVSCode},
		{"node", "node\x00server.js", ""},
		{"python", "python\x00train.py", ""},
	}
	for _, tt := range tests {
		if got := classify(tt.comm, []byte(tt.cmd)); got != tt.want {
			t.Errorf("classify(%q, %q) = %q, want %q", tt.comm, tt.cmd, got, tt.want)
		}
	}
}

func TestSSHSessionUser(t *testing.T) {
	for in, want := range map[string]string{
		"sshd: root@pts/0\x00":        "root",
		"sshd: alice@notty\x00":       "alice",
		"sshd-session: bob@pts/3\x00": "bob",
		"sshd: root [priv]\x00":       "",
		"sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups\x00": "",
		"/usr/sbin/sshd\x00-D\x00":                                    "",
		"sshd: @pts/0":                                                "",
	} {
		if got := sshSessionUser([]byte(in)); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestPresence_Read(t *testing.T) {
	root := fakeProc(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := &Presence{ProcRoot: root, Now: func() time.Time { return now }}
	got, err := p.Read()
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ kind, client, user string }
	var rows []row
	for _, s := range got {
		rows = append(rows, row{s.Kind, s.Client, s.User})
		if s.Since == nil || !s.Since.Equal(now) {
			t.Errorf("%+v: since %v, want %v", s, s.Since, now)
		}
	}
	want := []row{
		{KindJupyter, "local", ""},       // two proxied websockets to 8888: one client
		{KindJupyter, "10.10.10.10", ""}, // 8889: fd unreadable, port from --port
		{KindSSH, "1.2.3.4", "root"},
		{KindSSH, "5.6.7.8", "alice"}, // sshd-session (OpenSSH 9.8+)
		{KindVSCode, "2001:db8::1", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %v\nwant %v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Fatalf("got %v\nwant %v", rows, want)
		}
	}

	// A later read keeps the first-seen times and does not scan /proc
	// again while the listening sockets stay the same.
	later := now.Add(time.Minute)
	p.Now = func() time.Time { return later }
	os.RemoveAll(root + "/100") // sshd gone from view: no rescan, port 22 still known
	got, err = p.Read()
	if err != nil || len(got) != len(want) {
		t.Fatalf("second read: %v %v", got, err)
	}
	for _, s := range got {
		if !s.Since.Equal(now) {
			t.Errorf("%+v: since moved to %v", s, s.Since)
		}
	}

	// No /proc/net/tcp: an error, which holds nothing.
	if _, err := (&Presence{ProcRoot: t.TempDir()}).Read(); err == nil {
		t.Fatal("missing /proc/net/tcp: no error")
	}
}

func TestPresence_Port22WithoutSSHD(t *testing.T) {
	// sshd in another PID namespace (or hidden): port 22 is still ssh.
	root := t.TempDir()
	os.MkdirAll(root+"/net", 0o755)
	os.WriteFile(root+"/net/tcp", []byte("hdr\n"+
		"   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 11 1 0 100 0 0 10 0\n"+
		"   1: 020011AC:0016 04030201:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 12 1 0 100 0 0 10 0\n"), 0o644)
	got, err := (&Presence{ProcRoot: root}).Read()
	if err != nil || len(got) != 1 || got[0].Kind != KindSSH || got[0].Client != "1.2.3.4" {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestPresence_Bounded(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(root+"/net", 0o755)
	var sb strings.Builder
	sb.WriteString("hdr\n   0: 00000000:0016 00000000:0000 0A 0:0 0:0 0 0 0 11 1\n")
	for i := 0; i < 3*wire.MaxSessions; i++ {
		fmt.Fprintf(&sb, "   1: 020011AC:0016 04030201:D2F0 01 0:0 0:0 0 0 0 %d\n", 100+i)
	}
	os.WriteFile(root+"/net/tcp", []byte(sb.String()), 0o644)
	got, err := (&Presence{ProcRoot: root}).Read()
	if err != nil || len(got) != wire.MaxSessions {
		t.Fatalf("got %d sessions, %v; want %d", len(got), err, wire.MaxSessions)
	}
}

// BenchmarkPresence_Read measures one heartbeat's presence read on the
// fixture (two small files parsed, no process scan).
func BenchmarkPresence_Read(b *testing.B) {
	root := b.TempDir()
	os.MkdirAll(root+"/net", 0o755)
	for _, f := range []string{"tcp", "tcp6"} {
		c, _ := os.ReadFile("testdata/presence/net/" + f)
		os.WriteFile(root+"/net/"+f, c, 0o644)
	}
	p := &Presence{ProcRoot: root}
	p.Read()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Read(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExecutor_PeopleConnected: an automatic order (wait_for set, signed)
// is refused while its fresh sample sees someone connected of those
// kinds; the same host with nobody there, an order the user asked for (no
// wait_for), or wait_for naming other kinds, still releases.
func TestExecutor_PeopleConnected(t *testing.T) {
	ctx := context.Background()
	order := func(hub *hubtest.Hub, waitFor ...string) wire.Order {
		o := hub.NewOrder(wire.ActionStop, time.Minute)
		o.WaitFor = waitFor
		o.Signature = wire.SignOrder(hub.Token, o)
		return o
	}
	t.Run("RefusedWhileSSH", func(t *testing.T) {
		e, rec, hub, dir := newExecutor(t, "idle")
		e.Sampler.Presence = &Presence{ProcRoot: fakeProc(t)}
		if out := e.HandleOrder(ctx, order(hub, wire.SessionSSH, wire.SessionJupyter, wire.SessionVSCode)); out != wire.OutcomeRefusedPeople {
			t.Fatalf("outcome %s (%s)", out, rec.outcomes())
		}
		if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
			t.Fatal("released while someone is connected")
		}
		if msg := rec.got[0].Message; !strings.Contains(msg, "ssh root from 1.2.3.4") {
			t.Fatalf("message %q does not say who", msg)
		}
	})
	t.Run("UserOrderGoesThrough", func(t *testing.T) {
		e, rec, hub, _ := newExecutor(t, "idle")
		e.Sampler.Presence = &Presence{ProcRoot: fakeProc(t)}
		if out := e.HandleOrder(ctx, order(hub)); out != wire.OutcomeDone {
			t.Fatalf("outcome %s (%s)", out, rec.outcomes())
		}
	})
	t.Run("OtherKindsOnly", func(t *testing.T) {
		root := t.TempDir()
		os.MkdirAll(root+"/net", 0o755)
		os.WriteFile(root+"/net/tcp", []byte("hdr\n"+
			"   0: 00000000:0016 00000000:0000 0A 0:0 0:0 0 0 0 11 1\n"+
			"   1: 020011AC:0016 04030201:D2F0 01 0:0 0:0 0 0 0 12 1\n"), 0o644)
		e, rec, hub, _ := newExecutor(t, "idle")
		e.Sampler.Presence = &Presence{ProcRoot: root}
		if out := e.HandleOrder(ctx, order(hub, wire.SessionJupyter)); out != wire.OutcomeDone {
			t.Fatalf("outcome %s (%s)", out, rec.outcomes())
		}
	})
	t.Run("NobodyThere", func(t *testing.T) {
		root := t.TempDir()
		os.MkdirAll(root+"/net", 0o755)
		os.WriteFile(root+"/net/tcp", []byte("hdr\n   0: 00000000:0016 00000000:0000 0A 0:0 0:0 0 0 0 11 1\n"), 0o644)
		e, rec, hub, _ := newExecutor(t, "idle")
		e.Sampler.Presence = &Presence{ProcRoot: root}
		if out := e.HandleOrder(ctx, order(hub, wire.SessionSSH)); out != wire.OutcomeDone {
			t.Fatalf("outcome %s (%s)", out, rec.outcomes())
		}
	})
}

// TestHeartbeat_CarriesSessions: the people connected are read at the
// window's full sample and reported in the heartbeat; fast samples do not
// read /proc for them.
func TestHeartbeat_CarriesSessions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	copyFile(t, "testdata/sim/idle.json", filepath.Join(dir, "sim.json"))
	pr := &Presence{ProcRoot: fakeProc(t)}
	s := &Sampler{GPU: &SimulateSource{Path: filepath.Join(dir, "sim.json")}, Host: HostReader{ProcRoot: "testdata/proc", CgroupRoot: "testdata/cgroup2"},
		Thresholds: DefaultThresholds, Presence: pr}
	var win Window
	full := s.SampleLevel(ctx, ReadFull)
	win.Add(full)
	os.Remove(pr.ProcRoot + "/net/tcp") // a fast sample must not read it
	fast := s.SampleLevel(ctx, ReadFast)
	if fast.SessionsRead {
		t.Fatal("a fast sample read the sessions")
	}
	win.Add(fast)
	var hb wire.HeartbeatRequest
	w := win.Cut()
	w.fill(&hb)
	if len(hb.Sessions) != 5 || hb.SessionsError != "" {
		t.Fatalf("sessions %+v, error %q", hb.Sessions, hb.SessionsError)
	}
	b, _ := json.Marshal(hb)
	if !strings.Contains(string(b), `"sessions":[{"kind":"jupyter","client":"local"`) {
		t.Fatalf("json: %s", b)
	}
}

// BenchmarkPresence_Scan measures the process scan on this machine's real
// /proc (run when a listening socket appears or goes, or every 10 min).
func BenchmarkPresence_Scan(b *testing.B) {
	socks := []tcpSock{}
	if raw, err := os.ReadFile("/proc/net/tcp"); err == nil {
		socks, _ = parseProcNetTCP(raw)
	}
	p := &Presence{}
	b.ReportAllocs()
	for b.Loop() {
		p.scan(socks)
	}
}
