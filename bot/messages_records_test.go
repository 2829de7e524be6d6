package bot

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestRecordTexts_Catalog: both languages of every reply of /records,
// /delete and /fix use the same arguments and render them (a number given
// to a %d verb would show as "%!d(string=30)": the catalog renders its
// arguments as text), and every record kind has its word.
func TestRecordTexts_Catalog(t *testing.T) {
	for _, err := range recordTexts.Check() {
		t.Error(err)
	}
	for _, k := range ledger.RecordKinds() {
		if m, ok := recordTexts["rec_"+string(k)]; !ok || m[0] == "" || m[1] == "" {
			t.Errorf("no words for record kind %q", k)
		}
	}
	verb := regexp.MustCompile(`%\[(\d)\]`)
	for key, m := range recordTexts {
		var args []any
		for _, v := range verb.FindAllStringSubmatch(m[0], -1) {
			for n := int(v[1][0] - '0'); len(args) < n; {
				args = append(args, 30+len(args))
			}
		}
		for _, lang := range []string{"en", "zh"} {
			if got := recordTexts.Render(lang, key, args...); strings.Contains(got, "%!") {
				t.Errorf("%s in %s = %q", key, lang, got)
			}
		}
	}
}
