package view_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/view"
)

// TestLedgerMessage_ChineseRefusals makes the real store and hub refuse
// (an undo beneath an agent's stop, an order for a stopped rental, bad
// budgets) and renders each refusal for a Chinese user: it must come out
// in Chinese, naming the rental or amount, with no English sentence left.
func TestLedgerMessage_ChineseRefusals(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.Now = func() time.Time { return t0.Add(2 * time.Hour) }
	u, err := db.EnsureUser(ctx, ledger.User{ID: 1, TZ: "Asia/Shanghai", Lang: "zh"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Rental{
		Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The agent confirms a stop: the rent beneath it cannot be undone.
	o := ledger.Order{ID: "o1", RentalID: r.ID, UserID: 1, Rental: "box1", Action: wire.ActionStop, Origin: ledger.OriginAuto,
		IssuedAt: t0.Add(time.Hour), ExpiresAt: t0.Add(time.Hour + 10*time.Minute), Nonce: "n1"}
	if _, err := db.CreateOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	o.State, o.Outcome, o.UpdatedAt = ledger.OrderDone, "done", t0.Add(time.Hour)
	if _, _, err := db.UpdateOrder(ctx, o, &ledger.Event{Kind: ledger.EventStop, At: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	h, err := hub.New(hub.Config{Store: db, Now: db.Now})
	if err != nil {
		t.Fatal(err)
	}
	budget := func(amount string, cur ledger.Currency, n int) error {
		v := u
		for range n {
			v.Budgets = append(v.Budgets, ledger.MonthlyBudget{Amount: ledger.MustDecimal(amount), Currency: cur})
		}
		_, err := db.UpdateUser(ctx, ledger.Action{UserID: 1}, v)
		return err
	}
	for _, c := range []struct {
		name string
		err  func() error
		want []string
	}{
		{"undo beneath the agent's stop", func() error { _, err := db.Undo(ctx, ledger.Action{UserID: 1}); return err }, []string{"box1", "/resume box1"}},
		{"stop order for a stopped rental", func() error { _, err := h.IssueOrder(ctx, r.ID, wire.ActionStop, ledger.OriginButton); return err }, []string{"box1"}},
		{"budget not positive", func() error { return budget("-5", ledger.CNY, 1) }, []string{"-5"}},
		{"budget without currency", func() error { return budget("500", "", 1) }, []string{"500"}},
		{"two budgets in one currency", func() error { return budget("500", ledger.USD, 2) }, []string{"USD"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			if err == nil || ledger.ErrorCode(err) == ledger.EINTERNAL {
				t.Fatalf("got %v, want a ledger refusal", err)
			}
			zh := view.LedgerMessage(err, chat.LangZH, time.UTC, t0)
			if !strings.ContainsFunc(zh, func(c rune) bool { return unicode.Is(unicode.Han, c) }) {
				t.Errorf("Chinese user got %q: no Chinese", zh)
			}
			for _, w := range []string{"cannot", "nothing to", "budgets", "is not", "has no", " is "} {
				if strings.Contains(zh, w) {
					t.Errorf("Chinese user got %q: English %q left", zh, w)
				}
			}
			for _, w := range c.want {
				if !strings.Contains(zh, w) {
					t.Errorf("Chinese user got %q: want %q shown", zh, w)
				}
			}
			if en := view.LedgerMessage(err, chat.LangEN, time.UTC, t0); en == zh {
				t.Errorf("English and Chinese are the same: %q", en)
			}
		})
	}
}
