package bot

import (
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestUndoHelp_SaysTheBound: the help of /undo names UndoAskAfter as it
// is, in both languages.
func TestUndoHelp_SaysTheBound(t *testing.T) {
	n := strconv.Itoa(int(UndoAskAfter / time.Minute))
	for _, lang := range []string{"en", "zh"} {
		if h := helpText(lang, "undo"); !strings.Contains(h, n+" min") && !strings.Contains(h, n+" 分钟") {
			t.Errorf("the %s help of /undo does not name %s minutes: %q", lang, n, h)
		}
	}
}
