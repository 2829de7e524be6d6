package chat

import (
	"fmt"
	"html"
)

// Catalog maps a message key to its English and Chinese templates (fmt
// verbs with explicit indexes, %[1]s, so a translation may reorder its
// arguments; HTML in Telegram's subset). The core and the scheduler each
// keep their texts in one.
type Catalog map[string][2]string

// RawHTML is a message argument that is already HTML and must not be
// escaped (a rendered fragment). Every other argument is escaped.
type RawHTML string

// Render formats key in lang with args: strings are HTML-escaped, RawHTML
// is not, other values are formatted with %v and escaped. A missing key
// renders as the key itself, which the catalog tests catch.
func (c Catalog) Render(lang, key string, args ...any) string {
	m, ok := c[key]
	if !ok {
		return key
	}
	tmpl := m[0]
	if NormLang(lang) == LangZH {
		tmpl = m[1]
	}
	a := make([]any, len(args))
	for i, v := range args {
		switch v := v.(type) {
		case RawHTML:
			a[i] = string(v)
		case string:
			a[i] = html.EscapeString(v)
		default:
			a[i] = html.EscapeString(fmt.Sprint(v))
		}
	}
	return fmt.Sprintf(tmpl, a...)
}
