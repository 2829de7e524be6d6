package lambda

import (
	"net/http"

	"github.com/gpuledger/gpuledger/connector"
)

// envURL is the variable that replaces DefaultBaseURL (docs/config.md).
const envURL = "GPULEDGER_LAMBDA_URL"

// Spec is Lambda's connector as the server lists it: Lambda has no stop,
// only terminate, so CanStop is false and a release through the API
// terminates; the key is made on the API keys page.
var Spec = connector.Spec{
	Key:     "lambda",
	CanStop: false,
	Bases:   []connector.Base{{Env: envURL, Default: DefaultBaseURL}},
	KeyPage: "cloud.lambda.ai/api-keys",
	New: func(key string, base connector.BaseURLs, hc *http.Client) (connector.Client, error) {
		return connector.Made(New(Config{Key: key, BaseURL: base[envURL], HTTPClient: hc}))
	},
}
