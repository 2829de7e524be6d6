package agent

import "sync/atomic"

// Token holds the token the agent reports with now. An agent started with
// an enrolment token switches to its rental's own token once the user
// logs the instance, and back when the hub refuses that one; the
// reporter, the order executor and the policy gate all read it here, so
// they never disagree about which token signs what. It is safe for
// concurrent use; the zero value holds "".
type Token struct{ v atomic.Pointer[string] }

// NewToken returns a Token holding tok.
func NewToken(tok string) *Token {
	t := &Token{}
	t.Set(tok)
	return t
}

// Get returns the current token.
func (t *Token) Get() string {
	if p := t.v.Load(); p != nil {
		return *p
	}
	return ""
}

// Set makes tok the current token.
func (t *Token) Set(tok string) { t.v.Store(&tok) }
