package runpod_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/ledger"
)

const key = "rpa_TESTKEY0123456789"

var started = time.Date(2026, 11, 30, 8, 15, 0, 0, time.UTC)

func setup(t *testing.T) (*runpodfake.Server, *runpod.Client) {
	t.Helper()
	srv := runpodfake.New(key)
	t.Cleanup(srv.Close)
	c, err := runpod.New(runpod.Config{APIKey: key, BaseURL: srv.RESTURL(), GraphQLURL: srv.GraphQLURL(),
		HTTPClient: &http.Client{Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func noKey(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), key) {
		t.Errorf("the key is in the error: %v", err)
	}
}

func byID(ins []connector.Instance) map[string]connector.Instance {
	m := map[string]connector.Instance{}
	for _, in := range ins {
		m[in.ID] = in
	}
	return m
}

func TestNew(t *testing.T) {
	if _, err := runpod.New(runpod.Config{APIKey: " "}); err == nil {
		t.Error("an empty key was accepted")
	}
	if _, err := runpod.New(runpod.Config{APIKey: key, BaseURL: "rest.runpod.io/v1"}); err == nil {
		t.Error("a base without a scheme was accepted")
	}
	c, err := runpod.New(runpod.Config{APIKey: key})
	if err != nil || c.Platform() != "runpod" || c.MinInterval() < time.Minute {
		t.Fatalf("New with defaults: %v, %v", c, err)
	}
}

func TestClient_Instances(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetPods(
			runpodfake.NewPod("xedezhzb9la3ye", "train", "RUNNING", "0.74", "RTX 4090", 1, started),
			runpodfake.NewPod("p2", "eval", "EXITED", json.Number("1.38"), "A40", 2, started),
			runpodfake.NewPod("p3", "", "TERMINATED", nil, "L4", 1, started),
			runpodfake.NewPod("p4", "odd", "CREATED", json.Number("0.2"), "L4", 1, started),
		)
		ins, err := c.Instances(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ins) != 4 || srv.Calls("GET /v1/pods") != 1 {
			t.Fatalf("%d instances in %d calls", len(ins), srv.Calls("GET /v1/pods"))
		}
		m := byID(ins)
		p := m["xedezhzb9la3ye"]
		if p.Name != "train" || p.GPU != "RTX 4090" || p.GPUCount != 1 || p.State != connector.Running ||
			p.RawState != "RUNNING" || !p.PriceOK || p.Price != ledger.MustDecimal("0.74") || p.Currency != ledger.USD ||
			!p.StartedAt.Equal(started) || !p.StateSince.Equal(started) {
			t.Errorf("running pod: %+v", p)
		}
		if q := m["p2"]; q.State != connector.Stopped || q.Price != ledger.MustDecimal("1.38") || q.GPUCount != 2 {
			t.Errorf("exited pod: %+v", q)
		}
		if q := m["p3"]; q.State != connector.Terminated || q.PriceOK {
			t.Errorf("terminated pod without costPerHr: %+v", q)
		}
		if q := m["p4"]; q.State != connector.Unknown || q.RawState != "CREATED" {
			t.Errorf("unknown status: %+v", q)
		}
	})
	t.Run("costPerHr string, number, missing, null", func(t *testing.T) {
		srv, c := setup(t)
		a := runpodfake.NewPod("s", "", "RUNNING", "0.74", "A40", 1, started)
		b := runpodfake.NewPod("n", "", "RUNNING", json.Number("0.74"), "A40", 1, started)
		e := runpodfake.NewPod("e", "", "RUNNING", json.Number("74e-2"), "A40", 1, started)
		m := runpodfake.NewPod("m", "", "RUNNING", nil, "A40", 1, started)
		z := runpodfake.NewPod("z", "", "RUNNING", nil, "A40", 1, started)
		z["costPerHr"] = nil
		f := runpodfake.NewPod("f", "", "RUNNING", json.Number("0.8699999999999999"), "A40", 3, started)
		srv.SetPods(a, b, e, m, z, f)
		ins, err := c.Instances(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := byID(ins)
		for _, id := range []string{"s", "n", "e"} {
			if p := got[id]; !p.PriceOK || p.Price != ledger.MustDecimal("0.74") {
				t.Errorf("%s: price %v ok %v, want exactly 0.74", id, p.Price, p.PriceOK)
			}
		}
		for _, id := range []string{"m", "z"} {
			if p := got[id]; p.PriceOK || !p.Price.IsZero() {
				t.Errorf("%s: price %v ok %v, want none", id, p.Price, p.PriceOK)
			}
		}
		if p := got["f"]; !p.PriceOK || p.Price != ledger.MustDecimal("0.87") {
			t.Errorf("a double's artefact: %v, want 0.87", p.Price)
		}
	})
	t.Run("pod vanishes between two lists", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetPods(runpodfake.NewPod("a", "", "RUNNING", "0.5", "A40", 1, started), runpodfake.NewPod("b", "", "RUNNING", "0.5", "A40", 1, started))
		first, err := c.Instances(context.Background())
		if err != nil || len(first) != 2 {
			t.Fatalf("first list: %v, %v", first, err)
		}
		srv.SetPods(srv.Pods()[1])
		second, err := c.Instances(context.Background())
		if err != nil || len(second) != 1 || second[0].ID != "b" {
			t.Fatalf("second list: %+v, %v", second, err)
		}
		srv.SetPods()
		third, err := c.Instances(context.Background())
		if err != nil || third == nil || len(third) != 0 {
			t.Fatalf("empty account: %#v, %v (want an empty, non-nil list)", third, err)
		}
		srv.SetPods(runpodfake.NewPod("a", "", "EXITED", "0.5", "A40", 1, started))
		back, err := c.Instances(context.Background())
		if err != nil || len(back) != 1 || back[0].ID != "a" || back[0].State != connector.Stopped {
			t.Fatalf("the pod reappears: %+v, %v", back, err)
		}
	})
	t.Run("ErrBadAnswer", func(t *testing.T) {
		for name, mut := range map[string]func(runpodfake.Pod){
			"id missing":          func(p runpodfake.Pod) { delete(p, "id") },
			"id a number":         func(p runpodfake.Pod) { p["id"] = 12 },
			"desiredStatus gone":  func(p runpodfake.Pod) { delete(p, "desiredStatus") },
			"costPerHr a bool":    func(p runpodfake.Pod) { p["costPerHr"] = true },
			"costPerHr an object": func(p runpodfake.Pod) { p["costPerHr"] = map[string]any{"usd": 1} },
			"costPerHr words":     func(p runpodfake.Pod) { p["costPerHr"] = "cheap" },
			"costPerHr negative":  func(p runpodfake.Pod) { p["costPerHr"] = -1 },
			"gpu count a string":  func(p runpodfake.Pod) { p["gpu"] = map[string]any{"count": "2"} },
			"lastStartedAt junk":  func(p runpodfake.Pod) { p["lastStartedAt"] = "yesterday" },
		} {
			t.Run(name, func(t *testing.T) {
				srv, c := setup(t)
				p := runpodfake.NewPod("a", "", "RUNNING", "0.5", "A40", 1, started)
				mut(p)
				srv.SetPods(runpodfake.NewPod("ok", "", "RUNNING", "0.5", "A40", 1, started), p)
				ins, err := c.Instances(context.Background())
				if !errors.Is(err, connector.ErrBadAnswer) || ins != nil {
					t.Fatalf("%v, %v; want a bad answer and no instances", ins, err)
				}
			})
		}
		t.Run("listed twice", func(t *testing.T) {
			srv, c := setup(t)
			p := runpodfake.NewPod("a", "", "RUNNING", "0.5", "A40", 1, started)
			srv.SetPods(p, p)
			if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
				t.Fatalf("%v", err)
			}
		})
	})
	t.Run("not an array", func(t *testing.T) {
		for name, body := range map[string]string{
			"null":         `null`,
			"v2's wrapper": `{"pods":[{"id":"a","desiredStatus":"RUNNING"}]}`,
			"an error":     `{"error":"something"}`,
		} {
			srv, c := setup(t)
			srv.SetFault(runpodfake.Status(200, "application/json", body))
			if ins, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) || ins != nil {
				t.Errorf("%s: %v, %v", name, ins, err)
			}
			day := started.Truncate(24 * time.Hour)
			if items, err := c.Billed(context.Background(), day, day.Add(24*time.Hour)); !errors.Is(err, connector.ErrBadAnswer) || items != nil {
				t.Errorf("billing %s: %v, %v", name, items, err)
			}
		}
	})
	t.Run("404 is not an empty account", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetFault(runpodfake.Status(404, "application/json", `{"error":"Pod not found."}`))
		if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) || errors.Is(err, connector.ErrNotFound) {
			t.Errorf("%v", err)
		}
	})
	t.Run("CPU pod without gpu", func(t *testing.T) {
		srv, c := setup(t)
		p := runpodfake.NewPod("cpu", "", "RUNNING", "0.06", "", 0, started)
		p["gpu"] = nil
		srv.SetPods(p)
		ins, err := c.Instances(context.Background())
		if err != nil || ins[0].GPUCount != 0 || ins[0].GPU != "" {
			t.Fatalf("%+v, %v", ins, err)
		}
	})
}

