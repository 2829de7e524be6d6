// Package autodlfake is a fake of AutoDL's developer API for tests: the
// wallet balance and the Pro instance endpoints, answering HTTP 200 with
// the {code, msg, data, request_id} envelope as the real API does
// (autodl.com/docs/common_api; shapes as recorded in Minato-Aqukin/AutoDL-cli
// tests/fixtures/responses.ts). Each test configures its own instances,
// wallet and faults; the real connector runs against URL unmodified.
package autodlfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// Instance is one Pro instance the fake lists.
type Instance struct {
	UUID      string
	Name      string
	Status    string // running, starting, shutting_down, shutdown, released, ...
	GPUSpec   string // gpu_spec_uuid, e.g. "pro6000-p"
	GPUAlias  string // the snapshot's snapshot_gpu_alias_name
	GPUCount  int
	StartedAt time.Time // sent as {"Time","Valid"}; zero: Valid false
	StatusAt  time.Time // sent as a string
	// PaygPrice is the snapshot's payg_price as sent: an int (thousandths
	// of a yuan), a string, a float to test refusal, or nil to omit it.
	PaygPrice any
	// Extra replaces or adds fields of the list item (wrong types, missing
	// fields: a nil value deletes the field).
	Extra map[string]any
}

// Reply is a canned answer for one request.
type Reply struct {
	Status int               // HTTP status; 200 if zero
	Header map[string]string // e.g. Retry-After, Content-Type
	Body   string            // sent as is
	Delay  time.Duration     // wait before answering (a slow platform)
}

// Envelope returns a 200 Reply carrying a non-Success envelope.
func Envelope(code, msg string) Reply {
	b, _ := json.Marshal(map[string]any{"code": code, "msg": msg, "data": nil, "request_id": "req-fake"})
	return Reply{Body: string(b)}
}

// NotVerified is what the fake answers on the Pro endpoints for an account
// without real-name verification: a non-Success envelope whose message
// names 实名认证, the form AutoDL-cli's error mapping tests use (the real
// code is undocumented).
var NotVerified = Envelope("Fail", "请先完成实名认证")

// Call is one request the fake received.
type Call struct {
	Method, Path, Query, Auth string
	Body                      map[string]any
}

// Server is the fake. Its fields are guarded by its mutex; use the
// methods while it runs.
type Server struct {
	*httptest.Server
	Token string

	mu sync.Mutex
	// Wallet values as sent (ints, strings, floats, or nil to omit).
	assets, accumulate, voucher any
	instances                   []*Instance
	noPro                       bool
	shutdownAfter               int // status reads a shutting_down instance takes to shut down
	pending                     map[string]int
	faults                      map[string][]Reply // by path; "" = any path
	calls                       []Call
}

