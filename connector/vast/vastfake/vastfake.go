// Package vastfake is a fake of the Vast.ai REST API for tests: the
// endpoints connector/vast calls, with the shapes of Vast.ai's own
// OpenAPI pages (github.com/vast-ai/docs api-reference/openapi/yaml:
// show_instances.yaml for GET /api/v1/instances/, manage_instance.yaml,
// destroy_instance.yaml, auto_get_api_v0_users_current_*.yaml,
// auto_get_api_v0_charges_*.yaml) and Vast.ai's documented faults
// (docs.vast.ai/api-reference/rate-limits-and-errors: a 429 whose body
// is the plain text "API requests too frequent", with no Retry-After).
//
// Instances and charges are raw JSON objects (map[string]any), so that a
// test can give any field any type, drop fields, or add unknown ones.
// A Server is safe for concurrent use.
package vastfake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault answers one request instead of the fake's normal handler.
type Fault func(w http.ResponseWriter, r *http.Request)

// Status answers code with the given content type and body.
func Status(code int, ctype, body string) Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// TooFrequent is Vast.ai's 429: plain text, no Retry-After (unless
// retryAfter is not empty, which the real API does not send today).
func TooFrequent(retryAfter string) Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, "API requests too frequent: endpoint threshold=1.0")
	}
}

// Slow waits d (or until the client gives up), then answers normally
// with an empty 200.
func Slow(d time.Duration) Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusOK)
	}
}

// Hangup closes the connection without an answer (a platform that is
// down mid-request).
func Hangup() Fault {
	return func(w http.ResponseWriter, r *http.Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		c, _, err := hj.Hijack()
		if err == nil {
			c.Close()
		}
	}
}

// Server is the fake. Its zero value is not usable: call New.
type Server struct {
	*httptest.Server
	// Key is the API key it accepts as "Authorization: Bearer KEY".
	Key string

	mu        sync.Mutex
	instances []map[string]any
	user      map[string]any
	charges   []map[string]any
	pageSize  int
	faults    map[string][]Fault // by route ("GET /api/v1/instances/"), one per request
	refuse    map[string]string  // instance ID → msg of a success:false answer to a stop
	calls     map[string]int
	last      map[string]time.Time
	minGap    time.Duration
	requests  []string
}

// New starts a fake that accepts key, with no instances and a balance of
// $25.00. Close it when done.
func New(key string) *Server {
	s := &Server{
		Key:      key,
		user:     map[string]any{"id": 4242, "username": "tester", "email": "t@example.com", "balance": json.Number("25.00"), "credit": json.Number("0"), "can_pay": true},
		pageSize: 25, // show_instances.yaml: "Default 25, max 25"
		faults:   map[string][]Fault{},
		refuse:   map[string]string{},
		calls:    map[string]int{},
		last:     map[string]time.Time{},
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Base is the base URL a client is configured with (the v0 API, as the
// documented default https://console.vast.ai/api/v0).
func (s *Server) Base() string { return s.URL + "/api/v0" }

// Instance builds an instance object as GET /api/v1/instances/ lists it
// (show_instances.yaml), running on one RTX 4090 at dph_total 0.8021 (a
// JSON number), started at 1668804745.1223178. Change fields as needed.
func Instance(id int) map[string]any {
	return map[string]any{
		"id":                 id,
		"machine_id":         12,
		"public_ipaddr":      "203.0.113.9",
		"actual_status":      "running",
		"cur_state":          "running",
		"next_state":         "running",
		"intended_status":    "running",
		"label":              fmt.Sprintf("job-%d", id),
		"start_date":         json.Number("1668804745.1223178"),
		"end_date":           json.Number("1735689600"),
		"gpu_name":           "RTX 4090",
		"num_gpus":           1,
		"gpu_util":           json.Number("0"),
		"dph_base":           json.Number("0.8"),
		"dph_total":          json.Number("0.8021"),
		"storage_cost":       json.Number("0.15"),
		"storage_total_cost": json.Number("0.0021"),
		"inet_up_cost":       json.Number("0.00456"),
		"inet_down_cost":     json.Number("0.00123"),
		"disk_space":         json.Number("10.08"),
		"status_msg":         "success, running nvidia/cuda_11.0.3-devel-ubuntu18.04/ssh",
		"extra_env":          [][]string{},
		"credit_balance":     nil,
	}
}

// SetInstances replaces the account's instances.
func (s *Server) SetInstances(in ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.instances = in
}

// Remove deletes an instance as if it vanished on the platform (destroyed
// elsewhere, or reclaimed).
func (s *Server) Remove(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remove(strconv.Itoa(id))
}

func (s *Server) remove(id string) bool {
	for i, in := range s.instances {
		if idOf(in) == id {
			s.instances = append(s.instances[:i:i], s.instances[i+1:]...)
			return true
		}
	}
	return false
}

// Get returns a copy of the instance with that ID, or nil.
func (s *Server) Get(id int) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.find(strconv.Itoa(id)); in != nil {
		c := map[string]any{}
		for k, v := range in {
			c[k] = v
		}
		return c
	}
	return nil
}

// SetUser replaces the GET /users/current answer.
func (s *Server) SetUser(u map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user = u
}

// SetCharges replaces the charge rows GET /api/v0/charges/ answers from
// (each with start, end, type, source, description, amount, metadata,
// items as in auto_get_api_v0_charges_*.yaml).
func (s *Server) SetCharges(c ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.charges = c
}

// SetPageSize sets how many instances or charges one page holds.
func (s *Server) SetPageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = n
}

// MinGap makes every route answer TooFrequent when called again within
// d, as Vast.ai's per-endpoint minimum interval does.
func (s *Server) MinGap(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.minGap = d
}

// Fail queues faults for route ("GET /api/v1/instances/", "PUT
// /api/v0/instances/7/", …): each answers one request, in order.
func (s *Server) Fail(route string, f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], f...)
}

