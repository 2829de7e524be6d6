package command

import (
	"math/big"
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// The words a user writes after a price are its unit ("1.88 per hour",
// "1.88 一小时"): mergeTokens joins them to the price ("1.88/hour") before
// any word is read as a billing mode, so "per hour" after a price never
// changes how the rental is billed. docs/design.md §3 lists which words
// are units and which are modes.

// unitAdverbs are the one-word units a user writes after a price:
// "1.88 hourly" is 1.88 per hour, not the per-hour billing mode.
var unitAdverbs = map[string]string{"hourly": "/h", "daily": "/day", "weekly": "/week", "monthly": "/month"}

// unitArticles begin a two-word unit after a price: "per hour", "an hour",
// "a day", "every hour".
var unitArticles = map[string]bool{"per": true, "an": true, "a": true, "every": true}

// priceUnitPhrase reads the unit that toks start with when they follow a
// price: "per hour", "an hour", "a day", "per h", "hourly", "每小时",
// "一小时", "每个月", "/hr", and per GB ("per GB", "每GB每天"). It returns
// the unit as a price path ("/hour", "/gb/天") and how many tokens it
// takes; 0 when toks do not start with a unit. A bare unit word ("hours",
// "天") is left alone: after a number it is a duration ("for 2 days").
func priceUnitPhrase(toks []string) (string, int) {
	if len(toks) == 0 {
		return "", 0
	}
	first := strings.ToLower(toks[0])
	if len(toks) >= 2 && unitArticles[first] {
		if u := strings.ToLower(toks[1]); unitSeg(u) {
			return "/" + u, 2
		}
	}
	if u, ok := unitAdverbs[first]; ok {
		return u, 1
	}
	if u, ok := unitPath(first); ok {
		return u, 1
	}
	return "", 0
}

// unitSeg reports whether s is one segment of a price's unit: a time unit
// or GB.
func unitSeg(s string) bool { return timeUnits[s] != "" || isGB(s) }

// unitPath reads a unit written as one lower-case token: "/hr", "每小时",
// "一小时", "每个月", "/小时", "每gb每天". It returns it as a price path
// ("/hr", "/小时", "/gb/天").
func unitPath(s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "一"); ok {
		s = "/" + rest
	}
	s = strings.ReplaceAll(s, "每", "/")
	if len(s) < 2 || s[0] != '/' {
		return "", false
	}
	for _, seg := range strings.Split(s[1:], "/") {
		if !unitSeg(seg) {
			return "", false
		}
	}
	return s, true
}

// unitFirstPrice reads a price whose unit comes first, as Chinese writes
// it: "每小时1.88元" in one token, or "每小时" followed by the price
// ("每小时 1.88", "每小时 1.88 元", "每小时 ¥1.88"). It returns the price
// with its unit after it ("1.88元/小时") and how many tokens it takes; 0
// when toks do not start so. Only "每" leads: "per hour" before a price
// stays a billing mode ("per hour 1.88/h").
func unitFirstPrice(toks []string) (string, int) {
	first := strings.ToLower(toks[0])
	if !strings.HasPrefix(first, "每") {
		return "", 0
	}
	// the unit ends where the price begins: a digit, a sign or a symbol
	at := strings.IndexFunc(first, func(r rune) bool {
		return r >= '0' && r <= '9' || r == '.' || r == '$' || r == '¥' || r == '￥' || r == '€'
	})
	if at > 0 {
		unit, ok := unitPath(first[:at])
		if p, okp := splitPrice(first[at:]); ok && okp && len(p.segs) == 0 {
			return toks[0][at:] + unit, 1
		}
		return "", 0
	}
	unit, ok := unitPath(first)
	if !ok || len(toks) < 2 || openPriceBefore(toks[1:2]) != 0 {
		return "", 0
	}
	price, n := toks[1], 2
	if len(toks) > 2 && isBareNumber(price) {
		if c, rest := cutCurrencyWord(strings.ToLower(toks[2])); c != "" && rest == "" {
			price, n = price+toks[2], 3
		}
	}
	return price + unit, n
}

// openPriceBefore returns the index in out of a price still waiting for its
// unit ("1.88", "¥1.88", "1.88元", "price=1.88", or "0.0066/GB" waiting
// for its time), looking past per-card words ("0.69 each per hour"); -1
// when there is none.
func openPriceBefore(out []string) int {
	j := len(out) - 1
	for j >= 0 && perCardWord(out[j]) {
		j--
	}
	if j < 0 {
		return -1
	}
	s := out[j]
	if k, v, ok := cutKV(s); ok {
		if k != "price" && k != "stopped" {
			return -1
		}
		s = v
	}
	p, ok := splitPrice(strings.ToLower(s))
	if !ok || len(p.segs) > 1 || len(p.segs) == 1 && !isGB(p.segs[0]) {
		return -1
	}
	if _, _, gpu := parseGPU(s); gpu {
		return -1 // "4090 per hour 1.88/h": the GPU, then the mode
	}
	return j
}

// isGPU reports whether tok reads as a GPU ("4090"): a unit after it is
// not its unit ("4090 每小时 1.88").
func isGPU(tok string) bool {
	_, _, ok := parseGPU(tok)
	return ok
}

// GibBytes converts GB as written (the ledger counts GiB, 2^30 bytes) to
// bytes, rounding down to a whole byte.
func GibBytes(gb ledger.Decimal) int64 {
	q := gb.Rat()
	q.Mul(q, new(big.Rat).SetInt64(1<<30))
	return new(big.Int).Quo(q.Num(), q.Denom()).Int64()
}
