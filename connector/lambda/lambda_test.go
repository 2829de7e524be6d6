package lambda_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/lambda"
	"github.com/gpuledger/gpuledger/connector/lambda/lambdafake"
	"github.com/gpuledger/gpuledger/ledger"
)

const key = "secret_lambda-test-key_0123456789abcdef"

var _ connector.Client = (*lambda.Client)(nil)

func h100(id, status string) lambdafake.Instance {
	return lambdafake.Instance{
		ID: id, Name: "train-" + id, Status: status,
		TypeName: "gpu_8x_h100_sxm5", Description: "8x H100 (80 GB SXM5)", GPUDescription: "H100 (80 GB SXM5)",
		Price: 2392, GPUs: 8,
	}
}

func newClient(t *testing.T, fake *lambdafake.Server, hc *http.Client) *lambda.Client {
	t.Helper()
	c, err := lambda.New(lambda.Config{Key: key, BaseURL: fake.URL, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noKey fails the test if the key shows in an error text, and checks
// every request the fake saw carried it only as a Bearer header.
func noKey(t *testing.T, fake *lambdafake.Server, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), key) {
		t.Errorf("the key is in the error: %v", err)
	}
	for _, r := range fake.Requests() {
		if strings.Contains(r.Path+r.RawQuery, key) {
			t.Errorf("the key is in the URL: %s?%s", r.Path, r.RawQuery)
		}
		if r.Auth != "" && r.Auth != "Bearer "+key {
			t.Errorf("Authorization = %q", r.Auth)
		}
	}
}

func TestNew(t *testing.T) {
	for _, k := range []string{"", "  ", "a b", "key\nX-Evil: 1"} {
		if _, err := lambda.New(lambda.Config{Key: k}); err == nil {
			t.Errorf("New(%q) took the key", k)
		} else if k != "" && strings.Contains(err.Error(), strings.TrimSpace(k)) && strings.TrimSpace(k) != "" {
			t.Errorf("New(%q): the key is in the error %v", k, err)
		}
	}
	c, err := lambda.New(lambda.Config{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if c.Platform() != "lambda" || c.MinInterval() < 2*time.Second {
		t.Errorf("Platform %q, MinInterval %s", c.Platform(), c.MinInterval())
	}
	if lambda.DefaultBaseURL != "https://cloud.lambda.ai/api/v1" {
		t.Errorf("DefaultBaseURL = %s", lambda.DefaultBaseURL)
	}
}

func TestClient_Instances(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a6000 := lambdafake.Instance{ID: "b2", Name: nil, Status: "booting", TypeName: "gpu_1x_a6000",
			Description: "1x RTX A6000 (48 GB)", GPUDescription: "RTX A6000 (48 GB)", Price: "80"}
		fake := lambdafake.New(key,
			h100("a1", "active"), a6000,
			lambdafake.Instance{ID: "c3", Status: "unhealthy", TypeName: "gpu_1x_gh200", Description: "1x GH200 (96 GB)", Price: json.Number("149"), GPUs: 1},
			lambdafake.Instance{ID: "d4", Status: "terminating", TypeName: "gpu_2x_a100", GPUDescription: "A100 (40 GB PCIe)", Price: 258, GPUs: 2},
			lambdafake.Instance{ID: "e5", Status: "terminated", TypeName: "gpu_1x_a10", GPUDescription: "A10 (24 GB PCIe)", Price: 75, GPUs: 1},
			lambdafake.Instance{ID: "f6", Status: "preempted", TypeName: "gpu_1x_a10", GPUDescription: "A10 (24 GB PCIe)", Price: 75, GPUs: 1},
			lambdafake.Instance{ID: "g7", Status: "hibernating", TypeName: "gpu_1x_a10", GPUDescription: "A10 (24 GB PCIe)", Price: 0, GPUs: 1},
		)
		defer fake.Close()
		got, err := newClient(t, fake, nil).Instances(context.Background())
		noKey(t, fake, err)
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			id, name, gpu string
			n             int
			price         string
			state         connector.State
			raw           string
		}
		want := []row{
			{"a1", "train-a1", "H100", 8, "23.92", connector.Running, "active"},
			{"b2", "", "RTX A6000", 1, "0.8", connector.Running, "booting"},
			{"c3", "", "GH200", 1, "1.49", connector.Running, "unhealthy"},
			{"d4", "", "A100", 2, "2.58", connector.Terminated, "terminating"},
			{"e5", "", "A10", 1, "0.75", connector.Terminated, "terminated"},
			{"f6", "", "A10", 1, "0.75", connector.Terminated, "preempted"},
			{"g7", "", "A10", 1, "0", connector.Unknown, "hibernating"},
		}
		if len(got) != len(want) {
			t.Fatalf("got %d instances: %+v", len(got), got)
		}
		for i, w := range want {
			g := got[i]
			if g.ID != w.id || g.Name != w.name || g.GPU != w.gpu || g.GPUCount != w.n || !g.PriceOK ||
				g.Price.String() != w.price || g.Currency != ledger.USD || g.State != w.state || g.RawState != w.raw {
				t.Errorf("instance %d = %+v (price %s), want %+v", i, g, g.Price, w)
			}
			if ledger.NormalizeGPUName(g.GPU) == "" {
				t.Errorf("GPU %q normalises to nothing", g.GPU)
			}
		}
		if n := len(fake.Requests()); n != 1 {
			t.Errorf("%d requests for one list (Lambda does not page)", n)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		fake := lambdafake.New(key)
		defer fake.Close()
		got, err := newClient(t, fake, nil).Instances(context.Background())
		if err != nil || len(got) != 0 {
			t.Fatalf("%v, %v", got, err)
		}
	})
	t.Run("NoPrice", func(t *testing.T) {
		in := h100("a1", "active")
		in.Price = nil
		fake := lambdafake.New(key, in)
		defer fake.Close()
		got, err := newClient(t, fake, nil).Instances(context.Background())
		if err != nil || len(got) != 1 || got[0].PriceOK {
			t.Fatalf("%+v, %v: want the instance without a price", got, err)
		}
	})
	t.Run("CountFromTypeName", func(t *testing.T) {
		in := h100("a1", "active")
		in.GPUs = nil
		in.GPUDescription = ""
		fake := lambdafake.New(key, in)
		defer fake.Close()
		got, err := newClient(t, fake, nil).Instances(context.Background())
		if err != nil || len(got) != 1 || got[0].GPUCount != 8 || got[0].GPU != "H100" {
			t.Fatalf("%+v, %v: want 8 H100 from gpu_8x_h100_sxm5 and its description", got, err)
		}
	})
	t.Run("Vanish", func(t *testing.T) {
		fake := lambdafake.New(key, h100("a1", "active"), h100("a2", "active"))
		defer fake.Close()
		c := newClient(t, fake, nil)
		if got, err := c.Instances(context.Background()); err != nil || len(got) != 2 {
			t.Fatalf("%v, %v", got, err)
		}
		fake.SetInstances(h100("a2", "active"))
		if got, err := c.Instances(context.Background()); err != nil || len(got) != 1 || got[0].ID != "a2" {
			t.Fatalf("after a1 vanished: %+v, %v", got, err)
		}
		fake.SetInstances(h100("a1", "active"), h100("a2", "active"))
		if got, err := c.Instances(context.Background()); err != nil || len(got) != 2 {
			t.Fatalf("after a1 came back: %+v, %v", got, err)
		}
	})
}

// TestClient_Instances_BadAnswers: every answer that is not the
// documented shape is refused whole (ErrBadAnswer), never read as an
// empty or partial list.
func TestClient_Instances_BadAnswers(t *testing.T) {
	inst := func(f func(m map[string]any)) string {
		m := map[string]any{"id": "a1", "name": "x", "status": "active", "instance_type": map[string]any{
			"name": "gpu_1x_a10", "description": "1x A10 (24 GB PCIe)", "gpu_description": "A10 (24 GB PCIe)",
			"price_cents_per_hour": 75, "specs": map[string]any{"gpus": 1}}}
		f(m)
		b, _ := json.Marshal(map[string]any{"data": []any{m}})
		return string(b)
	}
	it := func(m map[string]any) map[string]any { return m["instance_type"].(map[string]any) }
	for name, body := range map[string]string{
		"no data":             `{}`,
		"data null":           `{"data": null}`,
		"data an object":      `{"data": {"a1": {}}}`,
		"not json":            `{"data": [`,
		"price a float":       strings.Replace(inst(func(map[string]any) {}), `"price_cents_per_hour":75`, `"price_cents_per_hour":110.5`, 1),
		"price 75.0":          strings.Replace(inst(func(map[string]any) {}), `"price_cents_per_hour":75`, `"price_cents_per_hour":75.0`, 1),
		"price exponent":      strings.Replace(inst(func(map[string]any) {}), `"price_cents_per_hour":75`, `"price_cents_per_hour":7.5e1`, 1),
		"price a word":        inst(func(m map[string]any) { it(m)["price_cents_per_hour"] = "cheap" }),
		"price a bool":        inst(func(m map[string]any) { it(m)["price_cents_per_hour"] = true }),
		"price negative":      inst(func(m map[string]any) { it(m)["price_cents_per_hour"] = -5 }),
		"price huge":          inst(func(m map[string]any) { it(m)["price_cents_per_hour"] = json.Number("99999999999999999999") }),
		"id missing":          inst(func(m map[string]any) { delete(m, "id") }),
		"id empty":            inst(func(m map[string]any) { m["id"] = "" }),
		"id a number":         inst(func(m map[string]any) { m["id"] = 17 }),
		"status missing":      inst(func(m map[string]any) { delete(m, "status") }),
		"status a number":     inst(func(m map[string]any) { m["status"] = 1 }),
		"name a number":       inst(func(m map[string]any) { m["name"] = 1 }),
		"instance_type gone":  inst(func(m map[string]any) { delete(m, "instance_type") }),
		"instance_type a str": inst(func(m map[string]any) { m["instance_type"] = "gpu_1x_a10" }),
		"gpus a fraction":     inst(func(m map[string]any) { it(m)["specs"] = map[string]any{"gpus": 1.5} }),
		"gpus a word":         inst(func(m map[string]any) { it(m)["specs"] = map[string]any{"gpus": "one"} }),
		"gpus negative":       inst(func(m map[string]any) { it(m)["specs"] = map[string]any{"gpus": -1} }),
		"duplicate id":        `{"data":[{"id":"a1","status":"active","instance_type":{"name":"gpu_1x_a10"}},{"id":"a1","status":"active","instance_type":{"name":"gpu_1x_a10"}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			fake := lambdafake.New(key)
			defer fake.Close()
			fake.SetRawInstances(body)
			got, err := newClient(t, fake, nil).Instances(context.Background())
			if !errors.Is(err, connector.ErrBadAnswer) || got != nil {
				t.Fatalf("%+v, %v; want a bad answer", got, err)
			}
		})
	}
}

func TestClient_Faults(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault lambdafake.Fault
		want  error
		retry time.Duration
	}{
		{"500", lambdafake.Fault{Status: 500, ContentType: "application/json", Body: lambdafake.ErrorBody("global/internal-error", "An internal error occurred.", "")}, connector.ErrUnavailable, 0},
		{"502 html", lambdafake.Fault{Status: 502, ContentType: "text/html", Body: "<html><body>Bad gateway</body></html>"}, connector.ErrUnavailable, 0},
		{"html instead of json", lambdafake.Fault{ContentType: "text/html; charset=utf-8", Body: "<!doctype html><title>Lambda</title>"}, connector.ErrBadAnswer, 0},
		{"429 with Retry-After", lambdafake.Fault{Status: 429, Header: map[string]string{"Retry-After": "12"}, ContentType: "application/json", Body: `{}`}, nil, 12 * time.Second},
		{"429 without", lambdafake.Fault{Status: 429, ContentType: "text/plain", Body: "Too Many Requests"}, nil, connector.DefaultRetryAfter},
		{"invalid key", lambdafake.Fault{Status: 401, ContentType: "application/json", Body: lambdafake.ErrorBody("global/invalid-api-key", "API key was invalid, expired, or deleted.", "Check your API key or create a new one, then try again.")}, connector.ErrUnauthorized, 0},
		{"invalid key as 400", lambdafake.Fault{Status: 400, ContentType: "application/json", Body: lambdafake.ErrorBody("global/invalid-api-key", "API key was invalid, expired, or deleted.", "")}, connector.ErrUnauthorized, 0},
		{"provider outage as 409", lambdafake.Fault{Status: 409, ContentType: "application/json", Body: lambdafake.ErrorBody("provider/internal-unavailable", "Provider unavailable", "Try again shortly")}, connector.ErrUnavailable, 0},
		{"other 400", lambdafake.Fault{Status: 400, ContentType: "application/json", Body: lambdafake.ErrorBody("global/invalid-parameters", "Invalid parameters.", "")}, connector.ErrBadAnswer, 0},
		{"account inactive", lambdafake.Fault{Status: 403, ContentType: "application/json", Body: lambdafake.ErrorBody("global/account-inactive", "Your account is inactive.", "")}, connector.ErrUnauthorized, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := lambdafake.New(key, h100("a1", "active"))
			defer fake.Close()
			fake.FailNext(c.fault)
			got, err := newClient(t, fake, nil).Instances(context.Background())
			noKey(t, fake, err)
			if got != nil {
				t.Errorf("instances from a fault: %+v", got)
			}
			var rl *connector.RateLimitedError
			switch {
			case c.retry != 0:
				if !errors.As(err, &rl) || rl.RetryAfter != c.retry {
					t.Fatalf("err = %v, want rate limited for %s", err, c.retry)
				}
			case !errors.Is(err, c.want):
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
	t.Run("ErrorEnvelope", func(t *testing.T) {
		fake := lambdafake.New(key)
		defer fake.Close()
		msg := "Something broke near " + key + strings.Repeat(" and on", 80)
		fake.FailNext(lambdafake.Fault{Status: 500, ContentType: "application/json", Body: lambdafake.ErrorBody("global/internal-error", msg, "Try again.")})
		_, err := newClient(t, fake, nil).Instances(context.Background())
		noKey(t, fake, err)
		if !errors.Is(err, connector.ErrUnavailable) || !strings.Contains(err.Error(), "global/internal-error: Something broke near REDACTED") ||
			strings.Contains(err.Error(), `{"error"`) || len(err.Error()) > 400 {
			t.Fatalf("err = %q: want code and message, clipped, the key redacted", err)
		}
	})
	t.Run("RealInvalidKey", func(t *testing.T) {
		fake := lambdafake.New("another-key")
		defer fake.Close()
		err := newClient(t, fake, nil).Check(context.Background())
		if !errors.Is(err, connector.ErrUnauthorized) || !strings.Contains(err.Error(), "global/invalid-api-key") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("Slow", func(t *testing.T) {
		fake := lambdafake.New(key)
		defer fake.Close()
		fake.FailNext(lambdafake.Fault{Delay: time.Second, Body: `{"data":[]}`})
		_, err := newClient(t, fake, &http.Client{Timeout: 50 * time.Millisecond}).Instances(context.Background())
		if !errors.Is(err, connector.ErrUnavailable) || !connector.IsTransient(err) {
			t.Fatalf("err = %v, want unavailable", err)
		}
	})
	t.Run("Down", func(t *testing.T) {
		fake := lambdafake.New(key)
		c := newClient(t, fake, nil)
		fake.Close()
		if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrUnavailable) {
			t.Fatalf("err = %v, want unavailable", err)
		}
		if err := c.Check(context.Background()); !errors.Is(err, connector.ErrUnavailable) {
			t.Fatalf("Check: %v, want unavailable", err)
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		fake := lambdafake.New(key)
		defer fake.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := newClient(t, fake, nil).Instances(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestClient_Terminate(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake := lambdafake.New(key, h100("a1", "active"), h100("a2", "active"))
		defer fake.Close()
		c := newClient(t, fake, nil)
		if err := c.Terminate(context.Background(), "a1"); err != nil {
			t.Fatal(err)
		}
		reqs := fake.Requests()
		if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/api/v1/instance-operations/terminate" ||
			reqs[0].Body != `{"instance_ids":["a1"]}` {
			t.Fatalf("requests: %+v", reqs)
		}
		got, err := c.Instances(context.Background())
		if err != nil || got[0].State != connector.Terminated || got[1].State != connector.Running {
			t.Fatalf("after terminate: %+v, %v", got, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		fake := lambdafake.New(key, h100("a1", "active"))
		defer fake.Close()
		err := newClient(t, fake, nil).Terminate(context.Background(), "nope")
		if !errors.Is(err, connector.ErrNotFound) || !strings.Contains(err.Error(), "global/object-does-not-exist") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("NotInTheAnswer", func(t *testing.T) {
		fake := lambdafake.New(key, h100("a1", "active"))
		defer fake.Close()
		fake.SetTerminateOmitsUnknown(true)
		err := newClient(t, fake, nil).Terminate(context.Background(), "nope")
		if err == nil || errors.Is(err, connector.ErrNotFound) || !errors.Is(err, connector.ErrBadAnswer) {
			t.Fatalf("err = %v; want a bad answer (unconfirmed, not read as gone)", err)
		}
	})
	t.Run("BadAnswers", func(t *testing.T) {
		for name, body := range map[string]string{
			"no data":        `{}`,
			"no list":        `{"data": {}}`,
			"list of ids":    `{"data": {"terminated_instances": ["a1"]}}`,
			"another id":     `{"data": {"terminated_instances": [{"id": "a2", "status": "terminating"}]}}`,
			"html":           `<html>ok</html>`,
			"still active":   `{"data": {"terminated_instances": [{"id": "a1", "status": "active"}]}}`,
			"id wrong type":  `{"data": {"terminated_instances": [{"id": 1}]}}`,
			"data not an ob": `{"data": []}`,
		} {
			t.Run(name, func(t *testing.T) {
				fake := lambdafake.New(key, h100("a1", "active"))
				defer fake.Close()
				ct := "application/json"
				if strings.HasPrefix(body, "<") {
					ct = "text/html"
				}
				fake.FailNext(lambdafake.Fault{ContentType: ct, Body: body})
				if err := newClient(t, fake, nil).Terminate(context.Background(), "a1"); !errors.Is(err, connector.ErrBadAnswer) {
					t.Fatalf("err = %v, want a bad answer", err)
				}
			})
		}
	})
	t.Run("EmptyID", func(t *testing.T) {
		fake := lambdafake.New(key, h100("a1", "active"))
		defer fake.Close()
		if err := newClient(t, fake, nil).Terminate(context.Background(), " "); err == nil || len(fake.Requests()) != 0 {
			t.Fatalf("err = %v, %d requests", err, len(fake.Requests()))
		}
	})
}

func TestClient_NotSupported(t *testing.T) {
	fake := lambdafake.New(key, h100("a1", "active"))
	defer fake.Close()
	c := newClient(t, fake, nil)
	ctx := context.Background()
	if _, err := c.Balance(ctx); !errors.Is(err, connector.ErrNotSupported) {
		t.Errorf("Balance: %v", err)
	}
	if err := c.Stop(ctx, "a1"); !errors.Is(err, connector.ErrNotSupported) {
		t.Errorf("Stop: %v", err)
	}
	if _, err := c.Billed(ctx, time.Now().Add(-time.Hour), time.Now()); !errors.Is(err, connector.ErrNotSupported) {
		t.Errorf("Billed: %v", err)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests for operations Lambda does not offer", n)
	}
}

func TestClient_Check(t *testing.T) {
	fake := lambdafake.New(key, h100("a1", "active"))
	defer fake.Close()
	if err := newClient(t, fake, nil).Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != "/api/v1/instances" {
		t.Fatalf("requests: %+v", reqs)
	}
	fake.SetRawInstances(`<html>`)
	if err := newClient(t, fake, nil).Check(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
		t.Fatalf("Check of a bad answer: %v", err)
	}
}
