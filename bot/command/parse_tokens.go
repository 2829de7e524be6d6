package command

import (
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file recognises single tokens by their shape: GPUs, prices, sizes,
// amounts and modes (parse_time.go: durations and times). Each recogniser
// is a pure function of the token (and, for times, of now and the user's
// zone) and never panics; it reports whether the token has its shape.

// Normalize prepares a message for tokenising: full-width ASCII forms
// (common with Chinese input methods) become ASCII, '×' becomes 'x', control
// characters become spaces and invisible format characters (direction
// marks, zero-width joiners) are dropped. s must be valid UTF-8.
func Normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
			b.WriteRune(r - 0xFF01 + '!')
		case r == 0x3000: // ideographic space
			b.WriteByte(' ')
		case r == '×':
			b.WriteByte('x')
		case r == '，' || r == '、' || r == '。' || r == '；':
			b.WriteByte(' ')
		case unicode.IsControl(r):
			b.WriteByte(' ')
		case unicode.Is(unicode.Cf, r):
			// drop: U+200B..U+200F, U+202A..U+202E, U+2066..U+2069, U+FEFF
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// --- numbers ---------------------------------------------------------------

// cutNumber splits s into a leading plain decimal ("1.88", "-2", ".5") and
// the rest. ok is false when s does not start with a number.
func cutNumber(s string) (num, rest string, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		fd := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			fd++
		}
		if fd > 0 {
			i = j
			digits += fd
		}
	}
	if digits == 0 {
		return "", s, false
	}
	return s[:i], s[i:], true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// chineseCount maps the Chinese numerals used for GPU counts.
var chineseCount = map[string]int{
	"一": 1, "两": 2, "二": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
	"九": 9, "十": 10, "十六": 16,
}

// mulPow10 returns d × 10^n exactly, or false when the result does not fit
// a ledger.Decimal.
func mulPow10(d ledger.Decimal, n int) (ledger.Decimal, bool) {
	r := d.Rat()
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(n))), nil))
	if n >= 0 {
		r.Mul(r, p)
	} else {
		r.Quo(r, p)
	}
	s := r.FloatString(ledger.MaxDecimalScale)
	out, err := ledger.ParseDecimal(s)
	if err != nil || out.Rat().Cmp(r) != 0 {
		return ledger.Decimal{}, false
	}
	return out, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// --- currency --------------------------------------------------------------

var currencyPrefixes = []struct {
	p string
	c ledger.Currency
}{
	{"us$", ledger.USD}, {"hk$", "HKD"}, {"s$", "SGD"}, {"$", ledger.USD},
	{"¥", ledger.CNY}, {"￥", ledger.CNY}, {"€", ledger.EUR}, {"£", "GBP"}, {"₹", "INR"}, {"₩", "KRW"},
}

var currencyWords = map[string]ledger.Currency{
	"元": ledger.CNY, "块": ledger.CNY, "块钱": ledger.CNY, "rmb": ledger.CNY, "cny": ledger.CNY,
	"yuan": ledger.CNY, "人民币": ledger.CNY, "¥": ledger.CNY, "￥": ledger.CNY,
	"usd": ledger.USD, "dollar": ledger.USD, "dollars": ledger.USD, "美元": ledger.USD, "美金": ledger.USD,
	"刀": ledger.USD, "$": ledger.USD, "eur": ledger.EUR, "euro": ledger.EUR, "euros": ledger.EUR,
	"欧元": ledger.EUR, "gbp": "GBP", "hkd": "HKD", "sgd": "SGD", "jpy": "JPY", "krw": "KRW",
	"inr": "INR", "twd": "TWD",
}

// cutCurrencyPrefix removes a leading currency symbol.
func cutCurrencyPrefix(s string) (ledger.Currency, string) {
	for _, cp := range currencyPrefixes {
		if strings.HasPrefix(s, cp.p) {
			return cp.c, s[len(cp.p):]
		}
	}
	return "", s
}

// cutCurrencyWord removes a currency word at the start of rest (after the
// number): "元/小时" → CNY, "/小时".
func cutCurrencyWord(rest string) (ledger.Currency, string) {
	best := ""
	for w := range currencyWords {
		if len(w) > len(best) && strings.HasPrefix(rest, w) {
			// A word must end at the end, at '/' or at a non-letter.
			tail := rest[len(w):]
			if tail != "" {
				r, _ := utf8.DecodeRuneInString(tail)
				if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
					continue
				}
			}
			best = w
		}
	}
	if best == "" {
		return "", rest
	}
	return currencyWords[best], rest[len(best):]
}

