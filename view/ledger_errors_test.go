package view_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// TestLedgerMessage_EveryKey walks every keyed ledger error: each renders
// in English and in Chinese, the two differ, and each shows every one of
// the ledger's arguments with no formatting fault.
func TestLedgerMessage_EveryKey(t *testing.T) {
	verb := regexp.MustCompile(`%\[(\d+)\]`)
	texts := ledger.ErrorTexts()
	if len(texts) == 0 {
		t.Fatal("the ledger has no keyed errors")
	}
	for key, en := range texts {
		n := 0
		for _, m := range verb.FindAllStringSubmatch(en, -1) {
			var i int
			fmt.Sscan(m[1], &i)
			n = max(n, i)
		}
		args := make([]any, n)
		for i := range args {
			args[i] = fmt.Sprintf("ARG%d", i+1)
		}
		err := ledger.Errorc(ledger.EINVALID, key, args...)
		if strings.Contains(err.Message, "%!") {
			t.Errorf("%s: ledger text %q", key, err.Message)
		}
		got := map[string]string{}
		for _, lang := range []string{chat.LangEN, chat.LangZH} {
			s := view.LedgerMessage(err, lang, time.UTC, time.Time{})
			got[lang] = s
			if strings.Contains(s, "%!") {
				t.Errorf("%s in %s: %q has a formatting fault", key, lang, s)
			}
			for i := range args {
				if !strings.Contains(s, fmt.Sprintf("ARG%d", i+1)) {
					t.Errorf("%s in %s: %q does not show argument %d", key, lang, s, i+1)
				}
			}
		}
		if got[chat.LangEN] != err.Message {
			t.Errorf("%s: English %q differs from the ledger's %q", key, got[chat.LangEN], err.Message)
		}
		if got[chat.LangZH] == got[chat.LangEN] {
			t.Errorf("%s: no Chinese text (%q)", key, got[chat.LangZH])
		}
	}
}
