// Package runpodfake is a fake of the RunPod APIs the runpod connector
// calls, for tests: the REST v1 API (GET /pods, POST /pods/{id}/stop,
// DELETE /pods/{id}, GET /billing/pods; shapes as in
// docs.runpod.io/api-reference/openapi.json) and the GraphQL API's
// `myself` query (api.runpod.io/graphql). Pods and billing records are
// kept as raw JSON objects so that a test can give a field in any shape
// the real API might send (costPerHr as "0.74" or 0.74, or missing), and
// faults (statuses, HTML, slowness) can replace any answer.
//
// A Server is safe for concurrent use.
package runpodfake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Pod is one pod as GET /pods lists it: a JSON object.
type Pod map[string]any

// NewPod returns a pod with the documented fields (docs.runpod.io
// api-reference/pods/GET/pods): id, name, desiredStatus, costPerHr
// (omitted when nil), adjustedCostPerHr, gpu{id,count,displayName},
// lastStartedAt and lastStatusChange.
func NewPod(id, name, status string, costPerHr any, gpu string, count int, started time.Time) Pod {
	p := Pod{
		"id":                id,
		"name":              name,
		"desiredStatus":     status,
		"adjustedCostPerHr": 0.69,
		"gpu":               map[string]any{"id": "NVIDIA " + gpu, "count": count, "displayName": gpu, "securePrice": 0.69},
		"image":             "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04",
		"interruptible":     false,
		"lastStartedAt":     started.UTC().Format("2006-01-02T15:04:05.000Z"),
		"lastStatusChange":  "Rented by User: " + JSDate(started),
		"volumeInGb":        20,
		"containerDiskInGb": 50,
	}
	if costPerHr != nil {
		p["costPerHr"] = costPerHr
	}
	return p
}

// JSDate formats t the way RunPod's lastStatusChange does (a JavaScript
// Date's toString): "Fri Jul 12 2024 15:14:40 GMT-0400 (Eastern Daylight
// Time)"; here always in UTC.
func JSDate(t time.Time) string {
	return t.UTC().Format("Mon Jan 02 2006 15:04:05 GMT-0700") + " (Coordinated Universal Time)"
}

// Server is a running fake. Set its fields through the methods; the
// zero state has no pods, a balance of 0 and no faults.
type Server struct {
	*httptest.Server
	// Key is the API key the fake accepts (as a Bearer header, or as
	// ?api_key= on GraphQL, as runpod-python sends it).
	Key string

	mu         sync.Mutex
	pods       []Pod
	balance    any
	spend      any
	billing    []map[string]any
	gqlErrors  []map[string]any
	fault      http.HandlerFunc
	unknownSt  int
	calls      map[string]int
	lastQuery  map[string]string
	myselfNull bool
}

