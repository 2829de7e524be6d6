package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
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
	EUNAVAILABLE  = "unavailable"  // the store cannot serve now (busy, locked, an I/O error, cannot open, a cancelled call): try again later
	EFULL         = "full"         // the disk holding the store is full: try again once there is room
	EINTERNAL     = "internal"     // anything else: a bug or an I/O failure, logged in full
)

// Error is the ledger's application error: a machine-readable code, and
// what went wrong as a catalog key with its arguments. The ledger keeps no
// words for its refusals: view.LedgerMessage renders Key and Args in the
// user's language and zone (view/ledger_errors.go, English and Chinese),
// and every edge that shows an error goes through it.
//
// Key names the refusal (ErrorKeys lists them with their argument
// counts); Args are the values it shows (strings, numbers, time.Time,
// time.Duration, Decimal, Money…), in the catalog's order.
//
// Message, on an error made with Errorf (no key), is its English text:
// faults a caller should not meet (a programming error, a refusal not yet
// in the catalog) and the store's own, written for operators.
//
// Error's text, for logs and operators only, is the code with the key and
// its arguments (times in UTC), or Message: never shown to a user.
//
// Err, where set, is the cause the store met (a SQLite error behind
// EUNAVAILABLE or EFULL): it is part of Error's text, for logs, and
// reachable with errors.Is and errors.As, but never shown to a user.
type Error struct {
	Code    string
	Message string
	Key     string
	Args    []any
	Err     error
}

// Error implements the error interface: "ledger: CODE: KEY(ARGS)" for a
// keyed error (strings quoted, times in UTC), "ledger: CODE: MESSAGE"
// otherwise, then the cause if any.
func (e *Error) Error() string {
	what := e.Message
	if e.Key != "" {
		var b strings.Builder
		b.WriteString(e.Key)
		b.WriteByte('(')
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			switch v := a.(type) {
			case string:
				b.WriteString(strconv.Quote(v))
			case time.Time:
				b.WriteString(fmtTime(v))
			default:
				fmt.Fprint(&b, v)
			}
		}
		b.WriteByte(')')
		what = b.String()
	}
	if e.Err != nil {
		return fmt.Sprintf("ledger: %s: %s: %v", e.Code, what, e.Err)
	}
	return fmt.Sprintf("ledger: %s: %s", e.Code, what)
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted English
// message, for faults that have no catalog key (see Error).
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Errorc returns an *Error with the given code, the catalog key and its
// arguments. A key missing from ErrorKeys, or given the wrong number of
// arguments, is a bug the catalog tests catch (ledger's and view's).
func Errorc(code, key string, args ...any) *Error {
	return &Error{Code: code, Key: key, Args: args}
}

// ErrorKeys returns a copy of the ledger's error keys, each with the
// number of arguments its errors carry, so that an edge's catalog can be
// checked to word every key with every argument.
func ErrorKeys() map[string]int {
	m := make(map[string]int, len(errorArgs))
	for k, v := range errorArgs {
		m[k] = v
	}
	return m
}

