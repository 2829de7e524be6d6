package command

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// Limits on what Parse reads. Telegram caps a message at 4096 characters;
// a command needs far fewer words than MaxWords. Longer input gets a clear
// error (commands) or NotACommand (free text), after bounded work.
const (
	MaxCommandBytes = 4096
	MaxWords        = 64
)

// kinds lists every command kind in the order /help shows them, each with
// the other words that name it (Chinese words, short forms), which /help
// shows as its aliases. Near-matches offer the English names in this order.
var kinds = []struct {
	kind    Kind
	aliases []string
}{
	{KindRent, []string{"租", "租用"}},
	{KindStop, []string{"停止", "关机"}},
	{KindResume, []string{"恢复", "开机"}},
	{KindRelease, []string{"释放", "退租"}},
	{KindPrice, []string{"价格", "改价"}},
	{KindStorage, []string{"存储", "硬盘"}},
	{KindTraffic, []string{"流量"}},
	{KindCharge, []string{"扣费", "费用"}},
	{KindTopup, []string{"充值"}},
	{KindBalance, []string{"余额"}},
	{KindRecords, []string{"记录", "明细"}},
	{KindFix, []string{"修改", "更正"}},
	{KindDelete, []string{"删除"}},
	{KindBudget, []string{"预算"}},
	{KindStatus, []string{"list", "状态", "列表"}},
	{KindSpend, []string{"花费", "账单"}},
	{KindSummary, []string{"总结", "日报"}},
	{KindExport, []string{"导出"}},
	{KindDashboard, []string{"仪表盘", "看板"}},
	{KindUndo, []string{"撤销"}},
	{KindAgent, []string{"代理", "探针"}},
	{KindAdopt, []string{"记账", "认领"}},
	{KindAutoRelease, []string{"自动释放"}},
	{KindSettings, []string{"设置"}},
	{KindWhy, []string{"原因"}},
	{KindReceipt, []string{"收据", "测速"}},
	{KindQuote, []string{"报价", "估价"}},
	{KindJob, []string{"任务"}},
	{KindCompare, []string{"对比", "比较"}},
	{KindTeam, []string{"团队"}},
	{KindUse, []string{"切换"}},
	{KindProject, []string{"项目"}},
	{KindConnect, []string{"连接"}},
	{KindDisconnect, []string{"断开"}},
	{KindReconcile, []string{"对账"}},
	{KindHelp, []string{"帮助"}},
	{KindStart, []string{"开始"}},
}

// Aliases returns the other words that name the command k.
func Aliases(k Kind) []string {
	for _, x := range kinds {
		if x.kind == k {
			return x.aliases
		}
	}
	return nil
}

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
	for _, x := range kinds {
		m[string(x.kind)] = x.kind
		for _, a := range x.aliases {
			m[a] = x.kind
		}
	}
	return m
}()

// KindOf returns the kind a command word (lower case, without the
// slash) names, or "" when it names none.
func KindOf(word string) Kind { return commandNames[word] }

// settingShortcuts are commands that set one setting: "/lang zh",
// "/tz Asia/Shanghai". They are what a new user tries first.
var settingShortcuts = map[string]string{
	"lang": "lang", "language": "lang", "tz": "tz", "timezone": "tz",
}

