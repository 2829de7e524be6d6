package bot

import (
	"regexp"
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// Free text is read with regular expressions (RE2: linear time whatever the
// input, so hostile text costs at most a few passes over 4 KiB).

var (
	// gpuRun is a candidate GPU mention: "4090", "2x4090", "a100-80g", "h100*8".
	gpuRun = regexp.MustCompile(`[0-9a-z][0-9a-z*\-]*(?: (?:ti|super|ada|nvl|xp|[0-9]{2,3}gb?)\b)*`)
	// brandSpace joins a brand to its model: "rtx 4090" → "rtx4090".
	brandSpace = regexp.MustCompile(`\b(nvidia|geforce|rtx|gtx|tesla)\s+`)
	// countBefore is a count right before a GPU: "两张", "2张", "8卡", "2 x ", "two ".
	countBefore = regexp.MustCompile(`(?:([0-9]{1,2})|(一|两|二|俩|三|四|五|六|七|八|十六|十))\s*(?:张|台|块|卡|个|x|\*)?\s*$|(?:^|[^a-z])(a|an|one|two|three|four|eight|a pair of)\s+$`)
	// countAfter is a count right after a GPU: " x2", "*8", " x 8".
	countAfter = regexp.MustCompile(`^\s*[x*]\s*([0-9]{1,2})(?:[^0-9]|$)`)

	priceRe = regexp.MustCompile(
		`(us\$|hk\$|\$|¥|￥|€)?\s*(\d+(?:\.\d+)?)\s*(块钱|元|块|刀|美元|美金|usd|rmb|cny|dollars|dollar|yuan|bucks)?` +
			`(?:\s*(?:/|per|an|a|每|一)\s*(个小时|小时|钟头|时|hour|hr|h|天|日|day|d|周|星期|week|wk|个月|月|month|mo|分钟|minute|min|秒|second|sec|s)\b?)?`)
	unitFirstRe = regexp.MustCompile(
		`(每小时|每个小时|一小时|每天|每日|一天|每周|每月|一个月|per hour|an hour|a day|per day|per month|a month)\s*(?:要|是|收|:)?\s*` +
			`(us\$|\$|¥|￥|€)?\s*(\d+(?:\.\d+)?)\s*(块钱|元|块|刀|美元|美金|usd|rmb|cny|dollars|dollar)?`)
	verbRe     = regexp.MustCompile(`租|(?:^|[^a-z])(rent|rented|renting|leased|launched|booked|grabbed|got|started|spun up|spin up|开了|起了)(?:[^a-z]|$)`)
	questionRe = regexp.MustCompile(`\?|吗|多少|怎么|哪|(?:^|[^a-z])(how|what|which|should|is it|cheap|expensive)(?:[^a-z]|$)`)
)

var englishCount = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "eight": 8, "a pair of": 2}

var unitFirst = map[string]ledger.Unit{
	"每小时": ledger.UnitHour, "每个小时": ledger.UnitHour, "一小时": ledger.UnitHour, "per hour": ledger.UnitHour,
	"an hour": ledger.UnitHour, "每天": ledger.UnitDay, "每日": ledger.UnitDay, "一天": ledger.UnitDay,
	"a day": ledger.UnitDay, "per day": ledger.UnitDay, "每周": ledger.UnitWeek, "每月": ledger.UnitMonth,
	"一个月": ledger.UnitMonth, "per month": ledger.UnitMonth, "a month": ledger.UnitMonth,
}

// freeHelp are free-text messages that ask for help.
var freeHelp = map[string]bool{"help": true, "帮助": true, "?": true, "？": true, "菜单": true, "menu": true, "怎么用": true}

