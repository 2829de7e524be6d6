package bot

import "strings"

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
// "一小时", "每个月", "/hr". It returns the unit as a price path ("/hour")
// and how many tokens it takes; 0 when toks do not start with a unit. A
// bare unit word ("hours", "天") is left alone: after a number it is a
// duration ("for 2 days").
func priceUnitPhrase(toks []string) (string, int) {
	if len(toks) == 0 {
		return "", 0
	}
	first := strings.ToLower(toks[0])
	if len(toks) >= 2 && unitArticles[first] {
		if u := strings.ToLower(toks[1]); timeUnits[u] != "" {
			return "/" + u, 2
		}
	}
	if u, ok := unitAdverbs[first]; ok {
		return u, 1
	}
	for _, pre := range []string{"/", "每", "一"} {
		if u, ok := strings.CutPrefix(first, pre); ok && timeUnits[u] != "" {
			return "/" + u, 1
		}
	}
	return "", 0
}

// openPriceBefore returns the index in out of a price still waiting for its
// unit ("1.88", "¥1.88", "1.88元", "price=1.88"), looking past per-card
// words ("0.69 each per hour"); -1 when there is none.
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
		if k != "price" {
			return -1
		}
		s = v
	}
	if p, ok := splitPrice(strings.ToLower(s)); !ok || len(p.segs) > 0 {
		return -1
	}
	if _, _, gpu := parseGPU(s); gpu {
		return -1 // "4090 per hour 1.88/h": the GPU, then the mode
	}
	return j
}
