package autodl_test

import (
	"net/http"
	"testing"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/connectortest"
)

// TestRedirect_KeyStaysWithOrigin: the configured API answers every
// request with a redirect to another origin (another port of the same
// host). Each call fails with ErrBadAnswer saying so, and the other
// origin receives no request at all, so the key never reaches it.
func TestRedirect_KeyStaysWithOrigin(t *testing.T) {
	const secret = "autodlREDIRECTtoken0123456789"
	connectortest.KeyStaysWithOrigin(t, secret, true, func(origin string, hc *http.Client) (connector.Client, error) {
		return autodl.New(autodl.Config{Token: secret, Base: origin, HTTP: hc})
	})
}