// New starts a fake that accepts token, with an empty wallet and no
// instances. Close it when done.
func New(token string) *Server {
	s := &Server{Token: token, assets: 0, accumulate: 0, voucher: 0, pending: map[string]int{}, faults: map[string][]Reply{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// SetWallet sets the wallet's assets, accumulate and voucher_balance as
// sent (nil omits a field).
func (s *Server) SetWallet(assets, accumulate, voucher any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.assets, s.accumulate, s.voucher = assets, accumulate, voucher
}

// SetInstances replaces the account's Pro instances.
func (s *Server) SetInstances(ins ...Instance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.instances = nil
	for i := range ins {
		in := ins[i]
		s.instances = append(s.instances, &in)
	}
}

// Remove makes an instance vanish from every endpoint.
func (s *Server) Remove(uuid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, in := range s.instances {
		if in.UUID == uuid {
			s.instances = append(s.instances[:i], s.instances[i+1:]...)
			return
		}
	}
}

// Status returns an instance's status, "" if none.
func (s *Server) Status(uuid string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.find(uuid); in != nil {
		return in.Status
	}
	return ""
}

// SetNoPro makes the Pro endpoints answer NotVerified.
func (s *Server) SetNoPro(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noPro = v
}

// SetShutdownAfter sets how many status reads a powered-off instance stays
// shutting_down before it is shutdown (0: power_off shuts down at once).
func (s *Server) SetShutdownAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shutdownAfter = n
}

// Fail queues replies for path (the request path without query; "" for
// any path), used once each, in order, before the normal answer.
func (s *Server) Fail(path string, r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[path] = append(s.faults[path], r...)
}

// Calls returns the requests received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsTo counts the requests to path.
func (s *Server) CallsTo(path string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Path == path {
			n++
		}
	}
	return n
}

func (s *Server) find(uuid string) *Instance {
	for _, in := range s.instances {
		if in.UUID == uuid {
			return in
		}
	}
	return nil
}

func (s *Server) fault(path string) (Reply, bool) {
	for _, p := range []string{path, ""} {
		if q := s.faults[p]; len(q) > 0 {
			s.faults[p] = q[1:]
			return q[0], true
		}
	}
	return Reply{}, false
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Body != nil {
		json.NewDecoder(r.Body).Decode(&body)
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Body: body})
	f, faulted := s.fault(r.URL.Path)
	s.mu.Unlock()
	if faulted {
		if f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				return
			}
		}
		ct := "application/json"
		if v, ok := f.Header["Content-Type"]; ok {
			ct = v
		}
		if ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		for k, v := range f.Header {
			if k != "Content-Type" {
				w.Header().Set(k, v)
			}
		}
		if f.Status == 0 {
			f.Status = http.StatusOK
		}
		w.WriteHeader(f.Status)
		w.Write([]byte(f.Body))
		return
	}
	// The token is the whole header, no "Bearer" (common_api).
	if r.Header.Get("Authorization") != s.Token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"code": "Unauthorized", "msg": "token invalid", "data": nil})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pro := len(r.URL.Path) > len("/api/v1/dev/instance/pro/") && r.URL.Path[:len("/api/v1/dev/instance/pro/")] == "/api/v1/dev/instance/pro/"
	if pro && s.noPro {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(NotVerified.Body))
		return
	}
	uuid := r.URL.Query().Get("instance_uuid")
	if v, ok := body["instance_uuid"].(string); ok {
		uuid = v
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/dev/wallet/balance":
		data := map[string]any{}
		for k, v := range map[string]any{"assets": s.assets, "accumulate": s.accumulate, "voucher_balance": s.voucher} {
			if v != nil {
				data[k] = v
			}
		}
		ok(w, data)
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/dev/instance/pro/list":
		s.list(w, body)
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/dev/instance/pro/status":
		in := s.find(uuid)
		if in == nil {
			fail(w, "Fail", "实例不存在")
			return
		}
		if in.Status == "shutting_down" {
			if s.pending[uuid] <= 0 {
				in.Status = "shutdown"
			} else {
				s.pending[uuid]--
			}
		}
		ok(w, in.Status)
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/dev/instance/pro/snapshot":
		in := s.find(uuid)
		if in == nil {
			fail(w, "Fail", "实例不存在")
			return
		}
		data := map[string]any{"region_sign": "bj-B1", "snapshot_gpu_alias_name": in.GPUAlias, "chip_corp": "nvidia", "cpu_arch": "x86", "origin_pay_price": 3030}
		if in.PaygPrice != nil {
			data["payg_price"] = in.PaygPrice
		}
		ok(w, data)
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/dev/instance/pro/power_off":
		in := s.find(uuid)
		switch {
		case in == nil:
			fail(w, "Fail", "实例不存在")
		case in.Status == "shutting_down":
			fail(w, "Fail", "当前实例正在关机中,无需重复操作")
		case in.Status == "running" || in.Status == "starting":
			in.Status, in.StatusAt = "shutting_down", time.Now()
			s.pending[uuid] = s.shutdownAfter
			if s.shutdownAfter == 0 {
				in.Status = "shutdown"
			}
			ok(w, nil)
		default:
			fail(w, "Fail", "实例状态不允许关机")
		}
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/dev/instance/pro/release":
		in := s.find(uuid)
		switch {
		case in == nil:
			fail(w, "Fail", "实例不存在")
		case in.Status != "shutdown":
			fail(w, "Fail", "请先关机再释放实例")
		default:
			in.Status, in.StatusAt = "released", time.Now()
			ok(w, nil)
		}
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"code": "NotFound", "msg": "404 page not found"})
	}
}

func (s *Server) list(w http.ResponseWriter, body map[string]any) {
	page, size := num(body["page_index"]), num(body["page_size"])
	if page < 1 || size < 1 {
		fail(w, "RequestParameterIsWrong", "请求参数错误")
		return
	}
	items := []any{}
	from := (page - 1) * size
	for i := from; i < len(s.instances) && i < from+size; i++ {
		items = append(items, item(s.instances[i]))
	}
	maxPage := (len(s.instances) + size - 1) / size
	if maxPage == 0 {
		maxPage = 1
	}
	ok(w, map[string]any{"list": items, "page_index": page, "page_size": size, "offset": from, "max_page": maxPage, "result_total": len(s.instances)})
}

func item(in *Instance) map[string]any {
	nullTime := func(t time.Time) map[string]any {
		if t.IsZero() {
			return map[string]any{"Time": "0001-01-01T00:00:00Z", "Valid": false}
		}
		return map[string]any{"Time": t.Format(time.RFC3339), "Valid": true}
	}
	m := map[string]any{
		"uuid": in.UUID, "name": in.Name, "status": in.Status, "sub_status": "",
		"machine_id": "4d67438b4f", "region_sign": "westDC3", "region_name": "西北B区",
		"start_mode": "gpu", "charge_type": "payg", "req_gpu_amount": in.GPUCount,
		"gpu_spec_uuid": in.GPUSpec, "created_at": "2025-12-15T17:30:54+08:00",
		"started_at": nullTime(in.StartedAt), "stopped_at": nullTime(time.Time{}),
		"expired_at": nullTime(time.Time{}), "timed_shutdown_at": nullTime(time.Time{}),
	}
	if !in.StatusAt.IsZero() {
		m["status_at"] = in.StatusAt.Format(time.RFC3339)
	}
	for k, v := range in.Extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func num(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case string:
		n, _ := strconv.Atoi(x)
		return n
	}
	return 0
}

func ok(w http.ResponseWriter, data any) {
	writeJSON(w, http.StatusOK, map[string]any{"code": "Success", "msg": "", "data": data, "request_id": "req-fake"})
}

func fail(w http.ResponseWriter, code, msg string) {
	writeJSON(w, http.StatusOK, map[string]any{"code": code, "msg": msg, "data": nil, "request_id": "req-fake"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("autodlfake: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
