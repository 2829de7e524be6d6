package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// The door: what an agent sends is checked and cleaned once, where its
// body is decoded. These tests send hostile fields through the real
// handler on a real database and look at what the hub keeps (its state
// in memory, which /why reads) and what it stored.

const (
	ctrl    = "\x1b[31m\n\r\t\u202e\u200b" // escapes, line breaks, a bidi override, a zero-width space
	badUTF8 = "\xff\xfe"                   // written into the body as raw bytes
)

// doorBody marshals h and replaces every "@BAD@" in it with invalid
// UTF-8 (json.Marshal would replace the bytes itself).
func doorBody(h wire.HeartbeatRequest) []byte {
	b, _ := json.Marshal(h)
	return bytes.ReplaceAll(b, []byte("@BAD@"), []byte(badUTF8))
}

// printableText reports whether s is valid UTF-8 without control or
// format characters.
func printableText(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool {
		return r < 0x20 || r == 0x7f || r == '\u202e' || r == '\u200b' || r == utf8.RuneError
	}) < 0
}

func TestDoor_Heartbeat(t *testing.T) {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	tests := []struct {
		name string
		edit func(h *wire.HeartbeatRequest)
		raw  func(b []byte) []byte // edits the marshalled body
		code int
		msg  string // in the refusal
		// mem is the state the hub holds, db the one it stored.
		check func(t *testing.T, mem, db ledger.AgentState)
	}{
		{name: "BootIDLong", edit: func(h *wire.HeartbeatRequest) { h.BootID = long("b", 100) },
			check: func(t *testing.T, mem, db ledger.AgentState) {
				if want := long("b", 64) + "…"; mem.BootID != want || db.BootID != want {
					t.Errorf("boot id %q stored %q", mem.BootID, db.BootID)
				}
			}},
		{name: "BootIDControl", edit: func(h *wire.HeartbeatRequest) { h.BootID = "bo" + ctrl + "ot@BAD@1" },
			check: func(t *testing.T, mem, db ledger.AgentState) {
				if mem.BootID != "bo[31mot1" || db.BootID != "bo[31mot1" {
					t.Errorf("boot id %q stored %q", mem.BootID, db.BootID)
				}
			}},
		{name: "ReasonsMany", edit: func(h *wire.HeartbeatRequest) {
			h.Reasons = make([]string, 2000)
			for i := range h.Reasons {
				h.Reasons[i] = "r"
			}
		}, check: func(t *testing.T, mem, db ledger.AgentState) {
			if len(mem.Reasons) != 512+len("…") || !strings.HasPrefix(mem.Reasons, "r; r; ") || !strings.HasSuffix(mem.Reasons, "…") || db.Reasons != mem.Reasons {
				t.Errorf("reasons %d bytes %q…, stored %d bytes", len(mem.Reasons), mem.Reasons[:10], len(db.Reasons))
			}
		}},
		{name: "ReasonsControl", edit: func(h *wire.HeartbeatRequest) { h.Reasons = []string{"gpu0 util 87%" + ctrl, "c@BAD@pu 64%"} },
			check: func(t *testing.T, mem, db ledger.AgentState) {
				if want := "gpu0 util 87%[31m; cpu 64%"; mem.Reasons != want || db.Reasons != want {
					t.Errorf("reasons %q stored %q, want %q", mem.Reasons, db.Reasons, want)
				}
			}},
		{name: "WorkLong", edit: func(h *wire.HeartbeatRequest) { h.Work = long("w", 300) },
			check: func(t *testing.T, mem, _ ledger.AgentState) {
				if mem.Work != long("w", wire.MaxStrLen)+"…" {
					t.Errorf("work %d bytes", len(mem.Work))
				}
			}},
		{name: "WorkControl", edit: func(h *wire.HeartbeatRequest) { h.Work = "rsync" + ctrl + " running@BAD@" },
			check: func(t *testing.T, mem, _ ledger.AgentState) {
				if mem.Work != "rsync[31m running" {
					t.Errorf("work %q", mem.Work)
				}
			}},
		{name: "GPUSourceLong", edit: func(h *wire.HeartbeatRequest) { h.Host.GPUSource = "simulate" + ctrl + long("x", 100) },
			check: func(t *testing.T, mem, db ledger.AgentState) {
				if want := "simulate[31mxxxx…"; mem.GPU.Source != want || db.GPU.Source != want {
					t.Errorf("gpu source %q stored %q, want %q", mem.GPU.Source, db.GPU.Source, want)
				}
			}},
		{name: "GPUNameLong", edit: func(h *wire.HeartbeatRequest) {
			h.Host.GPUs[0].Name = "NVIDIA" + ctrl + " RTX 4090 " + long("g", 100) + "@BAD@"
		}, check: func(t *testing.T, mem, db ledger.AgentState) {
			if mem.GPU.Model != db.GPU.Model || len(mem.GPU.Model) != 64+len("…") ||
				!strings.HasPrefix(mem.GPU.Model, "NVIDIA[31m RTX 4090 ggg") || !printableText(mem.GPU.Model) {
				t.Errorf("gpu model %q stored %q", mem.GPU.Model, db.GPU.Model)
			}
		}},
		{name: "GPUsMany", edit: func(h *wire.HeartbeatRequest) { h.GPUs = make([]wire.GPUSummary, wire.MaxGPUs+1) },
			code: http.StatusBadRequest, msg: "more than 16 GPUs"},
		{name: "HostGPUsMany", edit: func(h *wire.HeartbeatRequest) { h.Host.GPUs = make([]wire.GPUFact, 1000) },
			code: http.StatusBadRequest, msg: "more than 16 GPUs"},
		{name: "SessionsMany", edit: func(h *wire.HeartbeatRequest) { h.Sessions = make([]wire.Session, wire.MaxSessions+1) },
			code: http.StatusBadRequest, msg: "more than 16 sessions"},
		{name: "Sessions", edit: func(h *wire.HeartbeatRequest) {
			h.Sessions = []wire.Session{
				{Kind: wire.SessionSSH, Client: long("1", 100), User: "al" + ctrl + "ice" + long("u", 50)},
				{Kind: "ssh\n", Client: "unknown kind"},
				{Kind: wire.SessionJupyter, Client: "10.0.0.5@BAD@"},
			}
		}, check: func(t *testing.T, mem, db ledger.AgentState) {
			want := []ledger.Session{{Kind: ledger.SessionSSH, Client: long("1", 64) + "…", User: "al[31mice" + long("u", 23) + "…"},
				{Kind: ledger.SessionJupyter, Client: "10.0.0.5"}}
			for _, got := range [][]ledger.Session{mem.Sessions, db.Sessions} {
				if len(got) != len(want) {
					t.Fatalf("sessions %+v, want %+v", got, want)
				}
				for i := range want {
					if g, w := got[i], want[i]; g.Kind != w.Kind || g.Client != w.Client || g.User != w.User {
						t.Errorf("session %+v, want %+v", g, w)
					}
				}
			}
		}},
		{name: "JobCommand", edit: func(h *wire.HeartbeatRequest) {
			h.Job = &wire.JobState{Command: "python" + ctrl + " train.py " + long("a", 300), Running: true, StartedAt: t0, DurationSeconds: 90}
		}, check: func(t *testing.T, mem, db ledger.AgentState) {
			if mem.Job.Command != db.Job.Command || len(mem.Job.Command) != 200+len("…") ||
				!strings.HasPrefix(mem.Job.Command, "python[31m train.py aaa") || mem.Job.Duration != 90*time.Second {
				t.Errorf("job %+v stored %+v", mem.Job, db.Job)
			}
		}},
		{name: "JobDurationNegative", edit: func(h *wire.HeartbeatRequest) {
			h.Job = &wire.JobState{Command: "x", Running: true, StartedAt: t0, DurationSeconds: -5}
		}, check: func(t *testing.T, mem, db ledger.AgentState) {
			if mem.Job.Duration != 0 || db.Job.Duration != 0 {
				t.Errorf("duration %v stored %v", mem.Job.Duration, db.Job.Duration)
			}
		}},
		{name: "JobDurationHuge", edit: func(h *wire.HeartbeatRequest) {
			h.Job = &wire.JobState{Command: "x", Running: true, StartedAt: t0, DurationSeconds: 1e300}
		}, check: func(t *testing.T, mem, db ledger.AgentState) {
			if mem.Job.Duration != 0 || db.Job.Duration != 0 {
				t.Errorf("duration %v stored %v", mem.Job.Duration, db.Job.Duration)
			}
		}},
		{name: "JobDurationNaN", edit: func(h *wire.HeartbeatRequest) { h.Job = &wire.JobState{Command: "x", DurationSeconds: 7} },
			raw: func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"duration_s":7`), []byte(`"duration_s":NaN`), 1)
			},
			code: http.StatusBadRequest, msg: "malformed JSON"},
		{name: "UtilOutOfRange", edit: func(h *wire.HeartbeatRequest) {
			lo, hi := -5.0, 250.0
			h.GPUs[0].UtilMean, h.GPUs[0].UtilMax = &lo, &hi
		}, check: func(t *testing.T, _, _ ledger.AgentState) {}},
		{name: "SamplesNegative", edit: func(h *wire.HeartbeatRequest) { h.Samples, h.BusySamples = -1, -7 },
			code: http.StatusBadRequest, msg: "sample counts are inconsistent"},
		{name: "SamplesHuge", edit: func(h *wire.HeartbeatRequest) { h.Samples, h.BusySamples = 1<<40, 1<<40 },
			code: http.StatusBadRequest, msg: "sample counts are inconsistent"},
		{name: "IdleSecondsNegative", edit: func(h *wire.HeartbeatRequest) { h.IdleSeconds = -1 },
			code: http.StatusBadRequest, msg: "idle_seconds out of range"},
		{name: "VersionLong", edit: func(h *wire.HeartbeatRequest) { h.Version = "v" + long("9", 5000) },
			code: http.StatusBadRequest, msg: `unsupported protocol version "v` + long("9", 19) + `…"`},
		{name: "VerdictLong", edit: func(h *wire.HeartbeatRequest) { h.Verdict = wire.Verdict("asleep" + long("z", 5000)) },
			code: http.StatusBadRequest, msg: `verdict "asleep` + long("z", 14) + `…" must be`},
		{name: "PolicyRefused", edit: func(h *wire.HeartbeatRequest) {
			h.PolicyRefused = "bad" + ctrl + " signature " + long("p", 300)
			h.PolicyRefusedCode = wire.PolicyRefusedBadSignature + ctrl + long("c", 100)
		}, check: func(t *testing.T, mem, _ ledger.AgentState) {
			if len(mem.PolicyRefused) != wire.MaxStrLen+len("…") || !strings.HasPrefix(mem.PolicyRefused, "bad[31m signature ppp") ||
				string(mem.PolicyRefusedCode) != "bad_signature[31m"+long("c", 40-len("bad_signature[31m")) {
				t.Errorf("policy refused %q, code %q", mem.PolicyRefused, mem.PolicyRefusedCode)
			}
		}},
		{name: "InstanceFacts", edit: func(h *wire.HeartbeatRequest) {
			h.Host.Hostname = "host" + ctrl + long("h", 300)
			h.Instance = &wire.InstanceFacts{Platform: "RunPod" + ctrl, ID: "ab" + ctrl + "c@BAD@" + long("i", 300)}
		}, check: func(t *testing.T, mem, db ledger.AgentState) {
			// A platform that is not a profile key is no platform.
			want := "unknown:ab[31mc" + long("i", wire.MaxStrLen-len("ab[31mc"))
			if mem.InstanceKey != want || db.InstanceKey != want || mem.InstanceSaid != want {
				t.Errorf("instance key %q stored %q said %q, want %q", mem.InstanceKey, db.InstanceKey, mem.InstanceSaid, want)
			}
		}},
		{name: "BodyTooLarge", edit: func(h *wire.HeartbeatRequest) { h.Work = long("w", wire.MaxBodyBytes) },
			code: http.StatusRequestEntityTooLarge, msg: "body over 65536 bytes"},
		{name: "MalformedLong", raw: func([]byte) []byte { return []byte(`{"version":"v1","seq":` + long("9", 5000) + `}`) },
			code: http.StatusBadRequest, msg: "malformed JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, hub.Config{})
			h := hb(wire.VerdictBusy, 0)
			if tt.edit != nil {
				tt.edit(&h)
			}
			body := doorBody(h)
			if tt.raw != nil {
				body = tt.raw(body)
			}
			code, resp := e.post(wire.PathHeartbeat, e.token, body)
			want := tt.code
			if want == 0 {
				want = http.StatusOK
			}
			var er struct{ Error string }
			json.Unmarshal(resp, &er)
			if code != want || !strings.Contains(er.Error, tt.msg) {
				t.Fatalf("= %d %q; want %d %q", code, er.Error, want, tt.msg)
			}
			if len(er.Error) > 300 || !utf8.ValidString(er.Error) {
				t.Errorf("refusal of %d bytes: %q", len(er.Error), er.Error)
			}
			ctx := context.Background()
			if err := e.hub.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			mem, seen := e.hub.AgentState(e.rid)
			stored, err := e.db.AgentStates(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want != http.StatusOK {
				if seen || len(stored) != 0 {
					t.Fatalf("a refused heartbeat changed the state: %+v, stored %+v", mem, stored)
				}
				return
			}
			if !seen || len(stored) != 1 {
				t.Fatalf("state %v, stored %+v", seen, stored)
			}
			db := stored[0]
			for what, s := range map[string]string{"boot id": mem.BootID, "reasons": mem.Reasons, "work": mem.Work,
				"gpu source": mem.GPU.Source, "gpu model": mem.GPU.Model, "job": mem.Job.Command, "policy refused": mem.PolicyRefused,
				"policy refused code": string(mem.PolicyRefusedCode), "instance": mem.InstanceKey} {
				if !printableText(s) {
					t.Errorf("%s %q is not printable text", what, s)
				}
			}
			for _, s := range mem.Sessions {
				if !printableText(s.Client) || !printableText(s.User) || !printableText(s.Kind) {
					t.Errorf("session %+v is not printable text", s)
				}
			}
			// Utilisations outside 0-100 % are no reading.
			beats, err := e.db.Beats(ctx, e.rid, t0, t0.Add(time.Hour))
			if err != nil || len(beats) != 1 {
				t.Fatalf("beats %+v, %v", beats, err)
			}
			if tt.name == "UtilOutOfRange" {
				if beats[0].UtilMean != -1 || beats[0].UtilMax != -1 {
					t.Errorf("beat %+v: an impossible utilisation was kept", beats[0])
				}
			} else if beats[0].UtilMean != 900 {
				t.Errorf("beat %+v", beats[0])
			}
			tt.check(t, mem, db)
		})
	}
}

// TestDoor_LongValuesAsKept: a value the door shortens is compared as the
// hub keeps it. A boot id over 64 bytes was clipped for the state but
// compared whole with it, so every heartbeat of that agent looked like a
// restart of it: a release in progress failed as "the agent restarted",
// and a retried heartbeat was applied twice. A policy refusal over 256
// bytes was logged again at every heartbeat.
func TestDoor_LongValuesAsKept(t *testing.T) {
	var logs syncBuf
	e := newEnv(t, hub.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	boot := strings.Repeat("b", 100)
	beat := func(verdict wire.Verdict) wire.HeartbeatRequest {
		h := hb(verdict, 3600)
		h.BootID = boot
		h.PolicyRefused = "bad signature " + strings.Repeat("p", 300)
		return h
	}
	if code, _ := e.beat(e.token, beat(wire.VerdictIdle)); code != http.StatusOK {
		t.Fatal(code)
	}
	o, err := e.hub.IssueOrder(ctx, e.rid, wire.ActionRelease, ledger.OriginButton)
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Add(30 * time.Second)
	if code, resp := e.beat(e.token, beat(wire.VerdictIdle)); code != http.StatusOK || len(resp.Orders) != 1 {
		t.Fatalf("= %d %+v", code, resp)
	}
	if code := e.result(e.token, wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeReleaseStarted}); code != http.StatusNoContent {
		t.Fatalf("release_started: %d", code)
	}
	e.clk.Add(30 * time.Second)
	again := beat(wire.VerdictBusy)
	if code, _ := e.beat(e.token, again); code != http.StatusOK {
		t.Fatal(code)
	}
	if got, err := e.db.Order(ctx, o.ID); err != nil || got.State != ledger.OrderStarted {
		t.Fatalf("the release after a heartbeat of the same agent run: %s %q (%v), want still started", got.State, got.Message, err)
	}
	// The same heartbeat again (its answer was lost): a duplicate, not a
	// second beat.
	e.clk.Add(5 * time.Second)
	if code, _ := e.beat(e.token, again); code != http.StatusOK {
		t.Fatal(code)
	}
	if err := e.hub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if beats, _ := e.db.Beats(ctx, e.rid, t0, t0.Add(time.Hour)); len(beats) != 3 {
		t.Errorf("%d beats stored from 3 heartbeats and a retry, want 3", len(beats))
	}
	if n := strings.Count(logs.String(), "the agent refused the server's policy"); n != 1 {
		t.Errorf("an unchanged policy refusal logged %d times, want once", n)
	}
}

// TestDoor_OrderResult: an order result's message is clipped to 500
// bytes and keeps its lines (it may be a command's output); an unknown
// outcome is refused with a short message.
func TestDoor_OrderResult(t *testing.T) {
	e := newEnv(t, hub.Config{})
	ctx := context.Background()
	e.beat(e.token, hb(wire.VerdictIdle, 3600))
	o, err := e.hub.IssueOrder(ctx, e.rid, wire.ActionRelease, ledger.OriginButton)
	if err != nil {
		t.Fatal(err)
	}
	code, body := e.post(wire.PathOrderResult(o.ID), e.token, []byte(`{"outcome":"`+strings.Repeat("x", 5000)+`"}`))
	if code != http.StatusBadRequest || len(body) > 100 || !strings.Contains(string(body), `unknown outcome`) {
		t.Fatalf("= %d %s", code, body)
	}
	res := wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeReleaseStarted,
		Message: "line 1\nline 2\n" + strings.Repeat("m", 1000), Notes: make([]wire.Note, 1000)}
	if code := e.result(e.token, res); code != http.StatusNoContent {
		t.Fatalf("result: %d", code)
	}
	got, err := e.db.Order(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Message) != 500+len("…") || !strings.HasPrefix(got.Message, "line 1\nline 2\nmmm") {
		t.Fatalf("message %d bytes %q…", len(got.Message), got.Message[:20])
	}
}

// TestDoor_OnlyTheDoorCleans: the hub's code after the door takes what
// the door made of a body, never a raw wire message, and no longer clips
// or filters text itself: only door.go does.
func TestDoor_OnlyTheDoorCleans(t *testing.T) {
	raw := map[string]bool{"HeartbeatRequest": true, "OrderResult": true, "Note": true, "Session": true,
		"JobState": true, "GPUSummary": true, "HostFacts": true, "BenchReport": true}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "door.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				for _, p := range n.Type.Params.List {
					ast.Inspect(p.Type, func(x ast.Node) bool {
						if s, ok := x.(*ast.SelectorExpr); ok && isIdent(s.X, "wire") && raw[s.Sel.Name] {
							t.Errorf("%s: %s takes a raw wire.%s: let it take what the door made of it", fset.Position(n.Pos()), n.Name.Name, s.Sel.Name)
						}
						return true
					})
				}
			case *ast.CallExpr:
				if s, ok := n.Fun.(*ast.SelectorExpr); ok && isIdent(s.X, "clip") {
					t.Errorf("%s: clip.%s after the door: clean the field in door.go", fset.Position(n.Pos()), s.Sel.Name)
				}
				for _, f := range []string{"printable", "text", "percent"} {
					if isIdent(n.Fun, f) {
						t.Errorf("%s: %s after the door: clean the field in door.go", fset.Position(n.Pos()), f)
					}
				}
			}
			return true
		})
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
