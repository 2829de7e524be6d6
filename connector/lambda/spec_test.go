package lambda_test

import (
	"testing"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/connectortest"
	"github.com/gpuledger/gpuledger/connector/lambda"
	"github.com/gpuledger/gpuledger/connector/lambda/lambdafake"
)

// TestSpec: Lambda's spec makes a working client against the fake from
// its documented variable, and says it cannot stop (Lambda terminates
// only), as its client does.
func TestSpec(t *testing.T) {
	f := lambdafake.New("secret_SPECKEY0123456789")
	defer f.Close()
	connectortest.SpecWorks(t, lambda.Spec, "secret_SPECKEY0123456789", connector.BaseURLs{"GPULEDGER_LAMBDA_URL": f.URL})
}
