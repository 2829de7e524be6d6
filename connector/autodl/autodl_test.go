package autodl_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/autodl/autodlfake"
	"github.com/gpuledger/gpuledger/ledger"
)

const token = "eyJhbGciOi.tok-SECRET-4242"

const (
	pList     = "/api/v1/dev/instance/pro/list"
	pBalance  = "/api/v1/dev/wallet/balance"
	pSnapshot = "/api/v1/dev/instance/pro/snapshot"
	pStatus   = "/api/v1/dev/instance/pro/status"
	pPowerOff = "/api/v1/dev/instance/pro/power_off"
	pRelease  = "/api/v1/dev/instance/pro/release"
)

func setup(t *testing.T) (*autodlfake.Server, *autodl.Client) {
	t.Helper()
	f := autodlfake.New(token)
	t.Cleanup(f.Close)
	c, err := autodl.New(autodl.Config{Token: token, Base: f.URL, HTTP: &http.Client{Timeout: 2 * time.Second},
		ShutdownPoll: 5 * time.Millisecond, ShutdownWait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func noKey(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), token) {
		t.Errorf("the token is in the error: %v", err)
	}
}

func dec(s string) ledger.Decimal { return ledger.MustDecimal(s) }

var running = autodlfake.Instance{
	UUID: "pro-76576c61fdf1", Name: "train", Status: "running", GPUSpec: "pro6000-p",
	GPUAlias: "NVIDIA RTX PRO 6000", GPUCount: 2, PaygPrice: 1970,
	StartedAt: time.Date(2025, 12, 15, 17, 31, 5, 0, time.FixedZone("", 8*3600)),
	StatusAt:  time.Date(2025, 12, 15, 17, 31, 5, 0, time.FixedZone("", 8*3600)),
}

func TestNew(t *testing.T) {
	if _, err := autodl.New(autodl.Config{}); err == nil {
		t.Error("an empty token was accepted")
	}
	if _, err := autodl.New(autodl.Config{Token: "x", Base: "ftp://a"}); err == nil {
		t.Error("a non-http base was accepted")
	}
	c, err := autodl.New(autodl.Config{Token: "x"})
	if err != nil || c.Platform() != "autodl" || c.MinInterval() != 60*time.Second {
		t.Errorf("defaults: %v %v %v", err, c.Platform(), c.MinInterval())
	}
}

func TestClient_Balance(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f, c := setup(t)
		f.SetWallet(12340, 987650, 5000)
		b, err := c.Balance(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b.Amount.Cmp(dec("12.34")) != 0 || b.Currency != ledger.CNY || b.SpendPerHourOK {
			t.Errorf("balance %+v, want 12.34 CNY (assets only)", b)
		}
		calls := f.Calls()
		if len(calls) != 1 || calls[0].Method != http.MethodPost || calls[0].Path != pBalance {
			t.Fatalf("calls %+v", calls)
		}
		if calls[0].Auth != token {
			t.Errorf("Authorization %q, want the raw token", calls[0].Auth)
		}
		if strings.Contains(calls[0].Query, token) {
			t.Error("the token is in the URL")
		}
		w, err := c.Wallet(context.Background())
		if err != nil || w.Voucher.Cmp(dec("5")) != 0 || w.Accumulate.Cmp(dec("987.65")) != 0 || !w.VoucherOK || !w.AccumOK {
			t.Errorf("wallet %+v %v", w, err)
		}
	})
	t.Run("amounts as strings and negative", func(t *testing.T) {
		f, c := setup(t)
		f.SetWallet("-1", nil, nil)
		w, err := c.Wallet(context.Background())
		if err != nil || w.Assets.Cmp(dec("-0.001")) != 0 || w.VoucherOK || w.AccumOK {
			t.Errorf("wallet %+v %v", w, err)
		}
		f.SetWallet("123456789", "0", "7")
		if b, err := c.Balance(context.Background()); err != nil || b.Amount.String() != "123456.789" {
			t.Errorf("balance %v %v", b.Amount, err)
		}
	})
	t.Run("ErrBadAnswer", func(t *testing.T) {
		for name, v := range map[string][3]any{
			"float assets":         {json.RawMessage("12340.5"), 0, 0},
			"float string":         {"12.5", 0, 0},
			"exponent":             {json.RawMessage("1e3"), 0, 0},
			"bool assets":          {true, 0, 0},
			"missing assets":       {nil, 0, 0},
			"float voucher":        {1, 0, json.RawMessage("0.5")},
			"object accumulate":    {1, map[string]any{"x": 1}, 0},
			"beyond ledger digits": {json.RawMessage("9000000000000000"), 0, 0},
		} {
			t.Run(name, func(t *testing.T) {
				f, c := setup(t)
				f.SetWallet(v[0], v[1], v[2])
				_, err := c.Balance(context.Background())
				if !errors.Is(err, connector.ErrBadAnswer) {
					t.Errorf("err %v, want ErrBadAnswer", err)
				}
			})
		}
	})
}

