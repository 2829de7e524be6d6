package runpod_test

import (
	"testing"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/connectortest"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
)

// TestSpec: RunPod's spec makes a working client against the fake from
// its two documented variables, and it can stop a pod.
func TestSpec(t *testing.T) {
	f := runpodfake.New("rpa_SPECKEY0123456789")
	defer f.Close()
	connectortest.SpecWorks(t, runpod.Spec, "rpa_SPECKEY0123456789", connector.BaseURLs{
		"GPULEDGER_RUNPOD_URL":         f.RESTURL(),
		"GPULEDGER_RUNPOD_GRAPHQL_URL": f.GraphQLURL(),
	})
}
