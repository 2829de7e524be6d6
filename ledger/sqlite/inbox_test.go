package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestDB_Inbox(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "inbox.db")
	db := openPath(t, path)
	sent := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	e := func(id, user int64) ledger.InboxEntry {
		return ledger.InboxEntry{ID: id, UserID: user, ChatID: user, SentAt: sent, Payload: `{"n":` + string(rune('0'+id)) + `}`}
	}
	t.Run("OK", func(t *testing.T) {
		if err := db.InboxAdd(ctx, []ledger.InboxEntry{e(1, 7), e(2, 8), e(3, 7)}, "telegram.offset", "4"); err != nil {
			t.Fatal(err)
		}
		// A second store of the same updates (a redelivery) changes nothing.
		dup := e(1, 7)
		dup.Payload = "other"
		if err := db.InboxAdd(ctx, []ledger.InboxEntry{dup}, "telegram.offset", "4"); err != nil {
			t.Fatal(err)
		}
		if v, _, _ := db.Meta(ctx, "telegram.offset"); v != "4" {
			t.Errorf("offset %q, want 4", v)
		}
		users, err := db.InboxUsers(ctx)
		if err != nil || len(users) != 2 || users[0] != 7 || users[1] != 8 {
			t.Fatalf("users %v, %v", users, err)
		}
		got, err := db.InboxNext(ctx, 7, 0, 10)
		if err != nil || len(got) != 2 || got[0].ID != 1 || got[1].ID != 3 || got[0].Payload != `{"n":1}` || !got[0].SentAt.Equal(sent) {
			t.Fatalf("next for 7: %+v, %v", got, err)
		}
		if got, _ := db.InboxNext(ctx, 7, 1, 1); len(got) != 1 || got[0].ID != 3 {
			t.Errorf("next after 1, limit 1: %+v", got)
		}
		if err := db.InboxHandled(ctx, 1, `[{"Text":"ok"}]`); err != nil {
			t.Fatal(err)
		}
		if err := db.InboxHandled(ctx, 2, ""); err != nil { // nothing to answer: gone
			t.Fatal(err)
		}
		unsent, err := db.InboxUnsent(ctx)
		if err != nil || len(unsent) != 1 || unsent[0].ID != 1 || unsent[0].Reply != `[{"Text":"ok"}]` || !unsent[0].Handled {
			t.Fatalf("unsent %+v, %v", unsent, err)
		}
		if users, _ := db.InboxUsers(ctx); len(users) != 1 || users[0] != 7 {
			t.Errorf("users after handling: %v", users)
		}
		// Kept across a restart.
		db.Close()
		db := openPath(t, path)
		if unsent, _ := db.InboxUnsent(ctx); len(unsent) != 1 {
			t.Errorf("unsent after reopen: %+v", unsent)
		}
		if err := db.InboxDelete(ctx, []int64{1, 3}); err != nil {
			t.Fatal(err)
		}
		if users, _ := db.InboxUsers(ctx); len(users) != 0 {
			t.Errorf("users after delete: %v", users)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := openPath(t, path)
		wantCode(t, db.InboxAdd(ctx, []ledger.InboxEntry{{ID: 9}}, "telegram.offset", "10"), ledger.EINVALID)
		if v, _, _ := db.Meta(ctx, "telegram.offset"); v != "4" {
			t.Errorf("a failed store moved the offset to %q", v)
		}
		wantCode(t, db.InboxAdd(ctx, nil, "", "10"), ledger.EINVALID)
	})
}
