package connsync_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/connsync"
)

// TestSync_SecretChanged: a server restarted with another secret cannot
// open the stored key. The user is told once to /connect again, the
// connector rests (no call reaches the platform), and the ledger is
// untouched; a new /connect brings it back.
func TestSync_SecretChanged(t *testing.T) {
	e := newEnv(t)
	e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	e.snd.take()
	before := e.snapshot()

	other, err := vault.Open(strings.Repeat("cd", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	factory := func(platform, key string) (connector.Client, error) {
		calls++
		return runpod.New(runpod.Config{APIKey: key, BaseURL: e.rp.RESTURL(), GraphQLURL: e.rp.GraphQLURL()})
	}
	s2, err := connsync.New(connsync.Config{Store: e.db, Vault: other, Clients: factory, Buttons: e.btn,
		Now: e.clk.Now, CallTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s2.SetSender(e.snd)
	listed := e.rp.Calls("GET /v1/pods")
	for range 3 {
		_ = s2.Round(e.ctx)
		e.clk.Add(time.Hour)
	}
	ms := e.snd.take()
	if len(ms) != 1 || !strings.Contains(ms[0].Text, "secret changed") || !strings.Contains(ms[0].Text, "/connect runpod") {
		t.Fatalf("messages = %q, want one telling to /connect again", texts(ms))
	}
	if strings.Contains(ms[0].Text, rpKey) {
		t.Fatal("the message holds the key")
	}
	if calls != 0 || e.rp.Calls("GET /v1/pods") != listed {
		t.Fatalf("%d clients made and %d lists sent with a key that does not open", calls, e.rp.Calls("GET /v1/pods")-listed)
	}
	cs, err := e.db.Connectors(e.ctx, uid)
	if err != nil || len(cs) != 1 || !cs[0].Rejected() {
		t.Fatalf("connectors = %+v, %v; want the one resting", cs, err)
	}
	if got := e.snapshot(); got != before {
		t.Fatalf("the ledger changed:\n%s\n%s", before, got)
	}
	if _, err := s2.Connect(e.ctx, uid, "runpod", rpKey); err != nil {
		t.Fatal(err)
	}
	if err := s2.SyncNow(e.ctx, uid, "runpod"); err != nil {
		t.Fatalf("after a new /connect: %v", err)
	}
}
