package hub_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
)

// downloadEnv is a hub with the download routes, as the server wires it.
type downloadEnv struct {
	*env
	bin  string
	dl   *hub.Downloads
	srv  *httptest.Server
	logs *bytes.Buffer
}

func newDownloadEnv(t *testing.T, binary []byte) *downloadEnv {
	t.Helper()
	e := newEnv(t, hub.Config{})
	bin := filepath.Join(t.TempDir(), "gpuledger-agent")
	if binary != nil {
		if err := os.WriteFile(bin, binary, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dl, err := hub.NewDownloads(hub.DownloadConfig{Binary: bin, PublicURL: "http://ledger.example:8477/", Tokens: e.hub.Tokens()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", e.hub.Handler())
	dl.Register(mux)
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := httptest.NewServer(hub.AccessLog(log, mux))
	t.Cleanup(srv.Close)
	return &downloadEnv{env: e, bin: bin, dl: dl, srv: srv, logs: logs}
}

func (d *downloadEnv) get(t *testing.T, path string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, d.srv.URL+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
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

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestDownloads_Binary(t *testing.T) {
	content := bytes.Repeat([]byte("\x7fELF agent "), 10000)
	d := newDownloadEnv(t, content)

	t.Run("OK", func(t *testing.T) {
		res, body := d.get(t, hub.PathAgentDownload)
		if res.StatusCode != http.StatusOK || !bytes.Equal(body, content) {
			t.Fatalf("status %d, %d bytes; want 200 and the file's %d bytes", res.StatusCode, len(body), len(content))
		}
		if got := res.Header.Get(hub.HeaderChecksum); got != sha(content) {
			t.Errorf("%s = %q, want %q", hub.HeaderChecksum, got, sha(content))
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("Content-Type = %q", ct)
		}
	})
	t.Run("Checksum", func(t *testing.T) {
		res, body := d.get(t, hub.PathAgentChecksum)
		want := sha(content) + "  gpuledger-agent\n"
		if res.StatusCode != http.StatusOK || string(body) != want {
			t.Fatalf("status %d body %q, want 200 %q", res.StatusCode, body, want)
		}
	})
	t.Run("Range", func(t *testing.T) {
		res, body := d.get(t, hub.PathAgentDownload, "Range", "bytes=10-19")
		if res.StatusCode != http.StatusPartialContent || !bytes.Equal(body, content[10:20]) {
			t.Fatalf("status %d body %q", res.StatusCode, body)
		}
	})
	t.Run("Replaced", func(t *testing.T) {
		// A new build dropped in place is hashed again (size or mtime changed).
		newer := append(bytes.Clone(content), "v2"...)
		if err := os.WriteFile(d.bin, newer, 0o755); err != nil {
			t.Fatal(err)
		}
		future := time.Now().Add(time.Minute)
		os.Chtimes(d.bin, future, future)
		res, body := d.get(t, hub.PathAgentDownload)
		if res.Header.Get(hub.HeaderChecksum) != sha(newer) || !bytes.Equal(body, newer) {
			t.Fatalf("checksum %s after replacing the binary, want %s", res.Header.Get(hub.HeaderChecksum), sha(newer))
		}
	})
}

func TestDownloads_Unavailable(t *testing.T) {
	for _, c := range []struct {
		name   string
		binary string
		want   string
	}{
		{"Missing", "/nonexistent/gpuledger-agent", "does not exist"},
		{"NotConfigured", "", "no path is configured"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDownloadEnv(t, nil)
			dl, err := hub.NewDownloads(hub.DownloadConfig{Binary: c.binary, PublicURL: "https://x.example", Tokens: d.hub.Tokens()})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			dl.Register(mux)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			for _, p := range []string{hub.PathAgentDownload, hub.PathAgentChecksum, hub.PathAgentInstall + "?token=" + d.token} {
				res, err := http.Get(srv.URL + p)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "agent binary is not available") || !strings.Contains(string(body), c.want) {
					t.Errorf("GET %s: %d %q; want 503 saying the binary is not available (%s)", p, res.StatusCode, body, c.want)
				}
			}
		})
	}
}

func TestDownloads_InstallScript(t *testing.T) {
	content := []byte("agent binary")
	d := newDownloadEnv(t, content)
	sh, shErr := exec.LookPath("sh")

	t.Run("OK", func(t *testing.T) {
		res, body := d.get(t, hub.PathAgentInstall+"?token="+d.token)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
		s := string(body)
		for _, want := range []string{
			"#!/bin/sh", "server='http://ledger.example:8477'", "token='" + d.token + "'",
			"sha256='" + sha(content) + "'", "rental box1", `"$bin" install`,
		} {
			if !strings.Contains(s, want) {
				t.Errorf("script lacks %q", want)
			}
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control = %q, want no-store (the script holds the token)", cc)
		}
		if shErr == nil {
			cmd := exec.Command(sh, "-n")
			cmd.Stdin = bytes.NewReader(body)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("sh -n: %v\n%s", err, out)
			}
		}
	})
	t.Run("BearerHeader", func(t *testing.T) {
		res, body := d.get(t, hub.PathAgentInstall, "Authorization", "Bearer "+d.token)
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), d.token) {
			t.Fatalf("status %d", res.StatusCode)
		}
	})
	other := strings.Repeat("A", 43)
	for _, c := range []struct {
		name, query string
		status      int
		want        string
	}{
		{"ErrNoToken", "", http.StatusBadRequest, "no token"},
		{"ErrMalformed", "?token=abc'%3Brm%20-rf%20%2F%3B'0123456789", http.StatusBadRequest, "malformed token"},
		{"ErrUnknown", "?token=" + other, http.StatusForbidden, "unknown agent token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, body := d.get(t, hub.PathAgentInstall+c.query)
			if res.StatusCode != c.status || !strings.Contains(string(body), c.want) {
				t.Fatalf("status %d body %q; want %d with %q", res.StatusCode, body, c.status, c.want)
			}
			if strings.Contains(string(body), "rm -rf") {
				t.Errorf("the bad token was echoed into the script: %s", body)
			}
			if shErr != nil {
				return
			}
			// The error is itself a script that fails loudly under sh.
			var stderr bytes.Buffer
			cmd := exec.Command(sh)
			cmd.Stdin, cmd.Stderr = bytes.NewReader(body), &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("sh: %v, stderr %q; want exit 1 with %q", err, stderr.String(), c.want)
			}
		})
	}
	t.Run("ErrRevoked", func(t *testing.T) {
		if err := d.hub.Tokens().Revoke(context.Background(), d.rid); err != nil {
			t.Fatal(err)
		}
		res, body := d.get(t, hub.PathAgentInstall+"?token="+d.token)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "revoked") {
			t.Fatalf("status %d body %q; want 403 revoked", res.StatusCode, body)
		}
	})
	t.Run("TokenNotLogged", func(t *testing.T) {
		if strings.Contains(d.logs.String(), d.token) {
			t.Fatalf("the access log holds the token:\n%s", d.logs.String())
		}
		if !strings.Contains(d.logs.String(), `"uri":"/agent/install.sh?token=REDACTED"`) {
			t.Fatalf("the access log lacks the redacted install request:\n%s", d.logs.String())
		}
	})
}

