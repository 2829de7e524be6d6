package agent

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeJupyter is a Jupyter server's API as the presence reads it: the
// kernels (set by the test), no terminals, the server's start; a request
// without the token is refused as Jupyter refuses it.
type fakeJupyter struct {
	mu      sync.Mutex
	kernels string
	asked   int
}

func (f *fakeJupyter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "token s3cret" {
		http.Error(w, `{"message": "Forbidden"}`, http.StatusForbidden)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	switch r.URL.Path {
	case "/lab/api/kernels":
		fmt.Fprint(w, f.kernels)
	case "/lab/api/terminals":
		fmt.Fprint(w, `[]`)
	case "/lab/api/status":
		fmt.Fprint(w, `{"started": "2026-12-03T01:00:00.000000Z", "last_activity": "2026-12-03T09:59:59Z", "kernels": 0, "connections": 1}`)
	default:
		http.NotFound(w, r)
	}
}

// jupyterProc writes a /proc with one Jupyter server (PID 300) listening
// on port, one browser connected through a local proxy, and a kernel (PID
// 301) that has used ticks of CPU.
func jupyterProc(t *testing.T, port int, cmdline string, env string) string {
	t.Helper()
	root := t.TempDir()
	hexPort := fmt.Sprintf("%04X", port)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(root+"/net", 0o755))
	must(os.WriteFile(root+"/net/tcp", []byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"+
		"   0: 0100007F:"+hexPort+" 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1\n"+
		"   1: 0100007F:"+hexPort+" 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 2002 1\n"), 0o644))
	must(os.MkdirAll(root+"/300/fd", 0o755))
	must(os.MkdirAll(root+"/300/task/300", 0o755))
	must(os.WriteFile(root+"/300/comm", []byte("jupyter-lab\n"), 0o644))
	must(os.WriteFile(root+"/300/cmdline", []byte(cmdline), 0o644))
	must(os.WriteFile(root+"/300/environ", []byte(env), 0o644))
	must(os.Symlink("socket:[2001]", root+"/300/fd/3"))
	must(os.WriteFile(root+"/300/task/300/children", []byte("301 "), 0o644))
	kernelTicksFile(t, root, 5)
	return root
}

