package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

// quoteBook records three past rentals of a 4090: AutoDL at ¥1.88/h per
// second, a host billing ¥2/h in started hours, RunPod at $0.69/h.
func quoteBook(t *testing.T, e *env) {
	t.Helper()
	for _, cmd := range []string{"/rent box1 autodl 4090 1.88/h", "/rent h1 myhost 4090 ¥2/h per-hour", "/rent rp runpod 4090 $0.69/h"} {
		contains(t, e.say(alice, cmd), "✓")
	}
	e.now = e.now.Add(time.Hour)
	for _, n := range []string{"box1", "h1", "rp"} {
		contains(t, e.say(alice, "/release "+n), "✓")
	}
	e.now = e.now.Add(24 * time.Hour)
}

func TestCore_Quote(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	quoteBook(t, e)
	got := e.say(alice, "/quote 4090 2.5")
	// AutoDL: 2.5 h × ¥1.88 = ¥4.70; myhost: 3 started hours × ¥2 =
	// ¥6.00; RunPod: 2.5 h × $0.69 = $1.725, rounded once to $1.73.
	contains(t, got, "Quote", "RTX 4090, 2h30m running", "<b>AutoDL total ¥4.70</b>", "your box1, Nov 2", "¥1.88/h a GPU",
		"<b>myhost total ¥6.00</b>", "compute ¥6.00 (3h billed)", "<b>RunPod total $1.73</b>", "<b>CNY</b>", "<b>USD</b>")
	if a, m, u := strings.Index(got, "AutoDL"), strings.Index(got, "myhost"), strings.Index(got, "RunPod"); !(a < m && m < u) {
		t.Errorf("want AutoDL, then myhost (dearer), then the dollars: %q", got)
	}

	t.Run("storage while stopped and traffic", func(t *testing.T) {
		// AutoDL's profile: 50 GB free, ¥0.0066/GB/day in every state:
		// 150 GB above the free 50 for 10 h running and 38 stopped = 2
		// days: 100 × 0.0066 × 2 = ¥1.32. RunPod bills no traffic.
		got := e.say(alice, "/quote 4090 10 storage=150GB stopped=38 traffic=20GB autodl")
		contains(t, got, "compute ¥18.80", "storage ¥1.32 (150 GB, 50 free at ¥0.0066/GB/day, the platform's usual price)",
			"traffic: no price known here", "<b>AutoDL total ¥20.12</b> without the parts with no price")
		if strings.Contains(got, "RunPod") {
			t.Errorf("autodl asked, RunPod shown: %q", got)
		}
	})
	t.Run("a price given", func(t *testing.T) {
		got := e.say(alice, "/quote 2x4090 1 price=0.5 vast")
		contains(t, got, "2×RTX 4090", "<b>Vast.ai total $1.00</b>", "your price: $0.50/h a GPU")
	})
	t.Run("in Chinese", func(t *testing.T) {
		contains(t, e.say(alice, "/settings lang=zh"), "✓")
		got := e.say(alice, "/报价 4090 2.5")
		contains(t, got, "报价", "运行 2小时30分", "<b>AutoDL 合计 ¥4.70</b>", "你的 box1，11月2日", "单卡 ¥1.88/小时", "计费 3小时")
		contains(t, e.say(alice, "/settings lang=en"), "✓")
	})
}

// TestCore_QuoteOwnRuns: the user's own labelled runs on the card there
// become runs in the hours asked, and the bench a price per
// tensor-TFLOP-hour.
func TestCore_QuoteOwnRuns(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	quoteBook(t, e)
	b := e.book(alice)
	var rp *ledger.Rental
	for _, r := range b.Rentals {
		if r.Name == "rp" {
			rp = r
		}
	}
	ctx := context.Background()
	for i, d := range []time.Duration{6 * time.Minute, 5*time.Minute + 30*time.Second, 6*time.Minute + 30*time.Second} {
		s := rp.StartedAt().Add(time.Duration(i) * 10 * time.Minute)
		if _, _, err := e.db.AddJobRun(ctx, ledger.JobRun{RentalID: rp.ID, UserID: alice, Label: "yolo", StartedAt: s, EndedAt: s.Add(d), Source: ledger.JobFromAgent}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := e.db.AddBench(ctx, ledger.BenchRecord{RentalID: rp.ID, UserID: alice, ReportID: "r1", At: rp.StartedAt().Add(time.Minute),
		Bench: perf.Bench{Source: "cuda", GPUs: []perf.GPU{{Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", BF16TFLOPS: 150}}}}); err != nil {
		t.Fatal(err)
	}
	got := e.say(alice, "/quote 4090 1")
	// $0.69 an hour, a 6-min run is a tenth of it: $0.069 → $0.07.
	contains(t, got, "your yolo took 6m a run on this card here (median of 3): 1h ≈ 10 runs, $0.07 a run",
		"tensor 150 TFLOPS a GPU (your rp's bench, the agent's measurement) → $0.0046 per tensor-TFLOP-hour")
	if strings.Count(got, "yolo") != 1 {
		t.Errorf("runs on RunPod shown on another platform's line: %q", got)
	}
}

func TestCore_QuoteNoPrice(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	got := e.say(alice, "/quote h100 10")
	contains(t, got, "No price for H100 yet", "/quote H100 10 price=1.88 autodl")
	contains(t, e.say(alice, "/quote 4090 90m autodl"), "No price for RTX 4090 on AutoDL", "/quote RTX4090 90m price=1.88 autodl")
}

// TestCore_QuoteBadInput: bad input says how to write it, in the
// user's language, and changes nothing.
func TestCore_QuoteBadInput(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	quoteBook(t, e)
	before := e.book(alice)
	for _, tc := range []struct{ in, want string }{
		{"/quote 4090 0", `&#34;0&#34; hours is out of range: more than 0 and at most 8760`},
		{"/quote 4090 -5", `&#34;-5&#34; hours is out of range`},
		{"/quote 4090 1e9", `&#34;1e9&#34; is not a number of hours: write it like 10, 2.5, 90m or 3d`},
		{"/quote 4090 10 storage=5XB", `&#34;5XB&#34; is not a size`},
		{"/quote 4090", "/quote needs how many hours it would run after the GPU, e.g. /quote 4090 10"},
		{"/quote", "/quote needs a GPU"},
	} {
		got := e.say(alice, tc.in)
		contains(t, got, tc.want, "Example: /quote 4090 10")
	}
	contains(t, e.say(alice, "/settings lang=zh"), "✓")
	contains(t, e.say(alice, "/quote 4090 0"), `&#34;0&#34; 小时超出范围`, "例如：/quote 4090 10 price=1.88元/小时")
	after := e.book(alice)
	if len(after.Rentals) != len(before.Rentals) || len(after.Volumes)+len(after.Charges) != 0 {
		t.Errorf("a quote wrote to the ledger: %d rentals, then %d", len(before.Rentals), len(after.Rentals))
	}
}