// --- units -----------------------------------------------------------------

// timeUnits maps a price's time unit word to the ledger's Unit. "m" is
// absent on purpose: in a price it could be a minute or a month.
var timeUnits = map[string]ledger.Unit{
	"s": ledger.UnitSecond, "sec": ledger.UnitSecond, "secs": ledger.UnitSecond, "second": ledger.UnitSecond,
	"seconds": ledger.UnitSecond, "秒": ledger.UnitSecond,
	"min": ledger.UnitMinute, "mins": ledger.UnitMinute, "minute": ledger.UnitMinute, "minutes": ledger.UnitMinute,
	"分": ledger.UnitMinute, "分钟": ledger.UnitMinute,
	"h": ledger.UnitHour, "hr": ledger.UnitHour, "hrs": ledger.UnitHour, "hour": ledger.UnitHour,
	"hours": ledger.UnitHour, "时": ledger.UnitHour, "钟头": ledger.UnitHour, "小时": ledger.UnitHour, "个小时": ledger.UnitHour,
	"d": ledger.UnitDay, "day": ledger.UnitDay, "days": ledger.UnitDay, "天": ledger.UnitDay, "日": ledger.UnitDay,
	"w": ledger.UnitWeek, "wk": ledger.UnitWeek, "week": ledger.UnitWeek, "weeks": ledger.UnitWeek,
	"周": ledger.UnitWeek, "星期": ledger.UnitWeek,
	"mo": ledger.UnitMonth, "mon": ledger.UnitMonth, "month": ledger.UnitMonth, "months": ledger.UnitMonth,
	"月": ledger.UnitMonth, "个月": ledger.UnitMonth,
}

func storageUnit(u ledger.Unit) (ledger.StorageUnit, bool) {
	switch u {
	case ledger.UnitHour:
		return ledger.PerGBHour, true
	case ledger.UnitDay:
		return ledger.PerGBDay, true
	case ledger.UnitMonth:
		return ledger.PerGBMonth, true
	}
	return "", false
}

// priceParts is the common shape of prices and amounts: [symbol] number
// [currency word] [/seg/seg...].
type priceParts struct {
	amount   ledger.Decimal
	currency ledger.Currency
	segs     []string // unit path after the number, lower case, e.g. ["gb", "day"]
}

// splitPrice parses a lower-cased token as [symbol][-]number[word][/a/b].
// "每" is accepted as '/' ("1.88元每小时"). ok is false if the token does not
// start like an amount or is malformed (a huge number, two different
// currencies).
func splitPrice(s string) (p priceParts, ok bool) {
	neg := false
	if strings.HasPrefix(s, "-") {
		neg = true
		s = s[1:]
	}
	cur, s := cutCurrencyPrefix(s)
	num, rest, isNum := cutNumber(s)
	if !isNum || strings.HasPrefix(num, "+") || strings.HasPrefix(num, "-") && neg {
		return p, false
	}
	if neg {
		num = "-" + num
	}
	d, err := ledger.ParseDecimal(num)
	if err != nil {
		return p, false
	}
	p.amount = d
	if rest == "" {
		p.currency = cur
		return p, true
	}
	c2, rest := cutCurrencyWord(rest)
	if c2 != "" {
		if cur != "" && cur != c2 {
			return p, false
		}
		cur = c2
	}
	p.currency = cur
	if rest == "" {
		return p, true
	}
	rest = strings.ReplaceAll(rest, "每", "/")
	if !strings.HasPrefix(rest, "/") {
		return p, false
	}
	p.segs = strings.Split(rest[1:], "/")
	for _, sg := range p.segs {
		if sg == "" {
			return p, false
		}
	}
	return p, true
}

// parseComputePrice recognises "1.88", "1.88/h", "$21.52/h", "1.88元/小时",
// "70/day", "0.7usd/h". No unit means per hour.
func parseComputePrice(tok string) (PriceSpec, bool) {
	p, ok := splitPrice(strings.ToLower(tok))
	if !ok || len(p.segs) > 1 {
		return PriceSpec{}, false
	}
	u := ledger.UnitHour
	if len(p.segs) == 1 {
		var known bool
		if u, known = timeUnits[p.segs[0]]; !known {
			return PriceSpec{}, false
		}
	}
	return PriceSpec{Amount: p.amount, Unit: u, Currency: p.currency}, true
}

