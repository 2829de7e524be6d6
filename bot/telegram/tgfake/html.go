package tgfake

import (
	"fmt"
	"html"
	"strings"
	"unicode/utf16"
)

// allowedTags is Telegram's HTML subset for parse_mode HTML.
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "code": true, "pre": true, "blockquote": true, "tg-emoji": true,
}

// ParseHTML checks text the way Telegram does for parse_mode HTML (only the
// supported tags, properly nested and closed; a bare "<" is an error) and
// returns the visible text with entities decoded. The error reads like
// Telegram's "can't parse entities" description.
func ParseHTML(text string) (string, error) {
	var visible strings.Builder
	var stack []string
	for i := 0; i < len(text); {
		switch c := text[i]; c {
		case '<':
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("Unclosed start tag at byte offset %d", i)
			}
			body := text[i+1 : i+end]
			if strings.HasPrefix(body, "/") {
				name := strings.ToLower(strings.TrimSpace(body[1:]))
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", fmt.Errorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, top(stack), name)
				}
				stack = stack[:len(stack)-1]
			} else {
				name := strings.ToLower(body)
				if sp := strings.IndexAny(name, " \t\n"); sp >= 0 {
					name = name[:sp]
				}
				if !allowedTags[name] {
					return "", fmt.Errorf("Unsupported start tag \"%s\" at byte offset %d", name, i)
				}
				stack = append(stack, name)
			}
			i += end + 1
		case '&':
			semi := strings.IndexByte(text[i:], ';')
			if semi > 1 && semi <= 10 {
				ent := text[i : i+semi+1]
				if dec := html.UnescapeString(ent); dec != ent {
					visible.WriteString(dec)
					i += semi + 1
					continue
				}
			}
			visible.WriteByte('&')
			i++
		default:
			visible.WriteByte(c)
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("Can't find end tag corresponding to start tag \"%s\"", top(stack))
	}
	return visible.String(), nil
}

func top(stack []string) string {
	if len(stack) == 0 {
		return ""
	}
	return stack[len(stack)-1]
}

// UTF16Len returns the length of s in UTF-16 code units, the unit of
// Telegram's length limits.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
