package command

import (
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

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
			`(?:\s*(?:/|per|an|a|every|每|一)\s*(个小时|小时|钟头|时|hour|hr|h|天|日|day|d|周|星期|week|wk|个月|月|month|mo|分钟|minute|min|秒|second|sec|s)\b?|\s*(hourly|daily|weekly|monthly)\b)?`)
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

// parseFree reads normalised free text at instant now in the user's zone
// loc: a request for help, a question that is a command's word ("status",
// "余额"), a stop, resume or release in words, a rental described in
// words, or NotACommand.
func parseFree(s string, now time.Time, loc *time.Location) Command {
	s = strings.TrimSpace(s)
	if freeHelp[strings.ToLower(s)] {
		return HelpCmd{}
	}
	if c, ok := freeQuestion(s, now, loc); ok {
		return c
	}
	// at is zero when the text gives no time, or one that has not
	// happened yet (found, not ok).
	at, rest, found, ok := findFreeTime(s, now, loc)
	if c, isChange := freeChange(rest); isChange {
		if found && !ok {
			return NotACommand{} // "box1 关机 今晚10点": not something that happened
		}
		c.At = at
		return c
	}
	c := freeRent(strings.ToLower(rest))
	if pr, isRent := c.(ProposedRentCmd); isRent {
		// A start time in the future is left out: the proposal then shows
		// the message's time, for the user to correct.
		pr.At = at
		return pr
	}
	return c
}

// freeRent reads lower-case free text without its time as a rental, or
// NotACommand.
func freeRent(s string) Command {
	s = brandSpace.ReplaceAllString(s, "$1")
	s, perCard := cutPerCardWords(s)
	var pr ProposedRentCmd
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
	if pr.Platform == "" {
		pr.Platform = namedPlatform(s)
	}
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
	if perCard && pr.Price != nil && pr.GPUCount > 1 {
		each := *pr.Price
		total, ok := mulCount(each.Amount, pr.GPUCount)
		if !ok {
			pr.Price = nil // too large to be a price: the proposal asks for one
		} else {
			pr.PerCard = &each
			pr.Price = &PriceSpec{Amount: total, Unit: each.Unit, Currency: each.Currency}
		}
	}
	return pr
}