// looksLikePrice reports whether tok starts like money (a currency symbol or
// a number followed by a currency word or a '/'), so a malformed one gets a
// price error rather than "unexpected word".
func looksLikePrice(tok string) bool {
	s := strings.ToLower(tok)
	s = strings.TrimPrefix(s, "-")
	if c, r := cutCurrencyPrefix(s); c != "" {
		return r != "" && r[0] >= '0' && r[0] <= '9' || r != "" && r[0] == '.'
	}
	_, rest, ok := cutNumber(s)
	if !ok {
		return false
	}
	if strings.HasPrefix(rest, "/") || strings.Contains(rest, "/") && !strings.ContainsAny(rest, ":-") {
		return true
	}
	c, _ := cutCurrencyWord(rest)
	return c != ""
}

// parseStoragePrice recognises "0.0066/GB/day", "0.1/gb/month", "$0.07/GB/mo",
// "0.0066元/GB/天".
func parseStoragePrice(tok string) (StoragePrice, bool) {
	p, ok := splitPrice(strings.ToLower(tok))
	if !ok || len(p.segs) != 2 || !isGB(p.segs[0]) {
		return StoragePrice{}, false
	}
	u, known := timeUnits[p.segs[1]]
	if !known {
		return StoragePrice{}, false
	}
	su, ok := storageUnit(u)
	if !ok {
		return StoragePrice{}, false
	}
	return StoragePrice{Amount: p.amount, Unit: su, Currency: p.currency}, true
}

func isGB(s string) bool { return s == "gb" || s == "g" || s == "gib" }

// parseTrafficPrice recognises "0.8/GB", "$0.01/gb", "0.8元/GB".
func parseTrafficPrice(tok string) (ledger.Decimal, ledger.Currency, bool) {
	p, ok := splitPrice(strings.ToLower(tok))
	if !ok || len(p.segs) != 1 || !isGB(p.segs[0]) {
		return ledger.Decimal{}, "", false
	}
	return p.amount, p.currency, true
}

// parseAmount recognises money without a unit: "100", "¥100", "$20.50",
// "100元", "-5", "20usd".
func parseAmount(tok string) (Amount, bool) {
	p, ok := splitPrice(strings.ToLower(tok))
	if !ok || len(p.segs) > 0 {
		return Amount{}, false
	}
	return Amount{Value: p.amount, Currency: p.currency}, true
}

// parseSize recognises "200GB", "1.5TB", "500G", "200" (GB), "512MB".
// Sizes are in GB as the platforms quote them, TB = 1000 GB, at most
// ledger.MaxSizeGB; the ledger counts a GB as 2^30 bytes (see gibBytes).
func parseSize(tok string) (ledger.Decimal, bool) {
	s := strings.ToLower(tok)
	num, rest, ok := cutNumber(s)
	if !ok || strings.HasPrefix(num, "-") || strings.HasPrefix(num, "+") {
		return ledger.Decimal{}, false
	}
	d, err := ledger.ParseDecimal(num)
	if err != nil {
		return ledger.Decimal{}, false
	}
	switch rest {
	case "", "g", "gb", "gib":
	case "t", "tb", "tib":
		if d, ok = mulPow10(d, 3); !ok {
			return ledger.Decimal{}, false
		}
	case "m", "mb", "mib":
		if d, ok = mulPow10(d, -3); !ok {
			return ledger.Decimal{}, false
		}
	default:
		return ledger.Decimal{}, false
	}
	if d.Cmp(ledger.MaxSizeGB) > 0 { // the ledger's bound
		return ledger.Decimal{}, false
	}
	return d, true
}

// looksLikeSize reports whether tok is a number with a size unit.
func looksLikeSize(tok string) bool {
	_, rest, ok := cutNumber(strings.ToLower(tok))
	if !ok {
		return false
	}
	switch rest {
	case "g", "gb", "gib", "t", "tb", "tib", "m", "mb", "mib":
		return true
	}
	return false
}

// --- modes -----------------------------------------------------------------

// modeInfo is a recognised billing mode; pkg is the package period implied
// by 包日/包周/包月 ("" otherwise).
type modeInfo struct {
	mode ledger.Mode
	pkg  ledger.Unit
}

