package agent

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/clip"
)

// Presence tells whether a person is at the machine: an open SSH session,
// a browser connected to a Jupyter server, a client of a VS Code server. A
// person debugging by hand leaves the GPU and CPU idle, and an automatic
// stop would pull the machine from under them.
//
// It reads /proc only, so it works inside the containers that AutoDL,
// RunPod and Vast.ai rent out, where logind and utmp are absent or lie.
//
// SSH sessions are the logged-in per-session sshd processes ("sshd:
// root@pts/0", "sshd: alice@notty", "sshd-session: …" on OpenSSH 9.8 and
// later), found among the children of the sshd (or dropbear) listeners
// through /proc/PID/task/*/children (every thread's: a threaded server
// forks from any of them): a few small reads per heartbeat. A
// connection still authenticating ("sshd: [accepted]", "[preauth]") is not
// a person, so the password-guessing bots that reach any public port 22
// hold nothing.
//
// Jupyter and VS Code clients are ESTABLISHED connections to a port such a
// server listens on, from /proc/net/tcp and /proc/net/tcp6. Reading those
// walks the kernel's whole established-connection hash table, shared by
// every network namespace on the host: about 7 ms of kernel CPU per file
// with 262,144 buckets on the 2-core build VM (the table has up to 524,288
// on large hosts), more than the rest of the agent spends in a minute. So
// they are read only when something may have changed: a watched server's
// number of open descriptors changed (a connection opened or closed), the
// SSH sessions changed (their client addresses come from the table too),
// or presenceTCPEvery passed; and always for ReadFresh, the read before an
// automatic order is carried out.
//
// Which processes serve what, and on which ports, comes from a scan of
// /proc/PID/comm of every process and the command line and /proc/PID/fd
// socket links of candidates only, done when a watched server exits and
// every presenceRescan.
//
// Connections from loopback count: AutoDL, RunPod and self-made nginx
// set-ups put a proxy in front of Jupyter, and a proxied websocket is
// still an open browser tab. They are shown as client "local". A Jupyter
// server's own connections to its kernels are not counted (kernels are not
// servers we watch). Clients are counted once per kind and remote address
// (a browser opens several websockets); each SSH login is a session.
//
// Read and ReadFresh are safe for concurrent use.
type Presence struct {
	ProcRoot string           // default "/proc"
	DevRoot  string           // default "/dev": the SSH sessions' ttys
	Now      func() time.Time // default time.Now

	mu        sync.Mutex
	files     fileCache
	scannedAt time.Time       // when the process scan ran; zero: never
	listeners []int           // sshd and dropbear listener PIDs
	servers   []int           // Jupyter and VS Code server PIDs
	ports     map[uint16]kind // listening port -> what listens there (from the last table read)
	serverFDs []int           // descriptors open per server at the last table read
	tcpAt     time.Time       // when the tables were last read
	ssh       []sshSession    // at the last read
	clients   []wire.Session  // Jupyter and VS Code clients at the last table read
	firstSeen map[string]time.Time
	// titles caches what a listener's descendant was found to be: a
	// session's login ("" for a privileged monitor, whose title does not
	// change either). A connection still authenticating is not cached: it
	// renames itself once logged in.
	titles    map[int]string
	ttys      map[int]string // a session's tty ("pts/0"), from its title; absent: notty
	portPID   map[uint16]int // listening port -> the server's PID (from the last table read)
	clientPID []int          // the server PID of each of clients, 0 unknown
	jupyter   map[int]*jupyterSeen
	// HTTP asks a Jupyter server on this host for its kernels' activity;
	// nil: a client with a short timeout that never uses a proxy.
	HTTP       *http.Client
	tableReads int // for tests
}

// sshSession is one logged-in SSH session.
type sshSession struct {
	pid    int
	user   string
	tty    string // "pts/0"; "" for a notty session (scp, sftp, a command, VS Code)
	client string // "" until the tables were read
}

// kind is what a listening port serves.
type kind string

// Session kinds, as reported in wire.Session.Kind.
const (
	KindSSH     = wire.SessionSSH
	KindJupyter = wire.SessionJupyter
	KindVSCode  = wire.SessionVSCode
)