func TestNewDownloads_ErrPublicURL(t *testing.T) {
	for _, u := range []string{"", "ledger.example:8477", "ftp://x", "http://"} {
		if _, err := hub.NewDownloads(hub.DownloadConfig{PublicURL: u}); err == nil || !strings.Contains(err.Error(), "https://ledger.example.com") {
			t.Errorf("NewDownloads(%q) = %v, want an error with an example", u, err)
		}
	}
}

func TestInstallScript_Err(t *testing.T) {
	ok := hub.InstallParams{Server: "https://x.example", Token: strings.Repeat("a", 43), SHA256: strings.Repeat("0", 64)}
	if _, err := hub.InstallScript(ok); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*hub.InstallParams){
		"Server": func(p *hub.InstallParams) { p.Server = "x.example" },
		"Token":  func(p *hub.InstallParams) { p.Token = "a'b" + strings.Repeat("a", 40) },
		"SHA256": func(p *hub.InstallParams) { p.SHA256 = "XYZ" },
	} {
		p := ok
		mut(&p)
		if _, err := hub.InstallScript(p); err == nil {
			t.Errorf("%s: no error for %+v", name, p)
		}
	}
	// A rental name with shell metacharacters goes into a comment, defused.
	p := ok
	p.Rental = "box\n rm -rf /"
	s, err := hub.InstallScript(p)
	if err != nil || strings.Contains(s, "\n rm -rf") {
		t.Fatalf("rental name not defused: %v\n%s", err, s)
	}
}

// TestInstallScript_Shellcheck holds the install script to POSIX sh, as
// dash and busybox run it.
func TestInstallScript_Shellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed (apt-get install shellcheck; scripts/ship-lint-dockerfile.sh installs it)")
	}
	// A rental's token, and an enrolment token (another comment).
	for _, tok := range []string{strings.Repeat("a", 43), "enrol-" + strings.Repeat("a", 43)} {
		s, err := hub.InstallScript(hub.InstallParams{Server: "https://x.example", Token: tok, Rental: "box1", SHA256: strings.Repeat("0", 64)})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sc, "--shell=sh", "--severity=style", "-")
		cmd.Stdin = strings.NewReader(s)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("shellcheck: %v\n%s", err, out)
		}
	}
}

// TestRedactQuery: the access log never holds a secret from a query: an
// agent's token, an API key, or the dashboard's one-time sign-in code
// (/app/login?code=...); other parameters are kept.
func TestRedactQuery(t *testing.T) {
	for in, want := range map[string]string{
		"/agent/install.sh?token=abc":   "/agent/install.sh?token=REDACTED",
		"/app/login?code=s3cr3tcode":    "/app/login?code=REDACTED",
		"/app/login?CODE=s3cr3tcode":    "/app/login?CODE=REDACTED",
		"/app/api/month?month=2026-12":  "/app/api/month?month=2026-12",
		"/x?key=k&secret=s&page=2":      "/x?key=REDACTED&page=2&secret=REDACTED",
		"/healthz":                      "/healthz",
		"/app/login?code=%zz":           "/app/login?[unparsable query]",
		"/v1/beat?access_token=tok1234": "/v1/beat?access_token=REDACTED",
	} {
		u, err := url.ParseRequestURI(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := hub.RedactQuery(u); got != want {
			t.Errorf("RedactQuery(%s) = %s, want %s", in, got, want)
		}
	}
}
