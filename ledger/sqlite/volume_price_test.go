package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

const day = 24 * time.Hour

// storageAt returns user 1's storage total in CNY as of asOf.
func storageAt(t *testing.T, db *sqlite.DB, asOf time.Time) string {
	t.Helper()
	b, err := db.Book(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return ledger.StatementAsOf(b, asOf).Total(ledger.CNY).Storage.String()
}

// keyOf returns the catalog key of a *ledger.Error, "" otherwise.
func keyOf(err error) string {
	var le *ledger.Error
	if errors.As(err, &le) {
		return le.Key
	}
	return ""
}

// TestDB_SetVolumePriceAt: a price change from a time on bills the
// volume at the old price before it and the new one after, is refused
// outside the volume's life (before its creation, after its deletion, in
// the future), on an unpriced volume and in another currency, and /undo
// removes it exactly.
func TestDB_SetVolumePriceAt(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	// 200 GB, 50 free, ¥0.0066/GB/day, created 30 days before t0.
	if _, err := db.CreateVolume(ctx, act(1), disk("data1", "", at(-30*day))); err != nil {
		t.Fatal(err)
	}
	if got := storageAt(t, db, t0); got != "29.70" {
		t.Fatalf("storage before any change = %s, want 29.70", got)
	}
	change := ledger.VolumePrice{At: at(-15 * day), Price: ledger.MustDecimal("0.0132"), PriceUnit: ledger.PerGBDay}
	v, err := db.SetVolumePriceAt(ctx, keyed(1, "p1"), "data1", "", change)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Prices) != 1 || !v.Prices[0].At.Equal(at(-15*day)) || v.Prices[0].Price.String() != "0.0132" || v.Prices[0].ID == 0 {
		t.Fatalf("SetVolumePriceAt = %+v", v.Prices)
	}
	// 15 days × 150 GB × 0.0066 + 15 days × 150 GB × 0.0132.
	if got := storageAt(t, db, t0); got != "44.55" {
		t.Fatalf("storage after the change = %s, want 44.55", got)
	}
	if got := storageAt(t, db, at(-15*day)); got != "14.85" {
		t.Fatalf("storage up to the change = %s, want 14.85", got)
	}
	if _, err := db.SetVolumePriceAt(ctx, keyed(1, "p1"), "data1", "", change); ledger.ErrorCode(err) != ledger.EDUPLICATE {
		t.Fatalf("repeated key: err = %v, want EDUPLICATE", err)
	}

	for _, tt := range []struct {
		name, vol string
		cur       ledger.Currency
		p         ledger.VolumePrice
		code, key string
	}{
		{"before creation", "data1", "", ledger.VolumePrice{At: at(-31 * day), Price: ledger.MustDecimal("0.01"), PriceUnit: ledger.PerGBDay},
			ledger.EINVALID, "volume_price_before_create"},
		{"in the future", "data1", "", ledger.VolumePrice{At: at(time.Hour), Price: ledger.MustDecimal("0.01"), PriceUnit: ledger.PerGBDay},
			ledger.EINVALID, "volume_price_future"},
		{"negative", "data1", "", ledger.VolumePrice{At: at(-day), Price: ledger.MustDecimal("-0.01"), PriceUnit: ledger.PerGBDay},
			ledger.EINVALID, "storage_negative"},
		{"no unit", "data1", "", ledger.VolumePrice{At: at(-day), Price: ledger.MustDecimal("0.01")},
			ledger.EINVALID, "bad_storage_unit"},
		{"another currency", "data1", ledger.USD, ledger.VolumePrice{At: at(-day), Price: ledger.MustDecimal("0.01"), PriceUnit: ledger.PerGBDay},
			ledger.EINVALID, "currency_mismatch"},
		{"no such volume", "nosuch", "", ledger.VolumePrice{At: at(-day), Price: ledger.MustDecimal("0.01"), PriceUnit: ledger.PerGBDay},
			ledger.ENOTFOUND, "no_volume_named"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.SetVolumePriceAt(ctx, act(1), tt.vol, tt.cur, tt.p)
			if ledger.ErrorCode(err) != tt.code || keyOf(err) != tt.key {
				t.Fatalf("err = %v (key %q), want %s %s", err, keyOf(err), tt.code, tt.key)
			}
			if got := storageAt(t, db, t0); got != "44.55" {
				t.Fatalf("a refused change changed the bill: %s", got)
			}
		})
	}

	res, err := db.Undo(ctx, act(1))
	if err != nil || res.Kind != ledger.ActionStoragePrice || res.Name != "data1" {
		t.Fatalf("Undo = %+v, %v", res, err)
	}
	if got := storageAt(t, db, t0); got != "29.70" {
		t.Fatalf("storage after undo = %s, want 29.70", got)
	}
	if v, err := db.Volume(ctx, 1, "data1"); err != nil || len(v.Prices) != 0 || v.Price.String() != "0.0066" {
		t.Fatalf("volume after undo = %+v, %v", v, err)
	}
}