// presenceRescan is how often the process scan runs when no watched
// server went away: it finds servers started since (a scan costs about
// 5 ms of CPU with 115 processes on the 2-core build VM).
const presenceRescan = 10 * time.Minute

// fdGone is fdCounts' count of a server that exited.
const fdGone = -2

// presenceTCPEvery is how often the TCP tables are read when nothing
// suggests a connection opened or closed, while a Jupyter or VS Code
// server runs or no sshd is in sight (port 22 is then watched in the
// tables). With only sshd, its sessions are in the process tree.
const presenceTCPEvery = 30 * time.Minute

// presenceTCPMin is the least time between two table reads that a
// server's changing descriptor count asks for: a Jupyter tab in use opens
// and closes connections all the time. SSH logins and logouts, and
// ReadFresh, read at once.
const presenceTCPMin = 2 * time.Minute

// maxPresenceProcs bounds the processes looked at in one scan.
const maxPresenceProcs = 4096

// maxFDs bounds the descriptors read of one process.
const maxFDs = 4096

func (p *Presence) proc(s string) string {
	r := p.ProcRoot
	if r == "" {
		r = "/proc"
	}
	return r + "/" + s
}

func (p *Presence) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// tcpSock is one line of /proc/net/tcp{,6}.
type tcpSock struct {
	local, remote netip.AddrPort
	state         uint8
	inode         uint64
}

// TCP states of /proc/net/tcp (include/net/tcp_states.h).
const (
	tcpEstablished = 0x01
	tcpListen      = 0x0A
)

// parseProcNetTCP parses /proc/net/tcp or /proc/net/tcp6. Addresses are
// hex in the kernel's byte order: 32-bit words in host (little-endian on
// every platform the agent ships for) order.
func parseProcNetTCP(b []byte) ([]tcpSock, error) {
	var out []tcpSock
	first := true
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if first {
			first = false
			continue // the header
		}
		var f [10][]byte
		n := fieldsInto(f[:], line)
		if n == 0 {
			continue
		}
		if n < 10 {
			return nil, fmt.Errorf("agent: /proc/net/tcp: short line %q", clip.Bytes(string(line), 80, "…"))
		}
		l, err1 := parseHexAddrPort(f[1])
		r, err2 := parseHexAddrPort(f[2])
		st, err3 := strconv.ParseUint(string(f[3]), 16, 8)
		ino, ok := atou(f[9])
		if err := errors.Join(err1, err2, err3); err != nil || !ok {
			return nil, fmt.Errorf("agent: /proc/net/tcp: bad line %q", clip.Bytes(string(line), 80, "…"))
		}
		out = append(out, tcpSock{local: l, remote: r, state: uint8(st), inode: ino})
	}
	return out, nil
}

