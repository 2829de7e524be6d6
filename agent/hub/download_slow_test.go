package hub_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
)

// smallBuffers makes accepted connections keep little in their send
// buffer, so that a client's reading pace reaches the server's writes at
// once instead of after megabytes of kernel buffering.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(64 << 10)
	}
	return c, err
}

// slowServer serves the download routes the way serve does (behind the
// access log, with the server's read and write timeouts), with timeouts
// of one second so that a test can go past them in a few seconds.
func slowServer(t *testing.T, content []byte) (url string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gpuledger-agent")
	if err := os.WriteFile(bin, content, 0o755); err != nil {
		t.Fatal(err)
	}
	dl, err := hub.NewDownloads(hub.DownloadConfig{Binary: bin, PublicURL: "http://ledger.example", StallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	dl.Register(mux)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:           hub.AccessLog(slog.New(slog.DiscardHandler), mux),
		ReadHeaderTimeout: time.Second,
		ReadTimeout:       time.Second,
		WriteTimeout:      time.Second,
	}
	go srv.Serve(smallBuffers{ln})
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// slowClient is an HTTP client whose connections have a small receive
// buffer, for the same reason as smallBuffers.
func slowClient() *http.Client {
	d := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetReadBuffer(64 << 10)
			}
			return c, err
		},
	}}
}

