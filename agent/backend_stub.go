//go:build !(cgo && linux)

package agent

import (
	"context"
	"fmt"
	"time"
)

// NVMLAvailable reports whether this build can use NVML (cgo on Linux).
const NVMLAvailable = false

// OpenNVML fails in builds without cgo or off Linux: such a binary can only
// simulate GPUs (--simulate) or report that it cannot see them.
func OpenNVML(ctx context.Context, timeout time.Duration) (GPUSource, error) {
	return nil, fmt.Errorf("%w: this binary was built without cgo", ErrNoNVML)
}