// TestClient_Faults runs every call through the HTTP faults the rules list.
func TestClient_Faults(t *testing.T) {
	type check func(error) bool
	is := func(target error) check { return func(err error) bool { return errors.Is(err, target) } }
	rate := func(want time.Duration) check {
		return func(err error) bool {
			var rl *connector.RateLimitedError
			return errors.As(err, &rl) && rl.RetryAfter == want
		}
	}
	for _, c := range []struct {
		name  string
		reply autodlfake.Reply
		want  check
	}{
		{"500", autodlfake.Reply{Status: 500, Body: `{"code":"InternalError"}`}, is(connector.ErrUnavailable)},
		{"502 html", autodlfake.Reply{Status: 502, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>bad gateway</html>"}, is(connector.ErrUnavailable)},
		{"429 with Retry-After", autodlfake.Reply{Status: 429, Header: map[string]string{"Retry-After": "9"}}, rate(9 * time.Second)},
		{"429 without Retry-After", autodlfake.Reply{Status: 429}, rate(connector.DefaultRetryAfter)},
		{"401", autodlfake.Reply{Status: 401, Body: `{"code":"Unauthorized"}`}, is(connector.ErrUnauthorized)},
		{"html instead of json", autodlfake.Reply{Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>登录</html>"}, is(connector.ErrBadAnswer)},
		{"html without a content type", autodlfake.Reply{Header: map[string]string{"Content-Type": ""}, Body: "<html>x</html>"}, is(connector.ErrBadAnswer)},
		{"no code", autodlfake.Reply{Body: `{"data":{"assets":1}}`}, is(connector.ErrBadAnswer)},
		{"code not a string", autodlfake.Reply{Body: `{"code":0,"data":{"assets":1}}`}, is(connector.ErrBadAnswer)},
		{"Success without data", autodlfake.Reply{Body: `{"code":"Success","msg":"","data":null}`}, is(connector.ErrBadAnswer)},
		{"data of the wrong type", autodlfake.Reply{Body: `{"code":"Success","data":"x"}`}, is(connector.ErrBadAnswer)},
		{"data a number", autodlfake.Reply{Body: `{"code":"Success","data":5}`}, is(connector.ErrBadAnswer)},
		{"envelope Unauthorized", autodlfake.Envelope("Unauthorized", ""), is(connector.ErrUnauthorized)},
		{"envelope token expired", autodlfake.Envelope("Fail", "token 已过期"), is(connector.ErrUnauthorized)},
		{"envelope AuthFailed", autodlfake.Envelope("AuthFailed", "鉴权失败"), is(connector.ErrUnauthorized)},
		{"envelope too frequent", autodlfake.Envelope("Fail", "请求过于频繁"), rate(connector.DefaultRetryAfter)},
		{"envelope InternalError", autodlfake.Envelope("InternalError", "服务器内部错误"), is(connector.ErrBadAnswer)},
		{"envelope RequestParameterIsWrong", autodlfake.Envelope("RequestParameterIsWrong", "请求参数错误"), is(connector.ErrBadAnswer)},
	} {
		for _, op := range []struct {
			name string
			path string
			do   func(context.Context, *autodl.Client) error
		}{
			{"Check", "", func(ctx context.Context, c *autodl.Client) error { return c.Check(ctx) }},
			{"Balance", "", func(ctx context.Context, c *autodl.Client) error { _, err := c.Balance(ctx); return err }},
			{"Instances", pList, func(ctx context.Context, c *autodl.Client) error { _, err := c.Instances(ctx); return err }},
			{"Instances snapshot", pSnapshot, func(ctx context.Context, c *autodl.Client) error { _, err := c.Instances(ctx); return err }},
			{"Stop", "", func(ctx context.Context, c *autodl.Client) error { return c.Stop(ctx, running.UUID) }},
			{"Stop power_off", pPowerOff, func(ctx context.Context, c *autodl.Client) error { return c.Stop(ctx, running.UUID) }},
			{"Terminate release", pRelease, func(ctx context.Context, c *autodl.Client) error { return c.Terminate(ctx, running.UUID) }},
		} {
			// power_off and release ignore data; Stop's status may be any string.
			ignored := op.path == pPowerOff || op.path == pRelease
			if (ignored && strings.Contains(c.name, "data")) || (op.name == "Stop" && c.name == "data of the wrong type") {
				continue
			}
			t.Run(c.name+"/"+op.name, func(t *testing.T) {
				f, cl := setup(t)
				f.SetWallet(1000, 0, 0)
				f.SetInstances(running)
				f.Fail(op.path, c.reply)
				err := op.do(context.Background(), cl)
				if !c.want(err) {
					t.Errorf("err %v (%T)", err, err)
				}
				noKey(t, err)
			})
		}
	}
}

func TestClient_EnvelopeErrorText(t *testing.T) {
	f, c := setup(t)
	f.Fail("", autodlfake.Envelope("SomeNewCode", "bad "+token+" "+strings.Repeat("长", 400)))
	err := c.Check(context.Background())
	if !errors.Is(err, connector.ErrBadAnswer) {
		t.Fatalf("err %v", err)
	}
	noKey(t, err)
	if !strings.Contains(err.Error(), `"SomeNewCode"`) || !strings.Contains(err.Error(), "req-fake") || len(err.Error()) > 500 {
		t.Errorf("the error should carry the code, the request_id and a clipped msg: %d bytes: %s", len(err.Error()), err)
	}
}

func TestClient_Down(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	c, _ := autodl.New(autodl.Config{Token: token, Base: base})
	_, err := c.Instances(context.Background())
	if !errors.Is(err, connector.ErrUnavailable) || !connector.IsTransient(err) {
		t.Errorf("err %v, want ErrUnavailable", err)
	}
	noKey(t, err)
}

// A wrong base URL answers 404 on every path: that is not "no such
// instance", or a Stop would read as the instance gone.
func TestClient_WrongBase(t *testing.T) {
	f, _ := setup(t)
	f.SetInstances(running)
	c, _ := autodl.New(autodl.Config{Token: token, Base: f.URL + "/proxy"})
	for name, err := range map[string]error{
		"Check":     c.Check(context.Background()),
		"Stop":      c.Stop(context.Background(), running.UUID),
		"Terminate": c.Terminate(context.Background(), running.UUID),
	} {
		if !errors.Is(err, connector.ErrBadAnswer) || errors.Is(err, connector.ErrNotFound) {
			t.Errorf("%s: err %v, want ErrBadAnswer and not ErrNotFound", name, err)
		}
	}
}

func TestClient_Slow(t *testing.T) {
	f := autodlfake.New(token)
	defer f.Close()
	f.Fail("", autodlfake.Reply{Delay: 2 * time.Second, Body: `{"code":"Success","data":{"assets":1}}`})
	c, _ := autodl.New(autodl.Config{Token: token, Base: f.URL, HTTP: &http.Client{Timeout: 100 * time.Millisecond}})
	start := time.Now()
	_, err := c.Balance(context.Background())
	if !errors.Is(err, connector.ErrUnavailable) || time.Since(start) > time.Second {
		t.Errorf("err %v after %s, want ErrUnavailable within the timeout", err, time.Since(start))
	}
}

func TestClient_InvalidKey(t *testing.T) {
	f, _ := setup(t)
	c, _ := autodl.New(autodl.Config{Token: "wrong-key-999", Base: f.URL})
	for name, err := range map[string]error{
		"Check":     c.Check(context.Background()),
		"Instances": func() error { _, err := c.Instances(context.Background()); return err }(),
		"Stop":      c.Stop(context.Background(), "pro-1"),
	} {
		if !errors.Is(err, connector.ErrUnauthorized) {
			t.Errorf("%s: err %v, want ErrUnauthorized", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "wrong-key-999") {
			t.Errorf("%s: the key is in the error", name)
		}
	}
}

func TestClient_Instances(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f, c := setup(t)
		stopped := autodlfake.Instance{UUID: "pro-2", Status: "shutdown", GPUSpec: "v-48g", GPUCount: 1, PaygPrice: 2000}
		odd := autodlfake.Instance{UUID: "pro-3", Status: "shutting_down", GPUSpec: "v-48g", GPUCount: 1}
		gone := autodlfake.Instance{UUID: "pro-4", Status: "released"}
		boot := autodlfake.Instance{UUID: "pro-5", Status: "starting", GPUCount: 1, PaygPrice: "1580"}
		f.SetInstances(running, stopped, odd, gone, boot)
		got, err := c.Instances(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Fatalf("%d instances", len(got))
		}
		r := got[0]
		if r.ID != running.UUID || r.Name != "train" || r.GPU != "NVIDIA RTX PRO 6000" || r.GPUCount != 2 ||
			!r.PriceOK || r.Price.Cmp(dec("1.97")) != 0 || r.Currency != ledger.CNY || r.State != connector.Running ||
			r.RawState != "running" || !r.StartedAt.Equal(running.StartedAt) || !r.StateSince.Equal(running.StatusAt) {
			t.Errorf("running %+v", r)
		}
		want := []connector.State{connector.Running, connector.Stopped, connector.Unknown, connector.Terminated, connector.Running}
		for i, in := range got {
			if in.State != want[i] {
				t.Errorf("%s %q: state %s, want %s", in.ID, in.RawState, in.State, want[i])
			}
		}
		if got[1].PriceOK || got[1].GPU != "v-48g" || !got[1].StartedAt.IsZero() {
			t.Errorf("a stopped instance never seen running has no price: %+v", got[1])
		}
		if !got[4].PriceOK || got[4].Price.Cmp(dec("1.58")) != 0 {
			t.Errorf("a price as a string: %+v", got[4])
		}
		// Snapshots for the two running ones only.
		if n := f.CallsTo(pSnapshot); n != 2 {
			t.Errorf("%d snapshot calls, want 2", n)
		}
		for _, call := range f.Calls() {
			if call.Path == pSnapshot && !strings.HasPrefix(call.Query, "instance_uuid=pro-") {
				t.Errorf("snapshot query %q", call.Query)
			}
			if call.Path == pList && (call.Method != http.MethodPost || call.Body["page_index"] != 1.0 || call.Body["page_size"] != 100.0) {
				t.Errorf("list call %+v", call)
			}
		}
		// A second poll is one list call: the price is kept per power-on.
		if _, err := c.Instances(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := f.CallsTo(pSnapshot); n != 2 {
			t.Errorf("%d snapshot calls after a second poll, want still 2", n)
		}
		if n := f.CallsTo(pList); n != 2 {
			t.Errorf("%d list calls, want 2", n)
		}
	})
	t.Run("a new power-on reads the price again", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(running)
		c.Instances(context.Background())
		again := running
		again.StartedAt = running.StartedAt.Add(time.Hour)
		again.PaygPrice = 2100
		f.SetInstances(again)
		got, err := c.Instances(context.Background())
		if err != nil || len(got) != 1 || got[0].Price.Cmp(dec("2.1")) != 0 {
			t.Errorf("%+v %v", got, err)
		}
		// Stopped now: keeps the last power-on's price, no snapshot.
		again.Status = "shutdown"
		f.SetInstances(again)
		got, err = c.Instances(context.Background())
		if err != nil || !got[0].PriceOK || got[0].Price.Cmp(dec("2.1")) != 0 || f.CallsTo(pSnapshot) != 2 {
			t.Errorf("%+v %v, %d snapshots", got, err, f.CallsTo(pSnapshot))
		}
	})
	t.Run("empty", func(t *testing.T) {
		_, c := setup(t)
		got, err := c.Instances(context.Background())
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("%v %v, want an empty non-nil list", got, err)
		}
	})
	t.Run("pages", func(t *testing.T) {
		f, c := setup(t)
		var ins []autodlfake.Instance
		for i := range 230 {
			ins = append(ins, autodlfake.Instance{UUID: "pro-" + string(rune('a'+i/26)) + string(rune('a'+i%26)), Status: "shutdown"})
		}
		f.SetInstances(ins...)
		got, err := c.Instances(context.Background())
		if err != nil || len(got) != 230 {
			t.Fatalf("%d instances, %v", len(got), err)
		}
		if n := f.CallsTo(pList); n != 3 {
			t.Errorf("%d list calls, want 3", n)
		}
		if got[229].ID != ins[229].UUID {
			t.Errorf("last %s", got[229].ID)
		}
	})
	t.Run("without max_page a short page is the last", func(t *testing.T) {
		f, c := setup(t)
		f.Fail(pList, autodlfake.Reply{Body: `{"code":"Success","msg":"","data":{"list":[{"uuid":"pro-1","status":"running"}]}}`})
		got, err := c.Instances(context.Background())
		if err != nil || len(got) != 1 || f.CallsTo(pList) != 1 {
			t.Errorf("%+v %v, %d calls", got, err, f.CallsTo(pList))
		}
	})
	t.Run("endless pages", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(running)
		for range 60 {
			f.Fail(pList, autodlfake.Reply{Body: `{"code":"Success","data":{"list":[` + strings.Repeat(`{"uuid":"pro-x","status":"shutdown"},`, 99) + `{"uuid":"pro-x","status":"shutdown"}],"max_page":1000}}`})
		}
		if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("an instance that vanishes before its snapshot", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(running)
		f.Fail(pSnapshot, autodlfake.Envelope("Fail", "实例不存在"))
		got, err := c.Instances(context.Background())
		if err != nil || len(got) != 1 || got[0].PriceOK {
			t.Errorf("%+v %v", got, err)
		}
		// The next poll asks again, and it is gone from the list.
		f.Remove(running.UUID)
		got, err = c.Instances(context.Background())
		if err != nil || len(got) != 0 {
			t.Errorf("%+v %v", got, err)
		}
		// And back: priced again.
		f.SetInstances(running)
		got, err = c.Instances(context.Background())
		if err != nil || len(got) != 1 || !got[0].PriceOK {
			t.Errorf("%+v %v", got, err)
		}
	})
	t.Run("no snapshot price", func(t *testing.T) {
		f, c := setup(t)
		r := running
		r.PaygPrice = nil
		f.SetInstances(r)
		got, err := c.Instances(context.Background())
		if err != nil || got[0].PriceOK {
			t.Errorf("%+v %v", got, err)
		}
	})
	t.Run("ErrBadAnswer", func(t *testing.T) {
		for name, in := range map[string]autodlfake.Instance{
			"float price":          {UUID: "pro-1", Status: "running", PaygPrice: json.RawMessage("1970.5")},
			"decimal string price": {UUID: "pro-1", Status: "running", PaygPrice: "1.97"},
			"bool price":           {UUID: "pro-1", Status: "running", PaygPrice: true},
			"missing uuid":         {UUID: "pro-1", Status: "running", Extra: map[string]any{"uuid": nil}},
			"numeric uuid":         {UUID: "pro-1", Status: "running", Extra: map[string]any{"uuid": 7}},
			"missing status":       {UUID: "pro-1", Status: "running", Extra: map[string]any{"status": nil}},
			"status not a string":  {UUID: "pro-1", Status: "running", Extra: map[string]any{"status": 2}},
			"gpu count a string":   {UUID: "pro-1", Status: "shutdown", Extra: map[string]any{"req_gpu_amount": "2"}},
			"gpu count a float":    {UUID: "pro-1", Status: "shutdown", Extra: map[string]any{"req_gpu_amount": 1.5}},
			"started_at a number":  {UUID: "pro-1", Status: "shutdown", Extra: map[string]any{"started_at": 1700000000}},
			"started_at garbage":   {UUID: "pro-1", Status: "shutdown", Extra: map[string]any{"started_at": map[string]any{"Time": "yesterday", "Valid": true}}},
			"name an object":       {UUID: "pro-1", Status: "shutdown", Extra: map[string]any{"name": map[string]any{}}},
		} {
			t.Run(name, func(t *testing.T) {
				f, c := setup(t)
				f.SetInstances(in)
				got, err := c.Instances(context.Background())
				if !errors.Is(err, connector.ErrBadAnswer) || got != nil {
					t.Errorf("%+v %v, want ErrBadAnswer and nothing", got, err)
				}
			})
		}
		t.Run("no list", func(t *testing.T) {
			f, c := setup(t)
			f.Fail(pList, autodlfake.Reply{Body: `{"code":"Success","data":{"max_page":1}}`})
			if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
				t.Errorf("err %v", err)
			}
		})
		t.Run("max_page a string", func(t *testing.T) {
			f, c := setup(t)
			f.Fail(pList, autodlfake.Reply{Body: `{"code":"Success","data":{"list":[],"max_page":"1"}}`})
			if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
				t.Errorf("err %v", err)
			}
		})
	})
	t.Run("a failing page loses the whole list", func(t *testing.T) {
		f, c := setup(t)
		items := make([]string, 100)
		for i := range items {
			items[i] = `{"uuid":"pro-` + strings.Repeat("x", i+1) + `","status":"shutdown"}`
		}
		f.Fail(pList, autodlfake.Reply{Body: `{"code":"Success","data":{"list":[` + strings.Join(items, ",") + `],"max_page":2}}`}, autodlfake.Reply{Status: 500})
		got, err := c.Instances(context.Background())
		if !errors.Is(err, connector.ErrUnavailable) || got != nil || f.CallsTo(pList) != 2 {
			t.Errorf("%d instances, %v, %d calls", len(got), err, f.CallsTo(pList))
		}
	})
}

