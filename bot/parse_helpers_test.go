package bot

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
)

// The clock and helpers of the tests that read the parser's commands and
// errors through the core (the parser's own tests have theirs in
// bot/command).
var (
	shanghai = mustLoc("Asia/Shanghai")
	// testNow is Sunday 2026-11-01 12:00 in Shanghai.
	testNow = time.Date(2026, 11, 1, 12, 0, 0, 0, shanghai)
)

func mustLoc(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func dec(s string) ledger.Decimal { return ledger.MustDecimal(s) }

func at(y, mo, d, h, mi, s int) time.Time {
	return time.Date(y, time.Month(mo), d, h, mi, s, 0, shanghai)
}

// show renders a command for comparison: its type and its fields as JSON.
func show(c command.Command) string {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("%T <%v>", c, err)
	}
	return fmt.Sprintf("%T %s", c, b)
}
