package bot

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

func TestCommandList(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	for _, lang := range []string{chat.LangEN, chat.LangZH} {
		list := CommandList(lang)
		if want := len(helpItems) + len(teamHelpItems); len(list) != want {
			t.Fatalf("%s: %d commands, want %d", lang, len(list), want)
		}
		// Telegram takes at most 100 commands per list.
		if len(list) > 100 {
			t.Fatalf("%s: %d commands, Telegram takes at most 100", lang, len(list))
		}
		for _, team := range []string{"team", "use", "project"} {
			if !slices.ContainsFunc(list, func(c CommandInfo) bool { return c.Command == team }) {
				t.Errorf("%s: /%s is not in the command menu", lang, team)
			}
		}
		seen := map[string]bool{}
		for _, c := range list {
			if !valid.MatchString(c.Command) {
				t.Errorf("%s: command %q is not [a-z0-9_]{1,32}", lang, c.Command)
			}
			if seen[c.Command] {
				t.Errorf("%s: command %q listed twice", lang, c.Command)
			}
			seen[c.Command] = true
			if n := utf8.RuneCountInString(c.Description); n == 0 || n > 256 {
				t.Errorf("%s: /%s description has %d characters", lang, c.Command, n)
			}
			if k := command.KindOf(c.Command); string(k) != c.Command {
				t.Errorf("%s: /%s is not parsed as itself", lang, c.Command)
			}
		}
	}
	if en, zh := CommandList("en")[0].Description, CommandList("zh-CN")[0].Description; en == zh {
		t.Errorf("descriptions are not translated: %q", en)
	}
}

// TestHelpItems_ExamplesParse checks that every example the help and the
// error messages show is itself a valid command of its kind.
func TestHelpItems_ExamplesParse(t *testing.T) {
	for _, h := range helpItems {
		for i, ex := range h.ex {
			c, err := command.Parse(ex, testNow, shanghai)
			if err != nil {
				t.Errorf("/%s example %d %q: %v", h.kind, i, ex, err)
				continue
			}
			if c.Kind() != h.kind {
				t.Errorf("/%s example %q parses as %s", h.kind, ex, c.Kind())
			}
		}
	}
}

func TestHelpText(t *testing.T) {
	for _, lang := range []string{chat.LangEN, chat.LangZH} {
		all := helpText(lang, "")
		for _, h := range helpItems {
			if !strings.Contains(all, "/"+string(h.kind)+" ") {
				t.Errorf("%s help does not list /%s", lang, h.kind)
			}
			if !strings.Contains(all, h.example(lang)) {
				t.Errorf("%s help lacks the example %q", lang, h.example(lang))
			}
		}
		if n := utf8.RuneCountInString(all); n > 4096 {
			t.Errorf("%s help is %d characters, over Telegram's 4096", lang, n)
		}
		one := helpText(lang, command.KindRent)
		if !strings.Contains(one, "/rent NAME PLATFORM GPU PRICE") || strings.Contains(one, "/storage") {
			t.Errorf("%s /help rent:\n%s", lang, one)
		}
	}
	if !strings.Contains(helpText("zh", ""), "例如") || strings.Contains(helpText("en", ""), "例如") {
		t.Error("help is not in the asked language")
	}
}

func TestCatalog_Complete(t *testing.T) {
	argRe := regexp.MustCompile(`%\[(\d)\]s`)
	for key, m := range catalog {
		if m[0] == "" || m[1] == "" {
			t.Errorf("%s: missing a translation", key)
			continue
		}
		en, zh := argRe.FindAllString(m[0], -1), argRe.FindAllString(m[1], -1)
		if fmt.Sprint(uniq(en)) != fmt.Sprint(uniq(zh)) {
			t.Errorf("%s: en uses %v, zh uses %v", key, en, zh)
		}
		if strings.Contains(strings.ReplaceAll(m[0], "%[", ""), "%") {
			t.Errorf("%s: stray %% in %q", key, m[0])
		}
	}
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	// order-insensitive
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestParseError_Text(t *testing.T) {
	_, err := command.Parse("/rent box1 autodl 4090 abc/h", testNow, shanghai)
	var pe *command.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *ParseError", err)
	}
	wantEN := `price "abc/h" is not a price: write it like 1.88/h or ¥1.88/小时. Example: /rent box1 autodl 4090 1.88/h`
	if got := parseErrorText(pe, "en"); got != wantEN {
		t.Errorf("en:\n got %q\nwant %q", got, wantEN)
	}
	wantZH := `价格 "abc/h" 看不懂：请写成 1.88/h 或 1.88元/小时。例如：/rent box1 autodl 4090 1.88元/小时 按秒`
	if got := parseErrorText(pe, "zh-CN"); got != wantZH {
		t.Errorf("zh:\n got %q\nwant %q", got, wantZH)
	}
	// Error is for logs: the key and the arguments, no user's text.
	if got, want := err.Error(), `ledger: invalid: bad_price "abc/h"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err        error
		lang, want string
	}{
		{nil, "en", ""},
		{ledger.Errorf(ledger.ENOTFOUND, "no rental box9"), "zh", "no rental box9"},
		{errors.New("disk on fire"), "en", "internal error, logged; please try again later"},
		{fmt.Errorf("wrapped: %w", errors.New("disk on fire")), "zh", "内部错误，已记录。请稍后再试"},
		{fmt.Errorf("wrapped: %w", &command.ParseError{Cmd: command.KindStop, Key: "missing_name", Args: []string{"stop"}}), "zh", "/stop 需要一个名字，比如 box1。例如：/stop box1 at 10分钟前"},
	}
	for _, tt := range tests {
		if got := ErrorText(tt.err, tt.lang); got != tt.want {
			t.Errorf("ErrorText(%v, %s) = %q, want %q", tt.err, tt.lang, got, tt.want)
		}
	}
}

func TestNormLang(t *testing.T) {
	for in, want := range map[string]string{"en": "en", "": "en", "fr": "en", "zh": "zh", "zh-CN": "zh", "zh-hans": "zh", "ZH_TW": "zh", "中文": "zh"} {
		if got := chat.NormLang(in); got != want {
			t.Errorf("NormLang(%q) = %q, want %q", in, got, want)
		}
	}
}