// countAround finds a count written next to a GPU ("两张3090", "8卡A100",
// "two 4090s", "4090 x2"); 1 if none.
func countAround(before, after string) int {
	if m := countBefore.FindStringSubmatch(before); m != nil {
		switch {
		case m[1] != "":
			if n := atoiSmall(m[1]); n >= ledger.MinGPUCount && n <= ledger.MaxGPUCount {
				return n
			}
		case m[2] != "":
			return chineseCount[m[2]]
		case m[3] != "":
			return englishCount[m[3]]
		}
	}
	if m := countAfter.FindStringSubmatch(after); m != nil {
		if n := atoiSmall(m[1]); n >= ledger.MinGPUCount && n <= ledger.MaxGPUCount {
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
	for _, n := range ledger.PlatformNames() {
		alias, key := n.Name, n.Key
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
		if adv := group(5); adv != "" {
			unit = strings.TrimPrefix(unitAdverbs[adv], "/") // "1.88 hourly": a unit, not a mode
		}
		if sym == "" && word == "" && unit == "" {
			continue
		}
		// "2块4090" is two cards, not ¥2; "h100" is not a price per hour.
		if end := loc[1]; end < len(s) && isASCIIWord(s[end]) {
			continue
		}
		// The number must not end a word ("h100"); the match may begin
		// with the spaces before it ("autodl 1.88/hr").
		if numAt := loc[4]; sym == "" && numAt > 0 && isASCIIWord(s[numAt-1]) {
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

// mulCount returns d × n exactly, or false when the product does not fit
// a ledger.Decimal (a price said to be per card, times the cards).
func mulCount(d ledger.Decimal, n int) (ledger.Decimal, bool) {
	r := d.Rat()
	r.Mul(r, new(big.Rat).SetInt64(int64(n)))
	out, err := ledger.ParseDecimal(r.FloatString(ledger.MaxDecimalScale))
	if err != nil || out.Rat().Cmp(r) != 0 {
		return ledger.Decimal{}, false
	}
	return out, true
}

// --- per-card prices ---------------------------------------------------------

var (
	// perCardCN are Chinese per-card markers, glued to the price or a
	// path segment of it: "每张$1.64/h", "每卡3元/小时", "1.5元/卡/小时".
	perCardCN = []string{"每张", "每卡", "每块", "单卡", "/卡", "/张"}
	// perCardEN are English ones: "$0.35/h each", "per card", "$1.64/gpu/h".
	perCardEN = regexp.MustCompile(`(?:^|[^a-z])(each|apiece|per[ -]card|per[ -]gpu|/card|/gpu)(?:[^a-z]|$)`)
)

// cutPerCardWords removes the per-card markers from lower-case text, so
// the price reads as written, and reports whether there was one.
func cutPerCardWords(s string) (string, bool) {
	found := false
	for _, w := range perCardCN {
		if strings.Contains(s, w) {
			s, found = strings.ReplaceAll(s, w, ""), true
		}
	}
	if !strings.Contains(s, "each") && !strings.Contains(s, "apiece") && !strings.Contains(s, "per") &&
		!strings.Contains(s, "/card") && !strings.Contains(s, "/gpu") {
		return s, found
	}
	for i := 0; i < 8; i++ { // matches may share their boundary character
		loc := perCardEN.FindStringSubmatchIndex(s)
		if loc == nil {
			break
		}
		repl := " "
		if s[loc[2]] == '/' {
			repl = "" // "1.64/gpu/h" → "1.64/h"
		}
		s, found = s[:loc[2]]+repl+s[loc[3]:], true
	}
	return s, found
}

// perCardWord reports whether a /rent token says the price is per card:
// "each", "per-card" (merged from "per card"), "每卡", "每张", "单卡".
func perCardWord(tok string) bool {
	switch strings.ToLower(tok) {
	case "each", "apiece", "per-card", "per-gpu", "每卡", "每张", "每块", "单卡":
		return true
	}
	return false
}

// cutPerCardPrice removes a per-card segment from a /rent price token:
// "1.64/gpu/h" → "1.64/h", "1.64元/卡/小时" → "1.64元/小时", "1.88/h/card"
// → "1.88/h", "每卡2/h" → "2/h", "2每卡" → "2".
func cutPerCardPrice(tok string) (string, bool) {
	low := strings.ToLower(tok)
	for _, p := range []string{"每卡", "每张", "单卡"} {
		if rest, ok := strings.CutPrefix(tok, p); ok && rest != "" {
			return rest, true
		}
		if rest, ok := strings.CutSuffix(tok, p); ok && rest != "" {
			return rest, true // "2 每卡", merged as "2每卡"
		}
	}
	for _, seg := range []string{"/卡", "/张", "/card", "/gpu"} {
		i := strings.Index(low, seg)
		if i <= 0 {
			continue
		}
		end := i + len(seg)
		if end == len(low) || low[end] == '/' {
			return tok[:i] + tok[end:], true
		}
	}
	return tok, false
}

// --- platforms named in words ------------------------------------------------

var (
	// onPlatform is "on NAME" (English) or "在NAME租" (Chinese) for a
	// platform the profiles do not know.
	onPlatform = regexp.MustCompile(`(?:^|\s)on\s+([a-z][a-z0-9._-]{0,31})(?:[\s,;:!?]|$)|在\s*([a-z][a-z0-9._-]{0,31})\s*(?:上)?\s*租`)
	// notPlatforms are words that follow "on" without being a platform.
	notPlatforms = map[string]bool{
		"demand": true, "spot": true, "the": true, "a": true, "an": true, "my": true, "our": true,
		"it": true, "this": true, "that": true, "top": true, "sale": true, "discount": true,
		"credit": true, "credits": true, "trial": true, "average": true, "hold": true, "time": true,
		"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
		"saturday": true, "sunday": true, "today": true, "yesterday": true, "per": true, "at": true,
		"for": true, "and": true,
	}
)

// namedPlatform returns a platform named after "on" or "在…租" that is not a
// known one ("rented a 4090 on mycloud"), or "".
func namedPlatform(s string) string {
	if !strings.Contains(s, "on") && !strings.Contains(s, "在") {
		return ""
	}
	m := onPlatform.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	name := strings.TrimRight(m[1]+m[2], ".-")
	if name == "" || notPlatforms[name] || ledger.ValidateName(name) != nil {
		return ""
	}
	if _, _, isGPU := parseGPU(name); isGPU {
		return ""
	}
	return name
}

// --- questions in words ------------------------------------------------------

// freeQuestions are the command words that, alone (or with their
// arguments), ask the same question without a slash: "status", "余额".
// Only questions: a word that writes ("balance autodl 67") needs its slash.
var freeQuestions = map[string]string{
	"status": "status", "list": "status", "ls": "status", "状态": "status", "列表": "status",
	"balance": "balance", "balances": "balance", "余额": "balance",
	"spend": "spend", "花费": "spend", "账单": "spend",
	"summary": "summary", "总结": "summary", "日报": "summary",
}

// freeQuestion reads "status", "Status?", "余额", "spend today" as the
// command they name, when that command only reads.
func freeQuestion(s string, now time.Time, loc *time.Location) (Command, bool) {
	s = strings.TrimRight(s, "?？!. ")
	first, rest, _ := strings.Cut(s, " ")
	word, ok := freeQuestions[strings.ToLower(first)]
	if !ok {
		return nil, false
	}
	c, err := Parse("/"+word+" "+rest, now, loc)
	if err != nil {
		return nil, false
	}
	switch c := c.(type) {
	case StatusCmd, SpendCmd, SummaryCmd:
		return c, true
	case BalanceCmd:
		if !c.Set {
			return c, true
		}
	}
	return nil, false
}

// --- stop, resume and release in words ---------------------------------------

var (
	// changeEN: "stopped box1", "I just released box2", "stop box1",
	// "box1 is stopped", "box1 released".
	changeEN = regexp.MustCompile(`(?i)^(?:(?:i|we)\s+)?(?:(?:just|already|have|had|please)\s+)*` +
		`(stop|stopped|pause|paused|shut\s*down|turned\s+off|turn\s+off|powered\s+off|power\s+off|` +
		`resume|resumed|restart|restarted|unpause|unpaused|turned\s+on|turn\s+on|powered\s+on|power\s+on|` +
		`release|released|terminate|terminated|destroy|destroyed)\s+(?:the\s+)?(\S+)$` +
		`|^(?:the\s+)?(\S+)\s+(?:(?:is|was|has|been|got|just|now)\s+)*` +
		`(stopped|paused|shut\s*down|turned\s+off|powered\s+off|resumed|restarted|unpaused|turned\s+on|powered\s+on|released|terminated|destroyed)(?:\s+now)?$`)
	// changeZH: "释放box2", "释放了 box2", "把box2释放了", "box2关机了",
	// "我把甲关机了", "box1开机了".
	changeZH = regexp.MustCompile(`^(?:我)?(?:刚刚|刚才|刚|已经|已)?\s*(释放|退租|退掉|销毁|关机|关掉|停机|停止|停掉|暂停|停|关|开机|恢复|重新开机|重开)(?:了|掉了|掉)?\s*(\S+)$` +
		`|^(?:我)?(?:刚刚|刚才|刚|已经|已)?(?:把|将)?\s*(\S+?)\s*(?:给)?(?:已经|已|刚刚|刚|也)?\s*(释放|退租|退掉|销毁|关机|关掉|停机|停止|停掉|暂停|停|关|开机|恢复|重新开机|重开)(?:了|掉了|掉|啦)?(?:吧)?$`)
	// changeStemsEN are in every verb of changeEN.
	changeStemsEN = []string{"stop", "paus", "shut", "turn", "power", "resum", "restart", "releas", "termin", "destroy"}
	// notNames are words after a verb that are not a rental: "stop it".
	notNames = map[string]bool{"it": true, "that": true, "this": true, "them": true, "all": true,
		"everything": true, "now": true, "me": true, "here": true, "there": true, "i": true, "we": true,
		"you": true, "he": true, "she": true, "they": true}
)

// changeEvent maps a verb of changeEN or changeZH to the event it asks for.
func changeEvent(verb string) (ledger.EventKind, bool) {
	v := strings.Join(strings.Fields(strings.ToLower(verb)), " ")
	switch v {
	case "stop", "stopped", "pause", "paused", "shut down", "shutdown", "turned off", "turn off", "powered off", "power off",
		"关机", "关掉", "停机", "停止", "停掉", "暂停", "停", "关":
		return ledger.EventStop, true
	case "resume", "resumed", "restart", "restarted", "unpause", "unpaused", "turned on", "turn on", "powered on", "power on",
		"开机", "恢复", "重新开机", "重开":
		return ledger.EventResume, true
	case "release", "released", "terminate", "terminated", "destroy", "destroyed", "释放", "退租", "退掉", "销毁":
		return ledger.EventRelease, true
	}
	return "", false
}

// freeChange reads a whole message that stops, resumes or releases one
// rental by name. The name keeps its case, as the ledger does.
func freeChange(s string) (ProposedChangeCmd, bool) {
	s = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ".!~。！"))
	if s == "" || len(s) > 120 {
		return ProposedChangeCmd{}, false
	}
	// The patterns run only on text with one of their verbs in it.
	var m []string
	low := strings.ToLower(s)
	for _, stem := range changeStemsEN {
		if strings.Contains(low, stem) {
			m = changeEN.FindStringSubmatch(s)
			break
		}
	}
	if m == nil && strings.ContainsAny(s, "释退销关停暂开恢重") {
		m = changeZH.FindStringSubmatch(s)
	}
	if m == nil {
		return ProposedChangeCmd{}, false
	}
	verb, name := m[1]+m[4], m[2]+m[3]
	name = strings.TrimRight(name, ".,!?")
	ev, ok := changeEvent(verb)
	// "在autodl租了4090关机了" tells of a rental, not of one named so.
	if !ok || notNames[strings.ToLower(name)] || strings.Contains(name, "租") || ledger.ValidateName(name) != nil {
		return ProposedChangeCmd{}, false
	}
	return ProposedChangeCmd{Event: ev, Name: name}, true
}

// --- times in words ----------------------------------------------------------

var (
	// timeDate: "2026-11-01 10:00", "2026/11/01".
	timeDate = regexp.MustCompile(`(?:^|[^0-9])(\d{4}[-/]\d{1,2}[-/]\d{1,2}(?:[ tT]\d{1,2}:\d{2}(?::\d{2})?)?)(?:[^0-9:]|$)`)
	// timeAgoZH: "3小时前", "半小时前", "两个小时之前", "40分钟前".
	timeAgoZH = regexp.MustCompile(`((?:\d+(?:\.\d+)?|[零一二两三四五六七八九十]{1,3})\s*(?:个)?\s*(?:秒钟|秒|分钟|分|小时|钟头|天|周|星期)|半\s*个?\s*(?:小时|钟头))\s*(?:之|以)?前`)
	// timeAgoEN: "2h ago", "90 minutes ago", "an hour ago", "half an hour ago".
	timeAgoEN = regexp.MustCompile(`(?i)(?:^|[^a-z0-9.])((\d+(?:\.\d+)?)\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)` +
		`|(an?|one|two|three|four|five|six|ten|twenty|thirty|half an?)\s+(seconds?|minutes?|mins?|hours?|days?))\s+ago\b`)
	// timeClockZH: "昨天晚上10点", "昨晚10点半", "今天早上9点", "下午3点", "昨天 23:00".
	timeClockZH = regexp.MustCompile(`(?:(今天|今日|昨天|昨日|前天|昨晚|今晚)\s*)?(?:(早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨|半夜)\s*)?` +
		`(?:(\d{1,2}|[零一二两三四五六七八九十]{1,3})\s*点\s*(?:(半)|(\d{1,2})\s*分?|([零一二三四五六七八九十]{1,3})\s*分)?|(\d{1,2}):(\d{2}))`)
	// timeClockEN: "this morning at 9", "yesterday at 10pm", "last night at
	// 11", "at 9:30", "9am". A bare "at 9" is not a time ("at 2 dollars").
	timeClockEN = regexp.MustCompile(`(?i)\b(?:(today|yesterday|tonight|this morning|this afternoon|this evening|last night|yesterday morning|yesterday afternoon|yesterday evening)\s+at\s+(\d{1,2})(?::(\d{2}))?(?:\s*(am|pm))?` +
		`|(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)|at\s+(\d{1,2}):(\d{2}))\b`)
)

// wordCount are the English numbers of timeAgoEN.
var wordCount = map[string]string{"a": "1", "an": "1", "one": "1", "two": "2", "three": "3", "four": "4",
	"five": "5", "six": "6", "ten": "10", "twenty": "20", "thirty": "30"}

// findFreeTime finds the first time written in free text: a date, a
// duration ago ("3小时前", "2h ago"), or a clock with an optional day and
// part of the day ("昨天晚上10点", "this morning at 9"). It returns the
// instant, s without the phrase, whether a phrase was found, and whether
// it is usable: not in the future (a clock without a day that would be
// means yesterday, as for /rent), not before 2000. The instant is zero
// unless ok.
func findFreeTime(s string, now time.Time, loc *time.Location) (at time.Time, rest string, found, ok bool) {
	cut := func(a, b int) string { return strings.TrimSpace(s[:a] + " " + s[b:]) }
	usable := func(t time.Time, ok bool) (time.Time, bool) {
		if !ok || t.After(now.Add(futureSlack)) || t.Year() < 2000 {
			return time.Time{}, false
		}
		return t.In(loc), true
	}
	// Each pattern runs only when a word it needs is there: Go's regexps
	// cost their size times the text, and most messages have no time.
	low := strings.ToLower(s)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(low, w) {
				return true
			}
		}
		return false
	}
	find := func(re *regexp.Regexp, words ...string) []int {
		if !has(words...) {
			return nil
		}
		return re.FindStringSubmatchIndex(s)
	}
	clock := func(re *regexp.Regexp, zh bool, words ...string) []int {
		if !has(words...) {
			return nil
		}
		return firstClock(re, s, zh)
	}
	if m := find(timeDate, "-", "/"); m != nil {
		t, good := usable(parseTime(s[m[2]:m[3]], now, loc))
		return t, cut(m[2], m[3]), true, good
	}
	if m := find(timeAgoZH, "前"); m != nil {
		d, good := parseDur(strings.Join(strings.Fields(s[m[2]:m[3]]), ""))
		t, good := usable(now.Add(-d), good)
		return t, cut(m[0], m[1]), true, good
	}
	if m := find(timeAgoEN, "ago"); m != nil {
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return strings.ToLower(s[m[2*i]:m[2*i+1]])
		}
		num, unit := g(2), g(3)
		if num == "" {
			num, unit = wordCount[g(4)], g(5)
			if strings.HasPrefix(g(4), "half") {
				num = "0.5"
			}
		}
		d, good := parseDur(num + unit)
		t, good := usable(now.Add(-d), good)
		return t, cut(m[2], m[1]), true, good
	}
	if m := clock(timeClockEN, false, "am", "pm", "at "); m != nil {
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return strings.ToLower(s[m[2*i]:m[2*i+1]])
		}
		day, hour, min, ampm := g(1), g(2), g(3), g(4)
		switch {
		case g(5) != "":
			hour, min, ampm = g(5), g(6), g(7)
		case g(8) != "":
			hour, min = g(8), g(9)
		}
		h, mi, good := clockParts(hour, min)
		offset, explicit := 0, day != ""
		if strings.HasPrefix(day, "yesterday") {
			offset = -1
		}
		if good {
			switch {
			case ampm == "am" && h == 12:
				h = 0
			case ampm == "pm" && h < 12:
				h += 12
			case ampm != "":
			case day == "last night":
				offset = -1
				switch {
				case h == 12:
					h = 24
				case h < 5:
					h += 24 // "last night at 1" is this morning
				default:
					h += 12
				}
			case strings.HasSuffix(day, "afternoon") || strings.HasSuffix(day, "evening") || day == "tonight":
				if h < 12 {
					h += 12
				}
			}
		}
		t, good := usable(clockAt(now, loc, offset, h, mi, explicit), good)
		return t, cut(m[0], m[1]), true, good
	}
	if m := clock(timeClockZH, true, "点", ":"); m != nil {
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		day, part := g(1), g(2)
		hour, min := g(3), "0"
		switch {
		case hour == "":
			hour, min = g(7), g(8)
		case g(4) != "":
			min = "30"
		case g(5) != "":
			min = g(5)
		case g(6) != "":
			min = cnNumerals(g(6))
		}
		offset, explicit := 0, day != ""
		switch day {
		case "昨天", "昨日":
			offset = -1
		case "前天":
			offset = -2
		case "昨晚":
			offset, part = -1, orPart(part, "晚上")
		case "今晚":
			part = orPart(part, "晚上")
		}
		h, mi, good := clockParts(cnNumerals(hour), min)
		if good {
			switch part {
			case "中午":
				if h < 3 {
					h += 12
				}
			case "下午", "傍晚", "晚上", "夜里":
				if h <= 12 {
					h += 12 // 晚上12点 is midnight, the next day's 00:00
				}
			case "凌晨", "半夜":
				if h == 12 {
					h = 0
				}
			}
		}
		t, good := usable(clockAt(now, loc, offset, h, mi, explicit), good)
		return t, cut(m[0], m[1]), true, good
	}
	return time.Time{}, s, false, false
}

