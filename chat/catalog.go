package chat

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
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
// RawHTML ones are not, numbers need no escaping and take any verb (%d
// as well as %s), other values are formatted with %v and escaped.
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
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
			a[i] = number{v}
		default:
			a[i] = Escape(fmt.Sprint(v))
		}
	}
	return c.Text(lang, key, a...)
}

// number is a numeric argument of Render. Its digits need no escaping, so
// it is kept a number for the numeric verbs (%d, %.2f) and printed as its
// text for the others (%s, %v, %q, as before): a template may count with
// either, and none prints "%!d(string=2)".
type number struct{ v any }

// Format implements fmt.Formatter.
func (n number) Format(f fmt.State, verb rune) {
	switch verb {
	case 's', 'v', 'q':
		fmt.Fprintf(f, fmt.FormatString(f, verb), fmt.Sprint(n.v))
	default:
		fmt.Fprintf(f, fmt.FormatString(f, verb), n.v)
	}
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

// argVerb matches an indexed verb such as %[2]s or %[1]q.
var argVerb = regexp.MustCompile(`%\[(\d+)\][a-zA-Z]`)

// Check reports what is wrong with the catalog, one error per key: a
// language missing, or the two languages not showing the same arguments
// (a translation that drops or invents one). Catalog tests call it.
func (c Catalog) Check() []error {
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(c)) {
		m := c[key]
		if m[0] == "" || m[1] == "" {
			errs = append(errs, fmt.Errorf("chat: %s: a language is missing", key))
			continue
		}
		en, zh := args(m[0]), args(m[1])
		if !slices.Equal(en, zh) {
			errs = append(errs, fmt.Errorf("chat: %s: arguments %v in English, %v in Chinese", key, en, zh))
		}
	}
	return errs
}

// args returns the sorted, distinct argument indexes tmpl shows.
func args(tmpl string) []string {
	var out []string
	for _, m := range argVerb.FindAllStringSubmatch(tmpl, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}
