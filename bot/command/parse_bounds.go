package command

import (
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// The parser refuses what the ledger would, by the ledger's bounds
// (ledger.MaxGPUCount, ledger.MaxBillingTerm, ledger.SettingBounds, …),
// and names them as below so a refusal in either language shows the
// range the ledger keeps.

// durBoundsText is a range of durations as a refusal's argument, shown in
// the reader's language: "1m..7d", "1分钟..7天".
func durBoundsText(lo, hi time.Duration) string { return durRange(lo, hi) }

// countBoundsArgs are the lowest and highest GPU count, as arguments of
// the "bad_count" refusal after the count the user wrote.
func countBoundsArgs() []string {
	return []string{strconv.Itoa(ledger.MinGPUCount), strconv.Itoa(ledger.MaxGPUCount)}
}
