package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestConsole_ModeQuestion: in the terminal, a billing mode written
// against the platform's profile is asked about with numbered buttons, and
// the number typed records the rental in the mode chosen; "1.88 per hour"
// is a price per hour and asks nothing.
func TestConsole_ModeQuestion(t *testing.T) {
	ctx := context.Background()
	db, core := newCore(t, nil)
	in := strings.Join([]string{
		"/rent t1 autodl 4090 1.88/h per-hour",
		"1", // per-second, as AutoDL bills
		"/rent t2 autodl 4090 1.88 per hour",
	}, "\n")
	got := runLines(t, core, in)
	for _, want := range []string{"AutoDL bills per-second", "[1] ✓ per-second, as AutoDL bills  [2] per-hour, as I wrote", "[3] ✗ Cancel"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	b, err := db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t1", "t2"} {
		if x := b.Rental(name); x == nil || x.Mode != ledger.PerSecond {
			t.Errorf("%s = %+v, want a per-second rental", name, x)
		}
	}
}
