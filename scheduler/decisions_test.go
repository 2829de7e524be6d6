package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/view"
)

// checkDecisions runs when each test of the scheduler ends: every
// decision it recorded has its summary (and evidence, where there is
// some) by key, and each renders from the catalog in both languages.
func checkDecisions(t *testing.T, db *sqlite.DB, rentalID int64) {
	t.Helper()
	ds, err := db.Decisions(context.Background(), rentalID, 1000)
	if err != nil {
		t.Errorf("decisions: %v", err)
		return
	}
	for _, d := range ds {
		if d.SummaryMsg.IsZero() || (d.Evidence != "" && d.EvidenceMsg.IsZero()) {
			t.Errorf("decision %q / %q recorded without a message key", d.Summary, d.Evidence)
			continue
		}
		for _, m := range []ledger.Message{d.SummaryMsg, d.EvidenceMsg} {
			if m.IsZero() {
				continue
			}
			en, okEN := view.DecisionText(m, chat.LangEN, time.UTC, d.At)
			zh, okZH := view.DecisionText(m, chat.LangZH, time.UTC, d.At)
			if !okEN || !okZH || en == zh && m.Key != view.OutcomeKey && m.Key != view.LedgerErrorKey && m.Key != "e_text" {
				t.Errorf("decision message %v does not render in both languages: %q / %q", m, en, zh)
			}
		}
	}
}