// Parse reads one chat message in the user's zone loc at instant now. A
// command ("/rent box1 autodl 4090 1.88/h", also "/rent@MyBot ...", in any
// case) becomes its typed Command or a *ParseError; free text that looks
// like a rental becomes a ProposedRentCmd, one that stops, resumes or
// releases a rental a ProposedChangeCmd, a question's word ("status", "余额")
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
		return parseFree(Normalize(s), now, loc), nil
	}
	if len(s) > MaxCommandBytes {
		return nil, newParseError("", "too_long", strconv.Itoa(len(s)), strconv.Itoa(MaxCommandBytes))
	}
	if !utf8.ValidString(s) {
		return nil, newParseError("", "bad_utf8")
	}
	toks := strings.Fields(Normalize(s))
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
	if key, ok := settingShortcuts[strings.ToLower(head)]; ok {
		// "/lang zh" is "/settings lang=zh"; alone, it shows the settings.
		args := toks[1:]
		if len(args) == 1 && !strings.Contains(args[0], "=") {
			args = []string{key + "=" + args[0]}
		}
		return (&parser{kind: KindSettings, now: now, loc: loc}).parse(mergeTokens(args))
	}
	kind, ok := commandNames[strings.ToLower(head)]
	if !ok {
		if near := NearCommands(head); len(near) > 0 {
			return nil, newParseError("", "unknown_command_near", quote("/"+head), "/"+strings.Join(near, ", /"))
		}
		return nil, newParseError("", "unknown_command", quote("/"+head))
	}
	p := &parser{kind: kind, now: now, loc: loc}
	switch kind {
	case KindConnect:
		// A key is taken as typed: no token is merged or rewritten.
		return p.connect(toks[1:])
	case KindDisconnect:
		return p.disconnect(toks[1:])
	case KindReconcile:
		return p.reconcile(toks[1:])
	}
	if kind == KindCharge || kind == KindFix {
		// The note is the user's own text: join only "5 元"-like amounts.
		return p.parse(mergeMoney(toks[1:]))
	}
	if kind != KindRent && kind != KindQuote {
		// Only /rent and /quote take a GPU: elsewhere "t4 10GB" is a rental called
		// t4 and an amount, not the GPU "T4 10GB".
		return p.parse(mergeTokensNoGPU(toks[1:]))
	}
	return p.parse(mergeTokens(toks[1:]))
}

// --- token merging -----------------------------------------------------------

// mergeTokens joins tokens people split with spaces: "1.88 元/小时" →
// "1.88元/小时", "200 GB", "2 x 4090", "rtx 4090", "per second",
// "2026-11-01 10:00", "yesterday 23:00", "2h ago".
func mergeTokens(toks []string) []string { return merge(toks, true) }

// mergeTokensNoGPU is mergeTokens for a command that takes no GPU: a GPU
// written in several tokens is not joined.
func mergeTokensNoGPU(toks []string) []string { return merge(toks, false) }

