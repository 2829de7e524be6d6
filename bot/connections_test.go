package bot_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/lambda"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connector/vast"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// testConns is a bot.Connections for the chat's tests: Connect checks the
// key with the real RunPod and Vast.ai clients against their fake
// servers, seals it with the real vault and keeps it in the real SQLite
// ConnectorStore, as connsync.Syncer does; Live and Reconcile give what
// the test set.
type testConns struct {
	db      *sqlite.DB
	vault   *vault.Vault
	runpod  *runpodfake.Server
	vast    *vastfake.Server
	mu      sync.Mutex
	live    map[int64]string // rental ID → platform
	recon   []ledger.Reconciliation
	asked   [][2]time.Time // Reconcile's [from, to) calls
	checked int            // Connect calls that reached a platform
}

const (
	runpodKey = "rpa_TESTKEY0123456789abcdefWXYZ"
	vastKey   = "c0ffee0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
)

func newTestConns(t *testing.T, db *sqlite.DB) *testConns {
	t.Helper()
	v, err := vault.Open(strings.Repeat("ab", 32), "")
	if err != nil {
		t.Fatal(err)
	}
	c := &testConns{db: db, vault: v, runpod: runpodfake.New(runpodKey), vast: vastfake.New(vastKey), live: map[int64]string{}}
	t.Cleanup(c.runpod.Close)
	t.Cleanup(c.vast.Close)
	return c
}

func (c *testConns) client(platform, key string) (connector.Client, error) {
	hc := &http.Client{Timeout: 5 * time.Second}
	switch platform {
	case "runpod":
		return runpod.New(runpod.Config{APIKey: key, BaseURL: c.runpod.RESTURL(), GraphQLURL: c.runpod.GraphQLURL(), HTTPClient: hc})
	case "vast":
		return vast.New(vast.Config{APIKey: key, BaseURL: c.vast.Base(), HTTPClient: hc})
	}
	return nil, ledger.Errorf(ledger.EINVALID, "connect: platform %q cannot be connected", platform)
}

func (c *testConns) Connect(ctx context.Context, userID int64, platform, key string) (ledger.Connector, error) {
	if !connectors.Supports(platform) {
		return ledger.Connector{}, ledger.Errorf(ledger.EINVALID, "connect: unknown platform %q", platform)
	}
	cl, err := c.client(platform, key)
	if err != nil {
		return ledger.Connector{}, ledger.Errorf(ledger.EINVALID, "connect: %v", err)
	}
	c.mu.Lock()
	c.checked++
	c.mu.Unlock()
	if err := cl.Check(ctx); err != nil {
		return ledger.Connector{}, err
	}
	enc, err := c.vault.Seal([]byte(key), vault.ConnectorAD(userID, platform))
	if err != nil {
		return ledger.Connector{}, err
	}
	conn := ledger.Connector{UserID: userID, Platform: platform, KeyEnc: enc, Hint: vault.Hint(key), CheckedAt: c.db.Now()}
	if err := c.db.SaveConnector(ctx, conn); err != nil {
		return ledger.Connector{}, err
	}
	cs, err := c.db.Connectors(ctx, userID)
	for _, s := range cs {
		if s.Platform == platform {
			return s, err
		}
	}
	return conn, err
}

func (c *testConns) Connectors(ctx context.Context, userID int64) ([]ledger.Connector, error) {
	return c.db.Connectors(ctx, userID)
}

func (c *testConns) Disconnect(ctx context.Context, userID int64, platform string) error {
	return c.db.DeleteConnector(ctx, userID, platform)
}

func (c *testConns) Reconcile(_ context.Context, _ int64, from, to time.Time) ([]ledger.Reconciliation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, [2]time.Time{from, to})
	return c.recon, nil
}

func (c *testConns) Live(_ context.Context, r *ledger.Rental) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.live[r.ID]
	return p, ok
}

// connectors are the server's platforms, as cmd/gpuledger lists them.
var connectors = connector.Registry{runpod.Spec, vast.Spec, lambda.Spec, autodl.Spec}

func (c *testConns) Platforms() connector.Registry { return connectors }

var _ bot.Connections = (*testConns)(nil)

// delSender is a Sender that can delete messages (chat.Deleter), as the
// Telegram transport does, and records what it deleted.
type delSender struct {
	testkit.Sender
	mu      sync.Mutex
	deleted []int
	fail    error
}

func (s *delSender) DeleteMessage(_ context.Context, _ int64, id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.deleted = append(s.deleted, id)
	return nil
}

func (s *delSender) Deleted() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.deleted...)
}

var _ chat.Deleter = (*delSender)(nil)
