package chat

import (
	"fmt"
)

// Catalog maps a message key to its English and Chinese templates (fmt
// verbs with explicit indexes, %[1]s, so a translation may reorder its
// arguments). Each part that speaks keeps its own texts in one: the core's
// replies, the parser's errors, the ledger's errors, the scheduler's cards.
type Catalog map[string][2]string

// RawHTML is a message argument that is already HTML and must not be
// escaped (a rendered fragment). Every other argument is escaped.
type RawHTML string

// Render formats key in lang as HTML: string arguments are escaped,
// RawHTML ones are not, other values are formatted with %v and escaped.
// The templates are HTML in Telegram's subset. A missing key renders as
// the key itself, which the catalog tests catch.
func (c Catalog) Render(lang, key string, args ...any) string {
	a := make([]any, len(args))
	for i, v := range args {
		switch v := v.(type) {
		case RawHTML:
			a[i] = string(v)
		case string:
			a[i] = Escape(v)
		default:
			a[i] = Escape(fmt.Sprint(v))
		}
	}
	return c.Text(lang, key, a...)
}

// Text formats key in lang as plain text, its arguments as given (any fmt
// verb works: %q quotes a user's token): for button labels, callback
// toasts and messages that are escaped later as a whole. A missing key
// renders as the key itself.
func (c Catalog) Text(lang, key string, args ...any) string {
	m, ok := c[key]
	if !ok {
		return key
	}
	tmpl := m[0]
	if NormLang(lang) == LangZH {
		tmpl = m[1]
	}
	return fmt.Sprintf(tmpl, args...)
}
