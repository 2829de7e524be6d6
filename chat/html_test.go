package chat_test

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/chat"
)

func TestSplitHTML(t *testing.T) {
	line := strings.Repeat("x", 9) + "\n" // 10 units
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"short", "<b>hi</b>", 100, []string{"<b>hi</b>"}},
		{"empty", "", 100, nil},
		{"only markup", "<b> </b>", 100, nil},
		{"lines", strings.Repeat(line, 3), 25, []string{line + line, line}},
		{"spaces", "aaaa bbbb cccc", 10, []string{"aaaa bbbb ", "cccc"}},
		{"hard cut", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"entity kept whole", "ab&amp;cd", 4, []string{"ab", "&amp;", "cd"}},
		{"tag closed and reopened", "<b>aaaa bbbb</b>", 13, []string{"<b>aaaa </b>", "<b>bbbb</b>"}},
		{"nested with attribute", `<a href="u"><i>aa bb</i></a>`, 26, []string{`<a href="u"><i>aa </i></a>`, `<a href="u"><i>bb</i></a>`}},
		{"surrogate pairs count two", "😀😀😀", 4, []string{"😀😀", "😀"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := chat.SplitHTML(tc.in, tc.limit)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("SplitHTML(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
			}
		})
	}
}

func TestStripHTML(t *testing.T) {
	if got := chat.StripHTML(`<b>box1</b> &lt;4090&gt; <a href="x">a &amp; b</a>`); got != "box1 <4090> a & b" {
		t.Errorf("StripHTML = %q", got)
	}
}
