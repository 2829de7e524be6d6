package bot

import (
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// The parser refuses what the ledger would, by the ledger's bounds
// (ledger.MaxGPUCount, ledger.MaxBillingTerm, ledger.SettingBounds, …),
// and names them as below so a refusal in either language shows the
// range the ledger keeps.

// durBoundsText writes a range of durations as refusals show it: "1m..7d".
func durBoundsText(lo, hi time.Duration) string {
	return chat.FormatDuration(lo, chat.LangEN) + ".." + chat.FormatDuration(hi, chat.LangEN)
}

// countBoundsArgs are the lowest and highest GPU count, as arguments of
// the "bad_count" refusal after the count the user wrote.
func countBoundsArgs() []string {
	return []string{strconv.Itoa(ledger.MinGPUCount), strconv.Itoa(ledger.MaxGPUCount)}
}