func merge(toks []string, gpu bool) []string {
	out := make([]string, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if j := openPriceBefore(out); j >= 0 {
			if unit, n := priceUnitPhrase(toks[i:]); n > 0 {
				out[j] += unit
				i += n - 1
				continue
			}
		}
		if p, n := unitFirstPrice(toks[i:]); n > 0 {
			out = append(out, p)
			i += n - 1
			continue
		}
		if g, n := joinGPU(toks[i:]); gpu && n > 1 {
			out = append(out, g)
			i += n - 1
			continue
		}
		if n := len(out); n > 0 {
			prev := out[n-1]
			lt, lp := strings.ToLower(t), strings.ToLower(prev)
			switch {
			case isBareNumber(prev) && isUnitTail(lt) && !isGPU(prev):
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
// a price). Nor is a bare number put in front of a token that is a GPU
// with its own count: in "10 2x4090" the 10 is hours or a price, not part
// of a "102x4090". It returns the joined token and how many tokens it
// took.
func joinGPU(toks []string) (string, int) {
	if len(toks) < 2 || !startsGPU(toks[0]) {
		return "", 0
	}
	if isDigits(toks[0]) && countedGPU(toks[1]) {
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

// countedGPU reports whether tok alone is a GPU that says how many:
// "2x4090", "H100*8", "1×A100", "两张3090".
func countedGPU(tok string) bool {
	_, n, ok := parseGPU(tok)
	if !ok {
		return false
	}
	return n > 1 || countedGPURE.MatchString(strings.ToLower(tok))
}

var countedGPURE = regexp.MustCompile(`^[0-9]+\s*[x×*]|[x×*]\s*[0-9]+$|[张台卡块个]`)

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
	"空闲": "idle_people", "idlepeople": "idle_people",
	"项目": "project",
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

// projectKV reads project=NAME of /rent, /storage and /charge: the project
// a record of a team's ledger is for (ledger.ValidProject).
func (p *parser) projectKV() (string, error) {
	v, ok := p.kv["project"]
	if !ok {
		return "", nil
	}
	if v == "" || ledger.ValidProject(v) != nil {
		return "", p.err("bad_project", quote(v), strconv.Itoa(ledger.MaxProjectRunes))
	}
	return v, nil
}

// name validates a rental or volume name.
func (p *parser) name(v string) (string, error) {
	if ledger.ValidateName(v) != nil {
		return "", p.err("bad_name", quote(v))
	}
	return v, nil
}

// rentalName validates the name of a rental the user already has: a bare
// name, or its address (yolo@2026-11-02, ledger.RentalRef) written in its
// canonical form; an address's day may not lie after today in the user's
// zone.
func (p *parser) rentalName(v string) (string, error) {
	if !ledger.IsRentalRef(v) {
		return p.name(v)
	}
	ref, err := ledger.ParseRentalRef(v)
	if err != nil {
		return "", p.err("bad_rental_ref", quote(v))
	}
	if ref.Begins(p.loc).After(p.now) {
		return "", p.err("ref_future", quote(v), ref.Date())
	}
	return ref.String(), nil
}

// oneRental reads the single positional NAME (or name=) of commands about
// a rental; the name may be an address.
func (p *parser) oneRental() (string, error) {
	v, err := p.oneWord()
	if err != nil {
		return "", err
	}
	return p.rentalName(v)
}

// oneName reads the single positional NAME (or name=) of simple commands.
func (p *parser) oneName() (string, error) {
	v, err := p.oneWord()
	if err != nil {
		return "", err
	}
	return p.name(v)
}

// oneWord reads the single positional word (or name=) of simple commands.
func (p *parser) oneWord() (string, error) {
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
	return v, nil
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
		n, err := p.oneRental()
		if err != nil {
			return nil, err
		}
		switch p.kind {
		case KindStop:
			return StopCmd{Name: n, At: p.at}, nil
		case KindResume:
			return ResumeCmd{Name: n, At: p.at}, nil
		}
		return ReleaseCmd{Name: n, At: p.at}, nil
	case KindAgent:
		return p.agent(toks)
	case KindAdopt:
		return p.adopt(toks)
	case KindWhy:
		if err := p.split(toks, []string{"name"}, false); err != nil {
			return nil, err
		}
		n, err := p.oneRental()
		if err != nil {
			return nil, err
		}
		return WhyCmd{Name: n}, nil
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
	case KindRecords:
		return p.records(toks)
	case KindDelete:
		return p.deleteRecord(toks)
	case KindFix:
		return p.fixRecord(toks)
	case KindStatus, KindSummary, KindUndo, KindDashboard:
		if err := p.split(toks, nil, false); err != nil {
			return nil, err
		}
		if err := p.noWords(); err != nil {
			return nil, err
		}
		switch p.kind {
		case KindStatus:
			return StatusCmd{}, nil
		case KindSummary:
			return SummaryCmd{}, nil
		case KindDashboard:
			return DashboardCmd{}, nil
		}
		return UndoCmd{}, nil
	case KindSpend:
		return p.spend(toks)
	case KindExport:
		return p.export(toks)
	case KindAutoRelease:
		return p.autoRelease(toks)
	case KindSettings:
		return p.settings(toks)
	case KindReceipt:
		return p.receipt(toks)
	case KindJob:
		return p.job(toks)
	case KindCompare:
		return p.compare(toks)
	case KindQuote:
		return p.quote(toks)
	case KindTeam:
		return p.team(toks)
	case KindUse:
		return p.use(toks)
	case KindProject:
		return p.project(toks)
	case KindHelp:
		return p.help(toks)
	case KindStart:
		return p.start(toks)
	}
	return nil, p.err("unknown_command", quote("/"+string(p.kind)))
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
