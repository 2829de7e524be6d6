package ledger

import (
	"context"
	"errors"
	"fmt"
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

// Error is the ledger's application error: a machine-readable code and a
// message fit to show a user. Internal errors are not of this type; they are
// wrapped with %w and reported as EINTERNAL by ErrorCode.
//
// Key and Args, where Key is set, name the message in the catalog below
// so an edge can render it in the user's language and zone: Args are the
// values the message shows (strings, numbers, time.Time, Decimal…), in the
// order of the English text's %[n] verbs. Message is always the English
// rendering, with times in UTC, for logs and for callers that show no
// language.
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

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("ledger: %s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("ledger: %s: %s", e.Code, e.Message)
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Errorc returns an *Error with the given code, the catalog message key and
// its arguments; Message is the English text of errorTexts[key] with times
// in UTC. A key missing from the catalog is a bug the catalog test catches;
// it still yields the key and its arguments as the message.
func Errorc(code, key string, args ...any) *Error {
	a := make([]any, len(args))
	for i, v := range args {
		if t, ok := v.(time.Time); ok {
			a[i] = fmtTime(t)
			continue
		}
		a[i] = v
	}
	tmpl, ok := errorTexts[key]
	if !ok {
		return &Error{Code: code, Message: fmt.Sprint(append([]any{key, " "}, a...)...), Key: key, Args: args}
	}
	return &Error{Code: code, Message: fmt.Sprintf(tmpl, a...), Key: key, Args: args}
}

// ErrorTexts returns a copy of the ledger's message catalog, key → English
// format (arguments as explicit %[n] verbs), so that an edge's own catalog
// can be checked to render every key with the same arguments.
func ErrorTexts() map[string]string {
	m := make(map[string]string, len(errorTexts))
	for k, v := range errorTexts {
		m[k] = v
	}
	return m
}

// errorTexts holds the English text of every keyed ledger error. Verbs are
// indexed (%[1]v) so a translation may reorder them; a time.Time argument
// is shown here in UTC, and in the user's zone by the edges.
var errorTexts = map[string]string{
	"not_number":            "%[1]q is not a number: %[2]v (write it like 1.88)",
	"bad_currency":          "%[1]q is not a currency: use a code like CNY or USD",
	"bad_month":             "%[1]q is not a month: write it like 2026-11",
	"bad_price_unit":        "unknown price unit %[1]q: use /s, /min, /h, /day, /week or /month",
	"price_negative":        "price %[1]v is negative",
	"no_platform":           "rental %[1]v has no platform: add one, e.g. autodl",
	"bad_count":             "GPU count %[1]v is out of range %[2]v..%[3]v",
	"bad_mode":              "unknown billing mode %[1]q: use per-second, per-minute, per-hour or always-on",
	"no_currency":           "rental %[1]v has no currency",
	"bad_min":               "min=%[1]v is out of range %[2]v..%[3]v in whole seconds",
	"bad_step":              "step=%[1]v is out of range %[2]v..%[3]v in whole seconds",
	"floor_negative":        "floor=%[1]v is negative",
	"bad_lease":             "for=%[1]v is out of range %[2]v..%[3]v",
	"price_absurd":          "price %[1]v is absurd (over %[2]v per hour): check the amount and unit",
	"bad_name":              "name %[1]q may use only letters, digits, '-', '_' and '.', e.g. box1",
	"name_length":           "name %[1]q must be 1 to 32 characters long",
	"no_time":               "event has no time",
	"not_started":           "rental %[1]v has not started: its first event must be a start",
	"before_start":          "%[1]v at %[2]v is before %[3]v started (%[4]v)",
	"before_last":           "%[1]v at %[2]v is before %[3]v's last change (%[4]v): events must be recorded in order",
	"already_released":      "%[1]v was already released: it cannot %[2]v",
	"already_started":       "%[1]v has already started: use resume",
	"already_stopped":       "%[1]v is already stopped",
	"not_stopped":           "%[1]v is running, not stopped",
	"bad_event":             "unknown event %[1]q",
	"bad_volume_size":       "size %[1]vGB is out of range 0..%[2]vGB",
	"no_volume":             "volume %[1]v does not exist yet",
	"volume_before_last":    "%[1]v at %[2]v is before volume %[3]v's last change (%[4]v)",
	"volume_deleted":        "volume %[1]v was already deleted",
	"volume_exists":         "volume %[1]v already exists",
	"bad_storage_unit":      "unknown storage price unit %[1]q: use /GB/h, /GB/day or /GB/month",
	"storage_negative":      "storage price %[1]v is negative",
	"stopped_negative":      "stopped storage price %[1]v is negative",
	"free_negative":         "free=%[1]vGB is negative",
	"volume_no_currency":    "volume %[1]v has no currency",
	"bad_wait_for":          "wait_for=%[1]v: %[2]q is not ssh, jupyter, vscode or none, e.g. wait_for=ssh,jupyter",
	"wait_for_canonical":    "wait_for=%[1]v is not in canonical form (%[2]v)",
	"bad_idle_people":       "idle_people=%[1]v is out of range %[2]v..%[3]v (or none), e.g. idle_people=3h",
	"bad_action":            "unknown action %[1]q: use off, notify, stop or release, e.g. /autorelease box1 stop after 1h",
	"bad_after":             "after=%[1]v is out of range %[2]v..%[3]v, e.g. /autorelease box1 stop after 1h",
	"after_short":           "after=%[1]v is too short: give at least %[2]v, e.g. /autorelease box1 stop after 30m",
	"no_rental_named":       "you have no rental named %[1]v (see /status for your rentals)",
	"bad_rental_ref":        "%[1]q is not a rental's address: write NAME@YYYY-MM-DD, the day it started, e.g. yolo@2026-11-02 (NAME@YYYY-MM-DD#2 for the second of that name that day)",
	"ref_future":            "%[1]v: no rental can have started on %[2]v, a day still to come",
	"no_rental_at":          "you have no rental %[2]v that started on %[3]v (%[1]v): /status shows the addresses of rentals that share a name",
	"ref_other_then":        "%[2]v is before this %[1]v started; the %[1]v that ran then is %[3]v: write %[3]v in place of %[1]v to correct it",
	"bad_traffic_direction": "unknown traffic direction %[1]q: use direction=out, in or both",
	"traffic_positive":      "traffic of %[1]v bytes: record a positive amount, e.g. /traffic %[2]v 12GB",
	"traffic_in_out":        "traffic direction %[1]q: use out or in, e.g. /traffic %[2]v 12GB out",
	"traffic_before_start":  "traffic at %[1]v is before %[2]v started (%[3]v)",
	"no_volume_named":       "you have no volume named %[1]v (see /status)",
	"bad_volume_event":      "unknown volume event %[1]q: use resize or delete",
	"charge_zero":           "a charge of 0 records nothing: give an amount, e.g. /charge box1 5 image fee",
	"note_long":             "the note is longer than %[1]v characters",
	"charge_target":         "a charge needs a rental or a platform, e.g. /charge box1 5 image fee",
	"charge_currency":       "a charge needs a currency, e.g. /charge box1 ¥5 image fee",
	"no_platform_given":     "no platform given, e.g. /%[1]v autodl 100",
	"no_currency_given":     "no currency given, e.g. /%[1]v autodl ¥100",
	"topup_positive":        "a top-up of %[1]v: give a positive amount, e.g. /topup autodl 100",
	"record_not_found":      "no record #%[1]v: /records lists your charges, top-ups, balances and traffic with their numbers",
	"record_no_note":        "#%[1]v is not a charge: only a charge has a note",
	"record_no_size":        "#%[1]v is not a traffic record: give an amount of money, e.g. /fix #%[1]v 6.50",
	"record_no_amount":      "#%[1]v is a traffic record: give its size and direction, e.g. /fix #%[1]v 12GB out",
	"record_currency":       "#%[1]v is in %[2]v, not %[3]v: a record keeps its currency (/delete #%[1]v and record it again)",
	"record_future":         "%[1]v is in the future (now %[2]v): give the time it happened",
	"charge_before_start":   "a charge at %[1]v is before %[2]v started (%[3]v)",
	"record_no_change":      "nothing to change in #%[1]v: give an amount, a note, a size or a time, e.g. /fix #%[1]v 6.50",
	"bad_lang":              "unknown language %[1]q: use lang=en or lang=zh",
	"bad_tz":                "unknown time zone %[1]q: use an IANA name, e.g. tz=Asia/Shanghai",
	"bad_summary":           "summary time is out of range: use HH:MM, e.g. summary=22:00, or summary=off",
	"bad_quiet":             "quiet hours are out of range: use HH:MM-HH:MM, e.g. quiet=23:00-08:00",
	"setting_range":         "%[1]v=%[2]v is out of range %[3]v..%[4]v",
	"not_registered":        "user %[1]v is not registered: send /start first",
	"nothing_to_undo":       "there is nothing to undo (a stop or release confirmed by an agent cannot be undone: /resume NAME starts a stopped rental again)",
	"agent_released":        "%[1]v was released: an agent can only report for a live rental",
	"was_released":          "%[1]v was already released",
	"not_live":              "%[1]v is not a live rental",
	"release_in_progress":   "%[1]v already has a release in progress",
	"no_unreleased":         "you have no unreleased rental called %[1]v: /status lists them",
	"currency_mismatch":     "%[1]v is billed in %[2]v, not %[3]v: give the amount in %[2]v",
	"no_rental_called":      "you have no rental called %[1]v: /status lists them",
	"no_agent_reported":     "no agent has reported for %[1]v: release it on the platform, then /release %[1]v",
	"card_not_yours":        "that message is not a card of yours",
	"rental_not_yours":      "that rental is not yours",
	"store_unavailable":     "the ledger cannot be reached right now: it will be retried",
	"disk_full":             "the disk holding the ledger is full: it will be retried once there is room",

	// Refusals of the undo journal, the agent hub and budgets.
	"undo_after_agent_stop":    "cannot undo the %[1]v of %[2]v: its agent stopped %[2]v after it, and that cannot be undone; /resume %[2]v starts it again",
	"undo_after_agent_release": "cannot undo the %[1]v of %[2]v: its agent released %[2]v after it, and that cannot be undone; record a new rental with /rent",
	"undo_done":                "the %[1]v %[2]v is undone already: nothing more was undone",
	"undo_stale":               "nothing was undone: another change came after the %[1]v %[2]v; send /undo again to see what it would undo now",
	"order_nothing_to":         "%[1]v is %[2]v: nothing to %[3]v",
	"budget_not_positive":      "budget %[1]v is not positive: use e.g. /budget 500/month",
	"budget_no_currency":       "budget %[1]v has no currency, e.g. /budget ¥500/month",
	"budget_twice":             "two budgets in %[1]v: a currency has one budget",

	// A volume's price changed part-way (Volume.CheckPriceAt).
	"volume_price_unpriced":      "volume %[1]v has no price yet: price it from its creation first, e.g. /storage %[1]v price=0.0066/GB/day",
	"volume_price_before_create": "price at %[1]v is before volume %[2]v was created (%[3]v)",
	"volume_price_after_delete":  "price at %[1]v is not before volume %[2]v was deleted (%[3]v): give a time while it existed",
	"volume_price_future":        "price at %[1]v is in the future (now %[2]v): give the time the price changed",
	"traffic_price_unpriced":     "%[1]v has no traffic price yet: set it first, e.g. /traffic %[1]v price=0.8/GB",
	"traffic_price_before_start": "traffic price at %[1]v is before %[2]v started (%[3]v)",

	// A rental's price corrected in its past (Rental.CheckPriceAt).
	"price_past_kind":     "only a price change can be recorded in the past, not %[1]v",
	"price_before_start":  "price at %[1]v is before %[2]v started (%[3]v)",
	"price_after_release": "price at %[1]v is not before %[2]v was released (%[3]v): give a time while it was rented",
	"rental_unpriced_at":  "%[1]v has no price yet: price it from its start first (/price %[1]v PRICE, without at), then change it from a time on",

	// A period asked for (a reconciliation, an export).
	"period_empty":  "the period %[1]v to %[2]v is empty: give a start before its end",
	"period_future": "the period starts %[1]v, in the future: give one that has begun",

	// Enrolment (EnrolStore): tokens that announce instances, and the
	// user's answers to the announcements.
	"enrol_token_unknown":    "unknown enrolment token: send /agent in the chat for a new install line",
	"enrol_token_revoked":    "this enrolment token was revoked: send /agent in the chat for a new install line",
	"instance_no_key":        "the agent could not tell this host apart (no instance ID, machine-id or host name)",
	"instances_pending_full": "%[1]v announced instances are waiting for your answer: answer their cards (or /agent revoke if they are not yours) before more are shown",
	"no_instance":            "you have no announced instance %[1]v: the card of a new instance gives its number, e.g. /adopt 7",
	"instance_bound":         "instance %[1]v is already logged as %[2]v",
	"instance_not_bound":     "instance %[1]v is not logged as a rental: log it first, e.g. /adopt %[2]v",

	// Platform sync (PlatformStore): what a platform listed, and bindings.
	"platform_id_empty":        "the platform gave no instance ID: an instance needs its platform's ID",
	"platform_id_long":         "the platform's instance ID is %[1]v bytes long: at most %[2]v bytes are kept",
	"platform_id_chars":        "the platform's instance ID %[1]q has a control or invisible character at byte %[2]v: an ID is printable text",
	"instance_label_long":      "the instance's name is %[1]v bytes long: at most %[2]v bytes are kept",
	"instance_label_chars":     "the instance's name %[1]q has a control or invisible character at byte %[2]v",
	"instance_gpu_long":        "the instance's GPU model is %[1]v bytes long: at most %[2]v bytes are kept",
	"instance_gpu_chars":       "the instance's GPU model %[1]q has a control or invisible character at byte %[2]v",
	"instance_gpu_count":       "the instance's GPU count %[1]v is out of range 0..%[2]v",
	"instance_currency":        "%[1]q is not a currency code: use an upper-case ISO code such as USD or CNY",
	"instance_message":         "message ID %[1]v is negative: give 0 for none",
	"platform_key":             "%[1]q is not a platform name: use a lowercase key such as runpod, vast, lambda or autodl",
	"platform_status":          "unknown instance status %[1]q: use asked, bound or declined",
	"platform_status_rental":   "an instance marked %[1]v names no rental: only a bound one does",
	"platform_bound_no_rental": "instance %[1]v is marked bound but names no rental: give the rental it is bound to",
	"platform_state":           "unknown instance state %[1]q: use running, stopped, terminated or unknown",
	"platform_bound":           "instance %[1]v is already bound to %[2]v",
	"platform_not_bound":       "instance %[1]v is not bound to a rental: nothing to apply its change to",
	"platform_mismatch":        "%[1]v is a rental on %[2]v, not on %[3]v",
	"platform_id_in_use":       "%[1]v already is the platform's instance %[2]v: one live rental per instance",
	"no_platform_instance":     "you have no platform instance %[1]v: /connect lists your connected platforms",
	"no_rental_id":             "you have no rental number %[1]v: /status lists your rentals",
	"rental_other_instance":    "%[1]v is not the platform's instance %[2]v: bind it to the instance first",
	"no_platform_rental":       "you have no rental of %[1]v instance %[2]v",
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
