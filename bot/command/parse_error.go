package command

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// ParseError is the error Parse returns: a catalog key and arguments, which
// the core renders in the user's language (what was wrong, then an example
// of the command concerned). The parser holds no texts of its own. Through
// Unwrap it is a *ledger.Error with code EINVALID, so ledger.ErrorCode works
// on it unchanged; its Error text names the key and arguments, for logs.
type ParseError struct {
	Key  string   // catalog key, e.g. "bad_price"
	Args []string // inserted into the message in order; user tokens already quoted
	Cmd  Kind     // the command whose example is shown; "" shows /help
	// Sub is the subcommand the error is about (/team limit: "limit"),
	// so that the example shown is of that subcommand, not of the
	// command's first; "" for a command without subcommands.
	Sub string
}

func newParseError(cmd Kind, key string, args ...string) *ParseError {
	return &ParseError{Key: key, Args: args, Cmd: cmd}
}

// Error returns the ledger's prefix and code, the key and the arguments
// (marks removed): not a user's text, which the core renders in their
// language.
func (e *ParseError) Error() string { return e.ledgerError().Error() }

// Unwrap returns a *ledger.Error with code EINVALID.
func (e *ParseError) Unwrap() error { return e.ledgerError() }

func (e *ParseError) ledgerError() *ledger.Error {
	msg := e.Key
	for _, a := range e.Args {
		a = strings.TrimPrefix(a, RangeMark)
		msg += " " + strings.TrimPrefix(a, NounMark)
	}
	return &ledger.Error{Code: ledger.EINVALID, Message: msg}
}

// quote shows a user's token inside a message: quoted, control and
// direction-changing characters escaped, invalid UTF-8 escaped, at most 40
// characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}

// NounMark marks an argument that is a word to translate (a field or unit
// name) rather than the user's own text, which is always quoted.
const NounMark = "§"

func noun(k string) string { return NounMark + k }

// RangeMark marks an argument that is a range of durations, written in
// the reader's language when the error is shown ("1m..7d", "1分钟..7天").
const RangeMark = NounMark + "range "

// durRange is the argument for the range lo..hi (whole seconds).
func durRange(lo, hi time.Duration) string {
	return RangeMark + strconv.FormatInt(int64(lo/time.Second), 10) + ".." + strconv.FormatInt(int64(hi/time.Second), 10)
}
