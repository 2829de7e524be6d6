// Package clip shortens text for logs, wire fields and chat without ever
// cutting a UTF-8 character in half: a cut rune becomes invalid UTF-8,
// which Telegram rejects and JSON encoders replace.
package clip

import "unicode/utf8"

// Bytes returns s if it is at most n bytes long; otherwise its longest
// prefix of at most n bytes that ends on a character boundary, followed by
// tail. Byte limits are what wire formats and APIs count.
func Bytes(s string, n int, tail string) string {
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + tail
}

// Runes returns s if it has at most n characters; otherwise its first n
// characters followed by tail. For text a person reads.
func Runes(s string, n int, tail string) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + tail
		}
		i++
	}
	return s
}