// TestClient_Faults runs every call against each fault of the platform.
func TestClient_Faults(t *testing.T) {
	calls := map[string]func(*runpod.Client) error{
		"Instances": func(c *runpod.Client) error { _, err := c.Instances(context.Background()); return err },
		"Balance":   func(c *runpod.Client) error { _, err := c.Balance(context.Background()); return err },
		"Check":     func(c *runpod.Client) error { return c.Check(context.Background()) },
		"Stop":      func(c *runpod.Client) error { return c.Stop(context.Background(), "a") },
		"Terminate": func(c *runpod.Client) error { return c.Terminate(context.Background(), "a") },
		"Billed": func(c *runpod.Client) error {
			_, err := c.Billed(context.Background(), started.Truncate(24*time.Hour), started.Truncate(24*time.Hour).Add(24*time.Hour))
			return err
		},
	}
	for _, f := range []struct {
		name  string
		fault http.HandlerFunc
		want  error
		retry time.Duration
		body  bool // only calls that read the body see it
	}{
		{"500", runpodfake.Status(500, "application/json", `{"error":"internal"}`), connector.ErrUnavailable, 0, false},
		{"502 html", runpodfake.Status(502, "text/html", `<html>Bad gateway</html>`), connector.ErrUnavailable, 0, false},
		{"429 with Retry-After", runpodfake.Status(429, "application/json", `{}`, "Retry-After", "7", "RateLimit-Policy", `"minute";q=60;w=60`), nil, 7 * time.Second, false},
		{"429 without Retry-After", runpodfake.Status(429, "text/plain", `Too Many Requests`), nil, connector.DefaultRetryAfter, false},
		{"html instead of json", runpodfake.Status(200, "text/html", `<html><body>Sign in</body></html>`), connector.ErrBadAnswer, 0, true},
		{"truncated json", runpodfake.Status(200, "application/json", `[{"id": "a", `), connector.ErrBadAnswer, 0, true},
		{"invalid key", runpodfake.Status(401, "application/json", `{"error":"invalid api key `+key+`"}`), connector.ErrUnauthorized, 0, false},
		{"forbidden", runpodfake.Status(403, "application/json", `{"error":"key lacks permission"}`), connector.ErrUnauthorized, 0, false},
		{"slow", runpodfake.Slow(5 * time.Second), connector.ErrUnavailable, 0, false},
	} {
		for name, call := range calls {
			t.Run(f.name+"/"+name, func(t *testing.T) {
				srv, _ := setup(t)
				c, _ := runpod.New(runpod.Config{APIKey: key, BaseURL: srv.RESTURL(), GraphQLURL: srv.GraphQLURL(),
					HTTPClient: &http.Client{Timeout: 100 * time.Millisecond}})
				srv.SetFault(f.fault)
				err := call(c)
				noKey(t, err)
				var rl *connector.RateLimitedError
				switch {
				case f.body && (name == "Stop" || name == "Terminate"):
					// A 200 to an action is success whatever its body: the
					// caller confirms by listing.
					if err != nil {
						t.Fatalf("%v", err)
					}
				case f.retry != 0:
					if !errors.As(err, &rl) || rl.RetryAfter != f.retry || !connector.IsTransient(err) {
						t.Fatalf("%v, want a rate limit of %s", err, f.retry)
					}
				case !errors.Is(err, f.want):
					t.Fatalf("%v, want %v", err, f.want)
				}
			})
		}
	}
	t.Run("down", func(t *testing.T) {
		srv, c := setup(t)
		srv.Close()
		for name, call := range calls {
			if err := call(c); !errors.Is(err, connector.ErrUnavailable) {
				t.Errorf("%s: %v, want unavailable", name, err)
			}
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		srv, _ := setup(t)
		c, _ := runpod.New(runpod.Config{APIKey: "rpa_WRONG", BaseURL: srv.RESTURL(), GraphQLURL: srv.GraphQLURL()})
		for name, call := range calls {
			if err := call(c); !errors.Is(err, connector.ErrUnauthorized) {
				t.Errorf("%s: %v, want unauthorized", name, err)
			}
		}
	})
}

func TestClient_Balance(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, c := range []struct {
			bal, spend   any
			want, wantSp string
			spOK         bool
		}{
			{json.Number("435.85"), json.Number("0.001"), "435.85", "0.001", true},
			{"12.5", nil, "12.5", "0", false},
			{json.Number("0"), json.Number("0"), "0", "0", true},
			{json.Number("-3.2"), json.Number("0.74"), "-3.2", "0.74", true},
			{json.Number("435.84999999999997"), json.Number("1.48"), "435.85", "1.48", true},
		} {
			srv, cl := setup(t)
			srv.SetBalance(c.bal, c.spend)
			b, err := cl.Balance(context.Background())
			if err != nil || b.Amount != ledger.MustDecimal(c.want) || b.Currency != ledger.USD ||
				b.SpendPerHourOK != c.spOK || b.SpendPerHour != ledger.MustDecimal(c.wantSp) {
				t.Errorf("balance %v/%v: %+v, %v", c.bal, c.spend, b, err)
			}
		}
	})
	t.Run("ErrBadAnswer", func(t *testing.T) {
		for _, v := range []any{nil, true, "lots", map[string]any{}} {
			srv, c := setup(t)
			srv.SetBalance(v, json.Number("1"))
			if b, err := c.Balance(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
				t.Errorf("clientBalance %#v: %+v, %v; want a bad answer", v, b, err)
			}
		}
		srv, c := setup(t)
		srv.SetBalance(json.Number("1"), "fast")
		if _, err := c.Balance(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
			t.Errorf("currentSpendPerHr a word: %v", err)
		}
	})
	t.Run("GraphQL errors array", func(t *testing.T) {
		for _, e := range []struct {
			err  map[string]any
			want error
		}{
			{map[string]any{"message": "Unauthorized request, check the key " + key}, connector.ErrUnauthorized},
			{map[string]any{"message": "Context creation failed", "extensions": map[string]any{"code": "UNAUTHENTICATED"}}, connector.ErrUnauthorized},
			{map[string]any{"message": "Something went wrong " + strings.Repeat("x", 500), "extensions": map[string]any{"code": "INTERNAL_SERVER_ERROR"}}, connector.ErrBadAnswer},
			{map[string]any{"message": `Cannot query field "clientBalance" on type "User".`}, connector.ErrBadAnswer},
		} {
			srv, c := setup(t)
			srv.SetBalance(json.Number("5"), nil)
			srv.SetGraphQLErrors(e.err)
			_, err := c.Balance(context.Background())
			if !errors.Is(err, e.want) {
				t.Errorf("%v: %v, want %v", e.err["message"], err, e.want)
			}
			noKey(t, err)
			if err != nil && len(err.Error()) > 400 {
				t.Errorf("the message is not clipped: %d bytes", len(err.Error()))
			}
			if err != nil && !strings.Contains(err.Error(), strings.SplitN(e.err["message"].(string), " ", 2)[0]) {
				t.Errorf("the platform's message is lost: %v", err)
			}
			if err := c.Check(context.Background()); !errors.Is(err, e.want) {
				t.Errorf("Check: %v, want %v", err, e.want)
			}
		}
	})
	t.Run("myself null", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetMyselfNull(true)
		if _, err := c.Balance(context.Background()); !errors.Is(err, connector.ErrUnauthorized) {
			t.Errorf("Balance: %v", err)
		}
		if err := c.Check(context.Background()); !errors.Is(err, connector.ErrUnauthorized) {
			t.Errorf("Check: %v", err)
		}
	})
	t.Run("data null without errors", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetFault(runpodfake.Status(200, "application/json", `{"data":null}`))
		if _, err := c.Balance(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
			t.Errorf("%v", err)
		}
	})
}

