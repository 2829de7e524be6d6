package command

import (
	"errors"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// parseCase is one message and the command Parse must make of it.
type parseCase struct {
	in   string
	want Command
}

func runParseCases(t *testing.T, tests []parseCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in, testNow, shanghai)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if g, w := show(got), show(tt.want); g != w {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tt.in, g, w)
			}
		})
	}
}

// TestParseFree_PerCard: a price said to be per card is multiplied by the
// count, since the ledger bills one price for the whole rental; the price
// as written is kept to be shown.
func TestParseFree_PerCard(t *testing.T) {
	usd := func(a string) *PriceSpec { return price(a, ledger.UnitHour, ledger.USD) }
	cny := func(a string) *PriceSpec { return price(a, ledger.UnitHour, ledger.CNY) }
	runParseCases(t, []parseCase{
		{"租了2张A100-80G runpod 每张$1.64/h", ProposedRentCmd{Platform: "runpod", GPU: "A100 80GB", GPUCount: 2, Price: usd("3.28"), PerCard: usd("1.64")}},
		{"rented 2x A100 on runpod $0.35/h each", ProposedRentCmd{Platform: "runpod", GPU: "A100", GPUCount: 2, Price: usd("0.7"), PerCard: usd("0.35")}},
		{"rented 4 4090s on vast, $0.30/h per card", ProposedRentCmd{Platform: "vast", GPU: "RTX 4090", GPUCount: 4, Price: usd("1.2"), PerCard: usd("0.30")}},
		{"rented 8xH100 on runpod at $2.99 per gpu per hour", ProposedRentCmd{Platform: "runpod", GPU: "H100", GPUCount: 8, Price: usd("23.92"), PerCard: usd("2.99")}},
		{"租了8卡A100 矩池云 每卡3元/小时", ProposedRentCmd{Platform: "matpool", GPU: "A100", GPUCount: 8, Price: cny("24"), PerCard: cny("3")}},
		{"在autodl租了两张3090 1.5元/卡/小时", ProposedRentCmd{Platform: "autodl", GPU: "RTX 3090", GPUCount: 2, Price: cny("3"), PerCard: cny("1.5")}},
		{"autodl租了两张3090 单卡1.5元/小时", ProposedRentCmd{Platform: "autodl", GPU: "RTX 3090", GPUCount: 2, Price: cny("3"), PerCard: cny("1.5")}},
		// One card: each is the whole price.
		{"rented an H100 on runpod $2.99/h each", ProposedRentCmd{Platform: "runpod", GPU: "H100", GPUCount: 1, Price: usd("2.99")}},
		// No marker: the price is the rental's.
		{"rented 2x4090 on vast at $0.70/h", ProposedRentCmd{Platform: "vast", GPU: "RTX 4090", GPUCount: 2, Price: usd("0.70")}},
	})
}

