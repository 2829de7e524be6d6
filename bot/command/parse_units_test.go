package command

import (
	"errors"
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestParse_PriceUnitWords: the words a user types after a price ("per
// hour", "an hour", "/hr", "hourly", "每小时", "一小时", "¥70 per day") are
// the price's unit, never a billing mode; a mode is only a mode's own word
// (per-second, 按小时, 包日, always-on) or "per hour" with no price before it.
func TestParse_PriceUnitWords(t *testing.T) {
	rent := func(amount string, u ledger.Unit, cur ledger.Currency, mode ledger.Mode) RentCmd {
		return RentCmd{Name: "t1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1,
			Price: price(amount, u, cur), Mode: mode, Currency: cur}
	}
	h, d, mo, wk := ledger.UnitHour, ledger.UnitDay, ledger.UnitMonth, ledger.UnitWeek
	tests := []struct {
		in   string
		want Command
	}{
		{"/rent t1 autodl 4090 1.88 per hour", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 Per Hour", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 an hour", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 a hour", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 per hr", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 per h", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 every hour", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 /hr", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 /hour", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 hourly", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 每小时", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 一小时", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 /小时", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 每时", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88 每个小时", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 1.88元 每小时", rent("1.88", h, ledger.CNY, "")},
		{"/rent t1 autodl 4090 1.88元 一小时", rent("1.88", h, ledger.CNY, "")},
		{"/rent t1 autodl 4090 1.88 元 每小时", rent("1.88", h, ledger.CNY, "")},
		{"/rent t1 autodl 4090 ¥1.88 per hour", rent("1.88", h, ledger.CNY, "")},
		{"/rent t1 autodl 4090 $1.88 an hour", rent("1.88", h, ledger.USD, "")},
		{"/rent t1 autodl 4090 1.88 usd per hour", rent("1.88", h, ledger.USD, "")},
		{"/rent t1 autodl 4090 price=1.88 per hour", rent("1.88", h, "", "")},
		{"/rent t1 autodl 4090 ¥70 per day", rent("70", d, ledger.CNY, "")},
		{"/rent t1 autodl 4090 70 a day", rent("70", d, "", "")},
		{"/rent t1 autodl 4090 70 daily", rent("70", d, "", "")},
		{"/rent t1 autodl 4090 70 一天", rent("70", d, "", "")},
		{"/rent t1 autodl 4090 70 每天", rent("70", d, "", "")},
		{"/rent t1 autodl 4090 300 a week", rent("300", wk, "", "")},
		{"/rent t1 autodl 4090 300 weekly", rent("300", wk, "", "")},
		{"/rent t1 autodl 4090 1000 per month", rent("1000", mo, "", "")},
		{"/rent t1 autodl 4090 1000 monthly", rent("1000", mo, "", "")},
		{"/rent t1 autodl 4090 1000 一个月", rent("1000", mo, "", "")},
		{"/rent t1 autodl 4090 1000 每个月", rent("1000", mo, "", "")},
		// the mode's own words stay modes, also beside a unit phrase
		{"/rent t1 autodl 4090 1.88 per hour per-second", rent("1.88", h, "", ledger.PerSecond)},
		{"/rent t1 autodl 4090 1.88 per hour per second", rent("1.88", h, "", ledger.PerSecond)},
		{"/rent t1 autodl 4090 1.88/h per hour", rent("1.88", h, "", ledger.PerHour)},
		{"/rent t1 autodl 4090 per hour 1.88/h", rent("1.88", h, "", ledger.PerHour)},
		{"/rent t1 autodl 4090 1.88 每小时 按小时", rent("1.88", h, "", ledger.PerHour)},
		{"/rent t1 autodl 4090 hourly 1.88", rent("1.88", h, "", ledger.PerHour)},
		{"/rent t1 autodl 4090 70 每天 包日", rent("70", d, "", ledger.AlwaysOn)},
		{"/rent t1 autodl 4090 1000 包月", rent("1000", mo, "", ledger.AlwaysOn)},
		// per card, then the unit
		{"/rent t1 autodl 2x4090 0.69 each per hour", RentCmd{Name: "t1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 2, Price: price("1.38", h, "")}},
		{"/rent t1 autodl 2x4090 0.69 per gpu per hour", RentCmd{Name: "t1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 2, Price: price("1.38", h, "")}},
		{"/rent t1 autodl 2x4090 0.69 per gpu an hour", RentCmd{Name: "t1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 2, Price: price("1.38", h, "")}},
		// /price takes the same words
		{"/price t1 2.08 per hour", PriceCmd{Name: "t1", Price: *price("2.08", h, "")}},
		{"/price t1 2.08 an hour", PriceCmd{Name: "t1", Price: *price("2.08", h, "")}},
		{"/price t1 2.08 hourly", PriceCmd{Name: "t1", Price: *price("2.08", h, "")}},
		{"/price t1 2.08 一小时", PriceCmd{Name: "t1", Price: *price("2.08", h, "")}},
		{"/price t1 ¥2.08 每小时", PriceCmd{Name: "t1", Price: *price("2.08", h, ledger.CNY)}},
		{"/price t1 ¥70 per day", PriceCmd{Name: "t1", Price: *price("70", d, ledger.CNY)}},
		// plain language
		{"租了一台4090 1.88元每小时 autodl", ProposedRentCmd{Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", h, ledger.CNY)}},
		{"租了一台4090 1.88 一小时 autodl", ProposedRentCmd{Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", h, "")}},
		{"rented a 4090 on autodl 1.88 per hour", ProposedRentCmd{Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", h, "")}},
		{"rented a 4090 on autodl 1.88 hourly", ProposedRentCmd{Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", h, "")}},
		{"rented a 4090 on autodl $1.88 an hr", ProposedRentCmd{Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Price: price("1.88", h, ledger.USD)}},
		{"rented a 4090 on featurize 70 daily", ProposedRentCmd{Platform: "featurize", GPU: "RTX 4090", GPUCount: 1, Price: price("70", d, "")}},
		{"rented a 4090 on featurize ¥70 per day", ProposedRentCmd{Platform: "featurize", GPU: "RTX 4090", GPUCount: 1, Price: price("70", d, ledger.CNY)}},
	}
	for _, tc := range tests {
		got, err := Parse(tc.in, testNow, shanghai)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if show(got) != show(tc.want) {
			t.Errorf("Parse(%q)\n got %s\nwant %s", tc.in, show(got), show(tc.want))
		}
	}
}

// TestParse_BudgetWords: the currency of a budget to remove may be written
// beside "off" or 0, in any order; "all" removes every budget and takes
// neither an amount nor a currency.
func TestParse_BudgetWords(t *testing.T) {
	off := func(c ledger.Currency) BudgetCmd { return BudgetCmd{Set: true, Amount: Amount{Currency: c}} }
	all := BudgetCmd{Set: true, All: true}
	for _, tc := range []struct {
		in   string
		want Command
	}{
		{"/budget 0", off("")},
		{"/budget off", off("")},
		{"/budget 0 USD", off(ledger.USD)},
		{"/budget USD 0", off(ledger.USD)},
		{"/budget off $", off(ledger.USD)},
		{"/budget off 美元", off(ledger.USD)},
		{"/budget 关闭 元", off(ledger.CNY)},
		{"/budget off €", off(ledger.EUR)},
		{"/budget off all", all},
		{"/budget 0 all", all},
		{"/预算 关闭 全部", all},
		{"/budget 3000 usd", BudgetCmd{Set: true, Amount: Amount{Value: dec("3000"), Currency: ledger.USD}}},
		{"/budget 3000 per month", BudgetCmd{Set: true, Amount: Amount{Value: dec("3000")}}},
		{"/budget", BudgetCmd{}},
	} {
		got, err := Parse(tc.in, testNow, shanghai)
		if err != nil || show(got) != show(tc.want) {
			t.Errorf("Parse(%q) = %s, %v; want %s", tc.in, show(got), err, show(tc.want))
		}
	}
	for _, tc := range []struct{ in, key string }{
		{"/budget 5 all", "budget_all_off"},
		{"/budget all", "budget_all_off"},
		{"/budget off all USD", "budget_all_currency"},
		{"/budget off $ eur", "currency_conflict"},
		{"/budget USD", "missing_amount"},
		{"/budget 5 6", "unexpected"},
	} {
		_, err := Parse(tc.in, testNow, shanghai)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Key != tc.key {
			t.Errorf("Parse(%q): error %v, want %s", tc.in, err, tc.key)
		}
	}
}

// TestParse_UnitWordsSiblings: the unit may come first in Chinese
// ("每小时 1.88", "每小时1.88元"), and a price per GB reads its words the
// same way ("0.0066 per GB per day", "price=0.8 per GB"); a GPU is never
// taken for a price ("4090 每小时 1.88").
func TestParse_UnitWordsSiblings(t *testing.T) {
	h := ledger.UnitHour
	rent := func(amount string, cur ledger.Currency) RentCmd {
		return RentCmd{Name: "t1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Price: price(amount, h, cur), Currency: cur}
	}
	for _, tc := range []struct {
		in   string
		want Command
	}{
		{"/rent t1 autodl 4090 每小时 1.88", rent("1.88", "")},
		{"/rent t1 autodl 4090 每小时1.88元", rent("1.88", ledger.CNY)},
		{"/rent t1 autodl 4090 每小时 1.88 元", rent("1.88", ledger.CNY)},
		{"/rent t1 autodl 4090 每小时 ¥1.88", rent("1.88", ledger.CNY)},
		{"/price t1 每小时2.08元", PriceCmd{Name: "t1", Price: *price("2.08", h, ledger.CNY)}},
		{"/storage data1 200GB 0.0066 per GB per day", StorageCreateCmd{Volume: "data1", SizeGB: dec("200"),
			Price: &StoragePrice{Amount: dec("0.0066"), Unit: ledger.PerGBDay}}},
		{"/storage data1 200GB 0.0066元 每GB每天", StorageCreateCmd{Volume: "data1", SizeGB: dec("200"),
			Price: &StoragePrice{Amount: dec("0.0066"), Unit: ledger.PerGBDay, Currency: ledger.CNY}}},
		{"/traffic box1 price=0.8 per GB", TrafficTermsCmd{Name: "box1", PricePerGB: dec("0.8")}},
	} {
		got, err := Parse(tc.in, testNow, shanghai)
		if err != nil || show(got) != show(tc.want) {
			t.Errorf("Parse(%q)\n got %s, %v\nwant %s", tc.in, show(got), err, show(tc.want))
		}
	}
}

// TestParseTZ_SignedOffsetOnly: an offset is one sign and whole hours;
// "UTC+-1" or "+-8" is not a zone (it became "Etc/GMT--1", which no
// system knows, and the settings were then refused only when applied).
func TestParseTZ_SignedOffsetOnly(t *testing.T) {
	for _, v := range []string{"UTC+-1", "+-8", "GMT-+3", "UTC++8", "+ 8", "UTC+8.5"} {
		if z, ok := parseTZ(v); ok {
			t.Errorf("parseTZ(%q) = %q, want refused", v, z)
		}
	}
	for v, want := range map[string]string{"UTC+8": "Etc/GMT-8", "GMT-5": "Etc/GMT+5", "+8": "Etc/GMT-8", "UTC+08:00": "Etc/GMT-8", "utc-0": "UTC"} {
		if z, ok := parseTZ(v); !ok || z != want {
			t.Errorf("parseTZ(%q) = %q, %v; want %q", v, z, ok, want)
		}
	}
}