// TestDB_SetVolumePriceAt_LifeEnds: a change at the volume's creation
// corrects its first price (as a change without a time does), a deleted
// volume takes a change before its deletion but not after, and an
// unpriced volume must be priced from its creation first.
func TestDB_SetVolumePriceAt_LifeEnds(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	if _, err := db.CreateVolume(ctx, act(1), disk("data1", "", at(-30*day))); err != nil {
		t.Fatal(err)
	}
	v, err := db.SetVolumePriceAt(ctx, act(1), "data1", "", ledger.VolumePrice{At: at(-30 * day), Price: ledger.MustDecimal("0.0132"), PriceUnit: ledger.PerGBDay})
	if err != nil || len(v.Prices) != 0 || v.Price.String() != "0.0132" {
		t.Fatalf("change at creation = %+v, %v; want the first price corrected", v, err)
	}
	if got := storageAt(t, db, t0); got != "59.40" {
		t.Fatalf("storage = %s, want 59.40", got)
	}
	if _, err := db.Undo(ctx, act(1)); err != nil {
		t.Fatal(err)
	}
	if got := storageAt(t, db, t0); got != "29.70" {
		t.Fatalf("storage after undo = %s, want 29.70", got)
	}

	if _, err := db.AppendVolumeEvent(ctx, act(1), "data1", ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: at(-10 * day)}); err != nil {
		t.Fatal(err)
	}
	_, err = db.SetVolumePriceAt(ctx, act(1), "data1", "", ledger.VolumePrice{At: at(-5 * day), Price: ledger.MustDecimal("0.01"), PriceUnit: ledger.PerGBDay})
	if keyOf(err) != "volume_price_after_delete" {
		t.Fatalf("change after deletion: err = %v, want volume_price_after_delete", err)
	}
	if _, err := db.SetVolumePriceAt(ctx, act(1), "data1", "", ledger.VolumePrice{At: at(-20 * day), Price: ledger.MustDecimal("0"), PriceUnit: ledger.PerGBDay}); err != nil {
		t.Fatal(err)
	}
	// 10 days at 0.0066 × 150, then free until its deletion.
	if got := storageAt(t, db, t0); got != "9.90" {
		t.Fatalf("storage of the deleted volume = %s, want 9.90", got)
	}

	bare := disk("bare", "", at(-30*day))
	bare.Priced, bare.Price, bare.PriceUnit = false, ledger.Decimal{}, ""
	if _, err := db.CreateVolume(ctx, act(1), bare); err != nil {
		t.Fatal(err)
	}
	_, err = db.SetVolumePriceAt(ctx, act(1), "bare", "", ledger.VolumePrice{At: at(-day), Price: ledger.MustDecimal("0.01"), PriceUnit: ledger.PerGBDay})
	if keyOf(err) != "volume_price_unpriced" {
		t.Fatalf("unpriced volume: err = %v, want volume_price_unpriced", err)
	}
}

