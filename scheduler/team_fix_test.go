package scheduler_test

import (
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// adoptedBy makes an instance announced to the team's ledger with an
// enrolment token of maker's, logged as a rental of maker's, and returns
// the instance's ID.
func (e *teamEnv) adoptedBy(maker int64, pod string) int64 {
	e.t.Helper()
	ctx := context.Background()
	tok, _, err := e.db.IssueEnrolTokenBy(ctx, e.lid, maker, sha256.Sum256([]byte("enrol-"+pod)), t0)
	if err != nil {
		e.t.Fatal(err)
	}
	in, _, err := e.db.Announce(ctx, ledger.Instance{UserID: e.lid, TokenID: tok.ID, Key: "runpod:" + pod, Platform: "runpod", PlatformID: pod,
		Hostname: "h-" + pod, GPUModel: "A40", GPUCount: 1, BootAt: t0, LastSeen: t0.Add(time.Minute)})
	if err != nil {
		e.t.Fatal(err)
	}
	r, _, err := e.db.AdoptInstance(ctx, ledger.Action{UserID: e.lid, By: maker, At: t0.Add(time.Minute)}, in.ID,
		ledger.RentalFromInstance(in, nil, t0), sha256.Sum256([]byte("agent-"+pod)))
	if err != nil {
		e.t.Fatal(err)
	}
	if r.Owner != maker {
		e.t.Fatalf("adopted rental's owner = %d, want %d", r.Owner, maker)
	}
	return in.ID
}

// TestTeam_ReconnectOwnerOrAdminOnly: [Reconnect] issues a new agent
// token for the rental and revokes its owner's: dave, a member who does
// not own it, is refused; carol, an admin, may.
func TestTeam_ReconnectOwnerOrAdminOnly(t *testing.T) {
	e := newTeamEnv(t, bob)
	id := e.adoptedBy(bob, "podB")
	data, err := e.btn2.Sign(e.lid, scheduler.ActReconnect, strconv.FormatInt(id, 10))
	if err != nil {
		t.Fatal(err)
	}
	if toast := e.pressData(dave, room, 0, data); !strings.Contains(toast, "Only @bob (its owner) or an admin") {
		t.Errorf("dave's Reconnect = %q, want refused", toast)
	}
	if toast := e.pressData(carol, room, 0, data); !strings.Contains(toast, "Reconnected to") {
		t.Errorf("carol's Reconnect = %q", toast)
	}
}
