package runpod

import (
	"net/http"

	"github.com/gpuledger/gpuledger/connector"
)

// The variables that replace the documented bases (docs/config.md).
const (
	envURL        = "GPULEDGER_RUNPOD_URL"
	envGraphQLURL = "GPULEDGER_RUNPOD_GRAPHQL_URL"
)

// Spec is RunPod's connector as the server lists it: a pod can be
// stopped (the volume stays and bills at the stopped rate), and the key
// is made in the console's settings.
var Spec = connector.Spec{
	Key:     Platform,
	CanStop: true,
	Bases: []connector.Base{
		{Env: envURL, Default: DefaultBaseURL},
		{Env: envGraphQLURL, Default: DefaultGraphQLURL},
	},
	KeyPage: "runpod.io/console/user/settings",
	New: func(key string, base connector.BaseURLs, hc *http.Client) (connector.Client, error) {
		return connector.Made(New(Config{APIKey: key, BaseURL: base[envURL], GraphQLURL: base[envGraphQLURL], HTTPClient: hc}))
	},
}
