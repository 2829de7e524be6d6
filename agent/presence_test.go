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
func fakeProc(t testing.TB) string {
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
		if _, err := os.Stat(d + "/children"); err == nil {
			cp(d+"/children", root+"/"+p.Name()+"/task/"+p.Name()+"/children")
		}
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
	if len(socks) != 15 {
		t.Fatalf("got %d sockets, want 15", len(socks))
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
		{KindSSH, "1.2.3.4", "root"},     // privsep: the session is the listener's grandchild
		{KindSSH, "5.6.7.8", "alice"},    // sshd-session (OpenSSH 9.8+)
		{KindVSCode, "2001:db8::1", ""},
		// Not 9.9.9.9: connected to sshd but not logged in ("sshd: [accepted]").
	}
	if len(rows) != len(want) {
		t.Fatalf("got %v\nwant %v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Fatalf("got %v\nwant %v", rows, want)
		}
	}

	// A later read keeps the first-seen times and, with nothing changed,
	// reads neither the process list nor the TCP tables.
	later := now.Add(time.Minute)
	p.Now = func() time.Time { return later }
	os.Rename(root+"/net/tcp", root+"/net/tcp.away") // would fail the read
	got, err = p.Read()
	if err != nil || len(got) != len(want) || p.tableReads != 1 {
		t.Fatalf("second read: %v %v, %d table reads", got, err, p.tableReads)
	}
	for _, s := range got {
		if !s.Since.Equal(now) {
			t.Errorf("%+v: since moved to %v", s, s.Since)
		}
	}
	os.Rename(root+"/net/tcp.away", root+"/net/tcp")

	// A connection to the Jupyter server (one more descriptor) makes a
	// read look at the tables again, once presenceTCPMin has passed.
	os.Symlink("socket:[3001]", root+"/300/fd/12")
	if _, err := p.Read(); err != nil || p.tableReads != 1 {
		t.Fatalf("a new descriptor within %s: %v, %d table reads, want 1", presenceTCPMin, err, p.tableReads)
	}
	later = now.Add(presenceTCPMin)
	if _, err := p.Read(); err != nil || p.tableReads != 2 {
		t.Fatalf("after a new descriptor: %v, %d table reads, want 2", err, p.tableReads)
	}
	// So does an SSH logout (alice's session process is gone).
	os.WriteFile(root+"/100/task/100/children", []byte("101 104 "), 0o644)
	got, err = p.Read()
	if err != nil || p.tableReads != 3 || len(got) != len(want)-1 {
		t.Fatalf("after a logout: %+v %v, %d table reads", got, err, p.tableReads)
	}
	// And the read before an order always does.
	if _, err := p.ReadFresh(); err != nil || p.tableReads != 4 {
		t.Fatalf("ReadFresh: %v, %d table reads, want 4", err, p.tableReads)
	}
	// Later on, the tables are read even with nothing changed.
	p.Now = func() time.Time { return later.Add(presenceTCPEvery) }
	if _, err := p.Read(); err != nil || p.tableReads != 5 {
		t.Fatalf("after %s: %v, %d table reads, want 5", presenceTCPEvery, err, p.tableReads)
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

// BenchmarkPresence_Read measures a heartbeat's read when nothing
// changed (the common case): the sshd listener's children and the
// servers' descriptor counts, no TCP tables.
func BenchmarkPresence_Read(b *testing.B) {
	p := &Presence{ProcRoot: fakeProc(b)}
	p.Read()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Read(); err != nil {
			b.Fatal(err)
		}
	}
	if p.tableReads != 1 {
		b.Fatalf("%d table reads, want 1", p.tableReads)
	}
}

// BenchmarkPresence_ReadFresh measures the read before an order: the
// process scan and the TCP tables of the fixture.
func BenchmarkPresence_ReadFresh(b *testing.B) {
	p := &Presence{ProcRoot: fakeProc(b)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.ReadFresh(); err != nil {
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
// /proc (run when a watched server exits, and every presenceRescan).
func BenchmarkPresence_Scan(b *testing.B) {
	p := &Presence{}
	b.ReportAllocs()
	for b.Loop() {
		p.scan()
	}
}

func TestPresence_Dropbear(t *testing.T) {
	// dropbear forks per connection and keeps its title: a child that
	// runs something has logged in, one that does not is authenticating.
	root := t.TempDir()
	w := func(path, s string) {
		os.MkdirAll(filepath.Dir(root+"/"+path), 0o755)
		os.WriteFile(root+"/"+path, []byte(s), 0o644)
	}
	w("net/tcp", "hdr\n")
	for _, pid := range []string{"10", "11", "12"} {
		w(pid+"/comm", "dropbear\n")
		w(pid+"/cmdline", "/usr/sbin/dropbear\x00-F\x00-p\x0022\x00")
	}
	w("10/task/10/children", "11 12")
	w("11/task/11/children", "13")
	w("12/task/12/children", "")
	w("13/comm", "bash\n")
	w("13/cmdline", "-bash\x00")
	got, err := (&Presence{ProcRoot: root}).Read()
	if err != nil || len(got) != 1 || got[0].Kind != KindSSH {
		t.Fatalf("got %+v, %v; want one ssh session", got, err)
	}
}

func TestPresence_NoChildrenFiles(t *testing.T) {
	// A kernel without CONFIG_PROC_CHILDREN: sessions are found by name.
	root := fakeProc(t)
	for _, pid := range []string{"100", "101"} {
		os.RemoveAll(root + "/" + pid + "/task")
	}
	got, err := (&Presence{ProcRoot: root}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, s := range got {
		if s.Kind == KindSSH {
			users = append(users, s.User+" "+s.Client)
		}
	}
	if strings.Join(users, ",") != "root 1.2.3.4,alice 5.6.7.8" {
		t.Fatalf("ssh sessions %v", users)
	}
}

func TestPresence_ChildOfAnotherThread(t *testing.T) {
	// /proc/PID/task/TID/children lists the children of that one thread:
	// a server that forks from a thread other than its first (a Go or
	// Node server, a threaded daemon) has its sessions under that thread.
	root := t.TempDir()
	w := func(path, s string) {
		os.MkdirAll(filepath.Dir(root+"/"+path), 0o755)
		os.WriteFile(root+"/"+path, []byte(s), 0o644)
	}
	w("net/tcp", "hdr\n")
	for _, pid := range []string{"10", "11"} {
		w(pid+"/comm", "dropbear\n")
		w(pid+"/cmdline", "/usr/sbin/dropbear\x00-F\x00-p\x0022\x00")
	}
	w("10/task/10/children", "")
	w("10/task/17/children", "11")
	w("11/task/11/children", "13")
	w("13/comm", "bash\n")
	w("13/cmdline", "-bash\x00")
	got, err := (&Presence{ProcRoot: root}).Read()
	if err != nil || len(got) != 1 || got[0].Kind != KindSSH {
		t.Fatalf("got %+v, %v; want one ssh session (a child of the listener's second thread)", got, err)
	}
}

// TestExecutor_PeopleIdleBound: an automatic order bounded by
// idle_people_s is refused while the SSH session's terminal had input
// within the bound, and carried out once it has had none for longer: an
// idle shell for hours is not a person at work. A notty session (activity
// unknown) still holds.
func TestExecutor_PeopleIdleBound(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	order := func(hub *hubtest.Hub, bound time.Duration) wire.Order {
		o := hub.NewOrder(wire.ActionStop, time.Minute)
		o.WaitFor, o.IdlePeopleSeconds = []string{wire.SessionSSH}, int64(bound/time.Second)
		o.Signature = wire.SignOrder(hub.Token, o)
		return o
	}
	tty := func(t *testing.T, lastInput time.Time) string {
		dev := t.TempDir()
		os.MkdirAll(dev+"/pts", 0o755)
		os.WriteFile(dev+"/pts/0", nil, 0o600)
		if err := os.Chtimes(dev+"/pts/0", lastInput, lastInput); err != nil {
			t.Fatal(err)
		}
		return dev
	}
	t.Run("TypedAnHourAgo", func(t *testing.T) {
		e, rec, hub, _ := newExecutor(t, "idle")
		e.Sampler.Presence = &Presence{ProcRoot: fakeProc(t), DevRoot: tty(t, now.Add(-time.Hour))}
		if out := e.HandleOrder(ctx, order(hub, 3*time.Hour)); out != wire.OutcomeRefusedPeople {
			t.Fatalf("outcome %s (%s), want refused: the shell had input an hour ago, the bound is 3h", out, rec.outcomes())
		}
	})
	t.Run("NothingForFourHours", func(t *testing.T) {
		// The fixture also has a notty session (alice): only the root
		// shell is bounded, so the order must wait for ssh,pts only.
		e, rec, hub, _ := newExecutor(t, "idle")
		e.Sampler.Presence = &Presence{ProcRoot: fakeProc(t), DevRoot: tty(t, now.Add(-4*time.Hour))}
		out := e.HandleOrder(ctx, order(hub, 3*time.Hour))
		if out != wire.OutcomeRefusedPeople || strings.Contains(rec.got[0].Message, "root") {
			t.Fatalf("outcome %s (%v): want refused for alice's notty session only, not root's idle shell", out, rec.got)
		}
	})
	t.Run("NoBoundHoldsAsBefore", func(t *testing.T) {
		e, rec, hub, _ := newExecutor(t, "idle")
		e.Sampler.Presence = &Presence{ProcRoot: fakeProc(t), DevRoot: tty(t, now.Add(-48*time.Hour))}
		if out := e.HandleOrder(ctx, order(hub, 0)); out != wire.OutcomeRefusedPeople {
			t.Fatalf("outcome %s (%s)", out, rec.outcomes())
		}
	})
	t.Run("ForgottenShellProceeds", func(t *testing.T) {
		root := fakeProc(t)
		os.WriteFile(root+"/103/cmdline", []byte("sshd-session: alice@pts/1\x00"), 0o644) // alice's notty session becomes a shell
		dev := tty(t, now.Add(-4*time.Hour))
		os.WriteFile(dev+"/pts/1", nil, 0o600)
		os.Chtimes(dev+"/pts/1", now.Add(-5*time.Hour), now.Add(-5*time.Hour))
		e, rec, hub, dir := newExecutor(t, "idle")
		e.Sampler.Presence = &Presence{ProcRoot: root, DevRoot: dev}
		if out := e.HandleOrder(ctx, order(hub, 3*time.Hour)); out != wire.OutcomeDone {
			t.Fatalf("outcome %s (%v), want done: both shells idle for over 3h", out, rec.got)
		}
		if _, err := os.Stat(filepath.Join(dir, "marker")); err != nil {
			t.Fatal("not released")
		}
	})
}
