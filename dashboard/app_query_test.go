package dashboard_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/dashboard"
)

// TestServer_AppTeamQuery: the app's page asked with the query of a team
// reply's button (?team=ID, chat.TeamAppURL) is the same page, under the
// same policy and tag, so a cached copy serves both; a query past
// MaxQuery is refused as on any other path.
func TestServer_AppTeamQuery(t *testing.T) {
	e := newEnv(t, nil)
	plain := e.do("GET", dashboard.PathApp, "")
	team := e.do("GET", dashboard.PathApp+"?team=3", "")
	if team.Code != http.StatusOK || !bytes.Equal(team.Body.Bytes(), plain.Body.Bytes()) {
		t.Fatalf("GET %s?team=3: %d, body the index's: %v", dashboard.PathApp, team.Code, bytes.Equal(team.Body.Bytes(), plain.Body.Bytes()))
	}
	h := team.Header()
	if h.Get("Content-Security-Policy") != dashboard.CSP || h.Get("Cache-Control") != "no-cache" || h.Get("ETag") == "" || h.Get("ETag") != plain.Header().Get("ETag") {
		t.Errorf("headers with the query %v, want the index's policy, caching and tag %s", h, plain.Header().Get("ETag"))
	}
	if nm := e.do("GET", dashboard.PathApp+"?team=3", "", "If-None-Match", plain.Header().Get("ETag")); nm.Code != http.StatusNotModified {
		t.Errorf("If-None-Match with the query: %d, want 304", nm.Code)
	}
	long := e.do("GET", dashboard.PathApp+"?team="+strings.Repeat("9", dashboard.MaxQuery), "")
	if long.Code != http.StatusBadRequest {
		t.Errorf("a query past MaxQuery: %d, want 400", long.Code)
	}
}