// parseHexAddrPort parses "0100007F:0016" (IPv4) or the 32-hex-digit IPv6
// form of /proc/net/tcp6.
func parseHexAddrPort(s []byte) (netip.AddrPort, error) {
	a, pt, ok := bytes.Cut(s, []byte(":"))
	if !ok {
		return netip.AddrPort{}, errors.New("no port")
	}
	port, err := strconv.ParseUint(string(pt), 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	raw := make([]byte, hex.DecodedLen(len(a)))
	if _, err := hex.Decode(raw, a); err != nil {
		return netip.AddrPort{}, err
	}
	if len(raw) != 4 && len(raw) != 16 {
		return netip.AddrPort{}, fmt.Errorf("address of %d bytes", len(raw))
	}
	// Each 32-bit word is in host order: reverse its bytes.
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

// classify says what kind of server a process is from its comm and
// cmdline (NUL-separated), or "" for none we watch. ipykernel processes
// are not servers a person connects to: the Jupyter server connects to
// them.
func classify(comm string, cmdline []byte) kind {
	switch comm {
	case "sshd", "dropbear":
		return KindSSH
	}
	cmd := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	switch {
	case strings.Contains(cmd, "ipykernel"):
		return ""
	case strings.Contains(cmd, ".vscode-server"), strings.Contains(cmd, "code-server"),
		strings.Contains(cmd, "openvscode-server"), strings.Contains(cmd, "vscode-server"):
		return KindVSCode
	case strings.Contains(cmd, "jupyter"):
		return KindJupyter
	}
	return ""
}

// sshSessionUser returns the login of a per-session sshd process from its
// cmdline: "sshd: root@pts/0", "sshd: alice@notty", "sshd-session: root@pts/1"
// (OpenSSH 9.8 and later). The privileged half ("sshd: root [priv]") and
// the listener ("sshd: /usr/sbin/sshd -D [listener] …") return "".
func sshSessionUser(cmdline []byte) string {
	c := string(bytes.TrimRight(cmdline, "\x00"))
	c, _, _ = strings.Cut(c, "\x00")
	for _, pre := range []string{"sshd: ", "sshd-session: "} {
		rest, ok := strings.CutPrefix(c, pre)
		if !ok {
			continue
		}
		user, tty, ok := strings.Cut(rest, "@")
		if !ok || user == "" || strings.ContainsAny(user, " /[") {
			return ""
		}
		if tty == "" || strings.Contains(tty, " ") {
			return ""
		}
		return user
	}
	return ""
}

// sshSessionTTY returns the terminal of a per-session sshd process from
// its title ("sshd: root@pts/0" is "pts/0"), "" for "notty" or anything
// that is not a plain pts or tty name.
func sshSessionTTY(cmdline []byte) string {
	c, _, _ := strings.Cut(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
	_, tty, ok := strings.Cut(c, "@")
	if !ok {
		return ""
	}
	n, ok := strings.CutPrefix(tty, "pts/")
	if !ok || !digits(n) || len(n) > 7 {
		return ""
	}
	return tty
}

// defaultPorts are assumed when a server's descriptors cannot be read (the
// agent runs as another user): sshd on 22, Jupyter on its --port or 8888,
// code-server on its --bind-addr port or 8080.
func defaultPort(k kind, cmdline []byte) uint16 {
	args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
	find := func(keys ...string) string {
		for i, a := range args {
			for _, key := range keys {
				if v, ok := strings.CutPrefix(a, key+"="); ok {
					return v
				}
				if a == key && i+1 < len(args) {
					return args[i+1]
				}
			}
		}
		return ""
	}
	port := func(s string, def uint16) uint16 {
		if i := strings.LastIndexByte(s, ':'); i >= 0 {
			s = s[i+1:]
		}
		if n, err := strconv.ParseUint(s, 10, 16); err == nil && n > 0 {
			return uint16(n)
		}
		return def
	}
	switch k {
	case KindSSH:
		return 22
	case KindJupyter:
		return port(find("--port", "--ServerApp.port", "--NotebookApp.port"), 8888)
	case KindVSCode:
		return port(find("--bind-addr", "--port"), 8080)
	}
	return 0
}

// Read returns the people connected, at most wire.MaxSessions, in a stable
// order, reading as little as it can (see Presence). An error means
// /proc/net/tcp could not be read when it had to be: presence is then
// unknown, which holds nothing.
func (p *Presence) Read() ([]wire.Session, error) {
	return p.read(false)
}

// ReadFresh is Read that reads everything now: the processes and the TCP
// tables. It is the read before an automatic order is carried out.
func (p *Presence) ReadFresh() ([]wire.Session, error) {
	return p.read(true)
}

func (p *Presence) read(fresh bool) ([]wire.Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	rescan := func() {
		p.scan()
		p.scannedAt = now
		fresh = true
	}
	if fresh || p.scannedAt.IsZero() || now.Sub(p.scannedAt) >= presenceRescan || now.Before(p.scannedAt) {
		rescan()
	}
	ssh, gone := p.sshSessions()
	fds := p.fdCounts()
	if !fresh && (gone || slices.Contains(fds, fdGone)) {
		// A watched listener or server exited: look again.
		rescan()
		ssh, _ = p.sshSessions()
		fds = p.fdCounts()
	}
	changed := len(ssh) != len(p.ssh)
	for i := 0; !changed && i < len(ssh); i++ {
		changed = ssh[i].pid != p.ssh[i].pid
	}
	since := now.Sub(p.tcpAt)
	periodic := len(p.servers) > 0 || len(p.listeners) == 0
	var err error
	if fresh || changed || p.tcpAt.IsZero() || since < 0 ||
		(!slices.Equal(fds, p.serverFDs) && since >= presenceTCPMin) || (periodic && since >= presenceTCPEvery) {
		err = p.readTables(ssh)
		p.serverFDs, p.tcpAt = fds, now
	} else {
		for i := range ssh {
			ssh[i].client = p.ssh[i].client
		}
	}
	p.ssh = ssh
	if err != nil {
		return nil, err
	}

	keep := map[string]time.Time{}
	stamp := func(key string) *time.Time {
		first, ok := p.firstSeen[key]
		if !ok {
			first = now
		}
		keep[key] = first
		t := first.Round(0).Truncate(time.Second)
		return &t
	}
	var out []wire.Session
	for _, s := range ssh {
		out = append(out, wire.Session{Kind: KindSSH, Client: s.client, User: clip.Bytes(s.user, 64, ""),
			Since: stamp("ssh " + strconv.Itoa(s.pid)), ActiveAt: p.ttyActive(s.tty)})
	}
	active := map[int]*time.Time{}
	for i, c := range p.clients {
		c.Since = stamp(c.Kind + " " + c.Client)
		if pid := p.clientPID[i]; c.Kind == KindJupyter && pid > 0 {
			a, ok := active[pid]
			if !ok {
				a = p.jupyterActive(pid, now)
				active[pid] = a
			}
			c.ActiveAt = a
		}
		out = append(out, c)
	}
	for pid := range p.jupyter {
		if _, ok := active[pid]; !ok {
			delete(p.jupyter, pid) // nobody connected to it now
		}
	}
	p.firstSeen = keep
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Since.Before(*out[j].Since)
	})
	if len(out) > wire.MaxSessions {
		out = out[:wire.MaxSessions]
	}
	return out, nil
}

// sshSessions returns the logged-in SSH sessions: the descendants of the
// listeners (three levels: listener, privileged monitor, session) whose
// command line names a user and a tty, sorted by PID. gone reports that a
// listener has exited.
func (p *Presence) sshSessions() (out []sshSession, gone bool) {
	titles, ttys := map[int]string{}, map[int]string{}
	var walk func(pid, depth int)
	walk = func(pid, depth int) {
		for _, c := range p.children(pid) {
			f := strconv.Itoa(c)
			if u, ok := p.titles[c]; ok {
				titles[c] = u
				if u != "" {
					ttys[c] = p.ttys[c]
					out = append(out, sshSession{pid: c, user: u, tty: p.ttys[c]})
				} else if depth < 2 {
					walk(c, depth+1)
				}
				continue
			}
			if cmd, err := os.ReadFile(p.proc(f + "/cmdline")); err == nil {
				if u := sshSessionUser(cmd); u != "" {
					titles[c] = u
					ttys[c] = sshSessionTTY(cmd)
					out = append(out, sshSession{pid: c, user: u, tty: ttys[c]})
					continue
				}
				if bytes.Contains(cmd, []byte("[priv]")) {
					titles[c] = ""
				}
			}
			// A dropbear connection that runs something (a shell, a
			// command) has logged in; its login is not in its title.
			if comm, err := os.ReadFile(p.proc(f + "/comm")); err == nil && depth == 0 &&
				string(bytes.TrimSpace(comm)) == "dropbear" {
				if len(p.children(c)) > 0 {
					out = append(out, sshSession{pid: c})
				}
				continue
			}
			if depth < 2 {
				walk(c, depth+1)
			}
		}
	}
	flat := false
	for _, l := range p.listeners {
		if _, err := os.Stat(p.proc(strconv.Itoa(l) + "/task/" + strconv.Itoa(l) + "/children")); err != nil {
			if _, err := os.Stat(p.proc(strconv.Itoa(l))); err == nil {
				flat = true // a kernel without CONFIG_PROC_CHILDREN
			} else {
				gone = true
			}
			continue
		}
		walk(l, 0)
	}
	if flat {
		out = append(out, p.sshSessionsFlat()...)
	}
	p.titles, p.ttys = titles, ttys
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out, gone
}

// ttyActive is when a terminal last had input: its device's access time,
// which the kernel updates as the terminal is read (what w(1) shows as
// IDLE). nil for no terminal or one that cannot be read.
func (p *Presence) ttyActive(tty string) *time.Time {
	if tty == "" {
		return nil
	}
	r := p.DevRoot
	if r == "" {
		r = "/dev"
	}
	fi, err := os.Stat(r + "/" + tty)
	if err != nil {
		return nil
	}
	t := statAtime(fi).UTC().Truncate(time.Second)
	return &t
}

// sshSessionsFlat finds the session processes by name among all
// processes: the fallback where /proc/PID/task/PID/children is missing.
func (p *Presence) sshSessionsFlat() []sshSession {
	var out []sshSession
	ents, _ := os.ReadDir(p.proc(""))
	for i, e := range ents {
		if i >= maxPresenceProcs {
			break
		}
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		comm, err := os.ReadFile(p.proc(e.Name() + "/comm"))
		if c := string(bytes.TrimSpace(comm)); err != nil || (c != "sshd" && c != "sshd-session") {
			continue
		}
		if cmd, err := os.ReadFile(p.proc(e.Name() + "/cmdline")); err == nil {
			if u := sshSessionUser(cmd); u != "" {
				out = append(out, sshSession{pid: pid, user: u, tty: sshSessionTTY(cmd)})
			}
		}
	}
	return out
}

// fdCounts returns how many descriptors each watched server holds open:
// a connection opened or closed changes it. -1: unreadable (another
// user's process); fdGone: the process exited.
func (p *Presence) fdCounts() []int {
	out := make([]int, len(p.servers))
	for i, pid := range p.servers {
		f, err := os.Open(p.proc(strconv.Itoa(pid) + "/fd"))
		if err != nil {
			out[i] = -1
			if _, err := os.Stat(p.proc(strconv.Itoa(pid))); err != nil {
				out[i] = fdGone
			}
			continue
		}
		names, _ := f.Readdirnames(maxFDs)
		f.Close()
		out[i] = len(names)
	}
	return out
}

// readTables reads /proc/net/tcp and tcp6: the ports the watched servers
// listen on, their clients, and the client address of each SSH session
// (through its socket's inode).
func (p *Presence) readTables(ssh []sshSession) error {
	p.tableReads++
	var socks []tcpSock
	var errs []error
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		err := p.files.read(p.proc(f), func(b []byte) error {
			s, err := parseProcNetTCP(b)
			socks = append(socks, s...)
			return err
		})
		if err != nil && (!errors.Is(err, os.ErrNotExist) || f == "net/tcp") {
			errs = append(errs, err)
		}
	}
	if len(socks) == 0 && len(errs) > 0 {
		p.clients = nil
		return fmt.Errorf("agent: presence: %w", errors.Join(errs...))
	}
	listenPort := map[uint64]uint16{}
	listening := map[uint16]bool{}
	byInode := map[uint64]tcpSock{}
	for _, s := range socks {
		switch s.state {
		case tcpListen:
			listenPort[s.inode] = s.local.Port()
			listening[s.local.Port()] = true
		case tcpEstablished:
			byInode[s.inode] = s
		}
	}
	p.ports = map[uint16]kind{}
	p.portPID = map[uint16]int{}
	for _, pid := range p.servers {
		cmd, _ := os.ReadFile(p.proc(strconv.Itoa(pid) + "/cmdline"))
		comm, _ := os.ReadFile(p.proc(strconv.Itoa(pid) + "/comm"))
		k := classify(string(bytes.TrimSpace(comm)), cmd)
		if k == "" {
			continue
		}
		found := false
		p.eachSocket(pid, func(ino uint64) {
			if port, ok := listenPort[ino]; ok {
				p.ports[port], p.portPID[port] = k, pid
				found = true
			}
		})
		if port := defaultPort(k, cmd); !found && port != 0 && listening[port] {
			if _, taken := p.ports[port]; !taken {
				p.ports[port], p.portPID[port] = k, pid
			}
		}
	}
	for i := range ssh {
		p.eachSocket(ssh[i].pid, func(ino uint64) {
			if s, ok := byInode[ino]; ok && ssh[i].client == "" {
				ssh[i].client = clientOf(s)
			}
		})
	}
	seen := map[string]bool{}
	p.clients, p.clientPID = nil, nil
	for _, s := range socks {
		if s.state != tcpEstablished {
			continue
		}
		k, ok := p.ports[s.local.Port()]
		if !ok {
			// An ssh connection with no sshd in sight (another PID
			// namespace, or unreadable): port 22 still means a person.
			if s.local.Port() == 22 && len(p.listeners) == 0 {
				k = KindSSH
			} else {
				continue
			}
		}
		c := wire.Session{Kind: string(k), Client: clientOf(s)}
		key := c.Kind + " " + c.Client
		if k == KindSSH {
			key += " " + strconv.FormatUint(s.inode, 10)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		p.clients = append(p.clients, c)
		p.clientPID = append(p.clientPID, p.portPID[s.local.Port()])
	}
	return nil
}

// clientOf is the address shown for a connection's peer: "local" through
// loopback (a proxy on the host).
func clientOf(s tcpSock) string {
	if s.remote.Addr().IsLoopback() {
		return "local"
	}
	return clip.Bytes(s.remote.Addr().String(), wire.MaxStrLen, "")
}

// Close closes the /proc files Read keeps open.
func (p *Presence) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return HostReader{files: &p.files}.Close()
}

