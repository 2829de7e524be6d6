package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/agent/hub"
)

func TestAgentHandler(t *testing.T) {
	ctx := context.Background()
	db := openLedger(t, filepath.Join(t.TempDir(), "gpuledger.db"))
	h, err := hub.New(hub.Config{Store: db, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := h.Tokens().Issue(ctx, 1, "box1")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "gpuledger-agent")
	os.WriteFile(bin, []byte("agent"), 0o755)

	get := func(t *testing.T, handler http.Handler, path string) (int, string) {
		srv := httptest.NewServer(handler)
		defer srv.Close()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	t.Run("OK", func(t *testing.T) {
		var logs bytes.Buffer
		handler, _ := agentHandler(h, nil, bin, "https://ledger.example", slog.New(slog.NewJSONHandler(&logs, nil)))
		for _, c := range []struct{ path, want string }{
			{"/healthz", "ok"},
			{"/agent/download", "agent"},
			{"/agent/install.sh?token=" + tok, "server='https://ledger.example'"},
		} {
			if code, body := get(t, handler, c.path); code != 200 || !strings.Contains(body, c.want) {
				t.Errorf("GET %s: %d %q", c.path, code, body)
			}
		}
		if strings.Contains(logs.String(), tok) {
			t.Errorf("a log holds the token: %s", logs.String())
		}
		if !strings.Contains(logs.String(), "serving the agent binary") {
			t.Errorf("no start-up line about the binary: %s", logs.String())
		}
	})
	t.Run("ErrMissingBinary", func(t *testing.T) {
		var logs bytes.Buffer
		handler, _ := agentHandler(h, nil, "/nonexistent/agent", "https://ledger.example", slog.New(slog.NewJSONHandler(&logs, nil)))
		if code, body := get(t, handler, "/agent/download"); code != 503 || !strings.Contains(body, "not available") {
			t.Errorf("%d %q", code, body)
		}
		if code, _ := get(t, handler, "/healthz"); code != 200 {
			t.Errorf("healthz %d: a missing agent binary must not make the server unhealthy", code)
		}
		if !strings.Contains(logs.String(), "the agent binary is not available") {
			t.Errorf("start-up warning missing: %s", logs.String())
		}
	})
	t.Run("ErrPublicURL", func(t *testing.T) {
		handler, _ := agentHandler(h, nil, bin, "ledger.example:8477", discard())
		if code, body := get(t, handler, "/agent/install.sh?token="+tok); code != 503 || !strings.Contains(body, "GPULEDGER_PUBLIC_URL") {
			t.Errorf("%d %q", code, body)
		}
	})
}

func TestRunHealthcheck(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "ok\n")
	}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database locked", http.StatusInternalServerError)
	}))
	defer bad.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	_, okPort, _ := net.SplitHostPort(strings.TrimPrefix(ok.URL, "http://"))

	for _, c := range []struct {
		name    string
		args    []string
		listen  string
		code    int
		wantErr string
	}{
		{"OKFromListen", nil, ":" + okPort, 0, ""},
		{"OKURL", []string{"-url", ok.URL + "/healthz"}, "", 0, ""},
		{"ErrStatus", []string{"-url", bad.URL + "/healthz"}, "", 1, "500"},
		{"ErrDown", []string{"-url", "http://" + closed + "/healthz"}, "", 1, "unhealthy"},
		{"ErrListen", nil, "8477", 1, "GPULEDGER_LISTEN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			getenv := func(k string) string {
				if k == "GPULEDGER_LISTEN" {
					return c.listen
				}
				return ""
			}
			err := runHealthcheck(context.Background(), c.args, &out, &errb, getenv)
			if c.wantErr == "" {
				if err != nil || out.String() != "ok\n" {
					t.Fatalf("err %v, out %q", err, out.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err %v, want %q", err, c.wantErr)
			}
		})
	}
}
