package connsync_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// unopened is what the sync and the listing say of a key the server's
// secret does not open.
const unopened = "cannot open the stored key: GPULEDGER_SECRET differs from the one it was stored with"

// TestSync_WrongSecretThenRight: the server starts once with a wrong
// GPULEDGER_SECRET, then again with the right one, over the same SQLite
// file. Meanwhile the sync calls no platform, changes nothing in the
// ledger or the connector (not rejected, not deleted, its sealed key not
// rewritten), tells the user once what happened, not that the platform
// rejected the key, and the listing says it too. At the next start the
// connector syncs again as if nothing happened.
func TestSync_WrongSecretThenRight(t *testing.T) {
	e := newEnv(t)
	e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	e.snd.take()
	before := e.snapshot()
	stored, err := e.db.Connectors(e.ctx, uid)
	if err != nil || len(stored) != 1 {
		t.Fatalf("connectors %+v, %v", stored, err)
	}
	quiet := slog.New(slog.DiscardHandler)

	// The second start: the same file, another secret.
	e.db.Close()
	db, err := sqlite.Open(e.ctx, e.path, sqlite.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	e.db = db
	wrong, err := vault.Open(strings.Repeat("cd", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	factory := func(platform, key string) (connector.Client, error) {
		calls++
		return runpod.New(runpod.Config{APIKey: key, BaseURL: e.rp.RESTURL(), GraphQLURL: e.rp.GraphQLURL()})
	}
	s2, err := connsync.New(connsync.Config{Store: db, Vault: wrong, Platforms: platforms, Clients: factory, Buttons: testButtons(),
		Now: e.clk.Now, CallTimeout: 5 * time.Second, Logger: quiet})
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
	if len(ms) != 1 || !strings.Contains(ms[0].Text, "GPULEDGER_SECRET") || strings.Contains(ms[0].Text, "rejected") {
		t.Fatalf("messages = %q, want one saying the secret differs, not that the platform rejected the key", texts(ms))
	}
	if strings.Contains(ms[0].Text, rpKey) {
		t.Fatal("the message holds the key")
	}
	if calls != 0 || e.rp.Calls("GET /v1/pods") != listed {
		t.Fatalf("%d clients made and %d lists sent with a key that does not open", calls, e.rp.Calls("GET /v1/pods")-listed)
	}
	cs, err := s2.Connectors(e.ctx, uid)
	if err != nil || len(cs) != 1 {
		t.Fatalf("connectors = %+v, %v; want the one kept", cs, err)
	}
	if cs[0].Rejected() || !strings.Contains(cs[0].LastError, unopened) {
		t.Errorf("the listing's connector: rejected %v, last error %q; want not rejected, %q", cs[0].Rejected(), cs[0].LastError, unopened)
	}
	raw, err := db.Connectors(e.ctx, uid)
	if err != nil || len(raw) != 1 || !bytes.Equal(raw[0].KeyEnc, stored[0].KeyEnc) || raw[0].Rejected() {
		t.Fatalf("the stored connector changed: %+v, %v", raw, err)
	}
	if got := e.snapshot(); got != before {
		t.Fatalf("the ledger changed:\n%s\n%s", before, got)
	}

	// The third start: the same file, the right secret again.
	db.Close()
	db, err = sqlite.Open(e.ctx, e.path, sqlite.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	e.db = db
	e.restart()
	e.rp.SetPods(pod("abc123", "box1", "EXITED", "0.79", t0.Add(-time.Hour)))
	if err := e.s.SyncNow(e.ctx, uid, "runpod"); err != nil {
		t.Fatalf("with the right secret again: %v", err)
	}
	if e.rp.Calls("GET /v1/pods") == listed {
		t.Error("the platform was not called with the right secret")
	}
	cs, err = e.s.Connectors(e.ctx, uid)
	if err != nil || len(cs) != 1 || cs[0].Rejected() || cs[0].LastError != "" {
		t.Fatalf("connectors = %+v, %v; want it working", cs, err)
	}
	if got := e.snapshot(); got == before {
		t.Error("the stop the platform lists was not applied")
	}
	for _, m := range e.snd.take() {
		if strings.Contains(m.Text, "rejected") || strings.Contains(m.Text, "/connect") {
			t.Errorf("after the right secret came back: %q", m.Text)
		}
	}
}

// TestSync_SecretChangedNewKey: with a secret that does not open the
// stored key, a new /connect replaces it and the connector syncs.
func TestSync_SecretChangedNewKey(t *testing.T) {
	e := newEnv(t)
	e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	other, err := vault.Open(strings.Repeat("cd", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	e.vault = other
	e.restart()
	_ = e.s.Round(e.ctx)
	if _, err := e.s.Connect(e.ctx, uid, "runpod", rpKey); err != nil {
		t.Fatal(err)
	}
	if err := e.s.SyncNow(e.ctx, uid, "runpod"); err != nil {
		t.Fatalf("after a new /connect: %v", err)
	}
}