// scan finds the sshd and dropbear listeners (not their per-session
// children) and the Jupyter and VS Code servers. It reads /proc/PID/comm
// of every process and the command line of candidates only.
func (p *Presence) scan() {
	p.listeners, p.servers = p.listeners[:0], p.servers[:0]
	ents, _ := os.ReadDir(p.proc(""))
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if n++; n > maxPresenceProcs {
			break
		}
		comm, err := os.ReadFile(p.proc(e.Name() + "/comm"))
		if err != nil {
			continue // gone meanwhile
		}
		c := string(bytes.TrimSpace(comm))
		// Only the servers we watch have their cmdline read; a Jupyter
		// or VS Code server runs under python or node, so those are read
		// too.
		if !candidateComm(c) {
			continue
		}
		cmd, err := os.ReadFile(p.proc(e.Name() + "/cmdline"))
		if err != nil {
			continue
		}
		switch classify(c, cmd) {
		case KindSSH:
			if sshSessionUser(cmd) == "" && !bytes.Contains(cmd, []byte("[priv]")) && !bytes.Contains(cmd, []byte("[accepted]")) &&
				!bytes.Contains(cmd, []byte("[preauth]")) && !bytes.Contains(cmd, []byte("[net]")) {
				p.listeners = append(p.listeners, pid)
			}
		case KindJupyter, KindVSCode:
			p.servers = append(p.servers, pid)
		}
	}
	// dropbear forks per connection without a new title: a listener's
	// child is a connection, not a listener.
	child := map[int]bool{}
	for _, l := range p.listeners {
		for _, c := range p.children(l) {
			child[c] = true
		}
	}
	p.listeners = slices.DeleteFunc(p.listeners, func(pid int) bool { return child[pid] })
}

