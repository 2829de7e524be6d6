package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// conn returns a connector of user for platform with a fake sealed key.
func conn(user int64, platform, key string) ledger.Connector {
	return ledger.Connector{
		UserID: user, Platform: platform, KeyEnc: []byte("sealed:" + key), Hint: "wxyz",
		AddedAt: t0.Add(-time.Hour), CheckedAt: t0.Add(-time.Hour + time.Second),
	}
}

func mustSave(t *testing.T, db *sqlite.DB, c ledger.Connector) {
	t.Helper()
	if err := db.SaveConnector(context.Background(), c); err != nil {
		t.Fatalf("SaveConnector(%d, %s): %v", c.UserID, c.Platform, err)
	}
}

func mustConnectors(t *testing.T, db *sqlite.DB, user int64) []ledger.Connector {
	t.Helper()
	cs, err := db.Connectors(context.Background(), user)
	if err != nil {
		t.Fatalf("Connectors(%d): %v", user, err)
	}
	return cs
}

func wantCodeOf(t *testing.T, what string, err error, code string) {
	t.Helper()
	if ledger.ErrorCode(err) != code {
		t.Errorf("%s: error %v (code %q), want %s", what, err, ledger.ErrorCode(err), code)
	}
}

func TestDB_SaveConnector(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ledger.db")
		db := openPath(t, path)
		mustUser(t, db, 1)
		c := conn(1, "runpod", "A")
		c.AddedAt = c.AddedAt.Add(300 * time.Millisecond) // stored to the second
		mustSave(t, db, c)
		noAdded := conn(1, "vast", "V")
		noAdded.AddedAt, noAdded.CheckedAt, noAdded.Hint = time.Time{}, time.Time{}, ""
		mustSave(t, db, noAdded)

		// A second store on the same file (a restart) reads what the
		// first wrote.
		got := mustConnectors(t, openPath(t, path), 1)
		if len(got) != 2 {
			t.Fatalf("Connectors = %+v, want runpod and vast", got)
		}
		want := ledger.Connector{UserID: 1, Platform: "runpod", KeyEnc: []byte("sealed:A"), Hint: "wxyz",
			AddedAt: t0.Add(-time.Hour), CheckedAt: t0.Add(-time.Hour + time.Second)}
		if !equalConnector(got[0], want) {
			t.Errorf("runpod = %+v, want %+v", got[0], want)
		}
		if got[0].Rejected() {
			t.Error("a new connector is rejected")
		}
		wantV := ledger.Connector{UserID: 1, Platform: "vast", KeyEnc: []byte("sealed:V"), AddedAt: t0}
		if !equalConnector(got[1], wantV) {
			t.Errorf("vast = %+v, want %+v (added at the store's now)", got[1], wantV)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		bad := map[string]func(c *ledger.Connector){
			"no user":        func(c *ledger.Connector) { c.UserID = 0 },
			"no platform":    func(c *ledger.Connector) { c.Platform = "" },
			"capitals":       func(c *ledger.Connector) { c.Platform = "RunPod" },
			"space":          func(c *ledger.Connector) { c.Platform = "run pod" },
			"long platform":  func(c *ledger.Connector) { c.Platform = strings.Repeat("a", 33) },
			"no key":         func(c *ledger.Connector) { c.KeyEnc = nil },
			"long key":       func(c *ledger.Connector) { c.KeyEnc = make([]byte, 4097) },
			"whole key hint": func(c *ledger.Connector) { c.Hint = "rpa_SECRETKEY" },
			"five":           func(c *ledger.Connector) { c.Hint = "vwxyz" },
			"bad utf-8 hint": func(c *ledger.Connector) { c.Hint = "\xff\xfe" },
		}
		for name, f := range bad {
			c := conn(1, "runpod", "A")
			f(&c)
			err := db.SaveConnector(ctx, c)
			wantCodeOf(t, name, err, ledger.EINVALID)
			if err != nil && strings.Contains(err.Error(), "SECRETKEY") {
				t.Errorf("%s: error %q shows the hint", name, err)
			}
		}
		if cs := mustConnectors(t, db, 1); len(cs) != 0 {
			t.Errorf("refused saves stored %+v", cs)
		}
		c := conn(1, "runpod", "A")
		c.Hint = "秘密秘密" // four characters, twelve bytes
		mustSave(t, db, c)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		db := openDB(t)
		wantCodeOf(t, "unregistered user", db.SaveConnector(ctx, conn(9, "runpod", "A")), ledger.ENOTFOUND)
	})
}

