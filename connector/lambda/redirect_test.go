package lambda_test

import (
	"net/http"
	"testing"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/connectortest"
	"github.com/gpuledger/gpuledger/connector/lambda"
)

// TestRedirect_KeyStaysWithOrigin: the configured API answers every
// request with a redirect to another origin (another port of the same
// host). Each call fails with ErrBadAnswer saying so, and the other
// origin receives no request at all, so the key never reaches it.
func TestRedirect_KeyStaysWithOrigin(t *testing.T) {
	const secret = "secret_redirect_0123456789abcdef"
	connectortest.KeyStaysWithOrigin(t, secret, false, func(origin string, hc *http.Client) (connector.Client, error) { // no balance call in Lambda's API
		return lambda.New(lambda.Config{Key: secret, BaseURL: origin + "/api/v1", HTTPClient: hc})
	})
}
