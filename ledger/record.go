package ledger

import (
	"context"
	"time"
)

// RecordKind names a kind of record the user typed once and may later
// list, delete or correct: a one-off charge, a top-up, a balance reading
// or a traffic record. Its text keys the edges' words for it.
type RecordKind string

// Record kinds, as /records lists them.
const (
	RecordCharge  RecordKind = "charge"        // /charge
	RecordTopUp   RecordKind = "topup"         // /topup
	RecordBalance RecordKind = "balance"       // /balance PLATFORM AMOUNT
	RecordTraffic RecordKind = "traffic_usage" // /traffic NAME AMOUNT
)

// RecordKinds lists every record kind, for catalogs that must name each.
func RecordKinds() []RecordKind {
	return []RecordKind{RecordCharge, RecordTopUp, RecordBalance, RecordTraffic}
}

// Action kinds of deleting and correcting a record (RecordStore); their
// Undo puts the record back as it was, under the same reference.
const (
	ActionChargeDelete  ActionKind = "charge_delete"
	ActionChargeFix     ActionKind = "charge_fix"
	ActionTopUpDelete   ActionKind = "topup_delete"
	ActionTopUpFix      ActionKind = "topup_fix"
	ActionBalanceDelete ActionKind = "balance_delete"
	ActionBalanceFix    ActionKind = "balance_fix"
	ActionTrafficDelete ActionKind = "traffic_usage_delete"
	ActionTrafficFix    ActionKind = "traffic_usage_fix"
)

// DeleteAction is the journaled kind of deleting a record of kind k.
func (k RecordKind) DeleteAction() ActionKind { return ActionKind(string(k) + "_delete") }

// FixAction is the journaled kind of correcting a record of kind k.
func (k RecordKind) FixAction() ActionKind { return ActionKind(string(k) + "_fix") }

// Record is one typed record, as /records lists it.
type Record struct {
	// Ref is the record's reference (#Ref in the chat): the journal ID of
	// the action that recorded it. It is stable (a correction keeps it,
	// and an undone deletion restores it) and never reused, since the
	// journal is never rewritten.
	Ref      int64
	Kind     RecordKind
	RentalID int64  // charges (0 if not on a rental) and traffic
	Rental   string // the rental's name, "" for none
	Platform string
	Amount   Decimal // money kinds
	Currency Currency
	Note     string    // charges
	Bytes    int64     // traffic
	Dir      Direction // traffic: In or Out
	At       time.Time
	// Owner and Project: a charge's own, traffic's its rental's (0 and ""
	// for top-ups and balances, which are the ledger's, and on a personal
	// ledger).
	Owner   int64
	Project string
}

// RecordFix is a correction of a record: each field set replaces the
// record's; a field the record's kind does not have is refused.
type RecordFix struct {
	Amount   *Decimal // money kinds; a charge's is not zero, a top-up's is positive
	Currency Currency // "" or the record's own: a record keeps its currency
	Note     *string  // charges
	At       time.Time
	Bytes    int64     // traffic, > 0; 0 keeps it
	Dir      Direction // traffic: In or Out; "" keeps it
}

// Empty reports whether f changes nothing.
func (f RecordFix) Empty() bool {
	return f.Amount == nil && f.Note == nil && f.At.IsZero() && f.Bytes == 0 && f.Dir == ""
}

// RecordFilter selects records: Name is a rental's name or a platform
// ("" for all); at most Limit of them, newest first.
type RecordFilter struct {
	Name  string
	Limit int
}

// RecordStore lists, deletes and corrects a user's typed records. A
// record of another user, one the platform's API gave (a balance) and
// one whose recording was undone are not found (ENOTFOUND), by any
// reference. Deleting and correcting are journaled with the old record
// and undoable: Undo puts it back exactly, under the same reference.
type RecordStore interface {
	// Records returns the user's records matching f, newest first.
	Records(ctx context.Context, userID int64, f RecordFilter) ([]Record, error)
	// DeleteRecord deletes the record ref and returns it. Errors:
	// ENOTFOUND, EDUPLICATE.
	DeleteRecord(ctx context.Context, a Action, ref int64) (Record, error)
	// FixRecord corrects the record ref and returns it before and after.
	// Errors: ENOTFOUND; EINVALID (a field its kind lacks, another
	// currency, a zero charge, a top-up or traffic that is not positive,
	// a time in the future or before its rental started); EDUPLICATE.
	FixRecord(ctx context.Context, a Action, ref int64, f RecordFix) (old, fixed Record, err error)
}