// TestDB_SaveConnector_ReplaceClearsRejection walks a key's life: saved,
// rejected (told once), replaced (a fresh start), the new key rejected
// (told once again).
func TestDB_SaveConnector_ReplaceClearsRejection(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	a := conn(1, "runpod", "A")
	mustSave(t, db, a)
	if err := db.MarkSynced(ctx, 1, "runpod", t0.Add(-time.Minute), "connector: runpod answered 500"); err != nil {
		t.Fatal(err)
	}

	rejectedAt := t0.Add(-30 * time.Second)
	for i, wantSaid := range []bool{false, true, true} {
		said, err := db.MarkRejected(ctx, 1, "runpod", a.KeyEnc, rejectedAt.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatalf("MarkRejected #%d: %v", i+1, err)
		}
		if said != wantSaid {
			t.Errorf("MarkRejected #%d: alreadySaid = %v, want %v", i+1, said, wantSaid)
		}
	}
	got := mustConnectors(t, db, 1)[0]
	if !got.Rejected() || !got.RejectedAt.Equal(rejectedAt) || !got.RejectedSaid {
		t.Errorf("after rejection: %+v; want rejected at %v (the first time), said", got, rejectedAt)
	}
	if got.LastError == "" || got.LastSyncAt.IsZero() {
		t.Errorf("the last sync was lost: %+v", got)
	}

	b := conn(1, "runpod", "B")
	b.AddedAt, b.CheckedAt, b.Hint = t0, t0, "bbbb"
	mustSave(t, db, b)
	got = mustConnectors(t, db, 1)[0]
	want := ledger.Connector{UserID: 1, Platform: "runpod", KeyEnc: b.KeyEnc, Hint: "bbbb", AddedAt: t0, CheckedAt: t0}
	if !equalConnector(got, want) {
		t.Errorf("after replacing: %+v, want %+v (rejection, last sync and error cleared)", got, want)
	}

	// The sync loop's answer for the old key arrives late: the new key is
	// not marked.
	said, err := db.MarkRejected(ctx, 1, "runpod", a.KeyEnc, t0)
	wantCodeOf(t, "MarkRejected of the replaced key", err, ledger.ECONFLICT)
	if said {
		t.Error("MarkRejected of the replaced key says it was told")
	}
	if got := mustConnectors(t, db, 1)[0]; got.Rejected() {
		t.Errorf("the replaced key's rejection marked the new one: %+v", got)
	}

	said, err = db.MarkRejected(ctx, 1, "runpod", b.KeyEnc, t0)
	if err != nil || said {
		t.Errorf("the new key's first rejection: alreadySaid = %v, %v; want false, nil", said, err)
	}
}

func TestDB_Connectors_OtherUsers(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	mustSave(t, db, conn(1, "runpod", "1R"))
	mustSave(t, db, conn(1, "vast", "1V"))
	mustSave(t, db, conn(2, "runpod", "2R"))

	if cs := mustConnectors(t, db, 2); len(cs) != 1 || string(cs[0].KeyEnc) != "sealed:2R" {
		t.Errorf("user 2 sees %+v; want its runpod only", cs)
	}
	if cs := mustConnectors(t, db, 3); len(cs) != 0 {
		t.Errorf("user 3 sees %+v", cs)
	}
	// User 2 can neither delete nor mark user 1's vast connector.
	wantCodeOf(t, "DeleteConnector(2, vast)", db.DeleteConnector(ctx, 2, "vast"), ledger.ENOTFOUND)
	_, err := db.MarkRejected(ctx, 2, "vast", []byte("sealed:1V"), t0)
	wantCodeOf(t, "MarkRejected(2, vast)", err, ledger.ENOTFOUND)
	wantCodeOf(t, "MarkSynced(2, vast)", db.MarkSynced(ctx, 2, "vast", t0, ""), ledger.ENOTFOUND)
	// Marking user 2's runpod leaves user 1's alone.
	if _, err := db.MarkRejected(ctx, 2, "runpod", []byte("sealed:2R"), t0); err != nil {
		t.Fatal(err)
	}
	if c := mustConnectors(t, db, 1)[0]; c.Platform != "runpod" || c.Rejected() {
		t.Errorf("user 1's runpod after user 2's was rejected: %+v", c)
	}

	all, err := db.AllConnectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range all {
		keys = append(keys, string(c.KeyEnc))
	}
	if strings.Join(keys, " ") != "sealed:1R sealed:1V sealed:2R" {
		t.Errorf("AllConnectors = %v; want every user's, by user then platform, the rejected included", keys)
	}
}

