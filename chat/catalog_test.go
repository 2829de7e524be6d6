package chat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/chat"
)

func TestCatalog_Render(t *testing.T) {
	c := chat.Catalog{"k": {"<b>%[1]s</b> %[2]s · %[3]s", "%[3]s：<b>%[1]s</b> %[2]s"}}
	tests := []struct {
		lang string
		args []any
		want string
	}{
		{"en", []any{"a<b", chat.RawHTML("<i>x</i>"), 3}, "<b>a&lt;b</b> <i>x</i> · 3"},
		{"zh-CN", []any{"a&b", chat.RawHTML("<i>x</i>"), "<"}, "&lt;：<b>a&amp;b</b> <i>x</i>"},
	}
	for _, tc := range tests {
		if got := c.Render(tc.lang, "k", tc.args...); got != tc.want {
			t.Errorf("Render(%s, %v) = %q, want %q", tc.lang, tc.args, got, tc.want)
		}
	}
	if got := c.Render("en", "nosuch", "x"); got != "nosuch" {
		t.Errorf("missing key renders %q, want the key", got)
	}
}

// TestCatalog_RenderNumbers: a number takes %d as well as %s (and a
// width or precision), where it once printed "%!d(string=2)".
func TestCatalog_RenderNumbers(t *testing.T) {
	c := chat.Catalog{
		"d": {"%[1]d GPUs of %[2]s", "%[2]s 中的 %[1]d"},
		"f": {"%.2[1]f h, %5[2]d", "%.2[1]f 小时，%5[2]d"},
	}
	tests := []struct {
		key, lang string
		args      []any
		want      string
	}{
		{"d", "en", []any{int64(2), 1}, "2 GPUs of 1"},
		{"d", "zh", []any{uint8(3), int32(4)}, "4 中的 3"},
		{"f", "en", []any{1.5, 42}, "1.50 h,    42"},
	}
	for _, tc := range tests {
		if got := c.Render(tc.lang, tc.key, tc.args...); got != tc.want {
			t.Errorf("Render(%s, %s, %v) = %q, want %q", tc.lang, tc.key, tc.args, got, tc.want)
		}
	}
}

func TestCatalog_Text(t *testing.T) {
	c := chat.Catalog{"k": {"%[1]q is %[2]v", "%[1]q 是 %[2]v"}}
	if got := c.Text("en", "k", "a<b", 5); got != `"a<b" is 5` {
		t.Errorf("Text(en) = %q", got)
	}
	if got := c.Text("zh", "k", "x", 1.5); got != `"x" 是 1.5` {
		t.Errorf("Text(zh) = %q", got)
	}
}

func TestCatalog_Check(t *testing.T) {
	c := chat.Catalog{
		"ok":       {"%[1]s and %[2]q", "%[2]q 和 %[1]s"},
		"percent":  {"%[1]s (%[2]s%%)", "%[1]s（%[2]s%%）"},
		"no_zh":    {"text", ""},
		"dropped":  {"%[1]s of %[2]s", "%[1]s"},
		"invented": {"%[1]s", "%[1]s %[2]s"},
	}
	var got []string
	for _, err := range c.Check() {
		got = append(got, err.Error())
	}
	want := []string{
		"chat: dropped: arguments [1 2] in English, [1] in Chinese",
		"chat: invented: arguments [1] in English, [1 2] in Chinese",
		"chat: no_zh: a language is missing",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Check() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
