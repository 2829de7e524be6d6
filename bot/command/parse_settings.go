package command

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// --- /settings ---------------------------------------------------------------

var settingKeys = []string{"tz", "lang", "summary", "idle_warn", "silent", "quiet", "long_run", "bench"}

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
		if err != nil || !isDigits(h) || n > 14 || len(h) > 2 { // one sign: "UTC+-1" is not a zone
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
	var s SettingsCmd
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
		case "bench":
			var off bool
			switch {
			case isOff(v):
				off = true
			case isOn(v):
			default:
				return nil, p.err("bad_on_off", k, quote(v))
			}
			s.BenchOff = &off
		case "idle_warn", "silent", "long_run":
			lo, hi, _ := ledger.SettingBounds(k)
			d, err := p.durKV(k, lo, hi, durBoundsText(lo, hi))
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

// isOn is isOff's opposite: the words that turn a setting on.
func isOn(v string) bool {
	switch strings.ToLower(v) {
	case "on", "yes", "开启", "开", "打开":
		return true
	}
	return false
}

func isOff(v string) bool {
	switch strings.ToLower(v) {
	case "off", "none", "no", "关闭", "关", "无":
		return true
	}
	return false
}
