//go:build ship

package shiptest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// repoRoot is the module root, one level up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
)

// build compiles the command pkg (e.g. ./cmd/gpuledger) with CGO_ENABLED=0
// once per test binary run, as the Dockerfile does for the server.
func build(t *testing.T, pkg string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := buildCache[pkg]; ok {
		return bin
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is not on PATH: these tests build the real binaries")
	}
	dir, err := os.MkdirTemp("", "shiptest-bin-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(gobin, "build", "-o", bin, pkg)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	buildCache[pkg] = bin
	return bin
}

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// server is a running gpuledger serve process.
type server struct {
	cmd  *exec.Cmd
	addr string
	log  string // path of its combined output
	done chan struct{}
	err  error
}

// startServer starts bin serve with env (on top of a minimal
// environment) and waits until /healthz answers.
func startServer(t *testing.T, bin, dir string, env []string) *server {
	t.Helper()
	addr := freeAddr(t)
	s := &server{addr: addr, log: filepath.Join(dir, "server.log"), done: make(chan struct{})}
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Dir = dir
	s.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GPULEDGER_LISTEN=" + addr, "GPULEDGER_LOG_FORMAT=json", "GPULEDGER_TZ=UTC"}, env...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start server: %v", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("the server exited at start: %v\n%s", s.err, readFile(s.log))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not answer /healthz in 30 s:\n%s", readFile(s.log))
		}
	}
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// metric returns the value of the Prometheus sample named exactly name
// (with labels, e.g. gpuledger_hub_heartbeats_total{result="ok"}).
func metric(addr, name string) (float64, error) {
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("no sample %s in /metrics", name)
}

var tokenRE = regexp.MustCompile(`token[= ]([A-Za-z0-9_-]{20,})`)

// waitFor polls cond every 50 ms until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}
