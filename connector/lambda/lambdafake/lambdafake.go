// Package lambdafake is a fake of the parts of Lambda Cloud's API that
// connector/lambda calls, for tests: GET /instances and POST
// /instance-operations/terminate under /api/v1, with Lambda's error
// envelope ({"error": {"code", "message", "suggestion"}}) and faults a
// test queues. Shapes follow Lambda's OpenAPI (docs-api.lambda.ai/api/cloud,
// version 1.8: Instance, InstanceType, InstanceTerminateResponse,
// ApiErrorUnauthorized, ApiErrorInstanceNotFound) and what SkyPilot's and
// dstack's Lambda clients read.
//
// A Server is safe for concurrent use.
package lambdafake

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Instance is one instance as the fake lists it. Price and GPUs are
// encoded as given (an int, a string, json.Number("110.5") for a float),
// so that a test can serve the wrong type; nil leaves the field out.
type Instance struct {
	ID     string
	Name   any // a string, nil (JSON null, as Lambda sends for no name)
	Status string
	Region string
	// TypeName is the instance type ("gpu_8x_h100_sxm5"); Description and
	// GPUDescription its long names ("8x H100 (80 GB SXM5)", "H100 (80 GB
	// SXM5)").
	TypeName, Description, GPUDescription string
	Price                                 any // price_cents_per_hour
	GPUs                                  any // instance_type.specs.gpus
	// IP is the instance's public address ("ip"); "" lists the example
	// 198.51.100.7.
	IP string
}

// Fault is one answer served instead of the real one, once.
type Fault struct {
	Status      int // 0: 200
	ContentType string
	Header      map[string]string
	Body        string
	Delay       time.Duration // before answering (a slow platform)
}

// Request is one request the fake received.
type Request struct {
	Method, Path, RawQuery, Auth string
	Body                         string
}

// Server is the fake. URL is the base to give the client (ending in
// /api/v1).
type Server struct {
	URL string
	Key string // the one API key accepted

	srv            *httptest.Server
	mu             sync.Mutex
	terminateOmits bool
	instances      []Instance
	raw            string // served for GET /instances when set
	faults         []Fault
	log            []Request
}

// New starts a fake that accepts key and lists instances; Close stops it.
func New(key string, instances ...Instance) *Server {
	s := &Server{Key: key, instances: instances}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/api/v1"
	return s
}

// Close stops the server: later calls find the platform down.
func (s *Server) Close() { s.srv.Close() }

// SetInstances replaces the listed instances.
func (s *Server) SetInstances(in ...Instance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.instances, s.raw = in, ""
}

// Instances returns the instances as the fake holds them now.
func (s *Server) Instances() []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Instance(nil), s.instances...)
}

// SetRawInstances makes GET /instances answer body verbatim (200, JSON).
func (s *Server) SetRawInstances(body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = body
}

// SetTerminateOmitsUnknown: a terminate of an unknown ID answers 200
// without it rather than 404.
func (s *Server) SetTerminateOmitsUnknown(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.terminateOmits = v
}

