package view_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// TestLedgerMessage_EveryKey walks every keyed ledger error
// (ledger.ErrorKeys): each renders in English and in Chinese, the two
// differ, each shows every one of the ledger's arguments with no
// formatting fault, and no text uses an argument the key does not carry.
func TestLedgerMessage_EveryKey(t *testing.T) {
	verb := regexp.MustCompile(`%\[(\d+)\]`)
	keys := ledger.ErrorKeys()
	if len(keys) == 0 {
		t.Fatal("the ledger has no keyed errors")
	}
	for key, n := range keys {
		args := make([]any, n)
		for i := range args {
			args[i] = fmt.Sprintf("ARG%d", i+1)
		}
		err := ledger.Errorc(ledger.EINVALID, key, args...)
		got := map[string]string{}
		for _, lang := range []string{chat.LangEN, chat.LangZH} {
			s := view.LedgerMessage(err, lang, time.UTC, time.Time{})
			got[lang] = s
			if strings.Contains(s, "%!") || strings.HasPrefix(s, "ledger: ") {
				t.Errorf("%s in %s: %q has a formatting fault or no words", key, lang, s)
			}
			for i := range args {
				if !strings.Contains(s, fmt.Sprintf("ARG%d", i+1)) {
					t.Errorf("%s in %s: %q does not show argument %d", key, lang, s, i+1)
				}
			}
		}
		en, _ := view.LedgerErrorTexts(key)
		for _, m := range verb.FindAllStringSubmatch(en, -1) {
			if i, _ := strconv.Atoi(m[1]); i > n {
				t.Errorf("%s: the English uses argument %d, the ledger gives %d", key, i, n)
			}
		}
		if got[chat.LangZH] == got[chat.LangEN] {
			t.Errorf("%s: no Chinese text (%q)", key, got[chat.LangZH])
		}
	}
}

// TestLedgerMessage_NoKey: an error made with ledger.Errorf shows its
// English message in either language; an error that is not the ledger's
// shows nothing of itself.
func TestLedgerMessage_NoKey(t *testing.T) {
	err := fmt.Errorf("apply: %w", ledger.Errorf(ledger.ENOTFOUND, "no order %q", "o-1"))
	for _, lang := range []string{chat.LangEN, chat.LangZH} {
		if got := view.LedgerMessage(err, lang, time.UTC, time.Time{}); got != `no order "o-1"` {
			t.Errorf("%s: %q", lang, got)
		}
		if got := view.LedgerMessage(fmt.Errorf("disk I/O at /secret/path"), lang, time.UTC, time.Time{}); got != "internal error" {
			t.Errorf("%s: a foreign error shows %q", lang, got)
		}
	}
}
