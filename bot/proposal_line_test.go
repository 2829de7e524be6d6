package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestRentCommand_ReadableAndParsesBack: the /rent line a proposal shows
// is what the user may copy and edit, so a model with a space keeps its
// parts apart ("2xA100-80GB", not "2xA10080GB") and the line parses back
// to the same rental, for every model the parser knows.
func TestRentCommand_ReadableAndParsesBack(t *testing.T) {
	now := time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC)
	gpus := []string{"A100 80GB", "RTX 4090 24GB"}
	gpus = append(gpus, command.KnownGPUs()...)
	for _, gpu := range gpus {
		for _, n := range []int{1, 2, 8} {
			c := command.RentCmd{Name: "box1", Platform: "runpod", GPU: gpu, GPUCount: n,
				Price: &command.PriceSpec{Amount: ledger.MustDecimal("1.64"), Unit: ledger.UnitHour}, Currency: ledger.USD}
			line := rentCommand(c)
			if gpu == "A100 80GB" && !strings.Contains(line, "A100-80GB") {
				t.Errorf("%d×%s: line %q lacks A100-80GB", n, gpu, line)
			}
			if gpu == "RTX 4090" && !strings.Contains(line, "RTX4090") {
				t.Errorf("%d×%s: line %q lacks RTX4090", n, gpu, line)
			}
			got, err := command.Parse(line, now, time.UTC)
			if err != nil {
				t.Errorf("%q: %v", line, err)
				continue
			}
			r, ok := got.(command.RentCmd)
			if !ok || r.GPU != gpu || r.GPUCount != n {
				t.Errorf("%q parsed to %#v, want %d×%s", line, got, n, gpu)
			}
		}
	}
}
