package scheduler_test

import (
	"context"
	"crypto/sha256"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
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

// lastEdit is the last edit of message msgID in chatID.
func (e *teamEnv) lastEdit(chatID int64, msgID int) (chat.Outgoing, bool) {
	var out chat.Outgoing
	ok := false
	for _, m := range e.snd.Sent() {
		if m.ChatID == chatID && m.EditMessageID == msgID {
			out, ok = m, true
		}
	}
	return out, ok
}

// TestTeam_StopItWithoutAgent: [Stop it] records the decision first, but
// with no agent and no platform nothing is released: the card and the
// toast say so instead of "Stopped by", and a later press, once the
// agent reports, runs the release (an order) instead of "Already
// stopped".
func TestTeam_StopItWithoutAgent(t *testing.T) {
	e := newTeamEnv(t, bob)
	e.setBobRate()
	e.clk.Add(time.Minute)
	e.tick2() // box3 has never reported: no agent
	cards := e.snd.to(carol)
	if len(cards) != 1 {
		t.Fatalf("carol's cards = %+v", cards)
	}
	toast := e.pressAs(carol, cards[0], 5, "Stop it")
	if !strings.Contains(toast, "could not be released") || !strings.Contains(toast, "has no agent") {
		t.Errorf("toast = %q, want it to say box3 was not released", toast)
	}
	edit, ok := e.lastEdit(carol, 5)
	if !ok || strings.Contains(edit.Text, "Stopped by") || !strings.Contains(edit.Text, "Recorded as stopped by @carol, but <b>box3</b> could not be released") {
		t.Errorf("card after Stop it = %q (edited %v)", edit.Text, ok)
	}
	aps, err := e.ts.Approvals(context.Background(), e.team.ID, ledger.ApprovalStopped)
	if err != nil || len(aps) != 1 {
		t.Fatalf("stopped approvals = %+v, %v; want the decision recorded", aps, err)
	}
	if _, ok := e.hub.OpenOrder(e.rid); ok {
		t.Fatal("an order with no agent")
	}
	// The agent reports; a second press releases instead of "Already stopped".
	e.beat(wire.VerdictIdle, 35*time.Minute, nil)
	toast = e.pressAs(alice, e.snd.to(alice)[0], 6, "Stop it")
	if strings.HasPrefix(toast, "Already") {
		t.Errorf("the second Stop it = %q, want the release run again", toast)
	}
	if _, ok := e.hub.OpenOrder(e.rid); !ok {
		t.Fatalf("the second Stop it issued no order (toast %q)", toast)
	}
	if edit, ok := e.lastEdit(alice, 6); !ok || !strings.Contains(edit.Text, "Stopped by @carol") {
		t.Errorf("alice's card after the second press = %q", edit.Text)
	}
}
