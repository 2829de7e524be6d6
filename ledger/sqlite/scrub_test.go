package sqlite_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

// fileHolds reports which of the database's files hold secret.
func fileHolds(t *testing.T, path string, secret []byte) []string {
	t.Helper()
	var found []string
	for _, p := range []string{path, path + "-wal", path + "-journal"} {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, secret) {
			found = append(found, filepath.Base(p))
		}
	}
	return found
}

// TestDB_ScrubDeleted checks that an update's text, once handled (its
// payload dropped, or the entry deleted) and scrubbed, is in neither the
// database file nor its write-ahead log: SQLite otherwise keeps deleted
// content in free space and old log frames.
func TestDB_ScrubDeleted(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		reply string // "" deletes the entry
	}{{"Handled", `[{"text":"ok"}]`}, {"Deleted", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "scrub.db")
			db := openPath(t, path)
			secret := []byte("rpa_" + strings.Repeat("K3y", 12))
			payload := `{"Text":"/connect runpod ` + string(secret) + `"}`
			if err := db.InboxAdd(ctx, []ledger.InboxEntry{{ID: 1, UserID: 7, ChatID: 7, Payload: payload}}, "telegram.offset", "2"); err != nil {
				t.Fatal(err)
			}
			if got := fileHolds(t, path, secret); len(got) == 0 {
				t.Fatal("the stored update is in no file: the test cannot tell a scrub from nothing")
			}
			if err := db.InboxHandled(ctx, 1, tc.reply); err != nil {
				t.Fatal(err)
			}
			if err := db.ScrubDeleted(ctx); err != nil {
				t.Fatal(err)
			}
			if got := fileHolds(t, path, secret); len(got) > 0 {
				t.Errorf("after handling and ScrubDeleted, the key is still in %v", got)
			}
			// The store still works after the log was truncated.
			if err := db.InboxAdd(ctx, []ledger.InboxEntry{{ID: 2, UserID: 7, ChatID: 7, Payload: "{}"}}, "telegram.offset", "3"); err != nil {
				t.Fatal(err)
			}
			if got, err := db.InboxNext(ctx, 7, 0, 10); err != nil || len(got) != 1 || got[0].ID != 2 {
				t.Errorf("after the scrub: %+v, %v", got, err)
			}
		})
	}
}
