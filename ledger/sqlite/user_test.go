package sqlite_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestDB_EnsureUser(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		db := openDB(t)
		u, err := db.EnsureUser(ctx, ledger.User{ID: 42, TZ: "Asia/Shanghai"})
		if err != nil {
			t.Fatal(err)
		}
		if u.ID != 42 || u.Lang != "en" || u.TZ != "Asia/Shanghai" || u.Settings != ledger.DefaultSettings() || !u.CreatedAt.Equal(t0) {
			t.Fatalf("new user = %+v", u)
		}
		// An existing user is returned unchanged.
		again, err := db.EnsureUser(ctx, ledger.User{ID: 42, Lang: "zh"})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, u) {
			t.Fatalf("EnsureUser changed an existing user: %+v, want %+v", again, u)
		}
		got, err := db.User(ctx, 42)
		if err != nil || !reflect.DeepEqual(got, u) {
			t.Fatalf("User(42) = %+v, %v; want %+v", got, err, u)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := openDB(t)
		for _, u := range []ledger.User{
			{ID: 0},
			{ID: 1, Lang: "fr"},
			{ID: 1, TZ: "Mars/Olympus"},
			{ID: 1, Settings: ledger.Settings{SummaryAt: 24 * 60, QuietFrom: -1, QuietTo: -1}},
		} {
			unchanged(t, db, ledger.EINVALID, func() error { _, err := db.EnsureUser(ctx, u); return err })
		}
	})
}

func TestDB_User(t *testing.T) {
	db := openDB(t)
	_, err := db.User(context.Background(), 404)
	wantCode(t, err, ledger.ENOTFOUND)
}

func TestDB_Users(t *testing.T) {
	db := openDB(t)
	for _, id := range []int64{30, 10, 20} {
		mustUser(t, db, id)
	}
	us, err := db.Users(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 3 || us[0].ID != 10 || us[1].ID != 20 || us[2].ID != 30 {
		t.Fatalf("Users = %+v, want IDs 10, 20, 30", us)
	}
}

func TestDB_UpdateUser(t *testing.T) {
	ctx := context.Background()
	newSettings := func() ledger.User {
		s := ledger.DefaultSettings()
		s.SummaryAt = 21*60 + 30
		s.IdleWarn = 45 * time.Minute
		s.QuietFrom, s.QuietTo = 23*60, 8*60
		return ledger.User{Lang: "zh", TZ: "Europe/Berlin", Settings: s,
			Budgets: []ledger.MonthlyBudget{{Currency: ledger.CNY, Amount: ledger.MustDecimal("500.5")}, {Currency: ledger.USD, Amount: ledger.MustDecimal("80")}}}
	}
	t.Run("OK", func(t *testing.T) {
		db := openDB(t)
		old := mustUser(t, db, 1)
		want := newSettings()
		got, err := db.UpdateUser(ctx, act(1), want)
		if err != nil {
			t.Fatal(err)
		}
		if got.Lang != "zh" || got.TZ != "Europe/Berlin" || got.Settings != want.Settings || got.ID != 1 || !reflect.DeepEqual(got.Budgets, want.Budgets) {
			t.Fatalf("UpdateUser = %+v, want %+v", got, want)
		}
		if u, _ := db.User(ctx, 1); !reflect.DeepEqual(u, got) {
			t.Fatalf("User = %+v, want %+v", u, got)
		}
		res, err := db.Undo(ctx, act(1))
		if err != nil || res.Kind != "settings" {
			t.Fatalf("Undo = %+v, %v", res, err)
		}
		if u, _ := db.User(ctx, 1); !reflect.DeepEqual(u, old) {
			t.Fatalf("after undo User = %+v, want %+v", u, old)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		mustUser(t, db, 2)
		if _, err := db.UpdateUser(ctx, keyed(1, "k1"), newSettings()); err != nil {
			t.Fatal(err)
		}
		bad := newSettings()
		bad.TZ = "Nowhere/Land"
		other := newSettings()
		other.ID = 2
		negBudget := newSettings()
		negBudget.Budgets = []ledger.MonthlyBudget{{Currency: ledger.CNY, Amount: ledger.MustDecimal("-1")}}
		twice := newSettings()
		twice.Budgets = append(twice.Budgets, ledger.MonthlyBudget{Currency: ledger.CNY, Amount: ledger.MustDecimal("1")})
		noCurrency := newSettings()
		noCurrency.Budgets = []ledger.MonthlyBudget{{Amount: ledger.MustDecimal("1")}}
		// Each duration setting beyond the ledger's bound for it, though
		// within the month the store once allowed for all three.
		longIdle, longSilent, longRun := newSettings(), newSettings(), newSettings()
		longIdle.Settings.IdleWarn = ledger.MaxIdleWarn + time.Second
		longSilent.Settings.Silent = ledger.MaxSilent + time.Second
		longRun.Settings.LongRun = ledger.MaxLongRun + time.Second
		for _, tc := range []struct {
			name string
			a    ledger.Action
			u    ledger.User
			code string
		}{
			{"bad zone", act(1), bad, ledger.EINVALID},
			{"negative budget", act(1), negBudget, ledger.EINVALID},
			{"two budgets in one currency", act(1), twice, ledger.EINVALID},
			{"budget without a currency", act(1), noCurrency, ledger.EINVALID},
			{"idle_warn over its bound", act(1), longIdle, ledger.EINVALID},
			{"silent over its bound", act(1), longSilent, ledger.EINVALID},
			{"long_run over its bound", act(1), longRun, ledger.EINVALID},
			{"another user", act(1), other, ledger.EUNAUTHORIZED},
			{"unknown user", act(99), newSettings(), ledger.ENOTFOUND},
			{"duplicate key", keyed(1, "k1"), newSettings(), ledger.EDUPLICATE},
		} {
			t.Run(tc.name, func(t *testing.T) {
				unchanged(t, db, tc.code, func() error { _, err := db.UpdateUser(ctx, tc.a, tc.u); return err })
			})
		}
	})
}

func TestDB_Meta(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if v, ok, err := db.Meta(ctx, "offset"); err != nil || ok || v != "" {
		t.Fatalf("Meta(missing) = %q, %v, %v", v, ok, err)
	}
	for _, v := range []string{"1001", "1002"} {
		if err := db.SetMeta(ctx, "offset", v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := db.Meta(ctx, "offset"); err != nil || !ok || got != v {
			t.Fatalf("Meta = %q, %v, %v; want %q", got, ok, err, v)
		}
	}
	unchanged(t, db, ledger.EINVALID, func() error { return db.SetMeta(ctx, "", "x") })
}

func TestDB_MarkHandled(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	// A stranger's message is recorded without a user row.
	if err := db.MarkHandled(ctx, keyed(555, "tg:update:1")); err != nil {
		t.Fatal(err)
	}
	unchanged(t, db, ledger.EDUPLICATE, func() error { return db.MarkHandled(ctx, keyed(555, "tg:update:1")) })
	unchanged(t, db, ledger.EINVALID, func() error { return db.MarkHandled(ctx, act(555)) })
	// A key used by MarkHandled also blocks a real action.
	mustUser(t, db, 1)
	if err := db.MarkHandled(ctx, keyed(1, "tg:update:2")); err != nil {
		t.Fatal(err)
	}
	unchanged(t, db, ledger.EDUPLICATE, func() error {
		_, err := db.CreateRental(ctx, keyed(1, "tg:update:2"), box("box1", t0))
		return err
	})
	// Nothing to undo: MarkHandled is not undoable.
	unchanged(t, db, ledger.ENOTFOUND, func() error { _, err := db.Undo(ctx, act(1)); return err })
}
