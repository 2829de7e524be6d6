package console_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConsole_UnpricedAndZone: in the terminal, an UNPRICED volume's reply
// and /spend give the command that prices it as plain text that, typed
// back, prices it; a refusal naming times shows them in the user's zone
// (Asia/Shanghai), in English and Chinese, never as UTC stamps.
func TestConsole_UnpricedAndZone(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 2, 4, 0, 0, 0, time.UTC) // 12:00 in Shanghai
	db, core := newCore(t, func() time.Time { return now })
	in := strings.Join([]string{
		"/rent v3 vast 4090 0.40/h at 08:00",
		"/storage vd3 50GB rental=v3 at 08:00",
		"/spend today",
		"/storage vd3 price=0.10/GB/month",
		"/price v3 0.50/h at 2026-10-30 11:00",
		"/settings lang=zh",
		"/price v3 0.50/h at 2026-10-30 11:00",
	}, "\n")
	got := runLines(t, core, in)
	if n := strings.Count(got, "/storage vd3 price=0.10/GB/month"); n < 2 {
		t.Errorf("the volume's reply and /spend should each give the pricing command (%d seen):\n%s", n, got)
	}
	for _, want := range []string{"Oct 30 11:00", "08:00", "10月30日 11:00"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if m := regexp.MustCompile(`\d{2}:\d{2}(:\d{2})?Z`).FindString(got); m != "" {
		t.Errorf("the terminal shows the UTC stamp %q:\n%s", m, got)
	}
	if strings.Contains(got, "<code>") {
		t.Errorf("the terminal shows HTML tags:\n%s", got)
	}
	b, err := db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Volumes) != 1 || !b.Volumes[0].Priced || b.Volumes[0].Price.String() != "0.1" {
		t.Errorf("the typed-back command did not price vd3: %+v", b.Volumes)
	}
}
