package vast_test

import (
	"testing"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/connectortest"
	"github.com/gpuledger/gpuledger/connector/vast"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
)

// TestSpec: Vast.ai's spec makes a working client against the fake from
// its documented variable, and it can stop an instance.
func TestSpec(t *testing.T) {
	f := vastfake.New("vastSPECKEY0123456789")
	defer f.Close()
	connectortest.SpecWorks(t, vast.Spec, "vastSPECKEY0123456789", connector.BaseURLs{"GPULEDGER_VAST_URL": f.Base()})
}
