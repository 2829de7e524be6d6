package autodl_test

import (
	"testing"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/autodl/autodlfake"
	"github.com/gpuledger/gpuledger/connector/connectortest"
)

// TestSpec: AutoDL's spec makes a working client against the fake from
// its documented variable, and it can power off a Pro instance.
func TestSpec(t *testing.T) {
	f := autodlfake.New("autodlSPECKEY0123456789")
	defer f.Close()
	connectortest.SpecWorks(t, autodl.Spec, "autodlSPECKEY0123456789", connector.BaseURLs{"GPULEDGER_AUTODL_URL": f.URL})
}