func kernelTicksFile(t *testing.T, root string, ticks int) {
	os.MkdirAll(root+"/301", 0o755)
	line := fmt.Sprintf("301 (python) S 300 301 301 0 -1 0 0 0 0 0 %d 0 0 0 20 0 1 0 100 1000 100\n", ticks)
	if err := os.WriteFile(root+"/301/stat", []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPresence_JupyterActivity: a browser connected to Jupyter is active
// when a cell last ran, as Jupyter's own API says (the token from the
// command line or the runtime file), now while a kernel is busy; without
// the API, when its kernels' CPU time last grew.
func TestPresence_JupyterActivity(t *testing.T) {
	fj := &fakeJupyter{kernels: `[{"id": "k1", "execution_state": "idle", "last_activity": "2026-12-03T06:00:00.5Z", "connections": 1}]`}
	srv := httptest.NewServer(fj)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	clock := now
	read := func(t *testing.T, p *Presence) time.Time {
		t.Helper()
		ss, err := p.ReadFresh()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			if s.Kind == KindJupyter {
				if s.ActiveAt == nil {
					t.Fatalf("jupyter session without active_at: %+v", s)
				}
				return *s.ActiveAt
			}
		}
		t.Fatalf("no jupyter session in %+v", ss)
		return time.Time{}
	}
	t.Run("TokenOnTheCommandLine", func(t *testing.T) {
		root := jupyterProc(t, port, fmt.Sprintf("/usr/bin/python3\x00/usr/local/bin/jupyter-lab\x00--port=%d\x00--ServerApp.token=s3cret\x00--ServerApp.base_url=/lab/\x00", port), "")
		p := &Presence{ProcRoot: root, Now: func() time.Time { return clock }}
		if got := read(t, p); !got.Equal(time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)) {
			t.Errorf("active at %s, want 06:00:00 (the kernel's last activity)", got)
		}
		fj.mu.Lock()
		fj.kernels = `[{"id": "k1", "execution_state": "idle", "last_activity": "2026-12-03T06:00:00Z"}, {"id": "k2", "execution_state": "busy", "last_activity": "2026-12-03T02:00:00Z"}]`
		fj.mu.Unlock()
		if got := read(t, p); !got.Equal(now) {
			t.Errorf("with a busy kernel: active at %s, want now", got)
		}
		fj.mu.Lock()
		fj.kernels = `[]`
		fj.mu.Unlock()
		if got := read(t, p); !got.Equal(time.Date(2026, 12, 3, 1, 0, 0, 0, time.UTC)) {
			t.Errorf("no kernels: active at %s, want the server's start 01:00", got)
		}
	})
	t.Run("RuntimeFile", func(t *testing.T) {
		fj.mu.Lock()
		fj.kernels = `[{"id": "k1", "execution_state": "idle", "last_activity": "2026-12-03T07:00:00Z"}]`
		fj.mu.Unlock()
		home := t.TempDir()
		os.MkdirAll(home+"/.local/share/jupyter/runtime", 0o700)
		os.WriteFile(home+"/.local/share/jupyter/runtime/jpserver-300.json",
			fmt.Appendf(nil, `{"base_url": "/lab/", "hostname": "localhost", "password": false, "pid": 300, "port": %d, "root_dir": "/root", "secure": false, "token": "s3cret", "url": "http://localhost:%d/lab/", "version": "2.14.2"}`, port, port), 0o600)
		root := jupyterProc(t, port, "/usr/bin/python3\x00/usr/local/bin/jupyter-lab\x00--allow-root\x00", "PATH=/usr/bin\x00HOME="+home+"\x00")
		p := &Presence{ProcRoot: root, Now: func() time.Time { return clock }}
		if got := read(t, p); !got.Equal(time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)) {
			t.Errorf("active at %s, want 07:00 (token and port from jpserver-300.json)", got)
		}
	})
	t.Run("WithoutTheAPIKernelCPU", func(t *testing.T) {
		// A wrong token: the API refuses, the kernels' CPU time decides.
		root := jupyterProc(t, port, fmt.Sprintf("jupyter-lab\x00--port=%d\x00--ServerApp.token=wrong\x00", port), "")
		clock = now
		p := &Presence{ProcRoot: root, Now: func() time.Time { return clock }}
		if got := read(t, p); !got.Equal(now) {
			t.Errorf("first look: %s, want now (nothing known before)", got)
		}
		clock = now.Add(time.Hour)
		kernelTicksFile(t, root, 5+10) // 0.1 s: an idle kernel's chatter
		if got := read(t, p); !got.Equal(now) {
			t.Errorf("after an idle hour: %s, want %s", got, now)
		}
		clock = now.Add(2 * time.Hour)
		kernelTicksFile(t, root, 5+10+300) // a cell ran 3 s
		if got := read(t, p); !got.Equal(clock) {
			t.Errorf("after a cell ran: %s, want %s", got, clock)
		}
	})
}

// TestPresence_JupyterLeavesNothingOpen: a look at Jupyter's API once per
// heartbeat leaves no connection open between looks (an agent that runs
// for weeks must not gather them).
func TestPresence_JupyterLeavesNothingOpen(t *testing.T) {
	fj := &fakeJupyter{kernels: `[]`}
	srv := httptest.NewUnstartedServer(fj)
	var mu sync.Mutex
	open := 0
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateNew:
			open++
		case http.StateClosed, http.StateHijacked:
			open--
		}
	}
	srv.Start()
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	root := jupyterProc(t, port, fmt.Sprintf("jupyter-lab\x00--port=%d\x00--ServerApp.token=s3cret\x00--ServerApp.base_url=/lab\x00", port), "")
	p := &Presence{ProcRoot: root}
	for range 3 {
		if _, err := p.ReadFresh(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := open
		mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections to Jupyter left open after the looks", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fj.mu.Lock()
	defer fj.mu.Unlock()
	if fj.asked == 0 {
		t.Fatal("the API was never asked")
	}
}