// parseFree reads normalised free text: a request for help, a rental
// described in words, or NotACommand.
func parseFree(s string) Command {
	s = strings.ToLower(strings.TrimSpace(s))
	if freeHelp[s] {
		return Help{}
	}
	s = brandSpace.ReplaceAllString(s, "$1")
	var pr ProposedRent
	for _, loc := range gpuRun.FindAllStringIndex(s, 64) {
		run := strings.Trim(s[loc[0]:loc[1]], "-*")
		model, n, ok := parseGPU(run)
		if !ok || n == 0 {
			continue
		}
		if n == 1 {
			n = countAround(s[:loc[0]], s[loc[1]:])
		}
		pr.GPU, pr.GPUCount = model, n
		break
	}
	if pr.GPU == "" {
		return NotACommand{}
	}
	pr.Platform = findPlatform(s)
	unitGiven := false
	pr.Price, unitGiven = findPrice(s)
	for _, w := range []string{"包月", "包周", "包日", "包天", "按秒", "按量", "按分钟", "按小时", "per-second", "per second", "per-minute", "per minute", "per-hour", "always-on", "always on"} {
		if !strings.Contains(s, w) {
			continue
		}
		m, ok := parseMode(strings.ReplaceAll(w, " ", "-"))
		if !ok {
			continue
		}
		pr.Mode = m.mode
		if m.pkg != "" && pr.Price != nil && !unitGiven {
			pr.Price.Unit = m.pkg
		}
		break
	}
	verb := verbRe.MatchString(s)
	question := questionRe.MatchString(s)
	switch {
	case verb && (pr.Price != nil || pr.Platform != ""):
	case verb && !question:
	case !verb && pr.Price != nil && pr.Platform != "" && !question:
	default:
		return NotACommand{}
	}
	return pr
}

// countAround finds a count written next to a GPU ("两张3090", "8卡A100",
// "two 4090s", "4090 x2"); 1 if none.
func countAround(before, after string) int {
	if m := countBefore.FindStringSubmatch(before); m != nil {
		switch {
		case m[1] != "":
			if n := atoiSmall(m[1]); n >= 1 && n <= 64 {
				return n
			}
		case m[2] != "":
			return chineseCount[m[2]]
		case m[3] != "":
			return englishCount[m[3]]
		}
	}
	if m := countAfter.FindStringSubmatch(after); m != nil {
		if n := atoiSmall(m[1]); n >= 1 && n <= 64 {
			return n
		}
	}
	return 1
}

func atoiSmall(s string) int {
	n := 0
	for i := 0; i < len(s) && i < 3; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// findPlatform returns the first known platform named in s.
func findPlatform(s string) string {
	best, bestAt := "", len(s)+1
	for alias, key := range platformAliases {
		i := strings.Index(s, alias)
		if i < 0 {
			continue
		}
		end := i + len(alias)
		if i > 0 && isASCIIWord(s[i-1]) || end < len(s) && isASCIIWord(s[end]) {
			continue
		}
		if i < bestAt || i == bestAt && len(alias) > len(best) {
			best, bestAt = key, i
		}
	}
	return best
}

func isASCIIWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// findPrice returns the first money amount in s that has a currency or a
// time unit ("1.88元/小时", "$0.70/h", "每小时2.5元"), and whether its unit
// was written.
func findPrice(s string) (*PriceSpec, bool) {
	if m := unitFirstRe.FindStringSubmatch(s); m != nil {
		if d, err := ledger.ParseDecimal(m[3]); err == nil {
			ps := &PriceSpec{Amount: d, Unit: unitFirst[m[1]]}
			ps.Currency = freeCurrency(m[2], m[4])
			return ps, true
		}
	}
	for _, loc := range priceRe.FindAllStringSubmatchIndex(s, 64) {
		group := func(i int) string {
			if loc[2*i] < 0 {
				return ""
			}
			return s[loc[2*i]:loc[2*i+1]]
		}
		sym, num, word, unit := group(1), group(2), group(3), group(4)
		if sym == "" && word == "" && unit == "" {
			continue
		}
		// "2块4090" is two cards, not ¥2; "h100" is not a price per hour.
		if end := loc[1]; end < len(s) && isASCIIWord(s[end]) {
			continue
		}
		if loc[0] > 0 && isASCIIWord(s[loc[0]-1]) && sym == "" {
			continue
		}
		d, err := ledger.ParseDecimal(num)
		if err != nil {
			continue
		}
		ps := &PriceSpec{Amount: d, Unit: ledger.UnitHour, Currency: freeCurrency(sym, word)}
		if unit != "" {
			u, ok := timeUnits[unit]
			if !ok {
				continue
			}
			ps.Unit = u
		}
		return ps, unit != ""
	}
	return nil, false
}

func freeCurrency(sym, word string) ledger.Currency {
	if sym != "" {
		c, _ := cutCurrencyPrefix(sym)
		return c
	}
	if word == "bucks" {
		return ledger.USD
	}
	return currencyWords[word]
}