func TestClient_NoProAccount(t *testing.T) {
	f, c := setup(t)
	f.SetWallet(50000, 0, 0)
	f.SetNoPro(true)
	got, err := c.Instances(context.Background())
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("%v %v, want an empty list and no error", got, err)
	}
	if err := c.Check(context.Background()); err != nil {
		t.Errorf("Check: %v", err)
	}
	if err := c.Stop(context.Background(), "pro-1"); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("Stop: %v, want ErrNotFound", err)
	}
	if err := c.Terminate(context.Background(), "pro-1"); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("Terminate: %v, want ErrNotFound", err)
	}
	// Where the wallet too is refused for want of verification, the key
	// cannot be used: Check says so.
	f.Fail(pBalance, autodlfake.NotVerified)
	if err := c.Check(context.Background()); !errors.Is(err, connector.ErrUnauthorized) || !strings.Contains(err.Error(), "实名") {
		t.Errorf("Check: %v, want ErrUnauthorized naming 实名", err)
	}
}

func TestClient_Stop(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(running)
		if err := c.Stop(context.Background(), running.UUID); err != nil {
			t.Fatal(err)
		}
		if f.Status(running.UUID) != "shutdown" {
			t.Errorf("status %q", f.Status(running.UUID))
		}
		var off []autodlfake.Call
		for _, call := range f.Calls() {
			if call.Path == pPowerOff {
				off = append(off, call)
			}
		}
		if len(off) != 1 || off[0].Method != http.MethodPost || off[0].Body["instance_uuid"] != running.UUID || len(off[0].Body) != 1 {
			t.Errorf("power_off calls %+v", off)
		}
		got, _ := c.Instances(context.Background())
		if got[0].State != connector.Stopped {
			t.Errorf("after Stop: %s", got[0].State)
		}
	})
	t.Run("already stopping or stopped", func(t *testing.T) {
		for _, st := range []string{"shutdown", "shutting_down", "released"} {
			f, c := setup(t)
			in := running
			in.Status = st
			f.SetInstances(in)
			if err := c.Stop(context.Background(), in.UUID); err != nil {
				t.Errorf("%s: %v", st, err)
			}
			if n := f.CallsTo(pPowerOff); n != 0 {
				t.Errorf("%s: %d power_off calls", st, n)
			}
		}
	})
	t.Run("a second power_off is refused as a repeat", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(running)
		f.Fail(pPowerOff, autodlfake.Envelope("Fail", "当前实例正在关机中,无需重复操作"))
		if err := c.Stop(context.Background(), running.UUID); err != nil {
			t.Errorf("err %v", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, c := setup(t)
		if err := c.Stop(context.Background(), "pro-nope"); !errors.Is(err, connector.ErrNotFound) {
			t.Errorf("err %v", err)
		}
	})
}