var modeWords = map[string]modeInfo{
	"per-second": {ledger.PerSecond, ""}, "persecond": {ledger.PerSecond, ""}, "per_second": {ledger.PerSecond, ""},
	"by-second": {ledger.PerSecond, ""}, "按秒": {ledger.PerSecond, ""}, "按秒计费": {ledger.PerSecond, ""},
	"per-minute": {ledger.PerMinute, ""}, "perminute": {ledger.PerMinute, ""}, "per_minute": {ledger.PerMinute, ""},
	"by-minute": {ledger.PerMinute, ""}, "按分钟": {ledger.PerMinute, ""}, "按分": {ledger.PerMinute, ""}, "按分钟计费": {ledger.PerMinute, ""},
	"per-hour": {ledger.PerHour, ""}, "perhour": {ledger.PerHour, ""}, "per_hour": {ledger.PerHour, ""},
	"hourly": {ledger.PerHour, ""}, "by-hour": {ledger.PerHour, ""}, "按小时": {ledger.PerHour, ""}, "按时": {ledger.PerHour, ""},
	"按小时计费": {ledger.PerHour, ""}, "按量": {ledger.PerSecond, ""}, "按量计费": {ledger.PerSecond, ""},
	"always-on": {ledger.AlwaysOn, ""}, "alwayson": {ledger.AlwaysOn, ""}, "always_on": {ledger.AlwaysOn, ""},
	"包日": {ledger.AlwaysOn, ledger.UnitDay}, "包天": {ledger.AlwaysOn, ledger.UnitDay},
	"daily": {ledger.AlwaysOn, ledger.UnitDay}, "包周": {ledger.AlwaysOn, ledger.UnitWeek},
	"weekly": {ledger.AlwaysOn, ledger.UnitWeek}, "包月": {ledger.AlwaysOn, ledger.UnitMonth},
	"monthly": {ledger.AlwaysOn, ledger.UnitMonth},
}

func parseMode(tok string) (modeInfo, bool) {
	m, ok := modeWords[strings.ToLower(tok)]
	return m, ok
}

// --- GPUs ------------------------------------------------------------------

// gpuModels maps a model key (lower case, no spaces, dashes or vendor
// prefixes) to its normalised name.
var gpuModels = map[string]string{
	"5090": "RTX 5090", "5080": "RTX 5080", "5070ti": "RTX 5070 Ti", "5070": "RTX 5070",
	"4090": "RTX 4090", "4090d": "RTX 4090D", "4080super": "RTX 4080 SUPER", "4080s": "RTX 4080 SUPER",
	"4080": "RTX 4080", "4070tisuper": "RTX 4070 Ti SUPER", "4070ti": "RTX 4070 Ti", "4070super": "RTX 4070 SUPER",
	"4070": "RTX 4070", "4060ti": "RTX 4060 Ti", "4060": "RTX 4060",
	"3090ti": "RTX 3090 Ti", "3090": "RTX 3090", "3080ti": "RTX 3080 Ti", "3080": "RTX 3080",
	"3070ti": "RTX 3070 Ti", "3070": "RTX 3070", "3060ti": "RTX 3060 Ti", "3060": "RTX 3060",
	"2080ti": "RTX 2080 Ti", "2080super": "RTX 2080 SUPER", "2080": "RTX 2080", "2070": "RTX 2070",
	"1080ti": "GTX 1080 Ti", "1080": "GTX 1080", "titanrtx": "TITAN RTX", "titanxp": "TITAN Xp",
	"a2000": "RTX A2000", "a4000": "RTX A4000", "a4500": "RTX A4500", "a5000": "RTX A5000", "a6000": "RTX A6000",
	"6000ada": "RTX 6000 Ada", "a6000ada": "RTX 6000 Ada", "4000ada": "RTX 4000 Ada", "5000ada": "RTX 5000 Ada",
	"pro6000": "RTX PRO 6000", "rtxpro6000": "RTX PRO 6000",
	"b200": "B200", "b100": "B100", "gb200": "GB200", "gh200": "GH200",
	"h200": "H200", "h100": "H100", "h100nvl": "H100 NVL", "h800": "H800", "h20": "H20",
	"a100": "A100", "a800": "A800", "a40": "A40", "a30": "A30", "a16": "A16", "a10": "A10", "a10g": "A10G", "a2": "A2",
	"l40s": "L40S", "l40": "L40", "l20": "L20", "l4": "L4",
	"v100": "V100", "v100s": "V100S", "p100": "P100", "p40": "P40", "p4": "P4", "t4": "T4", "k80": "K80",
	"mi300x": "MI300X", "mi250x": "MI250X", "mi250": "MI250", "mi210": "MI210",
}

// KnownGPUs returns the normalised names of the GPU models the parser
// knows by name, in no particular order.
func KnownGPUs() []string {
	out := make([]string, 0, len(gpuModels))
	for _, name := range gpuModels {
		out = append(out, name)
	}
	return out
}

