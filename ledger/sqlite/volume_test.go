package sqlite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// disk returns a valid 200GB volume named name, attached to rental (may be
// empty), created at when.
func disk(name, rental string, when time.Time) ledger.Volume {
	v := ledger.Volume{
		Name: name, RentalName: rental, Priced: true,
		Price: ledger.MustDecimal("0.0066"), PriceUnit: ledger.PerGBDay, FreeGB: ledger.MustDecimal("50"),
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: when, SizeGB: ledger.MustDecimal("200")}},
	}
	if rental == "" {
		v.Platform, v.Currency = "autodl", ledger.CNY
	}
	return v
}

func TestDB_CreateVolume(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		r := mustRent(t, db, 1, "box1", at(-time.Hour))
		v, err := db.CreateVolume(ctx, act(1), disk("data1", "box1", at(-time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		if v.ID == 0 || v.UserID != 1 || v.RentalID != r.ID || v.RentalName != "box1" || v.Platform != "autodl" ||
			v.Currency != ledger.CNY || v.Price.String() != "0.0066" || v.FreeGB.String() != "50" ||
			v.SizeGB().String() != "200" || len(v.Events) != 1 || v.Events[0].ID == 0 || !v.CreatedAt.Equal(t0) {
			t.Fatalf("CreateVolume = %+v", v)
		}
		loose, err := db.CreateVolume(ctx, act(1), disk("loose", "", t0))
		if err != nil || loose.RentalID != 0 || loose.RentalName != "" {
			t.Fatalf("unattached volume = %+v, %v", loose, err)
		}
		got, err := db.Volume(ctx, 1, "data1")
		if err != nil || got.ID != v.ID || got.RentalName != "box1" {
			t.Fatalf("Volume = %+v, %v", got, err)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustRent(t, db, 1, "box1", at(-time.Hour))
		if _, err := db.CreateVolume(ctx, keyed(1, "k1"), disk("data1", "box1", t0)); err != nil {
			t.Fatal(err)
		}
		mod := func(f func(v *ledger.Volume)) ledger.Volume {
			v := disk("data2", "", t0)
			f(&v)
			return v
		}
		for _, tc := range []struct {
			name string
			a    ledger.Action
			v    ledger.Volume
			code string
			msg  string
		}{
			{"bad name", act(1), mod(func(v *ledger.Volume) { v.Name = "" }), ledger.EINVALID, "1 to 32"},
			{"no events", act(1), mod(func(v *ledger.Volume) { v.Events = nil }), ledger.EINVALID, "creation"},
			{"negative size", act(1), mod(func(v *ledger.Volume) { v.Events[0].SizeGB = ledger.MustDecimal("-1") }), ledger.EINVALID, "out of range"},
			{"bad unit", act(1), mod(func(v *ledger.Volume) { v.PriceUnit = "gb_year" }), ledger.EINVALID, "unit"},
			{"no currency", act(1), mod(func(v *ledger.Volume) { v.Currency = "" }), ledger.EINVALID, "currency"},
			{"unknown rental", act(1), mod(func(v *ledger.Volume) { v.RentalName = "nope" }), ledger.ENOTFOUND, "nope"},
			{"unknown user", act(9), mod(func(*ledger.Volume) {}), ledger.ENOTFOUND, "not registered"},
			{"live name", act(1), disk("data1", "", t0), ledger.ECONFLICT, "already exists"},
			{"duplicate key", keyed(1, "k1"), mod(func(*ledger.Volume) {}), ledger.EDUPLICATE, "already applied"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				unchanged(t, db, tc.code, func() error {
					_, err := db.CreateVolume(ctx, tc.a, tc.v)
					if err != nil && !strings.Contains(userText(err), tc.msg) {
						t.Errorf("message %q does not mention %q", userText(err), tc.msg)
					}
					return err
				})
			})
		}
	})
}

func TestDB_AppendVolumeEvent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	if _, err := db.CreateVolume(ctx, act(1), disk("data1", "", at(-3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	v, err := db.AppendVolumeEvent(ctx, act(1), "data1", ledger.VolumeEvent{Kind: ledger.VolumeResize, At: at(-2 * time.Hour), SizeGB: ledger.MustDecimal("500")})
	if err != nil || v.SizeGB().String() != "500" || len(v.Events) != 2 {
		t.Fatalf("resize = %+v, %v", v, err)
	}
	v, err = db.AppendVolumeEvent(ctx, act(1), "data1", ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: at(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if when, ok := v.Deleted(); !ok || !when.Equal(at(-time.Hour)) {
		t.Fatalf("Deleted = %v, %v", when, ok)
	}
	// The name is free again once deleted.
	if _, err := db.CreateVolume(ctx, act(1), disk("data1", "", t0)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateVolume(ctx, act(1), disk("old", "", at(-3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendVolumeEvent(ctx, act(1), "old", ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: at(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		vol  string
		ev   ledger.VolumeEvent
		code string
	}{
		{"out of order", "data1", ledger.VolumeEvent{Kind: ledger.VolumeResize, At: at(-time.Minute), SizeGB: ledger.MustDecimal("1")}, ledger.EINVALID},
		{"huge", "data1", ledger.VolumeEvent{Kind: ledger.VolumeResize, At: t0, SizeGB: ledger.MustDecimal("999999999")}, ledger.EINVALID},
		{"create again", "data1", ledger.VolumeEvent{Kind: ledger.VolumeCreate, At: t0, SizeGB: ledger.MustDecimal("1")}, ledger.ECONFLICT},
		{"unknown kind", "data1", ledger.VolumeEvent{Kind: "shrink", At: t0}, ledger.EINVALID},
		{"deleted", "old", ledger.VolumeEvent{Kind: ledger.VolumeResize, At: t0, SizeGB: ledger.MustDecimal("1")}, ledger.ECONFLICT},
		{"unknown volume", "nope", ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: t0}, ledger.ENOTFOUND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unchanged(t, db, tc.code, func() error { _, err := db.AppendVolumeEvent(ctx, act(1), tc.vol, tc.ev); return err })
		})
	}
}

// TestDB_CreateVolume_StoppedPrice: a volume's stopped price survives the
// store, zero included (not billed while stopped), and a volume without
// one reads back without one.
func TestDB_CreateVolume_StoppedPrice(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	for _, tt := range []struct {
		name, stopped string
	}{{"vol1", "0.20"}, {"vol2", "0"}, {"vol3", ""}} {
		v := disk(tt.name, "", t0)
		if tt.stopped != "" {
			v.HasStoppedPrice, v.StoppedPrice = true, ledger.MustDecimal(tt.stopped)
		}
		if _, err := db.CreateVolume(ctx, act(1), v); err != nil {
			t.Fatal(err)
		}
		got, err := db.Volume(ctx, 1, tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if got.HasStoppedPrice != (tt.stopped != "") || tt.stopped != "" && got.StoppedPrice.Cmp(ledger.MustDecimal(tt.stopped)) != 0 {
			t.Errorf("%s: stopped price = %v %s, want %q", tt.name, got.HasStoppedPrice, got.StoppedPrice, tt.stopped)
		}
	}
	bad := disk("vol4", "", t0)
	bad.HasStoppedPrice, bad.StoppedPrice = true, ledger.MustDecimal("-1")
	if _, err := db.CreateVolume(ctx, act(1), bad); ledger.ErrorCode(err) != ledger.EINVALID {
		t.Errorf("negative stopped price: err = %v, want EINVALID", err)
	}
}
