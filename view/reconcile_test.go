package view

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func usd(minor int64) ledger.Money { return ledger.Money{Currency: ledger.USD, Minor: minor} }

func reconcileFixture() []ledger.Reconciliation {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0)
	return []ledger.Reconciliation{
		{
			Platform: "runpod", From: from, To: to, Source: "billing",
			LedgerTotal: usd(1000), PlatformTotal: usd(1250), DriftTotal: usd(250), Cause: ledger.CausePrice,
			Lines: []ledger.ReconcileLine{
				{RentalID: 1, Name: "box<1>", PlatformID: "abc123", Ledger: usd(1000), Platform: usd(1200), PlatformOK: true, Drift: usd(200), Cause: ledger.CausePrice},
				{Name: "stray", PlatformID: "zzz9", Platform: usd(50), PlatformOK: true, Drift: usd(50), Cause: ledger.CauseNotInLedger},
				{RentalID: 2, Name: "even", PlatformID: "e1", Ledger: usd(300), Platform: usd(300), PlatformOK: true},
			},
		},
		{
			Platform: "vast", From: from, To: to, Source: "balance",
			LedgerTotal: usd(500), PlatformTotal: usd(480), DriftTotal: usd(-20), Cause: ledger.CauseTime,
		},
		{Platform: "lambda", From: from, To: to, LedgerTotal: usd(700), Err: "the platform is unavailable"},
	}
}

func TestReconcileText(t *testing.T) {
	rs := reconcileFixture()
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{"en", []string{
			"2026-11", "<b>RunPod</b>", "ledger $10.00", "platform $12.50", "drift +$2.50",
			"box&lt;1&gt;", "abc123", "drift +$2.00", "price", "stray", "no rental",
			"<b>Vast.ai</b>", "drift -$0.20", "balance", "running time",
			"<b>Lambda</b>", "could not be read", "the platform is unavailable", "ledger $7.00",
			"even", "no drift",
		}},
		{"zh", []string{
			"2026-11", "<b>RunPod</b>", "账本 $10.00", "平台 $12.50", "差额 +$2.50", "box&lt;1&gt;",
			"价格", "无法读取", "the platform is unavailable", "余额",
		}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			got := ReconcileText(tc.lang, time.UTC, rs)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("ReconcileText(%s) lacks %q:\n%s", tc.lang, w, got)
				}
			}
			if strings.Contains(got, "%!") || strings.Contains(got, "reconcile_") {
				t.Errorf("ReconcileText(%s) has a broken message:\n%s", tc.lang, got)
			}
		})
	}
	t.Run("Empty", func(t *testing.T) {
		got := ReconcileText("en", time.UTC, nil)
		if !strings.Contains(got, "/connect") {
			t.Errorf("empty reconciliation should say how to connect: %q", got)
		}
	})
	t.Run("Lambda's line without a platform amount", func(t *testing.T) {
		r := rs[0]
		r.Lines = []ledger.ReconcileLine{{RentalID: 1, Name: "b", Ledger: usd(100)}}
		got := ReconcileText("en", time.UTC, []ledger.Reconciliation{r})
		if !strings.Contains(got, "no per-instance amount") {
			t.Errorf("a line without PlatformOK should say the platform gives no amount:\n%s", got)
		}
	})
}

func TestReconcileLine(t *testing.T) {
	rs := reconcileFixture()
	for _, tc := range []struct {
		r    ledger.Reconciliation
		lang string
		want []string
	}{
		{rs[0], "en", []string{"RunPod", "$10.00", "$12.50", "+$2.50", "price"}},
		{rs[1], "zh", []string{"Vast.ai", "-$0.20", "运行时长"}},
		{rs[2], "en", []string{"Lambda", "could not be read", "unavailable"}},
	} {
		got := ReconcileLine(tc.lang, tc.r)
		if strings.Contains(got, "\n") {
			t.Errorf("ReconcileLine is one line: %q", got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("ReconcileLine(%s, %s) = %q, lacks %q", tc.lang, tc.r.Platform, got, w)
			}
		}
	}
}
