package bot

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

func TestParse_Err(t *testing.T) {
	tests := []struct {
		in      string
		key     string
		mention string // the bad token, as the message shows it
	}{
		{"/rent box1 autodl 4090 abc/h", "bad_price", `"abc/h"`},
		{"/storage sd1 200GB rental=s1 platform=runpod", "unexpected", `"platform=runpod"`},
		{"/storage sd1 resize 300GB platform=runpod", "unexpected", `"platform=runpod"`},
		{"/rent box1 autodl 4090 1.88/parsec", "bad_price", `"1.88/parsec"`},
		{"/rent box1 autodl 4090 $1.88元", "bad_price", `"$1.88元"`},
		{"/rent box1 autodl 4090 -1.88/h", "price_negative", `"-1.88/h"`},
		{"/rent box1 autodl 4090 1.88 2.5", "twice", `"1.88"`},
		{"/rent box1 autodl 4090 3090 1.88", "twice", `"3090"`},
		{"/rent box1 autodl 100x4090 1.88", "bad_count", `"100x4090"`},
		{"/rent box1 autodl gpu=9999 1.88", "bad_gpu", `"9999"`},
		{"/rent autodl 4090 1.88", "missing_name", "/rent"},
		{"/rent box1 4090 1.88", "missing_platform", "/rent"},
		{"/rent box1 autodl 1.88", "missing_gpu", "/rent"},
		{"/rent box1 autodl 4090 1.88 extra", "unexpected", `"extra"`},
		{"/rent box!1 autodl 4090 1.88", "bad_name", `"box!1"`},
		{"/rent box1 autodl 4090 1.88/h 包日", "package_unit", `"包日"`},
		{"/rent box1 autodl 4090 1.88 per-second 按小时", "twice", `"按小时"`},
		{"/rent box1 autodl 4090 1.88 colour=red", "unknown_key", `"colour="`},
		{"/rent box1 autodl 4090 1.88 min=abc", "bad_dur", `"abc"`},
		{"/rent box1 autodl 4090 1.88 step=40d", "dur_range", `"40d"`},
		{"/rent box1 autodl 4090 1.88 for=0s", "dur_range", `"0s"`},
		{"/rent box1 autodl 4090 1.88 floor=x", "bad_amount", `"x"`},
		{"/rent box1 autodl 4090 $1.88/h currency=CNY", "currency_conflict", "CNY"},
		{"/rent box1 autodl 4090 1.88 currency=dollarz", "bad_currency", `"dollarz"`},
		{"/rent box1 autodl 4090 1.88 at 25:00", "bad_time", `"25:00"`},
		{"/rent box1 autodl 4090 1.88 at soon", "bad_time", `"soon"`},
		{"/rent box1 autodl 4090 1.88 at 2026-12-01 10:00", "future_time", `"2026-12-01 10:00"`},
		{"/rent box1 autodl 4090 1.88 at 明天 10:00", "future_time", `"明天 10:00"`},
		{"/rent box1 autodl 4090 1.88 at 1999-01-01 10:00", "old_time", `"1999-01-01 10:00"`},
		{"/rent box1 autodl 4090 1.88 at 10:00 at 11:00", "twice", `"11:00"`},
		{"/rent box1 autodl 4090 1.88 at=10:00 -1h", "twice", `"10:00"`},
		{"/rent box1 autodl 4090 1.88 at", "unexpected", `"at"`},
		{"/rent box1 autodl 4090 99999999999/h", "bad_price", `"99999999999/h"`},
		{"/stop", "missing_name", "/stop"},
		{"/stop box1 box2", "unexpected", `"box2"`},
		{"/stop box1 at 2026-02-30 10:00", "bad_time", `"2026-02-30`},
		{"/price box1", "missing_price", "/price"},
		{"/price box1 cheap/h", "bad_price", `"cheap/h"`},
		{"/storage data1 price=0.0066/GB/day free=10GB", "unexpected", `"free=10GB"`},
		{"/storage data1 200GB 0.0066/day", "bad_storage_price", `"0.0066/day"`},
		{"/storage data1 200GB 0.0066/GB/week", "bad_storage_price", `"0.0066/GB/week"`},
		{"/storage data1 200XB 0.0066/GB/day", "unexpected", `"200XB"`},
		{"/storage data1 resize", "missing_size", "/storage"},
		{"/storage data1 resize 200GB 0.1/GB/day", "unexpected", `"0.1/GB/day"`},
		{"/storage data1 delete 200GB", "unexpected", `"200GB"`},
		{"/storage data1 200GB free=lots", "bad_size", `"lots"`},
		{"/storage data1 200GB rental=bad!", "bad_name", `"bad!"`},
		{"/traffic box1", "missing_traffic", "/traffic"},
		{"/traffic box1 price=0.8", "bad_traffic_price", `"0.8"`},
		{"/traffic box1 120GB both", "bad_direction", `"both"`},
		{"/traffic box1 120GB direction=up", "bad_direction", `"up"`},
		{"/traffic box1 price=0.8/GB 120GB", "unexpected", `"120GB"`},
		{"/charge box1", "missing_amount", "/charge"},
		{"/charge box1 0 nothing", "amount_nonzero", `"0"`},
		{"/charge 5", "missing_name", "/charge"},
		{"/topup autodl", "missing_amount", "/topup"},
		{"/topup autodl -5", "amount_positive", `"-5"`},
		{"/topup 100", "missing_platform", "/topup"},
		{"/topup autodl 100/h", "bad_amount", `"100/h"`},
		{"/balance 100", "missing_platform", "/balance"},
		{"/budget 100/day", "bad_budget_unit", `"100/day"`},
		{"/budget lots", "bad_amount", `"lots"`},
		{"/budget -5", "amount_positive", `"-5"`},
		{"/budget 5 currency=12", "bad_currency", `"12"`},
		{"/budget ¥5 currency=USD", "currency_conflict", "CNY"},
		{"/status now", "unexpected", `"now"`},
		{"/undo 3", "unexpected", `"3"`},
		{"/spend fortnight", "bad_period", `"fortnight"`},
		{"/spend 2026-13", "bad_period", `"2026-13"`},
		{"/export xml", "bad_format", `"xml"`},
		{"/autorelease box1", "missing_action", "/autorelease"},
		{"/autorelease box1 explode", "unexpected", `"explode"`},
		{"/autorelease box1 action=explode", "bad_action", `"explode"`},
		{"/autorelease box1 stop after 10s", "dur_range", `"10s"`},
		{"/autorelease box1 stop after soon", "bad_dur", `"soon"`},
		{"/autorelease box1 stop wait_for=people", "bad_wait_for", `"people"`},
		{"/autorelease box1 stop idle_people=soon", "bad_dur", `"soon"`},
		{"/autorelease box1 stop idle_people=1m", "dur_range", `"1m"`},
		{"/autorelease box1 stop idle_people=30d", "dur_range", `"30d"`},
		{"/autorelease box1 stop wait_for=ssh wait_for=none", "twice", `"ssh"`},
		{"/settings tz=Mars/Olympus", "bad_tz", `"Mars/Olympus"`},
		{"/settings tz=../../etc/passwd", "bad_tz", `"../../etc/passwd"`},
		{"/settings lang=fr", "bad_lang", `"fr"`},
		{"/settings summary=25:00", "bad_hhmm", `"25:00"`},
		{"/settings quiet=23:00", "bad_quiet", `"23:00"`},
		{"/settings idle_warn=10s", "dur_range", `"10s"`},
		{"/settings silent=2d", "dur_range", `"2d"`},
		{"/settings lang", "unknown_key", `"lang"`},
		{"/settings colour=blue", "unknown_key", `"colour="`},
		{"/help frobnicate", "bad_topic", `"frobnicate"`},
		{"/start bad code!", "unexpected", `"code!"`},
		{"/start c0de!", "bad_code", `"c0de!"`},
		{"/frobnicate", "unknown_command", `"/frobnicate"`},
		{"/rent box1 \u202eautodl 4090 1.88 x\u0007y", "unexpected", `"x"`},
		{"/" + strings.Repeat("a", 5000), "too_long", "5001"},
		{"/rent " + strings.Repeat("x ", 100), "too_many_words", "64"},
		{"/rent box1 \xff\xfe 4090", "bad_utf8", "UTF-8"},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			c, err := command.Parse(tt.in, testNow, shanghai)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want error %s", tt.in, show(c), tt.key)
			}
			var pe *command.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T %v is not a *ParseError", tt.in, err, err)
			}
			if pe.Key != tt.key {
				t.Errorf("key = %s, want %s (%v)", pe.Key, tt.key, err)
			}
			if code := ledger.ErrorCode(err); code != ledger.EINVALID {
				t.Errorf("code = %s, want %s", code, ledger.EINVALID)
			}
			var le *ledger.Error
			if !errors.As(err, &le) {
				t.Errorf("error is not a *ledger.Error")
			}
			en, zh := ErrorText(err, "en"), ErrorText(err, "zh")
			for lang, msg := range map[string]string{"en": en, "zh": zh} {
				if !strings.Contains(msg, tt.mention) {
					t.Errorf("%s message %q does not mention %s", lang, msg, tt.mention)
				}
				if strings.Contains(msg, "%!") || strings.Contains(msg, command.NounMark) {
					t.Errorf("%s message %q is badly formatted", lang, msg)
				}
			}
			if !strings.Contains(en, "Example: /") {
				t.Errorf("en message %q shows no example", en)
			}
			if !strings.Contains(zh, "例如：/") {
				t.Errorf("zh message %q shows no example", zh)
			}
			// The error's own text is for logs: the key and the arguments,
			// without marks; the user's text is the core's rendering above.
			if le == nil || !strings.HasPrefix(le.Message, tt.key) || strings.Contains(le.Message, command.NounMark) {
				t.Errorf("the ledger error's message = %v, want the key %s and no mark", le, tt.key)
			}
		})
	}
}

