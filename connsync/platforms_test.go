package connsync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connsync"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestSyncer_PlatformsFromConfig: the sync serves the platforms its
// config lists and no others: a Syncer given RunPod alone lists RunPod,
// refuses to connect Vast.ai (EINVALID naming what it serves) without a
// call to Vast.ai, and a Syncer given no platforms is not made.
func TestSyncer_PlatformsFromConfig(t *testing.T) {
	e := newEnv(t)
	only := connector.Registry{runpod.Spec}
	s, err := connsync.New(connsync.Config{Store: e.db, Vault: e.vault, Platforms: only, Clients: e.factory, Buttons: testButtons(),
		Now: e.clk.Now, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Platforms().String(); got != "runpod" {
		t.Errorf("Platforms() = %q, want the config's", got)
	}
	_, err = s.Connect(e.ctx, uid, "vast", vastKey)
	if ledger.ErrorCode(err) != ledger.EINVALID || !strings.Contains(err.Error(), "use one of runpod") {
		t.Errorf("connect vast on a sync of RunPod alone: %v, want EINVALID naming runpod", err)
	}
	if r := e.vf.Requests(); len(r) != 0 {
		t.Errorf("Vast.ai was called: %v", r)
	}
	if _, err := s.Connect(e.ctx, uid, "runpod", rpKey); err != nil {
		t.Errorf("connect runpod: %v", err)
	}
	if _, err := connsync.New(connsync.Config{Store: e.db, Vault: e.vault, Clients: e.factory, Buttons: testButtons()}); err == nil || !strings.Contains(err.Error(), "Platforms") {
		t.Errorf("a sync without platforms: %v, want it refused", err)
	}
}