func TestClient_Terminate(t *testing.T) {
	t.Run("running: power off, wait, release", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(running)
		f.SetShutdownAfter(3)
		if err := c.Terminate(context.Background(), running.UUID); err != nil {
			t.Fatal(err)
		}
		if f.Status(running.UUID) != "released" {
			t.Errorf("status %q", f.Status(running.UUID))
		}
		if f.CallsTo(pPowerOff) != 1 || f.CallsTo(pRelease) != 1 {
			t.Errorf("power_off %d, release %d", f.CallsTo(pPowerOff), f.CallsTo(pRelease))
		}
		for _, call := range f.Calls() {
			if call.Path == pRelease && (call.Body["instance_uuid"] != running.UUID || len(call.Body) != 1) {
				t.Errorf("release body %+v", call.Body)
			}
		}
		got, _ := c.Instances(context.Background())
		if got[0].State != connector.Terminated {
			t.Errorf("after Terminate: %s", got[0].State)
		}
	})
	t.Run("shut down: release only", func(t *testing.T) {
		f, c := setup(t)
		in := running
		in.Status = "shutdown"
		f.SetInstances(in)
		if err := c.Terminate(context.Background(), in.UUID); err != nil || f.CallsTo(pPowerOff) != 0 || f.Status(in.UUID) != "released" {
			t.Errorf("%v, %d power_off, %q", err, f.CallsTo(pPowerOff), f.Status(in.UUID))
		}
		// Again: already released is success, nothing sent.
		if err := c.Terminate(context.Background(), in.UUID); err != nil || f.CallsTo(pRelease) != 1 {
			t.Errorf("%v, %d release", err, f.CallsTo(pRelease))
		}
	})
	t.Run("shutdown too slow: nothing released", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(running)
		f.SetShutdownAfter(1 << 30)
		err := c.Terminate(context.Background(), running.UUID)
		if !errors.Is(err, connector.ErrUnavailable) || f.CallsTo(pRelease) != 0 {
			t.Errorf("err %v, %d release calls", err, f.CallsTo(pRelease))
		}
	})
	t.Run("ctx cancelled while waiting", func(t *testing.T) {
		f, c := setup(t)
		f.SetInstances(running)
		f.SetShutdownAfter(1 << 30)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		if err := c.Terminate(ctx, running.UUID); !errors.Is(err, context.DeadlineExceeded) || f.CallsTo(pRelease) != 0 {
			t.Errorf("err %v", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, c := setup(t)
		if err := c.Terminate(context.Background(), "pro-nope"); !errors.Is(err, connector.ErrNotFound) {
			t.Errorf("err %v", err)
		}
	})
}

func TestClient_Billed(t *testing.T) {
	f, c := setup(t)
	if _, err := c.Billed(context.Background(), time.Now().Add(-time.Hour), time.Now()); !errors.Is(err, connector.ErrNotSupported) {
		t.Errorf("err %v", err)
	}
	if len(f.Calls()) != 0 {
		t.Error("Billed called the API")
	}
}