func TestClient_Check(t *testing.T) {
	srv, c := setup(t)
	if err := c.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if srv.Calls("POST /graphql") != 1 || srv.Calls("GET /v1/pods") != 0 {
		t.Errorf("Check made %d GraphQL and %d list calls", srv.Calls("POST /graphql"), srv.Calls("GET /v1/pods"))
	}
	// The fake takes ?api_key= on GraphQL as RunPod does; the client must
	// send the Bearer header instead, so no URL carries the key.
	if q := srv.LastQuery("/graphql"); q != "" {
		t.Errorf("GraphQL query string %q", q)
	}
	var auth []string
	srv.SetFault(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization")+" "+r.URL.RawQuery)
		runpodfake.Status(200, "application/json", `{"data":{"myself":{"id":"u","clientBalance":1}}}`)(w, r)
	})
	c.Check(context.Background())
	c.Balance(context.Background())
	if len(auth) != 2 || auth[0] != "Bearer "+key+" " || auth[1] != auth[0] {
		t.Errorf("credentials sent: %q", auth)
	}
}

func TestClient_StopTerminate(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetPods(runpodfake.NewPod("a", "", "RUNNING", "0.5", "A40", 1, started), runpodfake.NewPod("b", "", "RUNNING", "0.5", "A40", 1, started))
		before := time.Now().Add(-time.Second)
		if err := c.Stop(context.Background(), "a"); err != nil {
			t.Fatal(err)
		}
		if err := c.Terminate(context.Background(), "b"); err != nil {
			t.Fatal(err)
		}
		ins, err := c.Instances(context.Background())
		if err != nil || len(ins) != 1 || ins[0].ID != "a" || ins[0].State != connector.Stopped || ins[0].RawState != "EXITED" {
			t.Fatalf("after stop and terminate: %+v, %v", ins, err)
		}
		if ins[0].StateSince.Before(before.Truncate(time.Second)) {
			t.Errorf("StateSince %s, want the stop's time", ins[0].StateSince)
		}
		if srv.Calls("POST /v1/pods/a/stop") != 1 || srv.Calls("DELETE /v1/pods/b") != 1 {
			t.Error("the calls were not the documented ones")
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, code := range []int{404, 400} {
			srv, c := setup(t)
			srv.SetUnknownPodStatus(code)
			srv.SetPods(runpodfake.NewPod("a", "", "RUNNING", "0.5", "A40", 1, started))
			if err := c.Stop(context.Background(), "nope"); !errors.Is(err, connector.ErrNotFound) {
				t.Errorf("%d: stop of an unknown pod: %v", code, err)
			}
			if err := c.Terminate(context.Background(), "nope"); !errors.Is(err, connector.ErrNotFound) {
				t.Errorf("%d: terminate of an unknown pod: %v", code, err)
			}
			if ins, _ := c.Instances(context.Background()); len(ins) != 1 || ins[0].State != connector.Running {
				t.Errorf("%d: another pod changed: %+v", code, ins)
			}
		}
		_, c := setup(t)
		if err := c.Stop(context.Background(), ""); !errors.Is(err, connector.ErrNotFound) {
			t.Errorf("an empty ID: %v", err)
		}
	})
	t.Run("ID is escaped", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetPods(runpodfake.NewPod("a", "", "RUNNING", "0.5", "A40", 1, started))
		if err := c.Terminate(context.Background(), "a?force=1"); !errors.Is(err, connector.ErrNotFound) {
			t.Errorf("terminate a?force=1: %v", err)
		}
		if err := c.Stop(context.Background(), "../pods/a"); !errors.Is(err, connector.ErrNotFound) {
			t.Errorf("stop ../pods/a: %v", err)
		}
		if ins, _ := c.Instances(context.Background()); len(ins) != 1 || ins[0].State != connector.Running {
			t.Errorf("an ID with a query or a path reached another pod: %+v", ins)
		}
	})
	t.Run("a 400 that is not about the ID", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetPods(runpodfake.NewPod("a", "", "RUNNING", "0.5", "A40", 1, started))
		srv.SetFault(runpodfake.Status(400, "application/json", `{"error":"pods with a network volume cannot be stopped"}`))
		err := c.Stop(context.Background(), "a")
		if !errors.Is(err, connector.ErrBadAnswer) || errors.Is(err, connector.ErrNotFound) || !strings.Contains(err.Error(), "network volume") {
			t.Errorf("%v; want a bad answer, never not found", err)
		}
	})
	t.Run("other 4xx", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetFault(runpodfake.Status(409, "application/json", `{"error":"pod is locked"}`))
		err := c.Stop(context.Background(), "a")
		if !errors.Is(err, connector.ErrBadAnswer) || errors.Is(err, connector.ErrNotFound) ||
			!strings.Contains(err.Error(), "409") || !strings.Contains(err.Error(), ": pod is locked") {
			t.Errorf("%v; want a bad answer with the platform's words", err)
		}
	})
}