func TestDB_DeleteConnector(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	wantCodeOf(t, "delete of none", db.DeleteConnector(ctx, 1, "runpod"), ledger.ENOTFOUND)
	mustSave(t, db, conn(1, "runpod", "A"))
	mustSave(t, db, conn(1, "lambda", "L"))
	if err := db.DeleteConnector(ctx, 1, "runpod"); err != nil {
		t.Fatal(err)
	}
	if cs := mustConnectors(t, db, 1); len(cs) != 1 || cs[0].Platform != "lambda" {
		t.Errorf("after delete: %+v", cs)
	}
	err := db.DeleteConnector(ctx, 1, "runpod")
	wantCodeOf(t, "second delete", err, ledger.ENOTFOUND)
	if !strings.Contains(userText(err), "/connect") {
		t.Errorf("ENOTFOUND says %q", userText(err))
	}
}

func TestDB_MarkSynced(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	c := conn(1, "autodl", "A")
	mustSave(t, db, c)

	clean := t0.Add(time.Minute)
	if err := db.MarkSynced(ctx, 1, "autodl", clean, ""); err != nil {
		t.Fatal(err)
	}
	got := mustConnectors(t, db, 1)[0]
	if !got.LastSyncAt.Equal(clean) || !got.CheckedAt.Equal(clean) || got.LastError != "" {
		t.Errorf("after a clean round: %+v; want synced and checked at %v", got, clean)
	}

	failed := clean.Add(time.Minute)
	long := strings.Repeat("é", 600) // 1200 bytes
	if err := db.MarkSynced(ctx, 1, "autodl", failed, long); err != nil {
		t.Fatal(err)
	}
	got = mustConnectors(t, db, 1)[0]
	if !got.LastSyncAt.Equal(failed) || !got.CheckedAt.Equal(clean) {
		t.Errorf("after a failed round: %+v; want synced at %v, checked still %v", got, failed, clean)
	}
	if len(got.LastError) > 1000 || len(got.LastError) < 990 || !utf8.ValidString(got.LastError) || !strings.HasPrefix(long, got.LastError) {
		t.Errorf("last error of %d bytes kept as %d bytes (valid UTF-8: %v)", len(long), len(got.LastError), utf8.ValidString(got.LastError))
	}

	db.Now = func() time.Time { return t0.Add(time.Hour) }
	if err := db.MarkSynced(ctx, 1, "autodl", time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if got := mustConnectors(t, db, 1)[0]; !got.LastSyncAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("a zero time: synced at %v, want the store's now", got.LastSyncAt)
	}
}

