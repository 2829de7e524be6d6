package connsync_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/lambda/lambdafake"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestSync_HostilePlatform: each fault changes nothing in the ledger and
// is told at most once per incident, then once when it answers again.
func TestSync_HostilePlatform(t *testing.T) {
	faults := map[string]func(*runpodfake.Server){
		"HTML": func(s *runpodfake.Server) {
			s.SetFault(runpodfake.Status(200, "text/html", "<html><body>Cloudflare</body></html>"))
		},
		"500": func(s *runpodfake.Server) { s.SetFault(runpodfake.Status(500, "application/json", `{"error":"boom"}`)) },
		"WrongTypes": func(s *runpodfake.Server) {
			p := pod("abc123", "box1", "EXITED", "0.79", t0.Add(-time.Hour))
			p["gpu"] = "an A40"
			p["costPerHr"] = map[string]any{"usd": 1}
			s.SetPods(p)
		},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			good := pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour))
			e.rp.SetPods(good)
			e.connect("runpod")
			e.round()
			e.snd.take()
			before := e.snapshot()
			fault(e.rp)
			for i := 0; i < 30; i++ { // 30 min of clock in 61 s steps, backoff included
				e.round()
			}
			if got := e.snapshot(); got != before {
				t.Fatalf("the fault changed the ledger:\n%s\n%s", before, got)
			}
			ms := e.snd.take()
			if len(ms) != 1 || !strings.Contains(ms[0].Text, "keeps its last state") {
				t.Fatalf("want one outage message, got %q", texts(ms))
			}
			calls := e.rp.Calls("GET /v1/pods")
			if calls > 12 {
				t.Fatalf("%d list calls in 30 min of failures: no backoff", calls)
			}
			c, _ := e.db.Connectors(e.ctx, uid)
			if len(c) != 1 || c[0].LastError == "" || strings.Contains(c[0].LastError, rpKey) {
				t.Fatalf("connector after the fault: %+v", c)
			}
			e.rp.SetFault(nil)
			e.rp.SetPods(good)
			e.clk.Add(time.Hour)
			e.round()
			e.round()
			if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "answers again") {
				t.Fatalf("want one recovery message, got %q", texts(ms))
			}
		})
	}
	t.Run("RestartDuringOutage", func(t *testing.T) {
		// The outage message promises word when the platform answers
		// again; a restart in between must keep that promise, and
		// must not tell the same outage twice.
		e := newEnv(t)
		good := pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour))
		e.rp.SetPods(good)
		e.connect("runpod")
		e.round()
		e.snd.take()
		e.rp.SetFault(runpodfake.Status(500, "application/json", `{"error":"boom"}`))
		for i := 0; i < 30; i++ {
			e.round()
		}
		if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "keeps its last state") {
			t.Fatalf("want one outage message, got %q", texts(ms))
		}
		c, _ := e.db.Connectors(e.ctx, uid)
		if len(c) != 1 || c[0].Outage != "unavailable" || c[0].OutageSince.IsZero() {
			t.Fatalf("connector after the outage was told: %+v", c)
		}
		e.restart()
		for i := 0; i < 30; i++ {
			e.round()
		}
		if ms := e.snd.take(); len(ms) != 0 {
			t.Fatalf("the outage was told again after the restart: %q", texts(ms))
		}
		e.restart()
		e.rp.SetFault(nil)
		e.rp.SetPods(good)
		e.clk.Add(time.Hour)
		e.round()
		if ms := e.snd.take(); len(ms) != 1 || !strings.Contains(ms[0].Text, "answers again") {
			t.Fatalf("want one recovery message after the restart, got %q", texts(ms))
		}
		if c, _ := e.db.Connectors(e.ctx, uid); len(c) != 1 || c[0].Outage != "" || !c[0].OutageSince.IsZero() {
			t.Fatalf("connector after the recovery was told: %+v", c)
		}
		e.restart()
		e.round()
		if ms := e.snd.take(); len(ms) != 0 {
			t.Fatalf("the recovery was told again after a restart: %q", texts(ms))
		}
	})
	t.Run("429RetryAfter", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		e.round()
		e.rp.SetFault(runpodfake.Status(429, "application/json", `{"error":"slow down"}`, "Retry-After", "600"))
		n := e.rp.Calls("GET /v1/pods")
		err := e.s.SyncNow(e.ctx, uid, "runpod")
		var rl *connector.RateLimitedError
		if !errors.As(err, &rl) {
			t.Fatalf("SyncNow = %v, want a RateLimitedError", err)
		}
		for i := 0; i < 9; i++ { // 9 min: within the 10 the platform asked for
			e.round()
		}
		if got := e.rp.Calls("GET /v1/pods") - n; got != 1 {
			t.Fatalf("%d list calls within Retry-After, want only the one refused", got)
		}
		e.clk.Add(2 * time.Minute)
		e.round()
		if got := e.rp.Calls("GET /v1/pods") - n; got != 2 {
			t.Fatalf("%d list calls after Retry-After, want 2", got)
		}
	})
	t.Run("Unauthorized", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
		e.connect("runpod")
		e.round()
		e.snd.take()
		e.rp.Key = "revoked" // the key was revoked on the platform
		before := e.snapshot()
		for i := 0; i < 5; i++ {
			e.round()
		}
		ms := e.snd.take()
		if len(ms) != 1 || !strings.Contains(ms[0].Text, "/connect runpod") || strings.Contains(ms[0].Text, rpKey) {
			t.Fatalf("want one rejection message, got %q", texts(ms))
		}
		if got := e.rp.Calls("GET /v1/pods"); got != 2 {
			t.Fatalf("%d list calls: a rejected connector must rest", got)
		}
		if e.snapshot() != before {
			t.Fatal("a rejected key changed the ledger")
		}
		c, _ := e.db.Connectors(e.ctx, uid)
		if len(c) != 1 || !c[0].Rejected() {
			t.Fatalf("connector = %+v", c)
		}
	})
	t.Run("VastTooFrequent", func(t *testing.T) {
		e := newEnv(t)
		e.connect("vast")
		e.round()
		e.vf.Fail("GET /api/v1/instances/", vastfake.TooFrequent(""), vastfake.TooFrequent(""))
		before := e.snapshot()
		e.round()
		e.round()
		if e.snapshot() != before {
			t.Fatal("a 429 changed the ledger")
		}
		if ms := e.snd.take(); len(ms) != 0 {
			t.Fatalf("two refusals said %q", texts(ms))
		}
	})
}

