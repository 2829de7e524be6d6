package ledger

import (
	"context"
	"net/netip"
	"time"
)

// PlatformStatus is where a listed platform instance stands with the
// user's ledger.
type PlatformStatus string

// Platform instance statuses.
const (
	// PlatformAsked: the user has unbound rentals on the platform that
	// may be this instance; they were asked which (once) and no rental is
	// created until they answer.
	PlatformAsked PlatformStatus = "asked"
	// PlatformBound: the instance is the rental RentalID.
	PlatformBound PlatformStatus = "bound"
	// PlatformDeclined: the user undid the rental the sync created, or
	// answered "not tracked": nothing more is created for it.
	PlatformDeclined PlatformStatus = "declined"
)

// PlatformInstance is an instance a user's platform connector listed, and
// what the sync loop last applied from it. The sync acts on changes
// between two valid lists (a state it has not applied yet, a price it has
// not told), so a user's /undo of a synced stop is not redone by the next
// poll of the same state.
type PlatformInstance struct {
	ID         int64 // the store's row ID (short, for button payloads); 0 before it is saved
	UserID     int64
	Platform   string // profile key: "runpod", "vast", "lambda", "autodl"
	PlatformID string // the platform's own ID; unique per user and platform
	Status     PlatformStatus
	RentalID   int64 // the bound rental (PlatformBound); 0 otherwise

	// What the platform last listed.
	Name     string
	GPU      string // normalised model, e.g. "RTX 4090"
	GPUCount int
	Price    Decimal // the whole instance's hourly price; zero when PriceOK is false
	PriceOK  bool
	Currency Currency
	// Address is the instance's public IP address as the platform lists
	// it; the zero Addr when it lists none.
	Address netip.Addr

	// State is the platform state ("running", "stopped", "terminated",
	// "unknown") last applied to the ledger, and StateAt when it began
	// (the platform's time, or the poll's when it gave none).
	State   string
	StateAt time.Time
	// PriceTold is the platform price the user was last told differs
	// from the ledger's rate (told once per distinct price); zero none.
	PriceTold   Decimal
	PriceToldOK bool

	FirstSeen time.Time // the first valid list that held it
	LastSeen  time.Time // the last valid list that held it
	// MessageID is the question's or announcement's message, to edit on
	// an answer; 0 none.
	MessageID int
}