// RefuseStop makes a stop of id answer 200 {"success":false,"msg":msg}.
func (s *Server) RefuseStop(id int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse[strconv.Itoa(id)] = msg
}

// Calls returns how many requests route has had (faults included).
func (s *Server) Calls(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[route]
}

// Requests returns every request URL (path and query) in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func idOf(in map[string]any) string { return fmt.Sprint(in["id"]) }

func (s *Server) find(id string) map[string]any {
	for _, in := range s.instances {
		if idOf(in) == id {
			return in
		}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code int, errCode, msg string) {
	writeJSON(w, code, map[string]any{"success": false, "error": errCode, "msg": msg})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.Path
	if route == "GET /api/v0/users/current/" {
		route = "GET /api/v0/users/current"
	}
	s.mu.Lock()
	s.calls[route]++
	s.requests = append(s.requests, r.URL.RequestURI())
	var f Fault
	if q := s.faults[route]; len(q) > 0 {
		f, s.faults[route] = q[0], q[1:]
	}
	now := time.Now()
	tooSoon := s.minGap > 0 && !s.last[route].IsZero() && now.Sub(s.last[route]) < s.minGap
	s.last[route] = now
	s.mu.Unlock()
	if f != nil {
		f(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Key || r.URL.Query().Has("api_key") {
		// The key is expected in the header only.
		fail(w, http.StatusUnauthorized, "auth_error", "Invalid user key")
		return
	}
	if tooSoon {
		TooFrequent("")(w, r)
		return
	}
	switch {
	case route == "GET /api/v1/instances/":
		s.listInstances(w, r)
	case route == "GET /api/v0/users/current":
		s.mu.Lock()
		u := s.user
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, u)
	case route == "GET /api/v0/charges/":
		s.listCharges(w, r)
	case route == "GET /api/v0/instances/":
		// Deprecated for accounts made after June 2, 2026
		// (auto_get_api_v0_instances_*.yaml).
		fail(w, http.StatusGone, "deprecated", "Endpoint deprecated: /api/v0/instances/ is deprecated. Use /api/v1/instances/ instead.")
	case strings.HasPrefix(r.URL.Path, "/api/v0/instances/") && (r.Method == http.MethodPut || r.Method == http.MethodDelete):
		id := strings.Trim(strings.TrimPrefix(r.URL.Path, "/api/v0/instances/"), "/")
		if _, err := strconv.Atoi(id); err != nil || strings.Contains(id, "/") {
			fail(w, http.StatusNotFound, "not_found", "Not Found")
			return
		}
		if r.Method == http.MethodPut {
			s.manage(w, r, id)
		} else {
			s.destroy(w, id)
		}
	default:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<html><body>404 Not Found</body></html>")
	}
}

func token(after string) string { return base64.StdEncoding.EncodeToString([]byte(after)) }

func untoken(t string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(t)
	return string(b), err == nil && len(b) > 0
}

// page returns rows after the row whose key is after (keyset paging).
func page[T any](rows []T, key func(T) string, afterTok string, limit int) ([]T, string, bool) {
	start := 0
	if afterTok != "" {
		after, ok := untoken(afterTok)
		if !ok {
			return nil, "", false
		}
		start = len(rows)
		for i, r := range rows {
			if key(r) == after {
				start = i + 1
				break
			}
		}
	}
	end := min(start+limit, len(rows))
	next := ""
	if end < len(rows) {
		next = token(key(rows[end-1]))
	}
	return append(make([]T, 0, end-start), rows[start:end]...), next, true
}

func (s *Server) listInstances(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	rows := append([]map[string]any(nil), s.instances...)
	size := s.pageSize
	s.mu.Unlock()
	limit := size
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fail(w, http.StatusBadRequest, "invalid_request", "limit")
			return
		}
		limit = min(n, size) // "max 25"
		if n <= 0 {
			limit = 5 // "Values ≤ 0 are treated as 5"
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return numID(rows[i]) < numID(rows[j]) })
	got, next, ok := page(rows, idOf, q.Get("after_token"), limit)
	if !ok {
		fail(w, http.StatusBadRequest, "invalid_token", "Invalid after_token")
		return
	}
	out := map[string]any{
		"success":         true,
		"instances_found": len(got),
		"total_instances": len(rows),
		"label_counts":    map[string]int{},
		"instances":       got,
		"next_token":      nil,
	}
	if next != "" {
		out["next_token"] = next
	}
	writeJSON(w, http.StatusOK, out)
}