// TestDB_MarkOutage: the outage told is stored with its start, kept by
// the rounds' marks, cleared when told over and by a new key; a missing
// connector or an oversized kind changes nothing.
func TestDB_MarkOutage(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustSave(t, db, conn(1, "runpod", "A"))
	mustSave(t, db, conn(1, "vast", "V"))

	since := t0.Add(-20 * time.Minute)
	if err := db.MarkOutage(ctx, 1, "runpod", "unavailable", since); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkSynced(ctx, 1, "runpod", t0, "boom"); err != nil {
		t.Fatal(err)
	}
	cs := mustConnectors(t, db, 1)
	if got := cs[0]; got.Platform != "runpod" || got.Outage != "unavailable" || !got.OutageSince.Equal(since) {
		t.Errorf("after MarkOutage and a failed round: %+v; want outage unavailable since %v", got, since)
	}
	if got := cs[1]; got.Outage != "" || !got.OutageSince.IsZero() {
		t.Errorf("the other connector: %+v; want no outage", got)
	}

	wantCodeOf(t, "no connector", db.MarkOutage(ctx, 1, "lambda", "rate", since), ledger.ENOTFOUND)
	wantCodeOf(t, "another user's", db.MarkOutage(ctx, 2, "runpod", "", time.Time{}), ledger.ENOTFOUND)
	wantCodeOf(t, "a long kind", db.MarkOutage(ctx, 1, "runpod", strings.Repeat("x", 33), since), ledger.EINVALID)
	if got := mustConnectors(t, db, 1)[0]; got.Outage != "unavailable" {
		t.Errorf("after the refusals: %+v; want the outage unchanged", got)
	}

	if err := db.MarkOutage(ctx, 1, "runpod", "", since); err != nil {
		t.Fatal(err)
	}
	if got := mustConnectors(t, db, 1)[0]; got.Outage != "" || !got.OutageSince.IsZero() {
		t.Errorf("told over: %+v; want no outage and no start", got)
	}

	if err := db.MarkOutage(ctx, 1, "runpod", "rate", since); err != nil {
		t.Fatal(err)
	}
	mustSave(t, db, conn(1, "runpod", "B"))
	if got := mustConnectors(t, db, 1)[0]; got.Outage != "" || !got.OutageSince.IsZero() {
		t.Errorf("a new key: %+v; want the old key's outage cleared", got)
	}
}

// TestDB_Connector_Vault stores a key sealed by connector/vault and shows
// that the row, copied to another user in the file, does not open.
func TestDB_Connector_Vault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	db := openPath(t, path)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	v, err := vault.Open("", vault.DefaultKeyFile(path))
	if err != nil {
		t.Fatal(err)
	}
	const key = "rpa_0123456789ABCDEFGHIJ"
	sealed, err := v.Seal([]byte(key), vault.ConnectorAD(1, "runpod"))
	if err != nil {
		t.Fatal(err)
	}
	mustSave(t, db, ledger.Connector{UserID: 1, Platform: "runpod", KeyEnc: sealed, Hint: vault.Hint(key)})
	mustSave(t, db, ledger.Connector{UserID: 2, Platform: "runpod", KeyEnc: []byte("placeholder"), Hint: ""})

	got := mustConnectors(t, db, 1)[0]
	plain, err := v.Open(got.KeyEnc, vault.ConnectorAD(1, "runpod"))
	if err != nil || string(plain) != key || got.Hint != "GHIJ" {
		t.Fatalf("stored and opened: %q, %v, hint %q", plain, err, got.Hint)
	}

	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var file []byte
	if err := raw.QueryRow(`SELECT key_enc FROM connectors WHERE user_id = 1`).Scan(&file); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(file, []byte(key)) {
		t.Fatal("the file holds the key in the clear")
	}
	if _, err := raw.Exec(`UPDATE connectors SET key_enc = (SELECT key_enc FROM connectors WHERE user_id = 1) WHERE user_id = 2`); err != nil {
		t.Fatal(err)
	}
	stolen := mustConnectors(t, db, 2)[0]
	if !bytes.Equal(stolen.KeyEnc, sealed) {
		t.Fatal("the copy did not happen")
	}
	if plain, err := v.Open(stolen.KeyEnc, vault.ConnectorAD(2, "runpod")); !errors.Is(err, vault.ErrDamaged) {
		t.Errorf("user 1's key copied to user 2: Open = %q, %v; want ErrDamaged", plain, err)
	}
}

func equalConnector(a, b ledger.Connector) bool {
	return a.UserID == b.UserID && a.Platform == b.Platform && bytes.Equal(a.KeyEnc, b.KeyEnc) && a.Hint == b.Hint &&
		a.AddedAt.Equal(b.AddedAt) && a.CheckedAt.Equal(b.CheckedAt) && a.RejectedAt.Equal(b.RejectedAt) &&
		a.RejectedSaid == b.RejectedSaid && a.LastSyncAt.Equal(b.LastSyncAt) && a.LastError == b.LastError
}
