package bot

import (
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// Limits on what Parse reads. Telegram caps a message at 4096 characters;
// a command needs far fewer words than MaxWords. Longer input gets a clear
// error (commands) or NotACommand (free text), after bounded work.
const (
	MaxCommandBytes = 4096
	MaxWords        = 64
	maxNoteRunes    = 200
)

// commandNames maps every accepted command word (lower case, without the
// slash) to its kind: the English names, short aliases and Chinese words.
// Telegram's menu only takes [a-z0-9_], but typed commands may be anything.
var commandNames = func() map[string]Kind {
	m := map[string]Kind{
		"list": KindStatus, "ls": KindStatus, "auto_release": KindAutoRelease, "top_up": KindTopup,
		"recharge": KindTopup, "volume": KindStorage, "disk": KindStorage, "cost": KindSpend,
		"config": KindSettings, "set": KindSettings, "terminate": KindRelease, "destroy": KindRelease,
		"pause": KindStop, "commands": KindHelp,
	}
	for _, h := range helpItems {
		m[string(h.kind)] = h.kind
		for _, a := range h.aliases {
			m[a] = h.kind
		}
	}
	return m
}()

// Parse reads one chat message in the user's zone loc at instant now. A
// command ("/rent box1 autodl 4090 1.88/h", also "/rent@MyBot ...", in any
// case) becomes its typed Command or a *ParseError; free text that looks
// like a rental becomes a ProposedRent, one that stops, resumes or
// releases a rental a ProposedChange, a question's word ("status", "余额")
// that question's command; any other free text is NotACommand (never an
// error). Parse does no I/O except time.LoadLocation for /settings tz=,
// and its work is bounded by MaxCommandBytes.
func Parse(text string, now time.Time, loc *time.Location) (Command, error) {
	return ParseFor("", text, now, loc)
}

// ParseFor is Parse for a bot called botName (without '@'): a group
// command addressed to another bot ("/rent@OtherBot") yields OtherBot. With
// an empty botName every "@name" suffix is accepted.
func ParseFor(botName, text string, now time.Time, loc *time.Location) (Command, error) {
	if loc == nil {
		loc = time.UTC
	}
	s := strings.TrimSpace(text)
	if !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "／") {
		if len(s) > MaxCommandBytes || !utf8.ValidString(s) {
			return NotACommand{}, nil
		}
		return parseFree(normalize(s), now, loc), nil
	}
	if len(s) > MaxCommandBytes {
		return nil, newParseError("", "too_long", strconv.Itoa(len(s)), strconv.Itoa(MaxCommandBytes))
	}
	if !utf8.ValidString(s) {
		return nil, newParseError("", "bad_utf8")
	}
	toks := strings.Fields(normalize(s))
	if len(toks) == 0 || len(toks[0]) < 2 {
		return NotACommand{}, nil
	}
	if len(toks) > MaxWords {
		return nil, newParseError("", "too_many_words", strconv.Itoa(MaxWords))
	}
	head := toks[0][1:]
	if name, bot, ok := strings.Cut(head, "@"); ok {
		if botName != "" && !strings.EqualFold(bot, strings.TrimPrefix(botName, "@")) {
			return OtherBot{Bot: bot}, nil
		}
		head = name
	}
	kind, ok := commandNames[strings.ToLower(head)]
	if !ok {
		if near := nearCommands(head); len(near) > 0 {
			return nil, newParseError("", "unknown_command_near", quote("/"+head), "/"+strings.Join(near, ", /"))
		}
		return nil, newParseError("", "unknown_command", quote("/"+head))
	}
	p := &parser{kind: kind, now: now, loc: loc}
	if kind == KindCharge {
		// The note is the user's own text: join only "5 元"-like amounts.
		return p.parse(mergeMoney(toks[1:]))
	}
	return p.parse(mergeTokens(toks[1:]))
}

// --- token merging -----------------------------------------------------------

