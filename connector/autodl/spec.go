package autodl

import (
	"net/http"

	"github.com/gpuledger/gpuledger/connector"
)

// envURL is the variable that replaces DefaultBase (docs/config.md).
const envURL = "GPULEDGER_AUTODL_URL"

// Spec is AutoDL's connector as the server lists it: a Pro instance can
// be powered off (stopped). The token is made in the console's settings
// (设置 → 开发者Token), which has no address of its own to show, so
// KeyPage is empty and the chat's words say where it is.
var Spec = connector.Spec{
	Key:     Platform,
	CanStop: true,
	Bases:   []connector.Base{{Env: envURL, Default: DefaultBase}},
	New: func(key string, base connector.BaseURLs, hc *http.Client) (connector.Client, error) {
		return connector.Made(New(Config{Token: key, Base: base[envURL], HTTP: hc}))
	},
}