// FuzzParseErrorText checks that every error the parser returns for any
// input has its key in the core's catalog and renders in English and
// Chinese: a message, valid UTF-8, no formatting verb or argument mark left.
// (The parser's own FuzzParse, in bot/command, checks the commands.)
func FuzzParseErrorText(f *testing.F) {
	for _, s := range []string{
		"/rent box1 autodl 4090 abc/h",
		"/rent box1 autodl 100x4090 1.88",
		"/storage data1 resize",
		"/traffic box1 price=x",
		"/settings idle_warn=1s",
		"/autorelease box1 after 99d",
		"/spend 2026-13",
		"/connect runpod",
		"/fix #x",
		"/stauts",
		"\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		_, err := command.Parse(in, testNow, shanghai)
		var pe *command.ParseError
		if !errors.As(err, &pe) {
			return
		}
		if _, ok := catalog[pe.Key]; !ok {
			t.Fatalf("Parse(%q) error key %q is not in the catalog", in, pe.Key)
		}
		for _, lang := range []string{chat.LangEN, chat.LangZH} {
			msg := parseErrorText(pe, lang)
			if msg == "" || len(msg) > 1200 || !utf8.ValidString(msg) || strings.Contains(msg, "%!") || strings.Contains(msg, command.NounMark) {
				t.Fatalf("Parse(%q) %s message is bad: %q", in, lang, msg)
			}
		}
	})
}
