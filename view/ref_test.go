package view

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestRefTexts_Check(t *testing.T) {
	for _, err := range refTexts.Check() {
		t.Error(err)
	}
}

// TestReuseNote: the note names each earlier rental of the name by its
// dates and address, in the reader's zone and language, and is empty for
// a name used once.
func TestReuseNote(t *testing.T) {
	sh, _ := time.LoadLocation("Asia/Shanghai")
	at := func(s string) time.Time { t, _ := time.ParseInLocation("2006-01-02 15:04", s, sh); return t }
	rent := func(id int64, start, end string) *ledger.Rental {
		r := &ledger.Rental{ID: id, Name: "yolo", Events: []ledger.Event{{Kind: ledger.EventStart, At: at(start)}}}
		if end != "" {
			r.Events = append(r.Events, ledger.Event{Kind: ledger.EventRelease, At: at(end)})
		}
		return r
	}
	now := at("2026-11-10 12:00")
	a, b, c := rent(1, "2026-11-02 01:30", "2026-11-05 09:00"), rent(2, "2026-11-06 10:00", "2026-11-06 11:00"), rent(3, "2026-11-10 10:00", "")
	if n := ReuseNote(a, []*ledger.Rental{a}, sh, now, "en"); n != "" {
		t.Errorf("a name used once: %q", n)
	}
	en := ReuseNote(b, []*ledger.Rental{a, b}, sh, now, "en")
	for _, w := range []string{"earlier yolo (Nov 2 – Nov 5)", "yolo@2026-11-02"} {
		if !strings.Contains(en, w) {
			t.Errorf("en note %q lacks %q", en, w)
		}
	}
	zh := ReuseNote(c, []*ledger.Rental{a, b, c}, sh, now, "zh")
	for _, w := range []string{"yolo@2026-11-06", "yolo@2026-11-02", "11月2日 – 11月5日"} {
		if !strings.Contains(zh, w) {
			t.Errorf("zh note %q lacks %q", zh, w)
		}
	}
	if got := TookNote(c, []*ledger.Rental{a, b, c}, sh, now, "en"); !strings.Contains(got, "yolo@2026-11-10") || !strings.Contains(got, "yolo@2026-11-06") {
		t.Errorf("TookNote = %q", got)
	}
	if got := TookNote(a, []*ledger.Rental{a}, sh, now, "en"); got != "" {
		t.Errorf("TookNote of a name used once = %q", got)
	}
}