// readPaced reads body at about rate bytes per second, after a pause of
// stall once `stallAt` bytes have been read (0: no pause), until EOF or an
// error.
func readPaced(body io.Reader, rate int, stallAt int, stall time.Duration) ([]byte, error) {
	var out bytes.Buffer
	buf := make([]byte, 8<<10)
	start := time.Now()
	stalled := false
	for {
		n, err := body.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return out.Bytes(), err
		}
		if stallAt > 0 && !stalled && out.Len() >= stallAt {
			stalled = true
			time.Sleep(stall)
			start = time.Now().Add(-time.Duration(out.Len()) * time.Second / time.Duration(rate))
		}
		if ahead := time.Duration(out.Len())*time.Second/time.Duration(rate) - time.Since(start); ahead > 0 {
			time.Sleep(ahead)
		}
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func getAgent(t *testing.T, url string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+hub.PathAgentDownload, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := slowClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// TestDownloads_SlowClient: a client that keeps reading, at a pace that
// needs three times the server's one-second write timeout, gets the whole
// binary, and its checksum matches.
func TestDownloads_SlowClient(t *testing.T) {
	content := randomBytes(t, 1536<<10)
	url := slowServer(t, content)
	res := getAgent(t, url)
	start := time.Now()
	got, err := readPaced(res.Body, 512<<10, 0, 0)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("read %d of %d bytes in %s (err %v): a slow client was cut off", len(got), len(content), time.Since(start).Round(time.Millisecond), err)
	}
	if time.Since(start) < 2*time.Second {
		t.Fatalf("the download took %s: the client was not slow enough to test anything", time.Since(start))
	}
	if sum := res.Header.Get(hub.HeaderChecksum); sum != sha(got) {
		t.Fatalf("sha256 %s, header says %s", sha(got), sum)
	}
}

// TestDownloads_StalledClientAndResume: a client that stops reading is cut
// off once the stall timeout passes, and a Range request for the rest,
// conditional on the ETag, completes the file.
func TestDownloads_StalledClientAndResume(t *testing.T) {
	content := randomBytes(t, 1536<<10)
	url := slowServer(t, content)
	res := getAgent(t, url)
	etag := res.Header.Get("ETag")
	// 1.5 s of reading (past the write timeout), then 3 s of nothing.
	got, err := readPaced(res.Body, 512<<10, 768<<10, 3*time.Second)
	if err == nil || len(got) >= len(content) {
		t.Fatalf("a client that stalled for 3s got %d of %d bytes, err %v: want it cut off", len(got), len(content), err)
	}
	if !bytes.Equal(got, content[:len(got)]) {
		t.Fatal("the cut transfer's bytes differ from the file's")
	}

	rest := getAgent(t, url, "Range", "bytes="+strconv.Itoa(len(got))+"-", "If-Range", etag)
	if rest.StatusCode != http.StatusPartialContent {
		t.Fatalf("resume: status %d, want 206", rest.StatusCode)
	}
	if want := fmt.Sprintf("bytes %d-%d/%d", len(got), len(content)-1, len(content)); rest.Header.Get("Content-Range") != want {
		t.Errorf("Content-Range %q, want %q", rest.Header.Get("Content-Range"), want)
	}
	tail, err := io.ReadAll(rest.Body)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	whole := append(got, tail...)
	if sha(whole) != rest.Header.Get(hub.HeaderChecksum) || !bytes.Equal(whole, content) {
		t.Fatalf("resumed file: %d bytes, sha256 %s; want %d bytes, %s", len(whole), sha(whole), len(content), rest.Header.Get(hub.HeaderChecksum))
	}
}

// cutFirst aborts the first full download of the agent after limit bytes,
// as a flaky link does, and records the Range header of every download.
type cutFirst struct {
	next   http.Handler
	limit  int
	mu     sync.Mutex
	cut    bool
	ranges []string
}

func (c *cutFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != hub.PathAgentDownload {
		c.next.ServeHTTP(w, r)
		return
	}
	c.mu.Lock()
	c.ranges = append(c.ranges, r.Header.Get("Range"))
	cut := !c.cut
	c.cut = true
	c.mu.Unlock()
	if cut {
		w = &cutWriter{ResponseWriter: w, left: c.limit}
	}
	c.next.ServeHTTP(w, r)
}

type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(b []byte) (int, error) {
	if len(b) > c.left {
		c.ResponseWriter.Write(b[:c.left])
		http.NewResponseController(c.ResponseWriter).Flush()
		panic(http.ErrAbortHandler) // the connection drops mid-body
	}
	c.left -= len(b)
	return c.ResponseWriter.Write(b)
}

// TestInstallScript_ResumesCutDownload runs install.sh under sh against a
// server that drops the first download halfway: the script resumes it
// with a Range request, checks the SHA-256 of the whole file and runs the
// agent's install. The agent is a stand-in shell script.
func TestInstallScript_ResumesCutDownload(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("install.sh installs the Linux x86-64 agent only; this test runs on linux/amd64")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	agent := append([]byte("#!/bin/sh\nprintf '%s\\n' \"$*\" > \"$(dirname \"$0\")/ran\"\nexit 0\n"), randomBytes(t, 512<<10)...)
	for _, tool := range []string{"curl", "wget"} {
		t.Run(tool, func(t *testing.T) {
			toolPath, err := exec.LookPath(tool)
			if err != nil {
				t.Skipf("%s is not installed", tool)
			}
			d := newDownloadEnv(t, agent)
			mux := http.NewServeMux()
			d.dl.Register(mux)
			cut := &cutFirst{next: mux, limit: 200 << 10}
			srv := httptest.NewServer(cut)
			t.Cleanup(srv.Close)
			sum, err := d.dl.Checksum()
			if err != nil {
				t.Fatal(err)
			}
			script, err := hub.InstallScript(hub.InstallParams{Server: srv.URL, Token: d.token, Rental: "box1", SHA256: sum})
			if err != nil {
				t.Fatal(err)
			}
			// Only the chosen download tool (and what every host has) on PATH.
			bin := t.TempDir()
			for _, name := range []string{tool, "sha256sum", "uname", "mkdir", "chmod", "mv", "rm", "cut", "sleep", "wc", "dirname", "cat"} {
				p := toolPath
				if name != tool {
					if p, err = exec.LookPath(name); err != nil {
						t.Skipf("%s is not installed", name)
					}
				}
				if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
					t.Fatal(err)
				}
			}
			dir := filepath.Join(t.TempDir(), "agent")
			var stderr bytes.Buffer
			cmd := exec.Command(sh)
			cmd.Stdin, cmd.Stderr = strings.NewReader(script), &stderr
			cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir(), "GPULEDGER_AGENT_DIR=" + dir}
			if err := cmd.Run(); err != nil {
				t.Fatalf("install.sh: %v\n%s", err, stderr.String())
			}
			got, err := os.ReadFile(filepath.Join(dir, "gpuledger-agent"))
			if err != nil || !bytes.Equal(got, agent) {
				t.Fatalf("installed agent: %d bytes (err %v), want the %d bytes served\n%s", len(got), err, len(agent), stderr.String())
			}
			ran, err := os.ReadFile(filepath.Join(dir, "ran"))
			if err != nil || !strings.Contains(string(ran), "install --dir "+dir) {
				t.Fatalf("the agent's install did not run (%v): %q\n%s", err, ran, stderr.String())
			}
			cut.mu.Lock()
			defer cut.mu.Unlock()
			if len(cut.ranges) < 2 || cut.ranges[0] != "" || !strings.HasPrefix(cut.ranges[len(cut.ranges)-1], "bytes=") {
				t.Fatalf("download requests' Range headers %q: want a full request, then a resumed one", cut.ranges)
			}
		})
	}
}