// PlatformStore keeps what the connectors' sync loop learnt from the
// platforms' lists. Implementations are safe for concurrent use; every
// method checks that a rental named belongs to the instance's user.
type PlatformStore interface {
	// PlatformInstances returns the user's instances listed on platform,
	// by PlatformID.
	PlatformInstances(ctx context.Context, userID int64, platform string) ([]PlatformInstance, error)
	// PlatformInstance returns one of the user's instances by its row ID,
	// or ENOTFOUND (another user's included).
	PlatformInstance(ctx context.Context, userID, id int64) (PlatformInstance, error)
	// SavePlatformInstance inserts or updates in (by UserID, Platform,
	// PlatformID): the bookkeeping the sync keeps (status, listed facts,
	// state applied, price told, message). Not journaled. A RentalID
	// must be the user's. Errors: EINVALID (no platform or ID, an ID over
	// 128 bytes or with control characters, a bad status), ENOTFOUND
	// (the user, or the rental, is not theirs).
	SavePlatformInstance(ctx context.Context, in PlatformInstance) (PlatformInstance, error)
	// AddSyncedRental creates r (r.PlatformID = in.PlatformID, Events
	// holding its start, and a stop after it for an instance first listed
	// stopped) and saves in as bound to it, in one
	// transaction, as the action a, journaled as ActionSync: /undo removes
	// the rental and marks the instance PlatformDeclined. Errors as
	// CreateRental's; ECONFLICT "platform_bound" if the instance is bound
	// already.
	AddSyncedRental(ctx context.Context, a Action, in PlatformInstance, r Rental) (*Rental, PlatformInstance, error)
	// BindPlatformRental binds in to the user's existing rental rentalID
	// (a rental logged by hand): sets the rental's PlatformID and saves in
	// as bound, in one transaction, keyed by a.Key (not journaled: it is
	// an answer, and it changes no money). ECONFLICT "platform_bound" if
	// the rental already has another PlatformID.
	BindPlatformRental(ctx context.Context, a Action, in PlatformInstance, rentalID int64) (*Rental, PlatformInstance, error)
	// ApplyPlatformEvent appends ev (stop, resume, release) to in's bound
	// rental and saves in (its new State and StateAt) in one transaction,
	// as the action a, journaled as the event's kind like a typed one.
	// Errors as AppendEvent's; ENOTFOUND if in is not bound.
	ApplyPlatformEvent(ctx context.Context, a Action, in PlatformInstance, ev Event) (*Rental, PlatformInstance, error)
	// PlatformGeneration returns the generation of the user's instances
	// on platform: a number the store moves on every insert, update or
	// delete of one of them, whoever makes it (an /undo's trigger, another
	// process). Equal generations mean unchanged rows; 0: none yet.
	PlatformGeneration(ctx context.Context, userID int64, platform string) (int64, error)
	// PlatformInstancesGen is PlatformInstances with the generation the
	// rows are at, read in one snapshot.
	PlatformInstancesGen(ctx context.Context, userID int64, platform string) ([]PlatformInstance, int64, error)
	// FinishSyncRound ends one sync round of a connector in one
	// transaction (see SyncRoundEnd): it is the round's only write when
	// nothing changed. It returns the generation after its writes, and
	// current: no change other than its own came after end.Gen, so rows
	// read at end.Gen with its refreshes applied are the stored rows.
	// Errors: EINVALID (a malformed platform), ENOTFOUND (no connector:
	// the refreshes are kept).
	FinishSyncRound(ctx context.Context, end SyncRoundEnd) (gen int64, current bool, err error)
	// RentalByPlatformID returns the user's rental bound to the
	// platform's instance id (the newest, released or not), or ENOTFOUND.
	RentalByPlatformID(ctx context.Context, userID int64, platform, platformID string) (*Rental, error)
	// RecordPlatformBalance records a balance the platform's API gave,
	// not journaled (/undo never reverts what the platform said). To keep
	// the table small it updates in place the user's latest API-given
	// record of that platform and currency when it is under an hour old
	// and no record or top-up of that platform came after it; otherwise
	// it inserts. The balance engine reads these rows like typed ones.
	RecordPlatformBalance(ctx context.Context, b BalanceRecord) (BalanceRecord, error)

	// TellPlatformInstance is SavePlatformInstance with n written to the
	// outbox in the same transaction (OutboxStore): a price notice is
	// stored as told exactly when it is stored to be sent.
	TellPlatformInstance(ctx context.Context, in PlatformInstance, n Notice) (PlatformInstance, error)
	// SyncFlood returns the user's flood card of platform, or ENOTFOUND.
	SyncFlood(ctx context.Context, userID int64, platform string) (SyncFlood, error)
	// SaveSyncFlood inserts or replaces the card (by UserID, Platform).
	// Errors: EINVALID (a bad platform or state), ENOTFOUND
	// ("not_registered").
	SaveSyncFlood(ctx context.Context, f SyncFlood) error
	// DeleteSyncFlood removes the card; none is no error.
	DeleteSyncFlood(ctx context.Context, userID int64, platform string) error
	// DeclinePlatformInstances saves ins (new instances of one user and
	// platform) as PlatformDeclined, in transactions of a bounded number
	// of rows each, so a long list never holds the writer for long; an
	// instance the store holds already is left as it is. It returns how
	// many it wrote. Errors: EINVALID (Validate's, mixed users or
	// platforms).
	DeclinePlatformInstances(ctx context.Context, ins []PlatformInstance) (int, error)
}

// FloodState is where a flood card stands.
type FloodState string

// Flood card states.
const (
	// FloodOpen: the card is told; no rental is created from the
	// platform's new instances until the user answers.
	FloodOpen FloodState = "open"
	// FloodLogAll: the user pressed Log all; the sync logs up to Count
	// of them, in bounded batches, and then tells one summary.
	FloodLogAll FloodState = "logall"
	// FloodIgnore: the user pressed Ignore; the sync declines the new
	// instances listed and closes the card.
	FloodIgnore FloodState = "ignore"
)

