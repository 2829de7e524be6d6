package bot

import (
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestUndoKinds_Catalog: every kind the ledger's Undo may report has its
// words in both languages, so /undo never shows a bare kind.
func TestUndoKinds_Catalog(t *testing.T) {
	for _, k := range ledger.UndoableKinds() {
		m, ok := messages[undoKindKey(k)]
		if !ok {
			t.Errorf("no message %q for undo kind %q", undoKindKey(k), k)
			continue
		}
		if m[0] == "" || m[1] == "" {
			t.Errorf("message %q for undo kind %q lacks a language: %q", undoKindKey(k), k, m)
		}
	}
}
