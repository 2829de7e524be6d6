package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestStartHub_PortZero: a hub told to listen on port 0 gets a port from
// the system, and the URL agents are told to use (logged at start, and
// given to /agent) must be that port, not ":0".
func TestStartHub_PortZero(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := Config{Listen: "127.0.0.1:0", AgentBinary: filepath.Join(t.TempDir(), "none")}
	r, err := startHub(ctx, cfg, db, log)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, port, _ := net.SplitHostPort(r.ln.Addr().String())
	want := "http://127.0.0.1:" + port
	if port == "0" || !strings.Contains(logs.String(), "public_url="+want+"\n") {
		t.Errorf("listening on port %s, want public_url=%s in the start-up log:\n%s", port, want, logs.String())
	}
	if got := r.PublicURL(); got != want {
		t.Errorf("PublicURL() = %q, want %q", got, want)
	}
}
