package vast_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/vast"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
)

const key = "vk-0123456789abcdef"

const listRoute = "GET /api/v1/instances/"

func setup(t *testing.T) (*vastfake.Server, *vast.Client) {
	t.Helper()
	f := vastfake.New(key)
	t.Cleanup(f.Close)
	c, err := vast.New(vast.Config{APIKey: key, BaseURL: f.Base(), HTTPClient: &http.Client{Timeout: 2 * time.Second}, PageGap: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

// noKey fails the test when an error text carries the key.
func noKey(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), key) {
		t.Errorf("the key is in the error: %v", err)
	}
}

func TestClient_Instances(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f, c := setup(t)
		a := vastfake.Instance(312)
		b := vastfake.Instance(313)
		b["actual_status"], b["cur_state"], b["intended_status"] = "stopped", "stopped", "stopped"
		b["dph_total"] = "0.35" // a price as a string
		b["start_date"] = json.Number("1700000000")
		b["num_gpus"] = 2
		b["gpu_name"] = "A100 SXM4"
		b["label"] = nil
		f.SetInstances(a, b)
		got, err := c.Instances(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("got %d instances: %+v", len(got), got)
		}
		x, y := got[0], got[1]
		if x.ID != "312" || x.Name != "job-312" || x.GPU != "RTX 4090" || x.GPUCount != 1 || x.State != connector.Running || x.RawState != "running" {
			t.Errorf("first: %+v", x)
		}
		if !x.PriceOK || x.Price.String() != "0.8021" || x.Currency != "USD" {
			t.Errorf("first price: %v %v %s", x.Price, x.PriceOK, x.Currency)
		}
		// 1668804745.1223178: the digits, not a float64 (which would give
		// …122317791 ns).
		if want := time.Unix(1668804745, 122317800).UTC(); !x.StartedAt.Equal(want) {
			t.Errorf("start_date float: %s, want %s", x.StartedAt.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
		}
		if y.ID != "313" || y.Name != "" || y.GPUCount != 2 || y.State != connector.Stopped || y.Price.String() != "0.35" {
			t.Errorf("second: %+v", y)
		}
		if want := time.Unix(1700000000, 0).UTC(); !y.StartedAt.Equal(want) {
			t.Errorf("start_date int: %s", y.StartedAt)
		}
		reqs := f.Requests()
		if len(reqs) != 1 || !strings.Contains(reqs[0], "limit=25") || strings.Contains(reqs[0], key) {
			t.Errorf("requests: %q", reqs)
		}
	})
	t.Run("PriceParts", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(vastfake.Instance(1))
		got, err := c.List(context.Background())
		if err != nil || len(got) != 1 {
			t.Fatalf("%v %v", got, err)
		}
		in := got[0]
		if in.GPUPrice.Value.String() != "0.8" || in.DiskPerHour.Value.String() != "0.0021" || in.StoragePerGBMonth.Value.String() != "0.15" ||
			in.InetUpPerGB.Value.String() != "0.00456" || in.InetDownPerGB.Value.String() != "0.00123" || !in.InetUpPerGB.OK {
			t.Errorf("parts: %+v", in)
		}
	})
	t.Run("FloatReprPrice", func(t *testing.T) {
		f, c := setup(t)
		a := vastfake.Instance(1)
		a["dph_total"] = json.Number("0.30000000000000004") // Python's repr of 0.1+0.2
		b := vastfake.Instance(2)
		b["dph_total"] = json.Number("4.94e-05")
		f.SetInstances(a, b)
		got, err := c.Instances(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Price.String() != "0.3" || got[1].Price.String() != "0.0000494" {
			t.Errorf("prices: %s, %s", got[0].Price, got[1].Price)
		}
	})
	t.Run("NoPrice", func(t *testing.T) {
		f, c := setup(t)
		a := vastfake.Instance(1)
		delete(a, "dph_total")
		b := vastfake.Instance(2)
		b["dph_total"] = nil
		delete(b, "start_date")
		f.SetInstances(a, b)
		got, err := c.Instances(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got[0].PriceOK || got[1].PriceOK || !got[1].StartedAt.IsZero() {
			t.Errorf("%+v", got)
		}
	})
	t.Run("States", func(t *testing.T) {
		for _, c := range []struct {
			actual, cur any
			want        connector.State
			raw         string
		}{
			{"running", "running", connector.Running, "running"},
			{"frozen", "running", connector.Running, "frozen"},
			{"stopped", "stopped", connector.Stopped, "stopped"},
			{"loading", "running", connector.Stopped, "loading"},
			{"created", "running", connector.Stopped, "created"},
			{nil, "running", connector.Stopped, "provisioning"},
			{"exited", "stopped", connector.Stopped, "exited"},
			{"exited", "running", connector.Unknown, "exited"},
			{"rebooting", "running", connector.Unknown, "rebooting"},
			{"offline", "running", connector.Unknown, "offline"},
			{"unknown", "running", connector.Unknown, "unknown"},
			{"hibernating", "running", connector.Unknown, "hibernating"},
			{"stopped", "unloaded", connector.Terminated, "stopped"},
		} {
			f, cl := setup(t)
			in := vastfake.Instance(9)
			in["actual_status"], in["cur_state"] = c.actual, c.cur
			f.SetInstances(in)
			got, err := cl.Instances(context.Background())
			if err != nil || len(got) != 1 {
				t.Fatalf("%v/%v: %v %v", c.actual, c.cur, got, err)
			}
			if got[0].State != c.want || got[0].RawState != c.raw {
				t.Errorf("%v/%v: %s (%q), want %s (%q)", c.actual, c.cur, got[0].State, got[0].RawState, c.want, c.raw)
			}
		}
	})
	t.Run("Pages", func(t *testing.T) {
		f, c := setup(t)
		var all []map[string]any
		for i := 1; i <= 60; i++ {
			all = append(all, vastfake.Instance(1000+i))
		}
		f.SetInstances(all...)
		got, err := c.Instances(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 60 || got[0].ID != "1001" || got[59].ID != "1060" {
			t.Fatalf("got %d instances", len(got))
		}
		if n := f.Calls(listRoute); n != 3 {
			t.Errorf("%d list calls, want 3 pages of 25", n)
		}
	})
	t.Run("PagesPaced", func(t *testing.T) {
		// Vast.ai answers 429 to a second call within the endpoint's
		// minimum interval: pages must be spaced out.
		f := vastfake.New(key)
		defer f.Close()
		f.MinGap(80 * time.Millisecond)
		f.SetPageSize(2)
		f.SetInstances(vastfake.Instance(1), vastfake.Instance(2), vastfake.Instance(3))
		fast, _ := vast.New(vast.Config{APIKey: key, BaseURL: f.Base(), PageGap: time.Millisecond})
		var rl *connector.RateLimitedError
		if _, err := fast.Instances(context.Background()); !errors.As(err, &rl) {
			t.Fatalf("no pause between pages: %v, want the fake's 429", err)
		}
		time.Sleep(100 * time.Millisecond)
		paced, _ := vast.New(vast.Config{APIKey: key, BaseURL: f.Base(), PageGap: 100 * time.Millisecond})
		got, err := paced.Instances(context.Background())
		if err != nil || len(got) != 3 {
			t.Fatalf("paced: %v %v", got, err)
		}
	})
	t.Run("ChangedBetweenPages", func(t *testing.T) {
		// Instance 2 is on both pages (the list changed between them): it
		// is kept once, as last seen.
		f, c := setup(t)
		f.Fail(listRoute,
			vastfake.Status(200, "application/json", `{"success":true,"instances":[{"id":1,"actual_status":"running"},{"id":2,"actual_status":"running"}],"next_token":"Mg=="}`),
			vastfake.Status(200, "application/json", `{"success":true,"instances":[{"id":2,"actual_status":"stopped"},{"id":3,"actual_status":"running"}],"next_token":null}`))
		got, err := c.Instances(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[1].ID != "2" || got[1].State != connector.Stopped || got[2].ID != "3" {
			t.Fatalf("got %+v", got)
		}
		if reqs := f.Requests(); len(reqs) != 2 || !strings.Contains(reqs[1], "after_token=Mg%3D%3D") {
			t.Errorf("requests: %q", reqs)
		}
	})
	t.Run("Vanishes", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(vastfake.Instance(1), vastfake.Instance(2))
		if got, err := c.Instances(context.Background()); err != nil || len(got) != 2 {
			t.Fatalf("%v %v", got, err)
		}
		f.Remove(2)
		got, err := c.Instances(context.Background())
		if err != nil || len(got) != 1 || got[0].ID != "1" {
			t.Fatalf("after the instance vanished: %v %v", got, err)
		}
		if err := c.Stop(context.Background(), "2"); !errors.Is(err, connector.ErrNotFound) {
			t.Errorf("stop of a vanished instance: %v, want not found", err)
		}
		if err := c.Terminate(context.Background(), "2"); !errors.Is(err, connector.ErrNotFound) {
			t.Errorf("destroy of a vanished instance: %v, want not found", err)
		}
		f.SetInstances(vastfake.Instance(1), vastfake.Instance(2))
		if got, err := c.Instances(context.Background()); err != nil || len(got) != 2 {
			t.Fatalf("reappeared: %v %v", got, err)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		_, c := setup(t)
		got, err := c.Instances(context.Background())
		if err != nil || len(got) != 0 {
			t.Fatalf("%v %v", got, err)
		}
	})
}

func TestClient_Instances_BadAnswers(t *testing.T) {
	for name, mut := range map[string]func(map[string]any){
		"id missing":           func(m map[string]any) { delete(m, "id") },
		"id a string":          func(m map[string]any) { m["id"] = "312" },
		"id fractional":        func(m map[string]any) { m["id"] = json.Number("3.5") },
		"status a number":      func(m map[string]any) { m["actual_status"] = 1 },
		"gpu_name an object":   func(m map[string]any) { m["gpu_name"] = map[string]any{} },
		"num_gpus a string":    func(m map[string]any) { m["num_gpus"] = "two" },
		"num_gpus negative":    func(m map[string]any) { m["num_gpus"] = -1 },
		"dph_total a bool":     func(m map[string]any) { m["dph_total"] = true },
		"dph_total words":      func(m map[string]any) { m["dph_total"] = "cheap" },
		"dph_total negative":   func(m map[string]any) { m["dph_total"] = json.Number("-0.5") },
		"dph_total a fraction": func(m map[string]any) { m["dph_total"] = "1/3" },
		"dph_total huge":       func(m map[string]any) { m["dph_total"] = json.Number("1e30") },
		"start_date a bool":    func(m map[string]any) { m["start_date"] = false },
		"start_date negative":  func(m map[string]any) { m["start_date"] = json.Number("-5") },
		"start_date words":     func(m map[string]any) { m["start_date"] = "yesterday" },
		"start_date too far":   func(m map[string]any) { m["start_date"] = json.Number("1e300") },
	} {
		t.Run(name, func(t *testing.T) {
			f, c := setup(t)
			good := vastfake.Instance(1)
			in := vastfake.Instance(2)
			mut(in)
			f.SetInstances(good, in)
			got, err := c.Instances(context.Background())
			if !errors.Is(err, connector.ErrBadAnswer) || got != nil {
				t.Fatalf("got %v, %v; want a bad answer and nothing", got, err)
			}
			noKey(t, err)
		})
	}
}

func TestClient_Faults(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault vastfake.Fault
		want  error
		retry time.Duration
	}{
		{"down", vastfake.Hangup(), connector.ErrUnavailable, 0},
		{"slow", vastfake.Slow(3 * time.Second), connector.ErrUnavailable, 0},
		{"429 without Retry-After", vastfake.TooFrequent(""), nil, connector.DefaultRetryAfter},
		{"429 with Retry-After", vastfake.TooFrequent("7"), nil, 7 * time.Second},
		{"500", vastfake.Status(500, "application/json", `{"error":"server_error"}`), connector.ErrUnavailable, 0},
		{"502 html", vastfake.Status(502, "text/html", `<html>Bad Gateway</html>`), connector.ErrUnavailable, 0},
		{"html instead of json", vastfake.Status(200, "text/html", `<html><title>Vast.ai Console</title></html>`), connector.ErrBadAnswer, 0},
		{"truncated json", vastfake.Status(200, "application/json", `{"instances":[{"id":1,`), connector.ErrBadAnswer, 0},
		{"a list not an object", vastfake.Status(200, "application/json", `[]`), connector.ErrBadAnswer, 0},
		{"null", vastfake.Status(200, "application/json", `null`), connector.ErrBadAnswer, 0},
		{"instances missing", vastfake.Status(200, "application/json", `{"success":true}`), connector.ErrBadAnswer, 0},
		{"instances an object", vastfake.Status(200, "application/json", `{"instances":{"id":1}}`), connector.ErrBadAnswer, 0},
		{"next_token a number", vastfake.Status(200, "application/json", `{"instances":[],"next_token":5}`), connector.ErrBadAnswer, 0},
		{"success false", vastfake.Status(200, "application/json", `{"success":false,"error":"invalid_request","msg":"Error in query parameters"}`), vast.ErrRefused, 0},
		{"400 bad token", vastfake.Status(400, "application/json", `{"error":"invalid_token","msg":"bad after_token"}`), connector.ErrBadAnswer, 0},
		{"invalid key", vastfake.Status(401, "application/json", `{"success":false,"error":"auth_error","msg":"Invalid user key `+key+`"}`), connector.ErrUnauthorized, 0},
		{"410 deprecated", vastfake.Status(410, "application/json", `{"error":"deprecated"}`), connector.ErrBadAnswer, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := vastfake.New(key)
			defer f.Close()
			f.SetInstances(vastfake.Instance(1))
			f.Fail(listRoute, c.fault)
			cl, _ := vast.New(vast.Config{APIKey: key, BaseURL: f.Base(), HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
			got, err := cl.Instances(context.Background())
			if got != nil {
				t.Errorf("instances from a failed answer: %v", got)
			}
			var rl *connector.RateLimitedError
			switch {
			case c.retry != 0:
				if !errors.As(err, &rl) || rl.RetryAfter != c.retry || !connector.IsTransient(err) {
					t.Fatalf("err = %v, want rate limited for %s", err, c.retry)
				}
			case !errors.Is(err, c.want):
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			noKey(t, err)
			// The next call, without the fault, works: a fault leaves no
			// state behind.
			if got, err := cl.Instances(context.Background()); err != nil || len(got) != 1 {
				t.Errorf("after the fault: %v %v", got, err)
			}
		})
	}
	t.Run("fault on a later page", func(t *testing.T) {
		f, c := setup(t)
		f.SetPageSize(1)
		f.SetInstances(vastfake.Instance(1), vastfake.Instance(2))
		ok := false
		f.Fail(listRoute, func(w http.ResponseWriter, r *http.Request) {
			// The first page passes through; queue the 500 for the second.
			ok = true
			f.Fail(listRoute, vastfake.Status(500, "text/plain", "oops"))
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"success":true,"instances":[{"id":1,"actual_status":"running"}],"next_token":"MQ=="}`))
		})
		got, err := c.Instances(context.Background())
		if !ok || !errors.Is(err, connector.ErrUnavailable) || got != nil {
			t.Fatalf("a failed second page: %v, %v; want unavailable and no partial list", got, err)
		}
	})
	t.Run("repeating next_token", func(t *testing.T) {
		f, c := setup(t)
		loop := vastfake.Status(200, "application/json", `{"instances":[{"id":1}],"next_token":"same"}`)
		f.Fail(listRoute, loop, loop, loop)
		if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
			t.Fatalf("err = %v, want a bad answer", err)
		}
		if n := f.Calls(listRoute); n != 2 {
			t.Errorf("%d calls, want 2", n)
		}
	})
	t.Run("cancelled between pages", func(t *testing.T) {
		f := vastfake.New(key)
		defer f.Close()
		f.SetPageSize(1)
		f.SetInstances(vastfake.Instance(1), vastfake.Instance(2))
		c, _ := vast.New(vast.Config{APIKey: key, BaseURL: f.Base(), PageGap: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := c.Instances(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestClient_InvalidKey(t *testing.T) {
	f := vastfake.New(key)
	defer f.Close()
	c, err := vast.New(vast.Config{APIKey: "wrong-key", BaseURL: f.Base()})
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"check":     func() error { return c.Check(context.Background()) },
		"instances": func() error { _, err := c.Instances(context.Background()); return err },
		"balance":   func() error { _, err := c.Balance(context.Background()); return err },
		"stop":      func() error { return c.Stop(context.Background(), "1") },
		"terminate": func() error { return c.Terminate(context.Background(), "1") },
	} {
		if err := call(); !errors.Is(err, connector.ErrUnauthorized) || connector.IsTransient(err) {
			t.Errorf("%s: %v, want unauthorized", name, err)
		}
	}
	if _, err := vast.New(vast.Config{APIKey: " "}); err == nil {
		t.Error("an empty key was accepted")
	}
	if _, err := vast.New(vast.Config{APIKey: key, BaseURL: "console.vast.ai"}); err == nil {
		t.Error("a base without a scheme was accepted")
	}
}

func TestClient_Balance(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f, c := setup(t)
		if err := c.Check(context.Background()); err != nil {
			t.Fatal(err)
		}
		b, err := c.Balance(context.Background())
		if err != nil || b.Amount.String() != "25" || b.Currency != "USD" || b.SpendPerHourOK {
			t.Fatalf("%+v %v", b, err)
		}
		f.SetUser(map[string]any{"id": 1, "balance": "-3.10", "credit": json.Number("5.5")})
		a, err := c.Account(context.Background())
		if err != nil || a.Balance.String() != "-3.1" || !a.CreditOK || a.Credit.String() != "5.5" || a.ID != 1 {
			t.Fatalf("%+v %v", a, err)
		}
		f.SetUser(map[string]any{"balance": json.Number("7.123456789123")})
		if a, err := c.Account(context.Background()); err != nil || a.Balance.String() != "7.123456789" || a.CreditOK {
			t.Fatalf("%+v %v", a, err)
		}
		if got := f.Requests(); !strings.HasSuffix(got[len(got)-1], "/api/v0/users/current") {
			t.Errorf("path: %q", got)
		}
	})
	for name, u := range map[string]map[string]any{
		"balance missing":  {"id": 1, "credit": 1},
		"balance null":     {"balance": nil},
		"balance a bool":   {"balance": true},
		"balance words":    {"balance": "lots"},
		"credit an object": {"balance": 1, "credit": map[string]any{}},
		"id a string":      {"id": "me", "balance": 1},
	} {
		t.Run(name, func(t *testing.T) {
			f, c := setup(t)
			f.SetUser(u)
			if b, err := c.Balance(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
				t.Fatalf("%+v %v; want a bad answer", b, err)
			}
		})
	}
	t.Run("faults", func(t *testing.T) {
		f, c := setup(t)
		f.Fail("GET /api/v0/users/current", vastfake.TooFrequent(""), vastfake.Status(503, "text/html", "<html>down</html>"), vastfake.Status(200, "text/html", "<html>login</html>"))
		var rl *connector.RateLimitedError
		if _, err := c.Balance(context.Background()); !errors.As(err, &rl) {
			t.Errorf("429: %v", err)
		}
		if err := c.Check(context.Background()); !errors.Is(err, connector.ErrUnavailable) {
			t.Errorf("503: %v", err)
		}
		if _, err := c.Balance(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
			t.Errorf("html: %v", err)
		}
	})
}

func TestClient_Stop(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(vastfake.Instance(7))
		if err := c.Stop(context.Background(), "7"); err != nil {
			t.Fatal(err)
		}
		if f.Calls("PUT /api/v0/instances/7/") != 1 {
			t.Errorf("requests: %q", f.Requests())
		}
		got, err := c.Instances(context.Background())
		if err != nil || got[0].State != connector.Stopped {
			t.Fatalf("after stop: %+v %v", got, err)
		}
	})
	t.Run("ErrRefused", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(vastfake.Instance(7))
		f.RefuseStop(7, "Instance 7 is scheduling and cannot be stopped")
		err := c.Stop(context.Background(), "7")
		if !errors.Is(err, vast.ErrRefused) || !strings.Contains(err.Error(), "cannot be stopped") {
			t.Fatalf("err = %v, want refused with the platform's msg", err)
		}
		if f.Get(7)["actual_status"] != "running" {
			t.Error("the fake stopped it anyway")
		}
	})
	t.Run("ErrBadAnswer", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(vastfake.Instance(7))
		f.Fail("PUT /api/v0/instances/7/", vastfake.Status(200, "application/json", `{"success":"yes"}`), vastfake.Status(200, "text/html", `<html></html>`))
		if err := c.Stop(context.Background(), "7"); !errors.Is(err, connector.ErrBadAnswer) {
			t.Errorf("success a string: %v", err)
		}
		if err := c.Stop(context.Background(), "7"); !errors.Is(err, connector.ErrBadAnswer) {
			t.Errorf("html: %v", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		f, c := setup(t)
		for _, id := range []string{"", "abc", "7/../../users", "-1", "7?x=1"} {
			if err := c.Stop(context.Background(), id); !errors.Is(err, connector.ErrNotFound) {
				t.Errorf("stop %q: %v", id, err)
			}
		}
		if n := len(f.Requests()); n != 0 {
			t.Errorf("%d requests for IDs that are not IDs", n)
		}
	})
	t.Run("Unavailable", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(vastfake.Instance(7))
		f.Fail("PUT /api/v0/instances/7/", vastfake.Status(500, "text/plain", "Internal Server Error"))
		if err := c.Stop(context.Background(), "7"); !errors.Is(err, connector.ErrUnavailable) {
			t.Errorf("%v", err)
		}
	})
}

func TestClient_Terminate(t *testing.T) {
	f, c := setup(t)
	f.SetInstances(vastfake.Instance(7), vastfake.Instance(8))
	if err := c.Terminate(context.Background(), "7"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Instances(context.Background())
	if err != nil || len(got) != 1 || got[0].ID != "8" {
		t.Fatalf("after destroy: %+v %v", got, err)
	}
	if err := c.Terminate(context.Background(), "7"); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("second destroy: %v", err)
	}
}

func charge(id string, start, end int64, amount any) map[string]any {
	return map[string]any{
		"start": start, "end": end, "type": "instance", "source": "instance-" + id,
		"description": "Instance " + id + " Charges", "amount": amount,
		"metadata": map[string]any{"label": "x"},
		"items":    []any{map[string]any{"start": start, "end": end, "type": "gpu", "source": nil, "description": "96.000 hours at $0.389/hour", "amount": 37.344, "metadata": map[string]any{}, "items": []any{}}},
	}
}

func TestClient_Billed(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	t.Run("OK", func(t *testing.T) {
		f, c := setup(t)
		f.SetPageSize(1)
		vol := charge("9", from.Unix(), from.Unix()+86400, json.Number("1.5"))
		vol["type"], vol["source"] = "volume", "volume-9"
		f.SetCharges(
			charge("12345678", from.Unix(), from.Unix()+4*86400, json.Number("38.421")),
			charge("777", from.Unix()+86400, to.Unix()-1, "0.30000000000000004"),
			vol,
			charge("5", to.Unix()+86400, to.Unix()+2*86400, json.Number("9")), // after the window
		)
		got, err := c.Billed(context.Background(), from, to)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("got %+v", got)
		}
		if got[0].InstanceID != "12345678" || got[0].Amount.String() != "38.421" || got[0].Currency != "USD" || !got[0].From.Equal(from) || !got[0].To.Equal(from.Add(96*time.Hour)) {
			t.Errorf("first: %+v", got[0])
		}
		if got[1].InstanceID != "777" || got[1].Amount.String() != "0.3" {
			t.Errorf("second: %+v", got[1])
		}
		reqs := f.Requests()
		if len(reqs) < 2 || !strings.Contains(reqs[0], "select_filters=") || !strings.Contains(reqs[0], fmt.Sprintf("%%22gte%%22%%3A%d%%2C%%22lte%%22%%3A%d%%7D", from.Unix(), to.Unix()-1)) {
			t.Errorf("requests: %q", reqs)
		}
	})
	for name, row := range map[string]func(map[string]any){
		"amount missing":  func(m map[string]any) { delete(m, "amount") },
		"amount words":    func(m map[string]any) { m["amount"] = "much" },
		"source odd":      func(m map[string]any) { m["source"] = "machine-1" },
		"start a bool":    func(m map[string]any) { m["start"] = true },
		"end words":       func(m map[string]any) { m["end"] = "later" },
		"row not object":  nil,
		"results missing": nil,
	} {
		t.Run(name, func(t *testing.T) {
			f, c := setup(t)
			switch name {
			case "row not object":
				f.Fail("GET /api/v0/charges/", vastfake.Status(200, "application/json", `{"success":true,"results":[1]}`))
			case "results missing":
				f.Fail("GET /api/v0/charges/", vastfake.Status(200, "application/json", `{"success":true}`))
			default:
				r := charge("1", from.Unix(), from.Unix()+3600, json.Number("1"))
				row(r)
				f.SetCharges(r)
			}
			if got, err := c.Billed(context.Background(), from, to); !errors.Is(err, connector.ErrBadAnswer) || got != nil {
				t.Fatalf("%v %v; want a bad answer", got, err)
			}
		})
	}
	t.Run("HostAccount", func(t *testing.T) {
		f, c := setup(t)
		f.Fail("GET /api/v0/charges/", vastfake.Status(200, "application/json", `{"success":false,"msg":"Host users do not have instance charges","count":0}`))
		if _, err := c.Billed(context.Background(), from, to); !errors.Is(err, vast.ErrRefused) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("EmptyWindow", func(t *testing.T) {
		f, c := setup(t)
		if got, err := c.Billed(context.Background(), to, from); err != nil || got != nil {
			t.Fatalf("%v %v", got, err)
		}
		if len(f.Requests()) != 0 {
			t.Error("called for an empty window")
		}
	})
}

func TestClient_Platform(t *testing.T) {
	_, c := setup(t)
	if c.Platform() != "vast" || c.MinInterval() < 20*time.Second {
		t.Errorf("%s %s", c.Platform(), c.MinInterval())
	}
}

func TestNew_BaseURL(t *testing.T) {
	// The base may be given with or without /api/v0; both reach the same
	// v0 and v1 paths.
	for _, base := range []string{"", "/", "/api/v0", "/api/v0/"} {
		f := vastfake.New(key)
		f.SetInstances(vastfake.Instance(1))
		c, err := vast.New(vast.Config{APIKey: key, BaseURL: f.URL + base})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.Instances(context.Background()); err != nil || len(got) != 1 {
			t.Errorf("base %q: %v %v", base, got, err)
		}
		if err := c.Check(context.Background()); err != nil {
			t.Errorf("base %q: check: %v", base, err)
		}
		f.Close()
	}
}