// firstClock returns the first match of a clock pattern that does not
// continue a number or a word ("4090:30", "a10 9pm" are not times). With
// zh, an hour in Chinese numerals needs a day or a part of the day: "便宜
// 一点" is "a bit cheaper", not one o'clock.
func firstClock(re *regexp.Regexp, s string, zh bool) []int {
	for _, m := range re.FindAllStringSubmatchIndex(s, 16) {
		if c := s[m[0]]; m[0] > 0 && c >= '0' && c <= '9' {
			if p := s[m[0]-1]; isASCIIWord(p) || p >= 'A' && p <= 'Z' || strings.IndexByte(".:/$", p) >= 0 {
				continue
			}
		}
		if zh && m[6] >= 0 && !isDigits(s[m[6]:m[7]]) && m[2] < 0 && m[4] < 0 {
			continue
		}
		return m
	}
	return nil
}

func orPart(part, def string) string {
	if part == "" {
		return def
	}
	return part
}

// clockParts reads an hour 0..23 and a minute 0..59 ("" is 0).
func clockParts(hour, min string) (h, m int, ok bool) {
	if min == "" {
		min = "0"
	}
	if !isDigits(hour) || !isDigits(min) || len(hour) > 2 || len(min) > 2 {
		return 0, 0, false
	}
	h, _ = strconv.Atoi(hour)
	m, _ = strconv.Atoi(min)
	return h, m, h <= 23 && m <= 59
}

// clockAt is h:m on the day offset days from now's in loc (h may be 24 or
// more: the next day). Without an explicit day, a time later than now
// means yesterday's.
func clockAt(now time.Time, loc *time.Location, offset, h, m int, explicit bool) time.Time {
	local := now.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day()+offset, h, m, 0, 0, loc)
	if !explicit && t.After(now.Add(futureSlack)) {
		t = time.Date(local.Year(), local.Month(), local.Day()+offset-1, h, m, 0, 0, loc)
	}
	return t
}