// gpuKeysByLen lists gpuModels' keys, longest first, for prefix matching.
var gpuKeysByLen = func() []string {
	ks := make([]string, 0, len(gpuModels))
	for k := range gpuModels {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if len(ks[i]) != len(ks[j]) {
			return len(ks[i]) > len(ks[j])
		}
		return ks[i] < ks[j]
	})
	return ks
}()

// gpuFormSuffixes are form factors that do not change the model name.
var gpuFormSuffixes = []string{"sxm5", "sxm4", "sxm", "pcie", "nvlink"}

// parseGPUModel normalises a model without a count: "rtx4090", "A100-80G",
// "3090ti", "L40S", "h100-sxm". It returns "" when the model is unknown.
func parseGPUModel(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' || r == ' ' || r == '.' {
			continue
		}
		b.WriteRune(r)
	}
	k := b.String()
	for _, p := range []string{"nvidia", "geforce", "tesla", "rtx", "gtx"} {
		k = strings.TrimPrefix(k, p)
	}
	if k == "" {
		return ""
	}
	if name := matchGPU(k); name != "" {
		return name
	}
	// plural: "4090s", "h100s" (but L40S is a model of its own, matched above)
	if strings.HasSuffix(k, "s") {
		return matchGPU(k[:len(k)-1])
	}
	return ""
}

func matchGPU(k string) string {
	if name, ok := gpuModels[k]; ok {
		return name
	}
	for _, key := range gpuKeysByLen {
		if !strings.HasPrefix(k, key) {
			continue
		}
		rest := k[len(key):]
		for _, f := range gpuFormSuffixes {
			rest = strings.TrimSuffix(rest, f)
		}
		if rest == "" {
			return gpuModels[key]
		}
		// memory: "80g", "80gb" (the g is required: "4090 2" is not a model)
		mem := strings.TrimSuffix(rest, "b")
		if !strings.HasSuffix(mem, "g") {
			return ""
		}
		mem = mem[:len(mem)-1]
		if isDigits(mem) && len(mem) <= 3 && mem[0] != '0' {
			return gpuModels[key] + " " + mem + "GB"
		}
		return ""
	}
	return ""
}

// parseGPU recognises a GPU with an optional count: "4090", "2x4090",
// "4090x2", "H100*8", "8xH100", "两张3090", "8卡A100". count is 0 for a
// count outside 1..64 (so the caller can say so).
func parseGPU(tok string) (model string, count int, ok bool) {
	s := strings.ToLower(tok)
	count = 1
	// Chinese count prefix: 两张, 2张, 一台, 8卡, 四块
	if i := strings.IndexAny(s, "张台卡块个"); i > 0 {
		_, size := utf8.DecodeRuneInString(s[i:])
		n := s[:i]
		c, cok := chineseCount[n]
		if !cok && isDigits(n) && len(n) <= 4 {
			c, _ = strconv.Atoi(n)
			cok = true
		}
		if cok {
			count = c
			s = s[i+size:]
		}
	}
	// "2x4090", "8*h100"
	if n, rest, found := cutCount(s, true); found {
		if m := parseGPUModel(rest); m != "" {
			return m, checkCount(n * count), true
		}
	}
	// "4090x2", "h100*8"
	if n, rest, found := cutCount(s, false); found {
		if m := parseGPUModel(rest); m != "" {
			return m, checkCount(n * count), true
		}
	}
	if m := parseGPUModel(s); m != "" {
		return m, checkCount(count), true
	}
	return "", 0, false
}

func checkCount(n int) int {
	if n < ledger.MinGPUCount || n > ledger.MaxGPUCount {
		return 0
	}
	return n
}

// cutCount splits "2x4090" (prefix) or "4090x2" (suffix) around 'x' or '*'.
func cutCount(s string, prefix bool) (n int, rest string, ok bool) {
	if prefix {
		i := strings.IndexAny(s, "x*")
		if i <= 0 || i > 4 || !isDigits(s[:i]) {
			return 0, "", false
		}
		n, _ = strconv.Atoi(s[:i])
		return n, s[i+1:], true
	}
	i := strings.LastIndexAny(s, "x*")
	if i < 0 || i == len(s)-1 || len(s)-i-1 > 4 || !isDigits(s[i+1:]) {
		return 0, "", false
	}
	n, _ = strconv.Atoi(s[i+1:])
	return n, s[:i], true
}