// SyncFlood is the one card of a connector whose platform listed more
// new instances than the sync logs by itself (connsync.MaxNewPerRound,
// MaxNewPerDay), and the user's answer to it. It is stored before its
// message is sent (MessageID 0 until then), so a crash between the two
// sends it after the restart, as the outbox does.
type SyncFlood struct {
	UserID    int64
	Platform  string
	State     FloodState
	Count     int // the new instances told (not logged, not declined)
	Logged    int // logged so far after Log all
	MessageID int
	Text      string // the text last sent, to skip needless edits
	Since     time.Time
}

// SyncRoundEnd is what the end of a sync round writes: the LastSeen of
// its unchanged instances whose stored one went stale, and the
// connector's round end. None of it is journaled or money: a crash
// before it commits loses only refreshes the next round redoes.
type SyncRoundEnd struct {
	UserID   int64
	Platform string
	// Seen are the platform IDs whose LastSeen moves to SeenAt (never
	// back; an ID the store does not hold is skipped).
	Seen   []string
	SeenAt time.Time
	// SyncedAt and Err are MarkSynced's at and errText.
	SyncedAt time.Time
	Err      string
	// Gen is the generation the caller's rows were read at.
	Gen int64
}

// ReconcileCause is the likely cause of a drift between the ledger and
// what a platform billed.
type ReconcileCause string

// Reconcile causes.
const (
	CauseNone        ReconcileCause = ""              // within rounding
	CausePrice       ReconcileCause = "price"         // the platform's price differs from the ledger's rate
	CauseStorage     ReconcileCause = "storage"       // the platform billed more than compute: storage or traffic not in the ledger
	CauseNotInLedger ReconcileCause = "not_in_ledger" // billed for an instance the ledger has no rental for
	CauseNotBilled   ReconcileCause = "not_billed"    // the ledger counts a rental the platform did not bill
	CauseTime        ReconcileCause = "time"          // running time differs (a stop or start the ledger lacks)
	CauseUnknown     ReconcileCause = "unknown"       // a drift with no better guess
)

// ReconcileLine is one rental (or one billed instance the ledger lacks)
// in a reconciliation.
type ReconcileLine struct {
	RentalID   int64  // 0 for an instance the ledger has no rental for
	Name       string // the rental's name, or the platform's label
	PlatformID string
	Ledger     Money // what the ledger counts for the period
	Platform   Money // what the platform billed for it
	PlatformOK bool  // false: the platform reports no per-instance amount (balance deltas)
	Drift      Money // Platform - Ledger
	Cause      ReconcileCause
}

// Reconciliation is one platform's bill against the ledger for a period.
type Reconciliation struct {
	Platform string
	From, To time.Time
	// Source is where the platform's side comes from: "billing" (the
	// platform's per-instance billing endpoint) or "balance" (the fall of
	// the balance the API reported, less top-ups: one total, no lines).
	Source        string
	Lines         []ReconcileLine
	LedgerTotal   Money // the ledger's total for the platform and period
	PlatformTotal Money // the platform's total
	DriftTotal    Money
	Cause         ReconcileCause // the main cause, for the summary's one line
	// Err is what kept the platform's side from being read ("" none):
	// the reply says so instead of showing a drift.
	Err string
}

// PlatformActResult is the outcome of a stop or terminate sent through a
// platform's API and re-read until the platform listed the new state.
type PlatformActResult struct {
	Platform   string
	PlatformID string
	Action     string // "stop" or "terminate"
	// Confirmed: the platform listed the new state within the bound, and
	// the ledger recorded it (Rental is the rental after that change).
	Confirmed bool
	Rental    *Rental
	// At is when the ledger places the change: the platform's time, or
	// the confirming poll's when it gives none (Approximate).
	At          time.Time
	Approximate bool
	// State and RawState are what the platform listed last (its own word
	// in RawState), and Detail what it answered when not confirmed, for
	// "release not confirmed" (without the key).
	State    string
	RawState string
	Detail   string
}
