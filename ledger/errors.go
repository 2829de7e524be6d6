package ledger

import (
	"errors"
	"fmt"
)

// Error codes. Every error a ledger operation returns to a caller carries one
// of these codes, so that the edges (the bot, the agent hub, the CLI) can map
// them to user text or HTTP statuses in one table each.
const (
	EINVALID      = "invalid"      // the input is malformed or breaks a rule; nothing was changed
	ENOTFOUND     = "not_found"    // the named rental, volume or platform does not exist for this user
	ECONFLICT     = "conflict"     // the change conflicts with current state (name in use, already released)
	EDUPLICATE    = "duplicate"    // the same action (by its dedupe key) was already applied
	EUNAUTHORIZED = "unauthorized" // the caller may not do this
	EINTERNAL     = "internal"     // anything else: a bug or an I/O failure, logged in full
)

// Error is the ledger's application error: a machine-readable code and a
// message fit to show a user. Internal errors are not of this type; they are
// wrapped with %w and reported as EINTERNAL by ErrorCode.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("ledger: %s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of the first *Error in err's
// chain, or a generic text for internal errors (whose details must be logged,
// not shown).
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
