package bot

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestParse_AutoReleaseAfterBounds: the parser and the ledger agree on
// every /autorelease grace at and around the ledger's bounds, and the
// parser's refusal names those bounds.
func TestParse_AutoReleaseAfterBounds(t *testing.T) {
	for _, c := range []struct {
		src string
		d   time.Duration
	}{{"59s", 59 * time.Second}, {"30s", 30 * time.Second}, {"1m", time.Minute}, {"7d", 7 * 24 * time.Hour}, {"7d1m", 7*24*time.Hour + time.Minute}} {
		d, in := c.d, "/autorelease box1 stop after "+c.src
		_, perr := command.Parse(in, testNow, shanghai)
		lerr := ledger.AutoPolicy{Action: ledger.AutoStop, After: d}.Validate()
		if (perr == nil) != (lerr == nil) {
			t.Errorf("after %v: parser says %v, ledger says %v", d, perr, lerr)
		}
		var pe *command.ParseError
		if perr != nil && errors.As(perr, &pe) {
			msg := parseErrorText(pe, chat.LangEN)
			for _, b := range []string{chat.FormatDuration(ledger.MinAfter, chat.LangEN), chat.FormatDuration(ledger.MaxAfter, chat.LangEN)} {
				if !strings.Contains(msg, b) {
					t.Errorf("after %v: %q does not name the bound %s", d, msg, b)
				}
			}
		}
	}
}