func numID(in map[string]any) int {
	n, _ := strconv.Atoi(idOf(in))
	return n
}

func (s *Server) manage(w http.ResponseWriter, r *http.Request, id string) {
	var body struct {
		State *string `json:"state"`
		Label *string `json:"label"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, http.StatusBadRequest, "invalid_args", "bad JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.find(id)
	if in == nil {
		fail(w, http.StatusNotFound, "no_such_instance", "Instance "+id+" not found.")
		return
	}
	if msg, ok := s.refuse[id]; ok {
		writeJSON(w, http.StatusOK, map[string]any{"success": false, "error": "invalid_state", "msg": msg})
		return
	}
	if body.State != nil {
		switch *body.State {
		case "stopped":
			in["actual_status"], in["cur_state"], in["intended_status"], in["next_state"] = "stopped", "stopped", "stopped", "stopped"
		case "running":
			in["actual_status"], in["cur_state"], in["intended_status"], in["next_state"] = "running", "running", "running", "running"
		default:
			fail(w, http.StatusBadRequest, "invalid_args", "state must be stopped or running")
			return
		}
	}
	if body.Label != nil {
		in["label"] = *body.Label
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true})
}

func (s *Server) destroy(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.remove(id) {
		fail(w, http.StatusNotFound, "no_such_instance", "Instance "+id+" not found.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "msg": "Instance destroyed successfully"})
}

func (s *Server) listCharges(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var f struct {
		Day struct {
			Gte *int64 `json:"gte"`
			Lte *int64 `json:"lte"`
		} `json:"day"`
		Type struct {
			In []string `json:"in"`
		} `json:"type"`
	}
	if err := json.Unmarshal([]byte(q.Get("select_filters")), &f); err != nil || f.Day.Gte == nil || f.Day.Lte == nil {
		fail(w, http.StatusBadRequest, "invalid_args", "Must provide both 'day' gte and lte filters for instance charges")
		return
	}
	s.mu.Lock()
	all := append([]map[string]any(nil), s.charges...)
	size := s.pageSize
	s.mu.Unlock()
	var rows []map[string]any
	for _, c := range all {
		// Rows whose times are not numbers (a test's broken row) are
		// always answered.
		st, err1 := strconv.ParseFloat(fmt.Sprint(c["start"]), 64)
		en, err2 := strconv.ParseFloat(fmt.Sprint(c["end"]), 64)
		if err1 == nil && err2 == nil && (en < float64(*f.Day.Gte) || st > float64(*f.Day.Lte)) {
			continue
		}
		if len(f.Type.In) > 0 && !contains(f.Type.In, fmt.Sprint(c["type"])) {
			continue
		}
		rows = append(rows, c)
	}
	limit := size
	if v := q.Get("limit"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			limit = min(n, size)
		}
	}
	got, next, ok := page(rows, func(c map[string]any) string { return fmt.Sprint(c["source"]) }, q.Get("after_token"), limit)
	if !ok {
		fail(w, http.StatusBadRequest, "invalid_token", "Invalid after_token")
		return
	}
	out := map[string]any{"success": true, "count": len(got), "total": len(rows), "results": got, "next_token": nil}
	if next != "" {
		out["next_token"] = next
	}
	writeJSON(w, http.StatusOK, out)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