// children returns the child PIDs of pid. /proc/PID/task/TID/children
// lists the children of that one thread, so every thread's list is read:
// a threaded server (a Go or Node one, a daemon with worker threads) forks
// its sessions from whichever thread accepted the connection.
func (p *Presence) children(pid int) []int {
	dir := p.proc(strconv.Itoa(pid) + "/task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, task := range tasks {
		b, err := os.ReadFile(dir + "/" + task.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil && c > 0 && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}

// candidateComm reports whether a process name may be a server we watch.
func candidateComm(c string) bool {
	switch {
	case c == "sshd", c == "dropbear", c == "node", c == "code-server",
		strings.HasPrefix(c, "python"), strings.HasPrefix(c, "jupyter"),
		strings.HasPrefix(c, "code-"), strings.Contains(c, "vscode"):
		return true
	}
	return false
}

// eachSocket calls fn with the inode of every socket pid holds open.
func (p *Presence) eachSocket(pid int, fn func(inode uint64)) {
	dir := p.proc(strconv.Itoa(pid) + "/fd")
	f, err := os.Open(dir)
	if err != nil {
		return // another user's process: the caller falls back
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxFDs)
	for _, n := range names {
		l, err := os.Readlink(dir + "/" + n)
		if err != nil {
			continue
		}
		s, ok := strings.CutPrefix(l, "socket:[")
		if !ok {
			continue
		}
		if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
			fn(ino)
		}
	}
}