func TestSync_Balance(t *testing.T) {
	e := newEnv(t)
	e.vf.SetInstances(vastfake.Instance(7))
	e.connect("vast")
	e.rp.SetBalance("12.34", "0.79")
	e.connect("runpod")
	e.round()
	bal := map[string]string{}
	for _, b := range e.book().Balances {
		bal[b.Platform] = b.Amount.String() + " " + string(b.Currency)
	}
	if bal["vast"] != "25 USD" && bal["vast"] != "25.00 USD" {
		t.Fatalf("balances = %v", bal)
	}
	if bal["runpod"] != "12.34 USD" {
		t.Fatalf("balances = %v", bal)
	}
	// At most every BalanceEvery: the next minute's rounds read none.
	n := e.rp.Calls("POST /graphql")
	e.round()
	if e.rp.Calls("POST /graphql") != n {
		t.Fatal("the balance was read again within 5 minutes")
	}
	if r := e.rental("job-7"); r.PlatformID != "7" || r.Currency != ledger.USD {
		t.Fatalf("vast rental = %+v", r)
	}
}

// TestSync_Lambda: a platform without a balance API syncs its instances
// and records no balance, with nothing said.
func TestSync_Lambda(t *testing.T) {
	e := newEnv(t)
	e.lf.SetInstances(lambdafake.Instance{ID: "0920582c7ff041399e34823a0be62549", Name: "train", Status: "active", Region: "us-east-1",
		TypeName: "gpu_1x_h100_pcie", Description: "1x H100 (80 GB PCIe)", GPUDescription: "H100 (80 GB PCIe)", Price: 249, GPUs: 1})
	e.connect("lambda")
	e.round()
	e.round()
	r := e.rental("train")
	if r.PlatformID != "0920582c7ff041399e34823a0be62549" || !r.Priced || r.Price.Amount.Cmp(ledger.MustDecimal("2.49")) != 0 {
		t.Fatalf("lambda rental = %+v", r)
	}
	for _, b := range e.book().Balances {
		if b.Platform == "lambda" {
			t.Fatalf("a balance recorded for Lambda: %+v", b)
		}
	}
	c, _ := e.db.Connectors(e.ctx, uid)
	if len(c) != 1 || c[0].LastError != "" {
		t.Fatalf("connector = %+v", c)
	}
	if ms := e.snd.take(); len(ms) != 1 {
		t.Fatalf("messages = %q", texts(ms))
	}
}

// TestSync_UnknownState: a state the connector does not know changes
// nothing, and the known state after it still applies.
func TestSync_UnknownState(t *testing.T) {
	e := newEnv(t)
	e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	e.snd.take()
	before := e.snapshot()
	e.rp.SetPods(pod("abc123", "box1", "MIGRATING", "0.79", t0.Add(-time.Hour)))
	e.round()
	e.round()
	if e.snapshot() != before {
		t.Fatalf("an unknown state changed the ledger: %s", e.snapshot())
	}
	if ms := e.snd.take(); len(ms) != 0 {
		t.Fatalf("an unknown state said %q", texts(ms))
	}
	e.rp.SetPods(pod("abc123", "box1", "EXITED", "0.79", t0.Add(-time.Hour)))
	e.round()
	if r := e.rental("box1"); r.State() != ledger.Stopped {
		t.Fatalf("the stop after an unknown state: %s", r.State())
	}
}