func TestClient_Billed(t *testing.T) {
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	rec := func(pod, at string, amt any, ms any) map[string]any {
		m := map[string]any{"podId": pod, "time": at, "amount": amt, "diskSpaceBilledGb": 50}
		if ms != nil {
			m["timeBilledMs"] = ms
		}
		return m
	}
	t.Run("OK", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetBilling(
			rec("a", "2026-11-01T00:00:00Z", json.Number("17.76"), json.Number("86400000")),
			rec("b", "2026-11-01T00:00:00Z", "0.2", nil),
			rec("a", "2026-11-02T00:00:00.000Z", json.Number("3.0000000000000004"), json.Number("14400000")),
			rec("a", "2026-11-03T00:00:00Z", json.Number("9"), json.Number("1")), // at `to`: outside
		)
		items, err := c.Billed(context.Background(), day, day.Add(48*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		q := srv.LastQuery("/v1/billing/pods")
		for _, want := range []string{"bucketSize=day", "grouping=podId", "startTime=2026-11-01T00%3A00%3A00Z", "endTime=2026-11-03T00%3A00%3A00Z"} {
			if !strings.Contains(q, want) {
				t.Errorf("query %q lacks %s", q, want)
			}
		}
		if len(items) != 3 {
			t.Fatalf("%d items: %+v", len(items), items)
		}
		a := items[0]
		if a.InstanceID != "a" || !a.From.Equal(day) || !a.To.Equal(day.Add(24*time.Hour)) || a.Amount != ledger.MustDecimal("17.76") ||
			a.Currency != ledger.USD || a.BilledFor != 24*time.Hour {
			t.Errorf("first item: %+v", a)
		}
		if items[1].BilledFor != 0 || items[1].Amount != ledger.MustDecimal("0.2") {
			t.Errorf("second item: %+v", items[1])
		}
		if items[2].Amount != ledger.MustDecimal("3") || items[2].BilledFor != 4*time.Hour {
			t.Errorf("third item: %+v", items[2])
		}
	})
	t.Run("hours when not whole days", func(t *testing.T) {
		srv, c := setup(t)
		srv.SetBilling(rec("a", "2026-11-01T10:00:00Z", json.Number("0.74"), json.Number("3600000")))
		from := day.Add(10 * time.Hour)
		items, err := c.Billed(context.Background(), from, from.Add(3*time.Hour))
		if err != nil || len(items) != 1 || !items[0].To.Equal(from.Add(time.Hour)) {
			t.Fatalf("%+v, %v", items, err)
		}
		if q := srv.LastQuery("/v1/billing/pods"); !strings.Contains(q, "bucketSize=hour") {
			t.Errorf("query %q", q)
		}
	})
	t.Run("ErrBadAnswer", func(t *testing.T) {
		for name, r := range map[string]map[string]any{
			"no podId":       {"time": "2026-11-01T00:00:00Z", "amount": 1},
			"no amount":      {"podId": "a", "time": "2026-11-01T00:00:00Z"},
			"amount a bool":  {"podId": "a", "time": "2026-11-01T00:00:00Z", "amount": true},
			"time junk":      {"podId": "a", "time": "Nov 1", "amount": 1},
			"ms fractional":  {"podId": "a", "time": "2026-11-01T00:00:00Z", "amount": 1, "timeBilledMs": 1.5},
			"podId a number": {"podId": 7, "time": "2026-11-01T00:00:00Z", "amount": 1},
		} {
			srv, c := setup(t)
			srv.SetBilling(rec("ok", "2026-11-01T00:00:00Z", 1, nil), r)
			if items, err := c.Billed(context.Background(), day, day.Add(24*time.Hour)); !errors.Is(err, connector.ErrBadAnswer) || items != nil {
				t.Errorf("%s: %+v, %v", name, items, err)
			}
		}
	})
	t.Run("empty period", func(t *testing.T) {
		_, c := setup(t)
		if _, err := c.Billed(context.Background(), day, day); err == nil {
			t.Error("an empty period was asked")
		}
	})
}
