package vast

import (
	"net/http"

	"github.com/gpuledger/gpuledger/connector"
)

// envURL is the variable that replaces DefaultBaseURL (docs/config.md).
const envURL = "GPULEDGER_VAST_URL"

// Spec is Vast.ai's connector as the server lists it: an instance can be
// stopped (the GPU stops billing, the disk goes on), and the key is made
// on the console's Keys page.
var Spec = connector.Spec{
	Key:     "vast",
	CanStop: true,
	Bases:   []connector.Base{{Env: envURL, Default: DefaultBaseURL}},
	KeyPage: "cloud.vast.ai/manage-keys",
	New: func(key string, base connector.BaseURLs, hc *http.Client) (connector.Client, error) {
		return connector.Made(New(Config{APIKey: key, BaseURL: base[envURL], HTTPClient: hc}))
	},
}
