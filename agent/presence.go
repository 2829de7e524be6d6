package agent

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
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
// At every Read it parses /proc/net/tcp and /proc/net/tcp6 (a few lines in
// a container's own network namespace): a person is an ESTABLISHED
// connection to a port on which sshd (or dropbear), a Jupyter server or a
// VS Code server listens. Which process owns which listening port is found
// by walking the file descriptors of those few processes only, and only
// when the set of listening sockets changes (or every presenceRescan), so
// the agent's cost stays one read of two small files per heartbeat (kept
// open and re-read in place, like the host readers). The
// SSH login name comes from the per-session sshd process ("sshd:
// root@pts/0", "sshd-session: …"), looked up only when a new SSH
// connection appears.
//
// Connections from loopback count: AutoDL, RunPod and self-made nginx
// set-ups put a proxy in front of Jupyter, and a proxied websocket is
// still an open browser tab. They are shown as client "local". A Jupyter
// server's own connections to its kernels are not counted (kernels are not
// servers we watch). Clients are counted once per kind and remote address
// (a browser opens several websockets; two ssh windows are two sessions).
//
// Read is safe for concurrent use.
type Presence struct {
	ProcRoot string           // default "/proc"
	Now      func() time.Time // default time.Now

	mu        sync.Mutex
	files     fileCache
	listen    []uint64        // the listening socket inodes at the last scan, sorted
	scannedAt time.Time       // when the process scan ran
	ports     map[uint16]kind // listening port -> what listens there
	sshUsers  map[uint64]string
	sshConns  []uint64             // the ssh connection inodes whose users were looked up, sorted
	firstSeen map[string]time.Time // connection key -> first seen (wall clock)
}

// kind is what a listening port serves.
type kind string

// Session kinds, as reported in wire.Session.Kind.
const (
	KindSSH     = wire.SessionSSH
	KindJupyter = wire.SessionJupyter
	KindVSCode  = wire.SessionVSCode
)

// presenceRescan is how often the process scan runs even when no
// listening socket appeared or went: a safety net (a scan costs about
// 5 ms of CPU with 115 processes on the 2-core build VM), not a need.
const presenceRescan = time.Hour

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
		rest := line
		n := 0
		for n < len(f) {
			if f[n], rest = nextField(rest); f[n] == nil {
				break
			}
			n++
		}
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

// Read returns the people connected now, at most wire.MaxSessions, in a
// stable order. An error means /proc/net/tcp could not be read: presence
// is then unknown, which holds nothing.
func (p *Presence) Read() ([]wire.Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
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
		return nil, fmt.Errorf("agent: presence: %w", errors.Join(errs...))
	}
	now := p.now()

	var listen []uint64
	for _, s := range socks {
		if s.state == tcpListen {
			listen = append(listen, s.inode)
		}
	}
	slices.Sort(listen)
	if !slices.Equal(listen, p.listen) || p.ports == nil || now.Sub(p.scannedAt) >= presenceRescan || now.Before(p.scannedAt) {
		p.scan(socks)
		p.listen, p.scannedAt = listen, now
	}

	type conn struct {
		kind  kind
		sock  tcpSock
		local bool
	}
	var conns []conn
	var sshInodes []uint64
	for _, s := range socks {
		if s.state != tcpEstablished {
			continue
		}
		k, ok := p.ports[s.local.Port()]
		if !ok {
			continue
		}
		// A connection we opened from a watched port to elsewhere is not
		// a client: the listening side is local, the peer's port is not
		// ours. (Ephemeral ports never equal a listening one.)
		conns = append(conns, conn{kind: k, sock: s, local: s.remote.Addr().IsLoopback()})
		if k == KindSSH {
			sshInodes = append(sshInodes, s.inode)
		}
	}
	slices.Sort(sshInodes)
	if !slices.Equal(sshInodes, p.sshConns) {
		p.sshConns = sshInodes
		if len(sshInodes) > 0 {
			p.lookupSSHUsers()
		} else {
			p.sshUsers = nil
		}
	}

	seen := map[string]bool{}
	keep := map[string]time.Time{}
	var out []wire.Session
	for _, c := range conns {
		client := c.sock.remote.Addr().String()
		if c.local {
			client = "local"
		}
		dedup := string(c.kind) + " " + client
		if c.kind == KindSSH {
			dedup += " " + strconv.FormatUint(c.sock.inode, 10)
		}
		if seen[dedup] {
			continue
		}
		seen[dedup] = true
		first, ok := p.firstSeen[dedup]
		if !ok {
			first = now
		}
		keep[dedup] = first
		s := wire.Session{Kind: string(c.kind), Client: clip.Bytes(client, wire.MaxStrLen, "")}
		if c.kind == KindSSH {
			s.User = clip.Bytes(p.sshUsers[c.sock.inode], 64, "")
		}
		t := first.Round(0).Truncate(time.Second)
		s.Since = &t
		out = append(out, s)
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

// Close closes the /proc files Read keeps open.
func (p *Presence) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return HostReader{files: &p.files}.Close()
}

// scan finds the processes that serve ssh, Jupyter or VS Code and the
// ports they listen on. It reads /proc/PID/comm of every process and
// /proc/PID/cmdline and the descriptors of candidates only.
func (p *Presence) scan(socks []tcpSock) {
	listenPort := map[uint64]uint16{}
	listening := map[uint16]bool{}
	for _, s := range socks {
		if s.state == tcpListen {
			listenPort[s.inode] = s.local.Port()
			listening[s.local.Port()] = true
		}
	}
	p.ports = map[uint16]kind{}
	ents, _ := os.ReadDir(p.proc("")) // none readable: port 22 below
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
		k := classify(c, cmd)
		if k == "" {
			continue
		}
		found := false
		p.eachSocket(pid, func(ino uint64) {
			if port, ok := listenPort[ino]; ok {
				p.ports[port] = k
				found = true
			}
		})
		if !found {
			if port := defaultPort(k, cmd); port != 0 && listening[port] {
				if _, taken := p.ports[port]; !taken {
					p.ports[port] = k
				}
			}
		}
	}
	if _, ok := p.ports[22]; !ok && listening[22] {
		p.ports[22] = KindSSH // sshd in another PID namespace, or unreadable
	}
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

// lookupSSHUsers maps ssh connection inodes to login names through the
// per-session sshd processes. New session processes appear with each
// login, so the process list is read again (comm only) for sshd names.
func (p *Presence) lookupSSHUsers() {
	p.sshUsers = map[uint64]string{}
	ents, err := os.ReadDir(p.proc(""))
	if err != nil {
		return
	}
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
			continue
		}
		if c := string(bytes.TrimSpace(comm)); c != "sshd" && c != "sshd-session" {
			continue
		}
		cmd, err := os.ReadFile(p.proc(e.Name() + "/cmdline"))
		if err != nil {
			continue
		}
		user := sshSessionUser(cmd)
		if user == "" {
			continue
		}
		p.eachSocket(pid, func(ino uint64) {
			if _, ok := p.sshUsers[ino]; !ok {
				p.sshUsers[ino] = user
			}
		})
	}
}