// errorArgs is every key Errorc is called with, and how many arguments
// it carries. The words are view's.
var errorArgs = map[string]int{
	"after_short":                2,
	"agent_released":             1,
	"already_released":           2,
	"already_started":            1,
	"already_stopped":            1,
	"bad_action":                 1,
	"bad_after":                  3,
	"bad_count":                  3,
	"bad_currency":               1,
	"bad_event":                  1,
	"bad_idle_people":            3,
	"bad_lang":                   1,
	"bad_lease":                  3,
	"bad_min":                    3,
	"bad_mode":                   1,
	"bad_month":                  1,
	"bad_name":                   1,
	"bad_price_unit":             1,
	"bad_quiet":                  0,
	"bad_rental_ref":             1,
	"bad_step":                   3,
	"bad_storage_unit":           1,
	"bad_summary":                0,
	"team_name":                  2, // the name, the most runes
	"project_name":               2, // the name, the most runes
	"project_personal":           0,
	"button_not_yours":           0,
	"team_not_member":            0,
	"team_not_yours":             2, // the record's name, its owner's display name
	"team_unknown":               0,
	"team_name_taken":            1, // the name
	"teams_owned":                1, // the most teams one person may create
	"team_admin_only":            0,
	"team_owner_only":            0,
	"team_last_owner":            0,
	"team_invites":               1, // the most open invites
	"team_full":                  1, // the most members
	"team_already_member":        1, // the team's name
	"team_hand_to":               0,
	"invite_unknown":             0,
	"invite_expired":             1, // when it expired
	"invite_used":                0,
	"invite_not_for_you":         0,
	"invite_revoked":             0,
	"room_taken":                 1, // the team whose room the chat is
	"limit_negative":             0,
	"approval_unknown":           0,
	"approval_decided":           2, // its state (ledger.ApprovalState), who decided it (display name)
	"approval_lapsed":            0,
	"bad_traffic_direction":      1,
	"bad_tz":                     1,
	"bad_volume_event":           1,
	"bad_volume_size":            2,
	"bad_wait_for":               2,
	"before_last":                4,
	"before_start":               4,
	"bench_report_id":            0,
	"budget_no_currency":         1,
	"budget_not_positive":        1,
	"budget_twice":               1,
	"card_not_yours":             0,
	"charge_before_start":        3,
	"charge_currency":            0,
	"charge_target":              0,
	"charge_zero":                0,
	"currency_mismatch":          3,
	"disk_full":                  0,
	"enrol_token_revoked":        0,
	"enrol_token_unknown":        0,
	"floor_negative":             1,
	"free_negative":              1,
	"instance_bound":             2,
	"instance_currency":          1,
	"instance_gpu_chars":         2,
	"instance_gpu_count":         2,
	"instance_gpu_long":          2,
	"instance_label_chars":       2,
	"instance_label_long":        2,
	"instance_message":           1,
	"instance_no_key":            0,
	"instance_not_bound":         2,
	"instances_pending_full":     1,
	"job_after_release":          3,
	"job_before_start":           3,
	"job_future":                 1,
	"job_span_long":              2,
	"job_label":                  1,
	"job_span":                   2,
	"name_length":                1,
	"no_agent_reported":          1,
	"no_currency":                1,
	"no_currency_given":          1,
	"no_instance":                1,
	"no_platform":                1,
	"no_platform_given":          1,
	"no_platform_instance":       1,
	"no_platform_rental":         2,
	"no_rental_at":               3,
	"no_rental_called":           1,
	"no_rental_id":               1,
	"no_rental_named":            1,
	"no_time":                    0,
	"no_unreleased":              1,
	"no_volume":                  1,
	"no_volume_named":            1,
	"not_live":                   1,
	"not_number":                 2,
	"not_registered":             1,
	"not_started":                1,
	"not_stopped":                1,
	"note_long":                  1,
	"nothing_to_undo":            0,
	"order_nothing_to":           3,
	"period_empty":               2,
	"period_future":              1,
	"platform_bound":             2,
	"platform_bound_no_rental":   1,
	"platform_id_chars":          2,
	"platform_id_empty":          0,
	"platform_id_in_use":         2,
	"platform_id_long":           2,
	"platform_key":               1,
	"platform_mismatch":          3,
	"platform_not_bound":         1,
	"platform_state":             1,
	"platform_status":            1,
	"platform_status_rental":     1,
	"price_absurd":               2,
	"price_after_release":        3,
	"price_before_start":         3,
	"price_negative":             1,
	"price_past_kind":            1,
	"record_currency":            3,
	"record_future":              2,
	"record_no_amount":           1,
	"record_no_change":           1,
	"record_no_note":             1,
	"record_no_size":             1,
	"record_not_found":           1,
	"ref_future":                 2,
	"ref_other_then":             3,
	"release_in_progress":        1,
	"rental_not_yours":           0,
	"rental_other_instance":      2,
	"rental_unpriced_at":         1,
	"setting_range":              4,
	"span_backwards":             2,
	"stopped_negative":           1,
	"storage_negative":           1,
	"store_unavailable":          0,
	"topup_positive":             1,
	"traffic_before_start":       3,
	"traffic_in_out":             2,
	"traffic_positive":           2,
	"traffic_price_before_start": 3,
	"traffic_price_unpriced":     1,
	"undo_after_agent_release":   2,
	"undo_after_agent_stop":      2,
	"undo_done":                  2,
	"undo_stale":                 2,
	"volume_before_last":         4,
	"volume_deleted":             1,
	"volume_exists":              1,
	"volume_no_currency":         1,
	"volume_price_after_delete":  3,
	"volume_price_before_create": 3,
	"volume_price_future":        2,
	"volume_price_unpriced":      1,
	"wait_for_canonical":         2,
	"was_released":               1,
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

// Transient reports whether err means "try again later" rather than "this
// cannot work": an EUNAVAILABLE or EFULL error from the store, or a
// cancelled or expired context. A caller retries an operation failing so
// for as long as it lasts; nothing was changed by the failed attempt.
func Transient(err error) bool {
	switch ErrorCode(err) {
	case EUNAVAILABLE, EFULL:
		return true
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