// mergeTokens joins tokens people split with spaces: "1.88 元/小时" →
// "1.88元/小时", "200 GB", "2 x 4090", "rtx 4090", "per second",
// "2026-11-01 10:00", "yesterday 23:00", "2h ago".
func mergeTokens(toks []string) []string {
	out := make([]string, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if g, n := joinGPU(toks[i:]); n > 1 {
			out = append(out, g)
			i += n - 1
			continue
		}
		if n := len(out); n > 0 {
			prev := out[n-1]
			lt, lp := strings.ToLower(t), strings.ToLower(prev)
			switch {
			case isBareNumber(prev) && isUnitTail(lt):
				out[n-1] = prev + t
				continue
			case lp == "per" && (lt == "second" || lt == "minute" || lt == "hour" || lt == "card" || lt == "gpu"):
				out[n-1] = "per-" + lt
				continue
			case lp == "always" && lt == "on":
				out[n-1] = "always-on"
				continue
			case endsWithDay(lp) && isClock(lt):
				out[n-1] = prev + " " + t
				continue
			case lt == "ago" || lt == "前":
				out[n-1] = prev + " " + lt
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// mergeMoney joins only a bare number and a currency word ("5 元", "5 usd").
func mergeMoney(toks []string) []string {
	out := make([]string, 0, len(toks))
	for _, t := range toks {
		if n := len(out); n > 0 && isBareNumber(out[n-1]) {
			if c, rest := cutCurrencyWord(strings.ToLower(t)); c != "" && rest == "" {
				out[n-1] += t
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// isBareNumber: "1.88", "$5", "-3", "price=1.88": a number waiting for a unit.
func isBareNumber(s string) bool {
	if i := strings.IndexByte(s, '='); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimPrefix(s, "-")
	_, s = cutCurrencyPrefix(strings.ToLower(s))
	num, rest, ok := cutNumber(s)
	return ok && rest == "" && num[0] != '-' && num[0] != '+'
}

// isUnitTail: a token that completes a bare number: "/h", "元/小时", "usd",
// "gb", "hours".
func isUnitTail(t string) bool {
	if strings.HasPrefix(t, "/") || strings.HasPrefix(t, "每") {
		return len(t) > 1
	}
	if c, rest := cutCurrencyWord(t); c != "" {
		return rest == "" || strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "每")
	}
	switch t {
	case "g", "gb", "gib", "t", "tb", "tib", "mb", "mib":
		return true
	}
	if _, ok := durUnits[t]; ok {
		return true
	}
	return false
}

// gpuStarts are words that begin a GPU written in several tokens.
var gpuStarts = map[string]bool{"rtx": true, "gtx": true, "nvidia": true, "geforce": true, "tesla": true,
	"titan": true, "pro": true, "rtxpro": true, "quadro": true}

// startsGPU reports whether t may begin a GPU written in several tokens:
// a GPU itself, a brand word, or a count ("2", "2x", "两张", "8卡").
func startsGPU(t string) bool {
	lt := strings.ToLower(t)
	if gpuStarts[lt] {
		return true
	}
	if _, _, ok := parseGPU(lt); ok {
		return true
	}
	if n := strings.TrimRight(lt, "x*"); isDigits(n) && len(n) <= 2 {
		return true
	}
	if i := strings.IndexAny(lt, "张台卡块个"); i > 0 {
		_, size := utf8.DecodeRuneInString(lt[i:])
		_, cn := chineseCount[lt[:i]]
		return i+size == len(lt) && (cn || isDigits(lt[:i]))
	}
	_, cn := chineseCount[lt]
	return cn
}

// joinGPU finds the longest run of up to four tokens at the start of toks
// that reads as one GPU: "RTX" "4090", "RTX" "4070" "Ti" "SUPER", "A100"
// "80G", "2" "x" "4090", "4090" "x2", "两张" "3090". A bare number is never
// appended to a run that is already a GPU ("A10" "0" stays apart: the 0 is
// a price). It returns the joined token and how many tokens it took.
func joinGPU(toks []string) (string, int) {
	if len(toks) < 2 || !startsGPU(toks[0]) {
		return "", 0
	}
	cur := toks[0]
	_, _, curOK := parseGPU(cur)
	best, bestN := "", 0
	for k := 1; k < 4 && k < len(toks); k++ {
		t := toks[k]
		if curOK && isDigits(t) || strings.ContainsAny(t, "=/") {
			break
		}
		cur += t
		_, _, curOK = parseGPU(cur)
		if curOK {
			best, bestN = cur, k+1
		}
	}
	return best, bestN
}

func endsWithDay(s string) bool {
	if i := strings.IndexByte(s, '='); i >= 0 {
		s = s[i+1:]
	}
	if _, ok := dayWords[s]; ok {
		return true
	}
	// the shape of a date, valid or not, so "2026-02-30 10:00" is one bad time
	s = strings.ReplaceAll(s, "/", "-")
	return len(s) >= 8 && len(s) <= 10 && strings.Count(s, "-") == 2 && isDigits(strings.ReplaceAll(s, "-", ""))
}

func isClock(s string) bool {
	_, ok := parseClock(s)
	return ok
}

// --- the per-command parser --------------------------------------------------

type parser struct {
	kind Kind
	now  time.Time
	loc  *time.Location

	kv    map[string]string // key=value pairs and keyword phrases ("at X", "for X")
	words []string          // the other tokens, in order
	at    time.Time         // from "at TIME", at=TIME or a bare TIME
	atSrc string
}

// keyAliases maps Chinese and alternative keys to the canonical ones.
var keyAliases = map[string]string{
	"名字": "name", "名称": "name", "平台": "platform", "显卡": "gpu", "价格": "price", "单价": "price",
	"模式": "mode", "计费": "mode", "时间": "at", "租期": "for", "货币": "currency", "免费": "free",
	"方向": "direction", "时区": "tz", "语言": "lang", "金额": "amount", "容量": "size", "备注": "note",
	"volume": "name", "卷": "name", "lease": "for", "time": "at", "dir": "direction", "used": "amount",
	"count": "count", "数量": "count", "idlewarn": "idle_warn", "longrun": "long_run", "timezone": "tz",
	"language": "lang", "after": "after", "action": "action", "等待": "wait_for", "waitfor": "wait_for",
}

// cutKV splits "key=value"; the key is letters, digits, '_' or '-' (or
// Chinese), normalised to lower case with '_'.
func cutKV(t string) (key, val string, ok bool) {
	k, v, found := strings.Cut(t, "=")
	if !found || k == "" || len(k) > 24 {
		return "", "", false
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r >= 0x4e00 && r <= 0x9fff) {
			return "", "", false
		}
	}
	k = strings.ReplaceAll(strings.ToLower(k), "-", "_")
	if a, ok := keyAliases[k]; ok {
		k = a
	}
	return k, v, true
}

// split sorts the tokens into key=value pairs (keys must be in allowed),
// keyword phrases ("at TIME", and the keywords given), a time (when
// withTime, bare TIME shapes are taken too) and positional words.
func (p *parser) split(toks []string, allowed []string, withTime bool, keywords ...string) error {
	p.kv = map[string]string{}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if k, v, ok := cutKV(t); ok {
			if !contains(allowed, k) {
				return p.err("unknown_key", quote(k+"="), string(p.kind), keyList(allowed))
			}
			if old, dup := p.kv[k]; dup {
				return p.err("twice", k+"=", quote(old), quote(v))
			}
			p.kv[k] = v
			continue
		}
		lt := strings.ToLower(t)
		if (withTime && (lt == "at" || lt == "在")) || contains(keywords, lt) {
			k := lt
			if k == "在" {
				k = "at"
			}
			if i+1 >= len(toks) {
				return p.err("unexpected", quote(t), string(p.kind))
			}
			i++
			if k == "at" {
				if err := p.setTime(toks[i]); err != nil {
					return err
				}
				continue
			}
			if old, dup := p.kv[k]; dup {
				return p.err("twice", noun(k), quote(old), quote(toks[i]))
			}
			p.kv[k] = toks[i]
			continue
		}
		if withTime && looksLikeTime(t) {
			if err := p.setTime(t); err != nil {
				return err
			}
			continue
		}
		p.words = append(p.words, t)
	}
	if v, ok := p.kv["at"]; ok {
		delete(p.kv, "at")
		if err := p.setTime(v); err != nil {
			return err
		}
	}
	return nil
}

// setTime reads a TIME; a second one is an error.
func (p *parser) setTime(v string) error {
	if p.atSrc != "" {
		return p.err("twice", noun("at"), quote(p.atSrc), quote(v))
	}
	t, ok := parseTime(v, p.now, p.loc)
	if !ok {
		return p.err("bad_time", quote(v))
	}
	if t.After(p.now.Add(futureSlack)) {
		return p.err("future_time", quote(v), t.In(p.loc).Format("2006-01-02 15:04"))
	}
	if t.Year() < 2000 {
		return p.err("old_time", quote(v))
	}
	p.at = t.In(p.loc)
	p.atSrc = v
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keyList(allowed []string) string {
	if len(allowed) == 0 {
		return "-"
	}
	ks := make([]string, len(allowed))
	for i, k := range allowed {
		ks[i] = k + "="
	}
	return strings.Join(ks, " ")
}

func (p *parser) err(key string, args ...string) error {
	return newParseError(p.kind, key, args...)
}

// name validates a rental or volume name.
func (p *parser) name(v string) (string, error) {
	if ledger.ValidateName(v) != nil {
		return "", p.err("bad_name", quote(v))
	}
	return v, nil
}

// oneName reads the single positional NAME (or name=) of simple commands.
func (p *parser) oneName() (string, error) {
	v, fromKV := p.kv["name"]
	switch {
	case fromKV && len(p.words) > 0:
		return "", p.err("twice", noun("name"), quote(v), quote(p.words[0]))
	case fromKV:
	case len(p.words) == 0:
		return "", p.err("missing_name", string(p.kind))
	default:
		v = p.words[0]
		if len(p.words) > 1 {
			return "", p.err("unexpected", quote(p.words[1]), string(p.kind))
		}
	}
	return p.name(v)
}

func (p *parser) noWords() error {
	if len(p.words) > 0 {
		return p.err("unexpected", quote(p.words[0]), string(p.kind))
	}
	return nil
}

func (p *parser) parse(toks []string) (Command, error) {
	switch p.kind {
	case KindRent:
		return p.rent(toks)
	case KindStop, KindResume, KindRelease:
		if err := p.split(toks, []string{"name", "at"}, true); err != nil {
			return nil, err
		}
		n, err := p.oneName()
		if err != nil {
			return nil, err
		}
		switch p.kind {
		case KindStop:
			return Stop{Name: n, At: p.at}, nil
		case KindResume:
			return Resume{Name: n, At: p.at}, nil
		}
		return Release{Name: n, At: p.at}, nil
	case KindAgent, KindWhy:
		if err := p.split(toks, []string{"name"}, false); err != nil {
			return nil, err
		}
		n, err := p.oneName()
		if err != nil {
			return nil, err
		}
		if p.kind == KindAgent {
			return Agent{Name: n}, nil
		}
		return Why{Name: n}, nil
	case KindPrice:
		return p.price(toks)
	case KindStorage:
		return p.storage(toks)
	case KindTraffic:
		return p.traffic(toks)
	case KindCharge:
		return p.charge(toks)
	case KindTopup, KindBalance:
		return p.topupBalance(toks)
	case KindBudget:
		return p.budget(toks)
	case KindStatus, KindSummary, KindUndo:
		if err := p.split(toks, nil, false); err != nil {
			return nil, err
		}
		if err := p.noWords(); err != nil {
			return nil, err
		}
		switch p.kind {
		case KindStatus:
			return Status{}, nil
		case KindSummary:
			return Summary{}, nil
		}
		return Undo{}, nil
	case KindSpend:
		return p.spend(toks)
	case KindExport:
		return p.export(toks)
	case KindAutoRelease:
		return p.autoRelease(toks)
	case KindSettings:
		return p.settings(toks)
	case KindHelp:
		return p.help(toks)
	case KindStart:
		return p.start(toks)
	}
	return nil, p.err("unknown_command", quote("/"+string(p.kind)))
}

// --- /rent -------------------------------------------------------------------

// platformAliases maps what people call a platform to its profile key.
var platformAliases = map[string]string{
	"autodl": "autodl", "autodl.com": "autodl", "autodl云": "autodl",
	"runpod": "runpod", "runpod.io": "runpod",
	"vast": "vast", "vast.ai": "vast", "vastai": "vast",
	"lambda": "lambda", "lambdalabs": "lambda", "lambda-labs": "lambda", "lambdalabs.com": "lambda",
	"aws": "aws", "ec2": "aws", "amazon": "aws",
	"gcp": "gcp", "gce": "gcp", "google": "gcp",
	"alibaba": "alibaba", "aliyun": "alibaba", "阿里云": "alibaba", "alibabacloud": "alibaba",
	"tencent": "tencent", "tencentcloud": "tencent", "qcloud": "tencent", "腾讯云": "tencent",
	"featurize": "featurize", "featurize.cn": "featurize",
	"gpushare": "gpushare", "恒源云": "gpushare", "gpushare.com": "gpushare",
	"matpool": "matpool", "矩池云": "matpool",
}

// knownPlatform returns the profile key of a known platform name.
func knownPlatform(s string) (string, bool) {
	k, ok := platformAliases[strings.ToLower(s)]
	return k, ok
}

// platform normalises a platform name: a known alias, or the user's own
// name in lower case (which must be a valid name).
func (p *parser) platform(v string) (string, error) {
	if k, ok := knownPlatform(v); ok {
		return k, nil
	}
	if ledger.ValidateName(v) != nil {
		return "", p.err("bad_platform", quote(v))
	}
	return strings.ToLower(v), nil
}

func (p *parser) rent(toks []string) (Command, error) {
	allowed := []string{"name", "platform", "gpu", "count", "price", "mode", "min", "step", "floor", "currency", "for", "at"}
	if err := p.split(toks, allowed, true, "for"); err != nil {
		return nil, err
	}
	var (
		r         Rent
		gpuSrc    string
		priceSrc  string
		unitGiven bool
		mode      modeInfo
		modeSrc   string
		free      []string
		perCard   bool // the price is per card: "each", "1.64/gpu/h"
	)
	setGPU := func(v string) error {
		m, n, ok := parseGPU(v)
		if !ok {
			return p.err("bad_gpu", quote(v))
		}
		if n == 0 {
			return p.err("bad_count", quote(v))
		}
		if gpuSrc != "" {
			return p.err("twice", noun("GPU"), quote(gpuSrc), quote(v))
		}
		r.GPU, r.GPUCount, gpuSrc = m, n, v
		return nil
	}
	setPrice := func(v string) error {
		pv, each := cutPerCardPrice(v)
		ps, ok := parseComputePrice(pv)
		if !ok {
			return p.err("bad_price", quote(v))
		}
		if ps.Amount.Sign() < 0 {
			return p.err("price_negative", quote(v))
		}
		if priceSrc != "" {
			return p.err("twice", noun("price"), quote(priceSrc), quote(v))
		}
		r.Price, priceSrc = &ps, v
		unitGiven = strings.Contains(pv, "/") || strings.Contains(pv, "每")
		perCard = perCard || each
		return nil
	}
	setMode := func(v string) error {
		m, ok := parseMode(v)
		if !ok {
			return p.err("unexpected", quote(v), string(p.kind))
		}
		if modeSrc != "" {
			return p.err("twice", noun("mode"), quote(modeSrc), quote(v))
		}
		mode, modeSrc = m, v
		return nil
	}
	for _, w := range p.words {
		if perCardWord(w) {
			perCard = true
			continue
		}
		if _, ok := parseMode(w); ok {
			if err := setMode(w); err != nil {
				return nil, err
			}
			continue
		}
		if _, _, ok := parseGPU(w); ok {
			if err := setGPU(w); err != nil {
				return nil, err
			}
			continue
		}
		if _, ok := parseComputePrice(w); ok || looksLikePrice(w) || strings.Contains(w, "/") {
			if err := setPrice(w); err != nil {
				return nil, err
			}
			continue
		}
		if k, ok := knownPlatform(w); ok && r.Platform == "" {
			r.Platform = k
			continue
		}
		if looksLikeTime(w) {
			return nil, p.err("bad_time", quote(w))
		}
		if ledger.ValidateName(w) != nil {
			return nil, p.err("bad_name", quote(w))
		}
		free = append(free, w)
	}
	for _, k := range []string{"gpu", "price", "mode"} {
		v, ok := p.kv[k]
		if !ok {
			continue
		}
		var err error
		switch k {
		case "gpu":
			err = setGPU(v)
		case "price":
			err = setPrice(v)
		case "mode":
			err = setMode(v)
		}
		if err != nil {
			return nil, err
		}
	}
	// Free words: NAME, then PLATFORM when no known platform was seen.
	if v, ok := p.kv["name"]; ok {
		free = append([]string{v}, free...)
	}
	if v, ok := p.kv["platform"]; ok {
		if r.Platform != "" {
			return nil, p.err("twice", noun("platform"), quote(r.Platform), quote(v))
		}
		pl, err := p.platform(v)
		if err != nil {
			return nil, err
		}
		r.Platform = pl
	}
	if len(free) > 0 {
		n, err := p.name(free[0])
		if err != nil {
			return nil, err
		}
		r.Name = n
		free = free[1:]
	}
	if len(free) > 0 && r.Platform == "" {
		pl, err := p.platform(free[0])
		if err != nil {
			return nil, err
		}
		r.Platform = pl
		free = free[1:]
	}
	if len(free) > 0 {
		return nil, p.err("unexpected", quote(free[0]), string(p.kind))
	}
	switch {
	case r.Name == "":
		return nil, p.err("missing_name", string(p.kind))
	case r.Platform == "":
		return nil, p.err("missing_platform", string(p.kind))
	case r.GPU == "":
		return nil, p.err("missing_gpu", string(p.kind))
	}
	if v, ok := p.kv["count"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			return nil, p.err("bad_count", quote(v))
		}
		if r.GPUCount != 1 && r.GPUCount != n {
			return nil, p.err("twice", noun("count"), quote(gpuSrc), quote(v))
		}
		r.GPUCount = n
	}
	if perCard {
		// The ledger bills one price for the whole rental.
		if r.Price == nil {
			return nil, p.err("missing_price", string(p.kind))
		}
		total, ok := mulCount(r.Price.Amount, r.GPUCount)
		if !ok {
			return nil, p.err("bad_price", quote(priceSrc))
		}
		r.Price.Amount = total
	}
	r.Mode = mode.mode
	if mode.pkg != "" && r.Price != nil {
		switch {
		case !unitGiven:
			r.Price.Unit = mode.pkg
		case r.Price.Unit != mode.pkg:
			return nil, p.err("package_unit", quote(modeSrc), noun(string(mode.pkg)), noun(string(r.Price.Unit)))
		}
	}
	var err error
	if r.Min, err = p.durKV("min", time.Second, 31*24*time.Hour, "1s..31d"); err != nil {
		return nil, err
	}
	if r.Step, err = p.durKV("step", time.Second, 31*24*time.Hour, "1s..31d"); err != nil {
		return nil, err
	}
	if r.Lease, err = p.durKV("for", time.Minute, 366*24*time.Hour, "1m..366d"); err != nil {
		return nil, err
	}
	if v, ok := p.kv["floor"]; ok {
		a, ok := parseAmount(v)
		if !ok {
			return nil, p.err("bad_amount", quote(v))
		}
		if a.Value.Sign() < 0 {
			return nil, p.err("amount_positive", quote(v))
		}
		r.Floor = &a.Value
		if err := p.mergeCurrency(&r.Currency, a.Currency, v); err != nil {
			return nil, err
		}
	}
	if r.Price != nil {
		if err := p.mergeCurrency(&r.Currency, r.Price.Currency, priceSrc); err != nil {
			return nil, err
		}
	}
	if v, ok := p.kv["currency"]; ok {
		c, err := ledger.ParseCurrency(v)
		if err != nil {
			return nil, p.err("bad_currency", quote(v))
		}
		if err := p.mergeCurrency(&r.Currency, c, v); err != nil {
			return nil, err
		}
	}
	r.At = p.at
	return r, nil
}

// mergeCurrency sets *cur to c, or reports a conflict with the currency
// already written.
func (p *parser) mergeCurrency(cur *ledger.Currency, c ledger.Currency, src string) error {
	if c == "" {
		return nil
	}
	if *cur != "" && *cur != c {
		return p.err("currency_conflict", string(*cur), string(c)+" ("+quote(src)+")")
	}
	*cur = c
	return nil
}

// durKV reads an optional duration key=value within [lo, hi].
func (p *parser) durKV(key string, lo, hi time.Duration, rng string) (time.Duration, error) {
	v, ok := p.kv[key]
	if !ok {
		return 0, nil
	}
	d, ok := parseDur(v)
	if !ok {
		return 0, p.err("bad_dur", quote(v))
	}
	if d < lo || d > hi {
		return 0, p.err("dur_range", key, quote(v), rng)
	}
	return d, nil
}

// --- /price ------------------------------------------------------------------

func (p *parser) price(toks []string) (Command, error) {
	if err := p.split(toks, []string{"name", "price", "at"}, true); err != nil {
		return nil, err
	}
	var (
		c        Price
		priceSrc string
		names    []string
	)
	for _, w := range p.words {
		if _, ok := parseComputePrice(w); ok || looksLikePrice(w) || strings.Contains(w, "/") {
			if err := p.setOnce("price", &priceSrc, w); err != nil {
				return nil, err
			}
			continue
		}
		names = append(names, w)
	}
	if err := p.fromKV("price", &priceSrc); err != nil {
		return nil, err
	}
	p.words = names
	n, err := p.oneName()
	if err != nil {
		return nil, err
	}
	if priceSrc == "" {
		return nil, p.err("missing_price", string(p.kind))
	}
	ps, ok := parseComputePrice(priceSrc)
	if !ok {
		return nil, p.err("bad_price", quote(priceSrc))
	}
	if ps.Amount.Sign() < 0 {
		return nil, p.err("price_negative", quote(priceSrc))
	}
	c.Name, c.Price, c.At = n, ps, p.at
	return c, nil
}

// --- /storage ----------------------------------------------------------------

var (
	resizeWords = []string{"resize", "扩容", "缩容", "调整", "改大小"}
	deleteWords = []string{"delete", "del", "rm", "remove", "删除", "删"}
)

func (p *parser) storage(toks []string) (Command, error) {
	allowed := []string{"name", "size", "price", "free", "rental", "platform", "at"}
	if err := p.split(toks, allowed, true); err != nil {
		return nil, err
	}
	op := ""
	var (
		rest            []string
		sizeSrc, prcSrc string
	)
	for _, w := range p.words {
		lw := strings.ToLower(w)
		switch {
		case contains(resizeWords, lw) || contains(deleteWords, lw):
			o := "resize"
			if contains(deleteWords, lw) {
				o = "delete"
			}
			if op != "" {
				return nil, p.err("twice", noun("operation"), quote(op), quote(w))
			}
			op = o
		case strings.Contains(w, "/") || looksLikePrice(w):
			if err := p.setOnce("price", &prcSrc, w); err != nil {
				return nil, err
			}
		case looksLikeSize(w) || isBareNumber(w) && !strings.ContainsAny(w, "$¥￥€"):
			if err := p.setOnce("size", &sizeSrc, w); err != nil {
				return nil, err
			}
		default:
			rest = append(rest, w)
		}
	}
	if err := p.fromKV("size", &sizeSrc); err != nil {
		return nil, err
	}
	if err := p.fromKV("price", &prcSrc); err != nil {
		return nil, err
	}
	p.words = rest
	vol, err := p.oneName()
	if err != nil {
		return nil, err
	}
	size := func() (ledger.Decimal, error) {
		if sizeSrc == "" {
			return ledger.Decimal{}, p.err("missing_size", string(p.kind))
		}
		d, ok := parseSize(sizeSrc)
		if !ok {
			return ledger.Decimal{}, p.err("bad_size", quote(sizeSrc))
		}
		return d, nil
	}
	onlyFor := func(what string, keys ...string) error {
		for _, k := range keys {
			if v, ok := p.kv[k]; ok {
				return p.err("unexpected", quote(k+"="+v), string(p.kind)+" "+what)
			}
		}
		return nil
	}
	switch op {
	case "delete":
		if sizeSrc != "" || prcSrc != "" {
			return nil, p.err("unexpected", quote(sizeSrc+prcSrc), "storage delete")
		}
		if err := onlyFor("delete", "free", "rental", "platform"); err != nil {
			return nil, err
		}
		return StorageDelete{Volume: vol, At: p.at}, nil
	case "resize":
		if prcSrc != "" {
			return nil, p.err("unexpected", quote(prcSrc), "storage resize")
		}
		if err := onlyFor("resize", "free", "rental", "platform"); err != nil {
			return nil, err
		}
		d, err := size()
		if err != nil {
			return nil, err
		}
		return StorageResize{Volume: vol, SizeGB: d, At: p.at}, nil
	}
	if sizeSrc == "" && prcSrc != "" {
		// A price without a size prices the existing volume.
		if err := onlyFor("price", "free", "rental", "platform"); err != nil {
			return nil, err
		}
		sp, ok := parseStoragePrice(prcSrc)
		if !ok {
			return nil, p.err("bad_storage_price", quote(prcSrc))
		}
		if sp.Amount.Sign() < 0 {
			return nil, p.err("price_negative", quote(prcSrc))
		}
		return StorageSetPrice{Volume: vol, Price: sp, At: p.at}, nil
	}
	c := StorageCreate{Volume: vol, At: p.at}
	if c.SizeGB, err = size(); err != nil {
		return nil, err
	}
	if prcSrc != "" {
		sp, ok := parseStoragePrice(prcSrc)
		if !ok {
			return nil, p.err("bad_storage_price", quote(prcSrc))
		}
		if sp.Amount.Sign() < 0 {
			return nil, p.err("price_negative", quote(prcSrc))
		}
		c.Price = &sp
	}
	if v, ok := p.kv["free"]; ok {
		d, ok := parseSize(v)
		if !ok {
			return nil, p.err("bad_size", quote(v))
		}
		c.FreeGB, c.FreeSet = d, true
	}
	if v, ok := p.kv["rental"]; ok {
		if c.Rental, err = p.name(v); err != nil {
			return nil, err
		}
	}
	if v, ok := p.kv["platform"]; ok {
		if c.Rental != "" {
			// The rental's platform is the volume's: two would disagree.
			return nil, p.err("unexpected", quote("platform="+v), string(p.kind)+" rental=")
		}
		if c.Platform = strings.TrimSpace(v); c.Platform == "" {
			return nil, p.err("unexpected", quote("platform="), string(p.kind))
		}
	}
	return c, nil
}

// --- /traffic ----------------------------------------------------------------

var directionWords = map[string]ledger.Direction{
	"out": ledger.Out, "egress": ledger.Out, "出": ledger.Out, "出站": ledger.Out, "上行": ledger.Out, "出网": ledger.Out,
	"in": ledger.In, "ingress": ledger.In, "入": ledger.In, "入站": ledger.In, "下行": ledger.In, "入网": ledger.In,
	"both": ledger.Both, "双向": ledger.Both, "all": ledger.Both,
}

func (p *parser) traffic(toks []string) (Command, error) {
	allowed := []string{"name", "price", "free", "direction", "amount", "at"}
	if err := p.split(toks, allowed, true); err != nil {
		return nil, err
	}
	var (
		rest           []string
		amtSrc, prcSrc string
		dir            ledger.Direction
		dirSrc         string
	)
	setDir := func(w string) error {
		d, ok := directionWords[strings.ToLower(w)]
		if !ok {
			return p.err("bad_direction", quote(w))
		}
		if dirSrc != "" {
			return p.err("twice", noun("direction"), quote(dirSrc), quote(w))
		}
		dir, dirSrc = d, w
		return nil
	}
	for _, w := range p.words {
		switch {
		case directionWords[strings.ToLower(w)] != "":
			if err := setDir(w); err != nil {
				return nil, err
			}
		case strings.Contains(w, "/") || looksLikePrice(w):
			if err := p.setOnce("price", &prcSrc, w); err != nil {
				return nil, err
			}
		case looksLikeSize(w) || isBareNumber(w):
			if err := p.setOnce("amount", &amtSrc, w); err != nil {
				return nil, err
			}
		default:
			rest = append(rest, w)
		}
	}
	if v, ok := p.kv["direction"]; ok {
		if err := setDir(v); err != nil {
			return nil, err
		}
	}
	if err := p.fromKV("price", &prcSrc); err != nil {
		return nil, err
	}
	if err := p.fromKV("amount", &amtSrc); err != nil {
		return nil, err
	}
	p.words = rest
	n, err := p.oneName()
	if err != nil {
		return nil, err
	}
	if prcSrc != "" {
		if amtSrc != "" {
			return nil, p.err("unexpected", quote(amtSrc), string(p.kind))
		}
		if p.atSrc != "" {
			return nil, p.err("unexpected", quote(p.atSrc), string(p.kind))
		}
		amt, cur, ok := parseTrafficPrice(prcSrc)
		if !ok {
			return nil, p.err("bad_traffic_price", quote(prcSrc))
		}
		if amt.Sign() < 0 {
			return nil, p.err("price_negative", quote(prcSrc))
		}
		t := TrafficTerms{Name: n, PricePerGB: amt, Currency: cur, Direction: dir}
		if v, ok := p.kv["free"]; ok {
			d, ok := parseSize(v)
			if !ok {
				return nil, p.err("bad_size", quote(v))
			}
			t.FreeGB, t.FreeSet = d, true
		}
		return t, nil
	}
	if amtSrc == "" {
		return nil, p.err("missing_traffic")
	}
	if v, ok := p.kv["free"]; ok {
		return nil, p.err("unexpected", quote("free="+v), string(p.kind))
	}
	d, ok := parseSize(amtSrc)
	if !ok {
		return nil, p.err("bad_size", quote(amtSrc))
	}
	if dir == ledger.Both {
		return nil, p.err("bad_direction", quote(dirSrc))
	}
	if dir == "" {
		dir = ledger.Out
	}
	return TrafficUsage{Name: n, SizeGB: d, Direction: dir, At: p.at}, nil
}

// --- money -------------------------------------------------------------------

func (p *parser) charge(toks []string) (Command, error) {
	// The note is free text: only key=value pairs, "at TIME" and the first
	// money-shaped token are taken out of it; a bare TIME without "at"
	// stays in the note.
	toks, err := p.takeAt(toks)
	if err != nil {
		return nil, err
	}
	if err := p.split(toks, []string{"name", "amount", "note", "at"}, false); err != nil {
		return nil, err
	}
	var (
		c      Charge
		amtSrc string
		note   []string
	)
	target, hasTarget := p.kv["name"]
	for _, w := range p.words {
		if _, ok := parseAmount(w); ok && amtSrc == "" {
			amtSrc = w
			continue
		}
		if looksLikePrice(w) && amtSrc == "" {
			return nil, p.err("bad_amount", quote(w))
		}
		if !hasTarget {
			target, hasTarget = w, true
			continue
		}
		note = append(note, w)
	}
	if err := p.fromKV("amount", &amtSrc); err != nil {
		return nil, err
	}
	if !hasTarget {
		return nil, p.err("missing_name", string(p.kind))
	}
	if c.Target, err = p.name(target); err != nil {
		return nil, err
	}
	if amtSrc == "" {
		return nil, p.err("missing_amount", string(p.kind))
	}
	a, ok := parseAmount(amtSrc)
	if !ok {
		return nil, p.err("bad_amount", quote(amtSrc))
	}
	if a.Value.IsZero() {
		return nil, p.err("amount_nonzero", quote(amtSrc))
	}
	c.Amount = a
	if v, ok := p.kv["note"]; ok {
		note = append([]string{v}, note...)
	}
	c.Note = strings.Join(note, " ")
	if utf8.RuneCountInString(c.Note) > maxNoteRunes {
		c.Note = string([]rune(c.Note)[:maxNoteRunes]) + "…"
	}
	c.At = p.at
	return c, nil
}

// takeAt takes "at TIME" (or "在 TIME") out of free-text tokens, where
// TIME is one token or two that read as one time ("10:05", "2026-11-01
// 10:05", "yesterday 23:00", "2h ago"). An "at" that is not followed by
// something shaped like a time ("data at rest") is left in place; one
// followed by a bad or future time is an error, as for other commands.
func (p *parser) takeAt(toks []string) ([]string, error) {
	out := make([]string, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		if lt := strings.ToLower(toks[i]); (lt == "at" || lt == "在") && i+1 < len(toks) {
			if v, n := timePhrase(toks[i+1:]); n > 0 {
				if err := p.setTime(v); err != nil {
					return nil, err
				}
				i += n
				continue
			}
		}
		out = append(out, toks[i])
	}
	return out, nil
}

// timePhrase returns the time that toks start with, joined the way
// parseTime reads it, and how many tokens it takes; 0 when toks do not
// start with something shaped like a time.
func timePhrase(toks []string) (string, int) {
	if len(toks) >= 2 {
		a, b := strings.ToLower(toks[0]), strings.ToLower(toks[1])
		if endsWithDay(a) && strings.Contains(b, ":") || b == "ago" || b == "前" {
			return toks[0] + " " + toks[1], 2
		}
	}
	if looksLikeTime(toks[0]) {
		return toks[0], 1
	}
	return "", 0
}

func (p *parser) topupBalance(toks []string) (Command, error) {
	if err := p.split(toks, []string{"platform", "amount", "at"}, true); err != nil {
		return nil, err
	}
	var amtSrc string
	var rest []string
	for _, w := range p.words {
		if _, ok := parseAmount(w); ok || looksLikePrice(w) {
			if err := p.setOnce("amount", &amtSrc, w); err != nil {
				return nil, err
			}
			continue
		}
		rest = append(rest, w)
	}
	if err := p.fromKV("amount", &amtSrc); err != nil {
		return nil, err
	}
	plat, hasPlat := p.kv["platform"]
	if hasPlat && len(rest) > 0 {
		return nil, p.err("twice", noun("platform"), quote(plat), quote(rest[0]))
	}
	if !hasPlat && len(rest) > 0 {
		plat, hasPlat = rest[0], true
		rest = rest[1:]
	}
	if len(rest) > 0 {
		return nil, p.err("unexpected", quote(rest[0]), string(p.kind))
	}
	if p.kind == KindBalance && !hasPlat && amtSrc == "" {
		if p.atSrc != "" {
			return nil, p.err("unexpected", quote(p.atSrc), string(p.kind))
		}
		return Balance{}, nil
	}
	if !hasPlat {
		return nil, p.err("missing_platform", string(p.kind))
	}
	pl, err := p.platform(plat)
	if err != nil {
		return nil, err
	}
	if amtSrc == "" {
		return nil, p.err("missing_amount", string(p.kind))
	}
	a, ok := parseAmount(amtSrc)
	if !ok {
		return nil, p.err("bad_amount", quote(amtSrc))
	}
	if p.kind == KindTopup {
		if a.Value.Sign() <= 0 {
			return nil, p.err("amount_positive", quote(amtSrc))
		}
		return Topup{Platform: pl, Amount: a, At: p.at}, nil
	}
	return Balance{Platform: pl, Set: true, Amount: a, At: p.at}, nil
}

func (p *parser) budget(toks []string) (Command, error) {
	if err := p.split(toks, []string{"amount", "currency"}, false); err != nil {
		return nil, err
	}
	var cur ledger.Currency
	if v, ok := p.kv["currency"]; ok {
		c, err := ledger.ParseCurrency(v)
		if err != nil {
			return nil, p.err("bad_currency", quote(v))
		}
		cur = c
	}
	src, fromKV := p.kv["amount"]
	switch {
	case fromKV && len(p.words) > 0:
		return nil, p.err("twice", noun("amount"), quote(src), quote(p.words[0]))
	case !fromKV && len(p.words) == 0:
		return Budget{}, nil
	case !fromKV:
		src = p.words[0]
		if len(p.words) > 1 {
			return nil, p.err("unexpected", quote(p.words[1]), string(p.kind))
		}
	}
	switch strings.ToLower(src) {
	case "off", "none", "关闭", "取消", "无":
		return Budget{Set: true, Amount: Amount{Currency: cur}}, nil
	}
	pp, ok := splitPrice(strings.ToLower(src))
	if !ok {
		return nil, p.err("bad_amount", quote(src))
	}
	if len(pp.segs) > 1 || len(pp.segs) == 1 && timeUnits[pp.segs[0]] != ledger.UnitMonth {
		return nil, p.err("bad_budget_unit", quote(src))
	}
	if pp.amount.Sign() < 0 {
		return nil, p.err("amount_positive", quote(src))
	}
	if err := p.mergeCurrency(&cur, pp.currency, src); err != nil {
		return nil, err
	}
	return Budget{Set: true, Amount: Amount{Value: pp.amount, Currency: cur}}, nil
}

// --- reports -----------------------------------------------------------------

var periodWords = map[string]string{
	"today": "today", "今天": "today", "今日": "today",
	"yesterday": "yesterday", "昨天": "yesterday", "昨日": "yesterday",
	"week": "week", "this-week": "week", "本周": "week", "这周": "week", "这个星期": "week",
	"last-week": "last-week", "上周": "last-week",
	"month": "month", "this-month": "month", "本月": "month", "这个月": "month",
	"last-month": "last-month", "上月": "last-month", "上个月": "last-month",
}

func (p *parser) spend(toks []string) (Command, error) {
	if err := p.split(toks, nil, false); err != nil {
		return nil, err
	}
	// "this month", "last week"
	words := p.words
	if len(words) == 2 {
		words = []string{strings.ToLower(words[0]) + "-" + strings.ToLower(words[1])}
	}
	if len(words) > 1 {
		return nil, p.err("unexpected", quote(p.words[1]), string(p.kind))
	}
	w := "month"
	if len(words) == 1 {
		w = strings.ToLower(words[0])
	}
	local := p.now.In(p.loc)
	day := func(off int) time.Time {
		return time.Date(local.Year(), local.Month(), local.Day()+off, 0, 0, 0, 0, p.loc)
	}
	month := func(y int, m time.Month) (time.Time, time.Time) {
		from := time.Date(y, m, 1, 0, 0, 0, 0, p.loc)
		return from, from.AddDate(0, 1, 0)
	}
	if period, ok := periodWords[w]; ok {
		s := Spend{Period: period}
		switch period {
		case "today":
			s.From, s.To = day(0), day(1)
		case "yesterday":
			s.From, s.To = day(-1), day(0)
		case "week", "last-week":
			back := (int(local.Weekday()) + 6) % 7 // days since Monday
			s.From, s.To = day(-back), day(7-back)
			if period == "last-week" {
				s.From, s.To = day(-back-7), day(-back)
			}
		case "month":
			s.From, s.To = month(local.Year(), local.Month())
		case "last-month":
			s.From, s.To = month(local.Year(), local.Month()-1)
		}
		return s, nil
	}
	// YYYY-MM
	if len(w) == 7 && w[4] == '-' && isDigits(w[:4]) && isDigits(w[5:]) {
		y, _ := strconv.Atoi(w[:4])
		m, _ := strconv.Atoi(w[5:])
		if y >= 2000 && y <= 2200 && m >= 1 && m <= 12 {
			s := Spend{Period: w}
			s.From, s.To = month(y, time.Month(m))
			return s, nil
		}
	}
	return nil, p.err("bad_period", quote(p.words[0]))
}

func (p *parser) export(toks []string) (Command, error) {
	if err := p.split(toks, []string{"format"}, false); err != nil {
		return nil, err
	}
	f, fromKV := p.kv["format"]
	if !fromKV && len(p.words) > 0 {
		f = p.words[0]
		p.words = p.words[1:]
	}
	if err := p.noWords(); err != nil {
		return nil, err
	}
	switch strings.ToLower(f) {
	case "", "csv":
		return Export{Format: "csv"}, nil
	case "json":
		return Export{Format: "json"}, nil
	}
	return nil, p.err("bad_format", quote(f))
}

// --- automation and settings -------------------------------------------------

var actionWords = map[string]AutoAction{
	"off": ActionOff, "none": ActionOff, "关闭": ActionOff, "关": ActionOff, "不": ActionOff,
	"notify": ActionNotify, "warn": ActionNotify, "提醒": ActionNotify, "通知": ActionNotify,
	"stop": ActionStop, "关机": ActionStop, "停止": ActionStop, "停机": ActionStop,
	"release": ActionRelease, "释放": ActionRelease,
}

func (p *parser) autoRelease(toks []string) (Command, error) {
	if err := p.split(toks, []string{"name", "action", "after", "wait_for"}, false, "after", "之后"); err != nil {
		return nil, err
	}
	var (
		a      AutoRelease
		actSrc string
		durSrc string
		rest   []string
	)
	if v, ok := p.kv["之后"]; ok {
		p.kv["after"] = v
	}
	for _, w := range p.words {
		if _, ok := actionWords[strings.ToLower(w)]; ok && actSrc == "" {
			actSrc = w
			continue
		}
		if _, ok := parseDur(w); ok && durSrc == "" {
			durSrc = w
			continue
		}
		rest = append(rest, w)
	}
	if err := p.fromKV("action", &actSrc); err != nil {
		return nil, err
	}
	if err := p.fromKV("after", &durSrc); err != nil {
		return nil, err
	}
	p.words = rest
	n, err := p.oneName()
	if err != nil {
		return nil, err
	}
	a.Name = n
	if actSrc == "" {
		return nil, p.err("missing_action")
	}
	act, ok := actionWords[strings.ToLower(actSrc)]
	if !ok {
		return nil, p.err("bad_action", quote(actSrc))
	}
	a.Action = act
	if durSrc != "" {
		d, ok := parseDur(durSrc)
		if !ok {
			return nil, p.err("bad_dur", quote(durSrc))
		}
		if d < time.Minute || d > 7*24*time.Hour {
			return nil, p.err("dur_range", "after", quote(durSrc), "1m..7d")
		}
		a.After = d
	}
	if v, ok := p.kv["wait_for"]; ok {
		w, err := parseWaitFor(v)
		if err != nil {
			return nil, p.err("bad_wait_for", quote(v))
		}
		a.WaitFor = w
	}
	return a, nil
}

var settingKeys = []string{"tz", "lang", "summary", "idle_warn", "silent", "quiet", "long_run"}

var tzAliases = map[string]string{
	"beijing": "Asia/Shanghai", "shanghai": "Asia/Shanghai", "china": "Asia/Shanghai", "北京": "Asia/Shanghai",
	"上海": "Asia/Shanghai", "中国": "Asia/Shanghai", "cst": "Asia/Shanghai", "utc": "UTC", "gmt": "UTC",
	"hongkong": "Asia/Hong_Kong", "香港": "Asia/Hong_Kong", "taipei": "Asia/Taipei", "台北": "Asia/Taipei",
	"singapore": "Asia/Singapore", "新加坡": "Asia/Singapore", "tokyo": "Asia/Tokyo", "东京": "Asia/Tokyo",
}

// parseTZ accepts an IANA zone name, a few city aliases, and whole-hour
// offsets ("UTC+8", "GMT-5", "+8"), which become the IANA "Etc/GMT-8" zones
// (whose sign is inverted by POSIX convention).
func parseTZ(v string) (string, bool) {
	if len(v) == 0 || len(v) > 64 {
		return "", false
	}
	if a, ok := tzAliases[strings.ToLower(v)]; ok {
		return a, true
	}
	lv := strings.ToLower(v)
	for _, pfx := range []string{"utc", "gmt", ""} {
		rest, ok := strings.CutPrefix(lv, pfx)
		if !ok || rest == "" || (rest[0] != '+' && rest[0] != '-') {
			continue
		}
		h := strings.TrimSuffix(strings.TrimSuffix(rest[1:], ":00"), "00")
		if rest[1:] == "0" || rest[1:] == "00" {
			h = "0"
		}
		n, err := strconv.Atoi(h)
		if err != nil || n > 14 || len(h) > 2 {
			return "", false
		}
		if n == 0 {
			return "UTC", true
		}
		sign := "-"
		if rest[0] == '-' {
			sign = "+"
		}
		return "Etc/GMT" + sign + strconv.Itoa(n), true
	}
	for _, r := range v {
		if !(r == '/' || r == '_' || r == '-' || r == '+' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", false
		}
	}
	if _, err := time.LoadLocation(v); err != nil || v == "Local" {
		return "", false
	}
	return v, true
}

func (p *parser) settings(toks []string) (Command, error) {
	if err := p.split(toks, settingKeys, false); err != nil {
		return nil, err
	}
	if len(p.words) > 0 {
		return nil, p.err("unknown_key", quote(p.words[0]), string(p.kind), keyList(settingKeys))
	}
	var s Settings
	keys := make([]string, 0, len(p.kv))
	for k := range p.kv {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report errors in a stable order
	for _, k := range keys {
		v := p.kv[k]
		switch k {
		case "tz":
			z, ok := parseTZ(v)
			if !ok {
				return nil, p.err("bad_tz", quote(v))
			}
			s.TZ = &z
		case "lang":
			var l string
			switch strings.ToLower(v) {
			case "en", "english", "英文", "英语", "en-us", "en_us":
				l = chat.LangEN
			case "zh", "cn", "chinese", "中文", "汉语", "zh-cn", "zh_cn", "zh-hans":
				l = chat.LangZH
			default:
				return nil, p.err("bad_lang", quote(v))
			}
			s.Lang = &l
		case "summary":
			m := -1
			if !isOff(v) {
				var ok bool
				if m, ok = parseHHMM(v); !ok {
					return nil, p.err("bad_hhmm", quote(v))
				}
			}
			s.SummaryAt = &m
		case "quiet":
			q := QuietHours{From: -1, To: -1}
			if !isOff(v) {
				a, b, ok := strings.Cut(v, "-")
				from, ok1 := parseHHMM(a)
				to, ok2 := parseHHMM(b)
				if !ok || !ok1 || !ok2 || from == to {
					return nil, p.err("bad_quiet", quote(v))
				}
				q = QuietHours{From: from, To: to}
			}
			s.Quiet = &q
		case "idle_warn", "silent", "long_run":
			lo, hi, rng := time.Minute, 7*24*time.Hour, "1m..7d"
			switch k {
			case "silent":
				hi, rng = 24*time.Hour, "1m..1d"
			case "long_run":
				lo, hi, rng = time.Hour, 30*24*time.Hour, "1h..30d"
			}
			d, err := p.durKV(k, lo, hi, rng)
			if err != nil {
				return nil, err
			}
			switch k {
			case "idle_warn":
				s.IdleWarn = &d
			case "silent":
				s.Silent = &d
			default:
				s.LongRun = &d
			}
		}
	}
	return s, nil
}

func isOff(v string) bool {
	switch strings.ToLower(v) {
	case "off", "none", "no", "关闭", "关", "无":
		return true
	}
	return false
}

func (p *parser) help(toks []string) (Command, error) {
	if err := p.split(toks, nil, false); err != nil {
		return nil, err
	}
	if len(p.words) == 0 {
		return Help{}, nil
	}
	w := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(p.words[0]), "/"), "／")
	if k, ok := commandNames[w]; ok {
		return Help{Topic: k}, nil
	}
	return nil, p.err("bad_topic", quote(p.words[0]))
}

func (p *parser) start(toks []string) (Command, error) {
	if len(toks) == 0 {
		return Start{}, nil
	}
	if len(toks) > 1 {
		return nil, p.err("unexpected", quote(toks[1]), string(p.kind))
	}
	code := toks[0]
	if len(code) > 64 {
		return nil, p.err("bad_code", quote(code))
	}
	for _, r := range code {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return nil, p.err("bad_code", quote(code))
		}
	}
	return Start{Code: code}, nil
}

// fromKV takes key=value for a field that positional words may also give
// (by its shape): *src is what the words gave, and giving both is an error.
func (p *parser) fromKV(key string, src *string) error {
	v, ok := p.kv[key]
	if !ok {
		return nil
	}
	return p.setOnce(key, src, v)
}

// setOnce records v as what the message gave for key; a second value for
// the same field is an error naming both.
func (p *parser) setOnce(key string, src *string, v string) error {
	if *src != "" {
		return p.err("twice", noun(key), quote(*src), quote(v))
	}
	*src = v
	return nil
}

// waitForWords are the Chinese values of wait_for=.
var waitForWords = map[string]string{"无": "none", "不等": "none", "没有": "none", "全部": "all", "所有": "all"}

// parseWaitFor reads wait_for=: none, all, or kinds joined by commas
// (ssh, jupyter, vscode), or the Chinese 无 and 全部.
func parseWaitFor(v string) (ledger.WaitFor, error) {
	if w, ok := waitForWords[v]; ok {
		v = w
	}
	return ledger.ParseWaitFor(v)
}