// TestOpen_V9VolumeKeepsItsBill builds a database as the schema version
// before the price changes (009) left it, with a priced volume that has a
// stopped rate on a rental stopped part-way and priced traffic, and checks
// that after Open's migrations (010 and on) the volume and the traffic bill
// exactly what they did, have no price changes, and the volume takes one.
func TestOpen_V9VolumeKeepsItsBill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v9.db")
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	qs := []string{`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`}
	files, err := filepath.Glob("migration/00[1-9]_*.sql")
	if err != nil || len(files) != 9 {
		t.Fatalf("migrations 001..009: %v, %v", files, err)
	}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, string(b), `INSERT INTO schema_migrations VALUES (`+string(rune('1'+i))+`, '`+filepath.Base(f)+`', 1790000000)`)
	}
	created := at(-30 * day).Unix()
	qs = append(qs,
		`INSERT INTO users (id, lang, tz, summary_at, idle_warn_ns, silent_ns, quiet_from, quiet_to, long_run_ns, created_at)
			VALUES (1, 'en', 'UTC', 1320, 1800000000000, 600000000000, -1, -1, 43200000000000, 1790000000)`,
		`INSERT INTO actions (id, user_id, kind, name, at, undoable, rental_id) VALUES (1, 1, 'rent', 'box1', 1790000000, 1, 1)`,
		`INSERT INTO rentals (id, user_id, action_id, name, platform, gpu, gpu_count, mode, priced, price, price_unit,
			currency, min_s, step_s, floor, lease_ns, traffic_priced, traffic_price_per_gb, traffic_free_gb, traffic_direction, created_at)
			VALUES (1, 1, 1, 'box1', 'runpod', 'RTX 4090', 1, 'per-second', 1, '0', 'hour', 'CNY', 0, 0, '0', 0, 1, '0.5', '5', 'out', 1790000000)`,
		`INSERT INTO traffic_usage (rental_id, action_id, at, bytes, direction) VALUES (1, 1, ?1 + 3600, 32212254720, 'out')`,
		`INSERT INTO rental_events (rental_id, action_id, kind, at) VALUES (1, 1, 'start', ?1), (1, 1, 'stop', ?1 + 864000)`,
		`INSERT INTO actions (id, user_id, kind, name, at, undoable, volume_id) VALUES (2, 1, 'storage', 'data1', 1790000000, 1, 1)`,
		`INSERT INTO volumes (id, user_id, action_id, name, rental_id, platform, currency, priced, price, price_unit, free_gb,
			stopped_price, created_at) VALUES (1, 1, 2, 'data1', 1, 'runpod', 'CNY', 1, '0.0066', 'gb_day', '50', '0.0132', ?1)`,
		`INSERT INTO volume_events (volume_id, action_id, kind, at, size_gb) VALUES (1, 2, 'create', ?1, '200')`,
	)
	for _, q := range qs {
		if _, err := raw.Exec(q, created); err != nil {
			t.Fatalf("building a v9 database: %v\n%s", err, q)
		}
	}
	raw.Close()
	if vs := schemaVersions(t, path); len(vs) != 9 {
		t.Fatalf("v9 database has versions %v", vs)
	}

	db := openPath(t, path)
	if vs := schemaVersions(t, path); len(vs) != sqlite.SchemaVersion() || len(vs) < 10 {
		t.Fatalf("after Open: versions %v, want %d (≥ 10)", vs, sqlite.SchemaVersion())
	}
	// 10 days running × 150 GB × 0.0066 + 20 days stopped × 150 GB × 0.0132.
	if got := storageAt(t, db, t0); got != "49.50" {
		t.Fatalf("storage after migration = %s, want 49.50", got)
	}
	// 30 GiB out, 5 free, at 0.5: the traffic terms (011) carry over too.
	b, err := db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := ledger.StatementAsOf(b, t0).Total(ledger.CNY).Traffic.String(); got != "12.50" || len(b.Rentals[0].TrafficPrices) != 0 {
		t.Fatalf("traffic after migration = %s (changes %v), want 12.50 and none", got, b.Rentals[0].TrafficPrices)
	}
	v, err := db.Volume(ctx, 1, "data1")
	if err != nil || len(v.Prices) != 0 || !v.HasStoppedPrice || v.StoppedPrice.String() != "0.0132" {
		t.Fatalf("volume after migration = %+v, %v", v, err)
	}
	if _, err := db.SetVolumePriceAt(ctx, act(1), "data1", "", ledger.VolumePrice{At: at(-5 * day), Price: ledger.MustDecimal("0"), PriceUnit: ledger.PerGBDay}); err != nil {
		t.Fatal(err)
	}
	// The last 5 days free: 49.50 − 5 × 150 × 0.0132.
	if got := storageAt(t, db, t0); got != "39.60" {
		t.Fatalf("storage after a change on the migrated volume = %s, want 39.60", got)
	}
}