// New starts a fake that accepts key.
func New(key string) *Server {
	s := &Server{Key: key, balance: json.Number("0"), unknownSt: http.StatusNotFound, calls: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/pods", s.listPods)
	mux.HandleFunc("POST /v1/pods/{id}/stop", s.stopPod)
	mux.HandleFunc("DELETE /v1/pods/{id}", s.deletePod)
	mux.HandleFunc("GET /v1/billing/pods", s.billingPods)
	mux.HandleFunc("POST /graphql", s.graphql)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls[r.Method+" "+r.URL.Path]++
		if s.lastQuery == nil {
			s.lastQuery = map[string]string{}
		}
		s.lastQuery[r.URL.Path] = r.URL.RawQuery
		f := s.fault
		s.mu.Unlock()
		if f != nil {
			f(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	return s
}

// RESTURL is the base to give the connector as its REST base.
func (s *Server) RESTURL() string { return s.URL + "/v1" }

// GraphQLURL is the URL to give the connector as its GraphQL URL.
func (s *Server) GraphQLURL() string { return s.URL + "/graphql" }

// SetPods replaces the account's pods, in list order.
func (s *Server) SetPods(pods ...Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods = append([]Pod(nil), pods...)
}

// Pods returns a copy of the account's pods.
func (s *Server) Pods() []Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Pod(nil), s.pods...)
}

// SetBalance sets myself.clientBalance and currentSpendPerHr, as given
// (a json.Number, a string, nil for a null, anything for a wrong type).
func (s *Server) SetBalance(clientBalance, currentSpendPerHr any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balance, s.spend = clientBalance, currentSpendPerHr
}

// SetBilling sets the records GET /billing/pods answers (the fake does
// not filter them: the real API's bucketing is the platform's).
func (s *Server) SetBilling(records ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.billing = records
}

// SetGraphQLErrors makes every GraphQL answer a 200 with this "errors"
// array and a null data (nil: none).
func (s *Server) SetGraphQLErrors(errs ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gqlErrors = errs
}

// SetMyselfNull makes GraphQL answer {"data":{"myself":null}}.
func (s *Server) SetMyselfNull(null bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.myselfNull = null
}

// SetUnknownPodStatus sets the status a stop or delete of an unknown pod
// answers: 404 by default; the v1 reference documents only "400 Invalid
// Pod ID" for these operations.
func (s *Server) SetUnknownPodStatus(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unknownSt = code
}

// SetFault makes h answer every request instead of the fake (nil: none).
func (s *Server) SetFault(h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = h
}

// Calls returns how many requests "METHOD /path" has had.
func (s *Server) Calls(methodPath string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[methodPath]
}

// LastQuery returns the raw query string of the last request to path.
func (s *Server) LastQuery(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastQuery[path]
}

// Status is a fault: answer code with body as contentType, plus headers
// given as name, value pairs.
func Status(code int, contentType, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// Slow is a fault: wait d (or until the client gives up), then answer 200 [].
func Slow(d time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// Read the body first, so the server notices the client hang up.
		io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		writeJSON(w, http.StatusOK, []any{})
	}
}

func (s *Server) authorized(r *http.Request, queryKey bool) bool {
	if s.Key == "" {
		return true
	}
	if r.Header.Get("Authorization") == "Bearer "+s.Key {
		return true
	}
	return queryKey && r.URL.Query().Get("api_key") == s.Key
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) restAuth(w http.ResponseWriter, r *http.Request) bool {
	if !s.authorized(r, false) {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
		return false
	}
	return true
}

func (s *Server) listPods(w http.ResponseWriter, r *http.Request) {
	if !s.restAuth(w, r) {
		return
	}
	s.mu.Lock()
	pods := append([]Pod{}, s.pods...)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, pods) // v1 lists are a bare array, unpaged
}

func (s *Server) find(id string) int {
	for i, p := range s.pods {
		if p["id"] == id {
			return i
		}
	}
	return -1
}

func (s *Server) unknown(w http.ResponseWriter) {
	if s.unknownSt == http.StatusBadRequest {
		writeJSON(w, s.unknownSt, map[string]string{"error": "Invalid Pod ID"})
		return
	}
	writeJSON(w, s.unknownSt, map[string]string{"error": "pod not found"})
}

func (s *Server) stopPod(w http.ResponseWriter, r *http.Request) {
	if !s.restAuth(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(r.PathValue("id"))
	if i < 0 {
		s.unknown(w)
		return
	}
	p := Pod{}
	for k, v := range s.pods[i] {
		p[k] = v
	}
	p["desiredStatus"] = "EXITED"
	p["lastStatusChange"] = "Exited by User: " + JSDate(time.Now())
	s.pods[i] = p
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) deletePod(w http.ResponseWriter, r *http.Request) {
	if !s.restAuth(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(r.PathValue("id"))
	if i < 0 {
		s.unknown(w)
		return
	}
	s.pods = append(s.pods[:i], s.pods[i+1:]...)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) billingPods(w http.ResponseWriter, r *http.Request) {
	if !s.restAuth(w, r) {
		return
	}
	s.mu.Lock()
	recs := append([]map[string]any{}, s.billing...)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, recs)
}

func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r, true) {
		// What runpod-python's run_graphql_query checks for a bad key.
		writeJSON(w, http.StatusUnauthorized, map[string]any{"errors": []any{map[string]any{"message": "Unauthorized"}}})
		return
	}
	var req struct {
		Query string `json:"query"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || req.Query == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": []any{map[string]any{"message": "Must provide query string."}}})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.gqlErrors) > 0 {
		writeJSON(w, http.StatusOK, map[string]any{"data": nil, "errors": s.gqlErrors})
		return
	}
	if !strings.Contains(req.Query, "myself") {
		writeJSON(w, http.StatusOK, map[string]any{"data": nil, "errors": []any{map[string]any{"message": "unknown query"}}})
		return
	}
	if s.myselfNull {
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"myself": nil}})
		return
	}
	me := map[string]any{"id": "user_2PyTJrLzeuwfZilRZ7JhCQDuSqo"}
	if strings.Contains(req.Query, "clientBalance") {
		me["clientBalance"] = s.balance
	}
	if strings.Contains(req.Query, "currentSpendPerHr") && s.spend != nil {
		me["currentSpendPerHr"] = s.spend
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"myself": me}})
}
