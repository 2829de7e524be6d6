package clip

import (
	"testing"
	"unicode/utf8"
)

func TestBytes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"box1", 10, "box1"},
		{"box1", 4, "box1"},
		{"abcdef", 3, "abc…"},
		{"空闲实例", 4, "空…"},  // 3-byte characters: the second one would be cut
		{"空闲实例", 6, "空闲…"}, // a boundary exactly
		{"空闲", 2, "…"},
		{"abc", 0, "…"},
		{"abc", -1, "…"},
	}
	for _, tt := range tests {
		got := Bytes(tt.s, tt.n, "…")
		if got != tt.want {
			t.Errorf("Bytes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Bytes(%q, %d) = %q is not valid UTF-8", tt.s, tt.n, got)
		}
	}
}

func TestRunes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"box1", 4, "box1"},
		{"box12", 4, "box1…"},
		{"空闲实例", 2, "空闲…"},
		{"空闲", 2, "空闲"},
		{"", 0, ""},
		{"a", 0, "…"},
	}
	for _, tt := range tests {
		if got := Runes(tt.s, tt.n, "…"); got != tt.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
