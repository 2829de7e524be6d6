//go:build !(cgo && linux)

package bench

import (
	"context"
	"strings"
	"testing"
)

// A binary built without cgo measures no GPU and says why.
func TestMeasureGPUs_Stub(t *testing.T) {
	gpus, skips, info := MeasureGPUs(context.Background(), GPUOptions{})
	if len(gpus) != 0 || len(skips) != 1 || skips[0].What != "gpu" || skips[0].GPU != -1 ||
		!strings.Contains(skips[0].Why, "no CUDA driver: this binary was built without cgo") || info.Source != "none" {
		t.Errorf("gpus %+v skips %+v info %+v", gpus, skips, info)
	}
}
