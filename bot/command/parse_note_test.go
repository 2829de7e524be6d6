package command

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestParse_ChargeNoteFitsTheLedger: a note longer than the ledger keeps
// is shortened, with an ellipsis, to a note the ledger accepts, in ASCII
// and in Chinese.
func TestParse_ChargeNoteFitsTheLedger(t *testing.T) {
	for _, word := range []string{strings.Repeat("x", 300), strings.Repeat("镜像", 150), strings.Repeat("y", ledger.MaxNoteRunes+1)} {
		cmd, err := Parse("/charge box1 5 "+word, testNow, shanghai)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		c, ok := cmd.(ChargeCmd)
		if !ok {
			t.Fatalf("Parse = %T, want ChargeCmd", cmd)
		}
		if n := utf8.RuneCountInString(c.Note); n > ledger.MaxNoteRunes || !strings.HasSuffix(c.Note, "…") {
			t.Errorf("note of %d runes became %d runes (%q…), want at most %d ending in …", utf8.RuneCountInString(word), n, string([]rune(c.Note)[:10]), ledger.MaxNoteRunes)
		}
	}
	exact := strings.Repeat("z", ledger.MaxNoteRunes)
	if cmd, err := Parse("/charge box1 5 "+exact, testNow, shanghai); err != nil || cmd.(ChargeCmd).Note != exact {
		t.Errorf("a note of exactly %d runes was changed: %v", ledger.MaxNoteRunes, err)
	}
}
