package connsync_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// roomFailing is the harness's sender with some chats failing as
// Telegram answers for a group it upgraded or one that removed the bot.
type roomFailing struct {
	*sent
	mu    sync.Mutex
	fail  map[int64]error
	tried map[int64]int
}

func (f *roomFailing) Send(ctx context.Context, m chat.Outgoing) (int, error) {
	f.mu.Lock()
	f.tried[m.ChatID]++
	err := f.fail[m.ChatID]
	f.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return f.sent.Send(ctx, m)
}

func (f *roomFailing) triedTo(chatID int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tried[chatID]
}

// newTeamRoomEnv makes team lab with uid (alice) its owner and bob a
// member, its room bound to room, runpod connected in the team, and the
// syncer sending through a sender that fails sends to room with err.
func newTeamRoomEnv(t *testing.T, room int64, err error) (*env, ledger.Team, *roomFailing) {
	t.Helper()
	e := newEnv(t)
	const bob = int64(2)
	if _, err := e.db.EnsureUser(e.ctx, ledger.User{ID: bob, Lang: "en", TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	at := ledger.Action{UserID: uid, By: uid, At: e.clk.Now()}
	tm, err2 := e.db.CreateTeam(e.ctx, at, "lab", "alice")
	if err2 != nil {
		t.Fatal(err2)
	}
	at.UserID = tm.Ledger()
	code, _, err2 := e.db.CreateInvite(e.ctx, at, tm.ID, bob, "")
	if err2 != nil {
		t.Fatal(err2)
	}
	if _, err := e.db.Join(e.ctx, ledger.Action{UserID: bob, By: bob, At: e.clk.Now()}, code, "bob", false); err != nil {
		t.Fatal(err)
	}
	if tm, err2 = e.db.BindRoom(e.ctx, at, tm.ID, room, "Lab"); err2 != nil {
		t.Fatal(err2)
	}
	f := &roomFailing{sent: e.snd, fail: map[int64]error{room: err}, tried: map[int64]int{}}
	e.s.SetSender(f)
	if _, err := e.s.Connect(e.ctx, tm.Ledger(), "runpod", rpKey); err != nil {
		t.Fatal(err)
	}
	return e, tm, f
}

// roomOf is the team's room as stored now.
func roomOf(t *testing.T, e *env, teamID int64) int64 {
	t.Helper()
	tm, err := e.db.Team(e.ctx, teamID)
	if err != nil {
		t.Fatal(err)
	}
	return tm.Room
}

// to returns the messages of ms sent to chatID.
func to(ms []chat.Outgoing, chatID int64) []chat.Outgoing {
	var out []chat.Outgoing
	for _, m := range ms {
		if m.ChatID == chatID {
			out = append(out, m)
		}
	}
	return out
}

// TestSync_TeamNoticeFollowsMigratedRoom: a platform notice to a team
// whose room Telegram upgraded to a supergroup reaches the supergroup,
// and the team's room is moved there, so the next notice goes there at
// once instead of failing against the old ID round after round.
func TestSync_TeamNoticeFollowsMigratedRoom(t *testing.T) {
	const room, super = int64(-4001), int64(-1000000004001)
	e, tm, f := newTeamRoomEnv(t, room, &chat.MigratedError{To: super, Err: errors.New("400 upgraded")})
	e.rp.SetPods(pod("abc123", "train", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.round()
	got := to(e.snd.take(), super)
	if len(got) != 1 || !strings.Contains(got[0].Text, "RunPod lists") {
		t.Fatalf("the supergroup got %q, want the new rental's notice", texts(got))
	}
	if r := roomOf(t, e, tm.ID); r != super {
		t.Fatalf("room = %d, want %d", r, super)
	}
	e.rp.SetPods(pod("abc123", "train", "RUNNING", "0.79", t0.Add(-time.Hour)), pod("def456", "eval", "RUNNING", "0.79", t0))
	e.round()
	if got := to(e.snd.take(), super); len(got) != 1 || !strings.Contains(got[0].Text, "eval") {
		t.Fatalf("the supergroup got %q, want the second notice", texts(got))
	}
	if n := f.triedTo(room); n != 1 {
		t.Errorf("%d sends to the old ID, want 1", n)
	}
}

// TestSync_TeamNoticeRoomGone: a platform notice to a team whose room
// removed the bot goes to the team's first owner privately, the room is
// unbound, and the owner is told once that the team's messages come to
// them now; the next notice goes to them without a second word.
func TestSync_TeamNoticeRoomGone(t *testing.T) {
	const room = int64(-4002)
	e, tm, f := newTeamRoomEnv(t, room, fmt.Errorf("403 kicked: %w", chat.ErrChatGone))
	e.rp.SetPods(pod("abc123", "train", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.round()
	got := to(e.snd.take(), uid)
	if len(got) != 2 || !strings.Contains(got[0].Text, "I was removed from team lab's group") || !strings.Contains(got[1].Text, "RunPod lists") {
		t.Fatalf("alice got %q, want the room notice then the platform's", texts(got))
	}
	if r := roomOf(t, e, tm.ID); r != 0 {
		t.Fatalf("room = %d, want unbound", r)
	}
	e.rp.SetPods(pod("abc123", "train", "RUNNING", "0.79", t0.Add(-time.Hour)), pod("def456", "eval", "RUNNING", "0.79", t0))
	e.round()
	all := e.snd.take()
	got = to(all, uid)
	if len(got) != 1 || !strings.Contains(got[0].Text, "eval") {
		t.Fatalf("alice got %q, want only the second notice", texts(got))
	}
	if len(all) != len(got) {
		t.Errorf("others got %q", texts(all))
	}
	if n := f.triedTo(room); n != 1 {
		t.Errorf("%d sends to the lost room, want 1", n)
	}
}
