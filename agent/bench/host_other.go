//go:build !linux

package bench

import (
	"context"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// diskTest is Linux's only (O_DIRECT, posix_fadvise): elsewhere the
// figures are skipped.
func diskTest(ctx context.Context, dir string, deadline time.Time, o diskOptions) (float64, float64, []perf.Skip) {
	why := "the disk test runs on Linux only"
	return 0, 0, []perf.Skip{hostSkip("disk_write_mbps", "%s", why), hostSkip("disk_read_mbps", "%s", why)}
}