// TestParseFree_StartTime: a time in the text, relative or by the clock,
// is when the rental started.
func TestParseFree_StartTime(t *testing.T) {
	r := func(at time.Time) ProposedRentCmd {
		return ProposedRentCmd{Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", ledger.UnitHour, ""), At: at}
	}
	cny := func(at time.Time) ProposedRentCmd {
		p := r(at)
		p.Price = price("1.88", ledger.UnitHour, ledger.CNY)
		return p
	}
	h100 := func(at time.Time) ProposedRentCmd {
		return ProposedRentCmd{Platform: "runpod", GPU: "H100", GPUCount: 1, Price: price("2.99", ledger.UnitHour, ledger.USD), At: at}
	}
	runParseCases(t, []parseCase{
		{"3小时前在autodl租了4090 1.88/h", r(testNow.Add(-3 * time.Hour))},
		{"半小时前在autodl租了4090 1.88/h", r(testNow.Add(-30 * time.Minute))},
		{"两个小时前在autodl租了4090 1.88/h", r(testNow.Add(-2 * time.Hour))},
		{"40分钟前 autodl 租了4090 1.88/h", r(testNow.Add(-40 * time.Minute))},
		{"昨天晚上10点在autodl租了4090 1.88元/小时", cny(at(2026, 10, 31, 22, 0, 0))},
		{"昨晚10点半在autodl租了4090 1.88元/小时", cny(at(2026, 10, 31, 22, 30, 0))},
		{"今天早上9点在autodl租了4090 1.88元/小时", cny(at(2026, 11, 1, 9, 0, 0))},
		// a clock later than now without a day is yesterday's, as in /rent
		{"下午3点在autodl租了4090 1.88元/小时", cny(at(2026, 10, 31, 15, 0, 0))},
		{"昨天 23:00 在autodl租了4090 1.88元/小时", cny(at(2026, 10, 31, 23, 0, 0))},
		{"2026-11-01 10:00 在autodl租了4090 1.88元/小时", cny(at(2026, 11, 1, 10, 0, 0))},
		// "一点" alone is "a bit", not one o'clock
		{"在autodl租了4090 1.88元/小时 便宜一点", cny(time.Time{})},
		{"rented an h100 on runpod 2h ago $2.99/h", h100(testNow.Add(-2 * time.Hour))},
		{"rented an h100 on runpod 90 minutes ago $2.99/h", h100(testNow.Add(-90 * time.Minute))},
		{"rented an h100 on runpod an hour ago $2.99/h", h100(testNow.Add(-time.Hour))},
		{"this morning at 9 rented an h100 on runpod $2.99/h", h100(at(2026, 11, 1, 9, 0, 0))},
		{"rented an h100 on runpod yesterday at 10pm, $2.99/h", h100(at(2026, 10, 31, 22, 0, 0))},
		{"rented an h100 on runpod last night at 11, $2.99/h", h100(at(2026, 10, 31, 23, 0, 0))},
		{"rented an h100 on runpod at 9:30 for $2.99/h", h100(at(2026, 11, 1, 9, 30, 0))},
		// "at 0.35" is a price, not a time
		{"rented a 4090 on vast at 0.35/h", ProposedRentCmd{Platform: "vast", GPU: "RTX 4090", GPUCount: 1, Price: price("0.35", ledger.UnitHour, "")}},
		// a time in the future is not a start time: none is proposed
		{"今天晚上10点在autodl租了4090 1.88元/小时", cny(time.Time{})},
	})
}

// TestParseFree_PriceWords: "per hour", "an hour", "/hr" after a word, and
// "on PLATFORM" for a platform the profiles do not know.
func TestParseFree_PriceWords(t *testing.T) {
	p := func(plat string, cur ledger.Currency) ProposedRentCmd {
		return ProposedRentCmd{Platform: plat, GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", ledger.UnitHour, cur)}
	}
	runParseCases(t, []parseCase{
		{"rent 4090 on autodl 1.88 per hour", p("autodl", "")},
		{"rented a 4090 on autodl 1.88 an hour", p("autodl", "")},
		{"rented a 4090 on autodl 1.88/hr", p("autodl", "")},
		{"rented a 4090 on autodl 1.88 usd/hr", p("autodl", ledger.USD)},
		{"rented a 4090 on mycloud $1.88/h", p("mycloud", ledger.USD)},
		{"rented a 4090 on my-cloud.io for $1.88 per hour", p("my-cloud.io", ledger.USD)},
		{"在mycloud租了4090 1.88元/小时", p("mycloud", ledger.CNY)},
		// "on demand" is not a platform
		{"rented a 4090 on demand $1.88/h", ProposedRentCmd{GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", ledger.UnitHour, ledger.USD)}},
	})
}

// TestParseFree_Changes: stopping, resuming and releasing in words become
// proposals of the command; read-only words are the command itself.
func TestParseFree_Changes(t *testing.T) {
	ch := func(k ledger.EventKind, name string) ProposedChangeCmd {
		return ProposedChangeCmd{Event: k, Name: name}
	}
	runParseCases(t, []parseCase{
		{"释放box2", ch(ledger.EventRelease, "box2")},
		{"释放了 box2", ch(ledger.EventRelease, "box2")},
		{"把box2释放了", ch(ledger.EventRelease, "box2")},
		{"box2已经释放了", ch(ledger.EventRelease, "box2")},
		{"box2关机了", ch(ledger.EventStop, "box2")},
		{"我把甲关机了", ch(ledger.EventStop, "甲")},
		{"box1 停了", ch(ledger.EventStop, "box1")},
		{"box1开机了", ch(ledger.EventResume, "box1")},
		{"stopped box1", ch(ledger.EventStop, "box1")},
		{"I stopped Box1", ch(ledger.EventStop, "Box1")},
		{"stop box1", ch(ledger.EventStop, "box1")},
		{"box1 is stopped", ch(ledger.EventStop, "box1")},
		{"released box1", ch(ledger.EventRelease, "box1")},
		{"just terminated box1.", ch(ledger.EventRelease, "box1")},
		{"resumed box1", ch(ledger.EventResume, "box1")},
		{"stopped box1 2h ago", ProposedChangeCmd{Event: ledger.EventStop, Name: "box1", At: testNow.Add(-2 * time.Hour)}},
		{"box2 半小时前关机了", ProposedChangeCmd{Event: ledger.EventStop, Name: "box2", At: testNow.Add(-30 * time.Minute)}},
		{"昨晚11点释放了box2", ProposedChangeCmd{Event: ledger.EventRelease, Name: "box2", At: at(2026, 10, 31, 23, 0, 0)}},
		{"status", StatusCmd{}},
		{"Status?", StatusCmd{}},
		{"状态", StatusCmd{}},
		{"list", StatusCmd{}},
		{"balance", BalanceCmd{}},
		{"余额", BalanceCmd{}},
		{"spend today", SpendCmd{Period: "today", From: at(2026, 11, 1, 0, 0, 0), To: at(2026, 11, 2, 0, 0, 0)}},
		{"花费 本周", SpendCmd{Period: "week", From: at(2026, 10, 26, 0, 0, 0), To: at(2026, 11, 2, 0, 0, 0)}},
		{"summary", SummaryCmd{}},
		// not a rental, not a question
		{"stop it", NotACommand{}},
		{"stop", NotACommand{}},
		{"please stop box1 and box2", NotACommand{}},
		{"status of the order", NotACommand{}},
		{"balance autodl 67", NotACommand{}}, // writes: only as /balance
		{"stopped box1 tomorrow at 9", NotACommand{}},
	})
}

// TestParse_RentPerCard: /rent takes a per-card price too and records the
// whole rental's.
func TestParse_RentPerCard(t *testing.T) {
	rent := func(gpu string, n int, p *PriceSpec) RentCmd {
		r := RentCmd{Name: "box1", Platform: "runpod", GPU: gpu, GPUCount: n, Price: p}
		if p != nil {
			r.Currency = p.Currency
		}
		return r
	}
	runParseCases(t, []parseCase{
		{"/rent box1 runpod 2xA100 1.64/h each", rent("A100", 2, price("3.28", ledger.UnitHour, ""))},
		{"/rent box1 runpod 2xA100 $1.64/h per card", rent("A100", 2, price("3.28", ledger.UnitHour, ledger.USD))},
		{"/rent box1 runpod 2xA100 1.64/gpu/h", rent("A100", 2, price("3.28", ledger.UnitHour, ""))},
		{"/rent box1 runpod A100 1.64元/卡/小时 count=3", rent("A100", 3, price("4.92", ledger.UnitHour, ledger.CNY))},
		{"/rent box1 runpod 4xA100 每卡 2/h", rent("A100", 4, price("8", ledger.UnitHour, ""))},
		{"/rent box1 runpod A100 1.64/h each", rent("A100", 1, price("1.64", ledger.UnitHour, ""))},
	})
	for _, tt := range []struct{ in, key string }{
		{"/rent box1 runpod 2xA100 each", "missing_price"},
		{"/rent box1 runpod 64xA100 999999999/h each", "bad_price"},
	} {
		_, err := Parse(tt.in, testNow, shanghai)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Key != tt.key {
			t.Errorf("Parse(%q) error %v, want key %s", tt.in, err, tt.key)
		}
	}
}
