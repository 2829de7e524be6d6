package main

import (
	"bytes"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestListenAgents_PortZero: a hub told to listen on port 0 gets a port
// from the system, and the URL agents are told to use (logged at start,
// and given to /agent) must be that port, not ":0".
func TestListenAgents_PortZero(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := Config{Listen: "127.0.0.1:0", AgentBinary: filepath.Join(t.TempDir(), "none")}
	a, err := listenAgents(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, port, _ := net.SplitHostPort(a.Addr())
	want := "http://127.0.0.1:" + port
	if port == "0" || !strings.Contains(logs.String(), "public_url="+want+"\n") {
		t.Errorf("listening on port %s, want public_url=%s in the start-up log:\n%s", port, want, logs.String())
	}
	if got := a.PublicURL(); got != want {
		t.Errorf("PublicURL() = %q, want %q", got, want)
	}
}
