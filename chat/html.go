package chat

import (
	"html"
	"strings"
	"unicode/utf16"
)

// Replies are HTML in Telegram's subset (<b>, <i>, <code>, <pre>, <a>):
// the core and the scheduler escape every user-supplied text with Escape,
// a transport splits long texts with SplitHTML and shows plain text with
// StripHTML. One implementation of each, so that what the terminal shows,
// what a callback toast says and what Telegram gets as a fallback agree.

// Escape escapes s for use as text inside a reply's HTML: "<", ">", "&",
// "'" and '"'.
func Escape(s string) string { return html.EscapeString(s) }

type tokKind int

const (
	tokText tokKind = iota
	tokSpace
	tokNewline
	tokOpen
	tokClose
)

type token struct {
	kind tokKind
	s    string
	name string // tag name for tokOpen and tokClose
}

// tokenize splits HTML into tags, entities (kept whole) and single
// characters, so that a cut never lands inside a tag or an entity.
func tokenize(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			if end := strings.IndexByte(s[i:], '>'); end > 0 {
				tag := s[i : i+end+1]
				body := strings.TrimSpace(tag[1 : len(tag)-1])
				if name, ok := strings.CutPrefix(body, "/"); ok {
					toks = append(toks, token{kind: tokClose, s: tag, name: strings.ToLower(strings.TrimSpace(name))})
				} else {
					name := body
					if sp := strings.IndexAny(name, " \t\n"); sp >= 0 {
						name = name[:sp]
					}
					toks = append(toks, token{kind: tokOpen, s: tag, name: strings.ToLower(name)})
				}
				i += end + 1
				continue
			}
		case '&':
			if semi := strings.IndexByte(s[i:], ';'); semi > 1 && semi <= 10 && !strings.ContainsAny(s[i+1:i+semi], " &<") {
				toks = append(toks, token{kind: tokText, s: s[i : i+semi+1]})
				i += semi + 1
				continue
			}
		case '\n':
			toks = append(toks, token{kind: tokNewline, s: "\n"})
			i++
			continue
		case ' ':
			toks = append(toks, token{kind: tokSpace, s: " "})
			i++
			continue
		}
		// One character (a whole UTF-8 sequence).
		n := 1
		for i+n < len(s) && s[i+n]&0xC0 == 0x80 {
			n++
		}
		toks = append(toks, token{kind: tokText, s: s[i : i+n]})
		i += n
	}
	return toks
}

// UTF16Len is the length of s in UTF-16 code units, which is how Telegram
// counts a message's length; SplitHTML's limit is in these units.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if l := utf16.RuneLen(r); l > 0 {
			n += l
		} else {
			n++
		}
	}
	return n
}

// apply returns the stack of open tags after t.
func apply(stack []token, t token) []token {
	switch t.kind {
	case tokOpen:
		return append(stack[:len(stack):len(stack)], t)
	case tokClose:
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].name == t.name {
				return stack[:i:i]
			}
		}
	}
	return stack
}

func closers(stack []token) string {
	var b strings.Builder
	for i := len(stack) - 1; i >= 0; i-- {
		b.WriteString("</" + stack[i].name + ">")
	}
	return b.String()
}

func openers(stack []token) string {
	var b strings.Builder
	for _, t := range stack {
		b.WriteString(t.s)
	}
	return b.String()
}

// SplitHTML splits Telegram HTML into parts of at most limit UTF-16 code
// units each, markup included. It cuts at a line break where it can, else
// at a space, else between characters, never inside a tag or an entity;
// tags open at a cut are closed at the end of one part and reopened at the
// start of the next, so every part is valid HTML on its own. Parts with no
// visible text are dropped.
func SplitHTML(s string, limit int) []string {
	if UTF16Len(s) <= limit {
		if strings.TrimSpace(StripHTML(s)) == "" {
			return nil
		}
		return []string{s}
	}
	toks := tokenize(s)
	var parts []string
	var stack []token // tags open where the current part starts
	for i := 0; i < len(toks); {
		prefix := openers(stack)
		size := UTF16Len(prefix)
		st := stack
		type cut struct {
			end   int // index after the last token of the part
			stack []token
		}
		var atNewline, atSpace cut
		j := i
		for ; j < len(toks); j++ {
			next := apply(st, toks[j])
			if size+UTF16Len(toks[j].s)+UTF16Len(closers(next)) > limit && j > i {
				break
			}
			size += UTF16Len(toks[j].s)
			st = next
			switch toks[j].kind {
			case tokNewline:
				atNewline = cut{j + 1, st}
			case tokSpace:
				atSpace = cut{j + 1, st}
			}
		}
		c := cut{j, st}
		if j < len(toks) {
			// Prefer a line break in the second half of the part, then a space.
			half := i + (j-i)/2
			switch {
			case atNewline.end > half:
				c = atNewline
			case atSpace.end > half:
				c = atSpace
			case atNewline.end > i:
				c = atNewline
			case atSpace.end > i:
				c = atSpace
			}
		}
		var b strings.Builder
		b.WriteString(prefix)
		for _, t := range toks[i:c.end] {
			b.WriteString(t.s)
		}
		b.WriteString(closers(c.stack))
		part := b.String()
		if strings.TrimSpace(StripHTML(part)) != "" {
			parts = append(parts, part)
		}
		stack = c.stack
		i = c.end
	}
	return parts
}

// StripHTML removes tags and decodes entities: the plain text Telegram
// would show. For a retry without parse mode, a callback toast, the
// terminal. Replies escape user text, so every literal "<" followed by a
// ">" in markup starts a tag.
func StripHTML(s string) string {
	var b strings.Builder
	for _, t := range tokenize(s) {
		if t.kind == tokOpen || t.kind == tokClose {
			continue
		}
		b.WriteString(t.s)
	}
	return html.UnescapeString(b.String())
}