// FailNext queues faults, each served once for the next requests.
func (s *Server) FailNext(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ErrorBody is Lambda's error envelope.
func ErrorBody(code, message, suggestion string) string {
	e := map[string]string{"code": code, "message": message}
	if suggestion != "" {
		e["suggestion"] = suggestion
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return string(b)
}

// authorized accepts the key as a Bearer token or as the user name of
// basic auth with an empty password, both of which Lambda documents.
func (s *Server) authorized(h string) bool {
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		return tok == s.Key
	}
	if enc, ok := strings.CutPrefix(h, "Basic "); ok {
		b, err := base64.StdEncoding.DecodeString(enc)
		return err == nil && string(b) == s.Key+":"
	}
	return false
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	body := string(b)
	s.mu.Lock()
	s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Body: body})
	var fault *Fault
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		fault = &f
	}
	s.mu.Unlock()

	if fault != nil {
		if fault.Delay > 0 {
			select {
			case <-time.After(fault.Delay):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range fault.Header {
			w.Header().Set(k, v)
		}
		if fault.ContentType != "" {
			w.Header().Set("Content-Type", fault.ContentType)
		}
		st := fault.Status
		if st == 0 {
			st = http.StatusOK
		}
		w.WriteHeader(st)
		w.Write([]byte(fault.Body))
		return
	}

	if !s.authorized(r.Header.Get("Authorization")) {
		writeJSON(w, http.StatusUnauthorized, ErrorBody("global/invalid-api-key",
			"API key was invalid, expired, or deleted.", "Check your API key or create a new one, then try again."))
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/instances":
		s.list(w)
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/instance-operations/terminate":
		s.terminate(w, body)
	default:
		writeJSON(w, http.StatusNotFound, ErrorBody("global/not-found", "Not found.", ""))
	}
}

func (s *Server) list(w http.ResponseWriter) {
	s.mu.Lock()
	raw := s.raw
	data := make([]map[string]any, 0, len(s.instances))
	for _, in := range s.instances {
		data = append(data, encode(in))
	}
	s.mu.Unlock()
	if raw != "" {
		writeJSON(w, http.StatusOK, raw)
		return
	}
	b, _ := json.Marshal(map[string]any{"data": data})
	writeJSON(w, http.StatusOK, string(b))
}

// terminate marks the named instances "terminating" (Lambda lists them so
// until they go) and answers them in data.terminated_instances.
func (s *Server) terminate(w http.ResponseWriter, body string) {
	var req struct {
		InstanceIDs []string `json:"instance_ids"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil || len(req.InstanceIDs) == 0 {
		writeJSON(w, http.StatusBadRequest, ErrorBody("global/invalid-parameters", "Invalid request body.", ""))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, id := range req.InstanceIDs {
		found := false
		for i := range s.instances {
			if s.instances[i].ID == id && s.instances[i].Status != "terminated" {
				s.instances[i].Status = "terminating"
				out = append(out, encode(s.instances[i]))
				found = true
			}
		}
		if !found && !s.terminateOmits {
			writeJSON(w, http.StatusNotFound, ErrorBody("global/object-does-not-exist", "Specified instance does not exist.", ""))
			return
		}
	}
	b, _ := json.Marshal(map[string]any{"data": map[string]any{"terminated_instances": out}})
	writeJSON(w, http.StatusOK, string(b))
}

// encode is an Instance in the documented shape.
func encode(in Instance) map[string]any {
	specs := map[string]any{"vcpus": 26, "memory_gib": 225, "storage_gib": 2780}
	if in.GPUs != nil {
		specs["gpus"] = in.GPUs
	}
	it := map[string]any{
		"name":            in.TypeName,
		"description":     in.Description,
		"gpu_description": in.GPUDescription,
		"specs":           specs,
	}
	if in.Price != nil {
		it["price_cents_per_hour"] = in.Price
	}
	region := in.Region
	if region == "" {
		region = "us-east-1"
	}
	ip := in.IP
	if ip == "" {
		ip = "198.51.100.7"
	}
	return map[string]any{
		"id":                in.ID,
		"name":              in.Name,
		"ip":                ip,
		"private_ip":        "10.0.0.7",
		"status":            in.Status,
		"ssh_key_names":     []string{"laptop"},
		"file_system_names": []string{},
		"region":            map[string]any{"name": region, "description": "Virginia, USA"},
		"instance_type":     it,
		"hostname":          "198-51-100-7.cloud.lambda.ai",
		"jupyter_token":     "53968f128c4a4489b688c2c0a181d083",
		"jupyter_url":       "https://jupyter-example.lambdaspaces.com/?token=53968f128c4a4489b688c2c0a181d083",
		"is_reserved":       false,
		"actions":           map[string]any{},
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(body))
}
