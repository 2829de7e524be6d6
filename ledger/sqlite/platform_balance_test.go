package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func apiBalance(user int64, amount string, when time.Time) ledger.BalanceRecord {
	return ledger.BalanceRecord{UserID: user, Platform: "runpod", Amount: ledger.MustDecimal(amount), Currency: ledger.USD, At: when}
}

func TestDB_RecordPlatformBalance(t *testing.T) {
	ctx := context.Background()
	t.Run("UpdateInPlace", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		first, err := db.RecordPlatformBalance(ctx, apiBalance(1, "50", t0))
		if err != nil || !first.API || first.ID == 0 {
			t.Fatalf("RecordPlatformBalance = %+v, %v", first, err)
		}
		steps := []struct {
			name  string
			do    func()
			b     ledger.BalanceRecord
			reuse bool
		}{
			{"a minute later", nil, apiBalance(1, "49.5", at(time.Minute)), true},
			{"59 minutes after the first", nil, apiBalance(1, "49", at(59*time.Minute)), true},
			{"an hour after the kept one", nil, apiBalance(1, "48", at(2*time.Hour)), false},
			{"after a top-up", func() {
				if _, err := db.AddTopUp(ctx, ledger.Action{UserID: 1, At: at(2*time.Hour + time.Minute)},
					ledger.TopUp{Platform: "runpod", Amount: ledger.MustDecimal("10"), Currency: ledger.USD}); err != nil {
					t.Fatal(err)
				}
			}, apiBalance(1, "57.9", at(2*time.Hour+2*time.Minute)), false},
			{"after a typed balance", func() {
				if _, err := db.RecordBalance(ctx, ledger.Action{UserID: 1, At: at(2*time.Hour + 3*time.Minute)},
					ledger.BalanceRecord{Platform: "runpod", Amount: ledger.MustDecimal("57.8"), Currency: ledger.USD}); err != nil {
					t.Fatal(err)
				}
			}, apiBalance(1, "57.7", at(2*time.Hour+4*time.Minute)), false},
			{"an earlier time", nil, apiBalance(1, "60", at(2*time.Hour)), false},
			{"another currency", nil, ledger.BalanceRecord{UserID: 1, Platform: "runpod", Amount: ledger.MustDecimal("1"), Currency: ledger.CNY, At: at(2*time.Hour + 5*time.Minute)}, false},
		}
		prev := first
		for _, s := range steps {
			if s.do != nil {
				s.do()
			}
			got, err := db.RecordPlatformBalance(ctx, s.b)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if (got.ID == prev.ID) != s.reuse {
				t.Fatalf("%s: ID %d after %d; want updated in place = %v", s.name, got.ID, prev.ID, s.reuse)
			}
			prev = got
		}
		b, err := db.Book(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		api := 0
		for _, r := range b.Balances {
			if r.API {
				api++
			}
		}
		if len(b.Balances) != 7 || api != 6 {
			t.Fatalf("balances %+v: want 7 rows, 6 from the API", b.Balances)
		}
	})
	t.Run("BalancesUseIt", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		if _, err := db.RecordBalance(ctx, act(1), ledger.BalanceRecord{Platform: "runpod", Amount: ledger.MustDecimal("100"), Currency: ledger.USD}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateRental(ctx, act(1), synced("train", t0)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.RecordPlatformBalance(ctx, apiBalance(1, "12.5", at(time.Hour))); err != nil {
			t.Fatal(err)
		}
		b, err := db.Book(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		st := ledger.Balances(b, at(time.Hour))["runpod"]
		if got := st.Balance.String(); got != "12.50" || !st.Recorded || !st.Since.Equal(at(time.Hour)) {
			t.Fatalf("balance = %s since %v; want the API's 12.50 since %v", got, st.Since, at(time.Hour))
		}
		// 0.69/h from 12.50: runs out 18.115... hours later.
		if st.RunsOutAt == nil || st.RunsOutAt.Sub(at(time.Hour)).Round(time.Hour) != 18*time.Hour {
			t.Fatalf("runway to %v, want about 18 h after the API balance", st.RunsOutAt)
		}
		// Undo removes the user's own changes only: the rent, then the typed
		// balance; the platform's balance stays.
		for range 2 {
			if _, err := db.Undo(ctx, act(1)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Undo(ctx, act(1)); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("a third undo: %v, want nothing to undo", err)
		}
		b, _ = db.Book(ctx, 1)
		if len(b.Balances) != 1 || !b.Balances[0].API || b.Balances[0].Amount.String() != "12.5" {
			t.Fatalf("after undo balances = %+v, want only the API's", b.Balances)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := openDB(t)
		mustUser(t, db, 1)
		for _, b := range []ledger.BalanceRecord{
			{UserID: 1, Platform: "", Amount: ledger.MustDecimal("1"), Currency: ledger.USD},
			{UserID: 1, Platform: "runpod", Amount: ledger.MustDecimal("1"), Currency: "usd"},
			{UserID: 1, Platform: "runpod", Amount: ledger.MustDecimal("1")},
			{Platform: "runpod", Amount: ledger.MustDecimal("1"), Currency: ledger.USD},
		} {
			_, err := db.RecordPlatformBalance(ctx, b)
			wantCode(t, err, ledger.EINVALID)
		}
		_, err := db.RecordPlatformBalance(ctx, apiBalance(9, "1", t0))
		wantCode(t, err, ledger.ENOTFOUND)
		if b, _ := db.Book(ctx, 1); len(b.Balances) != 0 {
			t.Fatalf("refused balances stored: %+v", b.Balances)
		}
	})
}
