package ledger

import (
	"context"
	"time"
)

// Action describes one user action for the store: who did it, when, and
// the key that makes it idempotent. Every mutating Store method runs in a
// single transaction and, when Key is set, records Key in that same
// transaction, so a retried action (a Telegram update delivered again after
// a crash) is applied once: the retry fails with EDUPLICATE and changes
// nothing.
type Action struct {
	UserID int64
	At     time.Time // when the action happened; the store's clock, read once
	Key    string    // dedupe key, e.g. "tg:42:update:1001"; "" for none
	// Tell, when set, is what the user is told of the change: written to
	// the outbox in the change's own transaction, so a crash before the
	// send cannot lose it (OutboxStore). Only the sync's writes take it
	// (PlatformStore.AddSyncedRental, ApplyPlatformEvent); others refuse
	// it with EINVALID.
	Tell *Notice
	// Via says how the action came to be (a typed command, a pressed
	// button, or "" for anything else), so that /undo can tell the user's
	// own last command from a change made some other way.
	Via Via
	// By is the person acting, when UserID is a team's ledger (TeamLedger):
	// records it creates are theirs (their Owner) unless the call names an
	// owner, the journal keeps who did it, and a change to a record of
	// another member is refused unless By is an admin of the team
	// (EUNAUTHORIZED "team_not_yours"); a person who is not a current
	// member writes nothing (ENOTFOUND "team_not_member"). 0: the system
	// (the platform sync, an agent, the scheduler), or UserID itself on a
	// personal ledger.
	By int64
}

// Person is who acted: By, or UserID on a personal ledger.
func (a Action) Person() int64 {
	if a.By != 0 {
		return a.By
	}
	return a.UserID
}

// Via is how a journaled action came to be. It is stored in the journal,
// so the values never change.
type Via string

// The ways an action comes to be.
const (
	ViaOther   Via = ""        // the platform sync, an agent, the scheduler, or unknown (older rows)
	ViaCommand Via = "command" // a message the user typed
	ViaButton  Via = "button"  // a button the user pressed
)

// ActionKind names a journaled action: what Undo reports it reversed.
// Its text is stored in the journal and keys the bot's message for it, so
// the values never change. A rental event's action has the event's kind
// (EventStop, EventResume, EventRelease); a rental is created by
// ActionRent, never by a journaled "start".
type ActionKind string

// Action kinds recorded in the journal and returned by Undo.
const (
	ActionRent          ActionKind = "rent"
	ActionStop          ActionKind = ActionKind(EventStop)
	ActionResume        ActionKind = ActionKind(EventResume)
	ActionPrice         ActionKind = "price"
	ActionRelease       ActionKind = ActionKind(EventRelease)
	ActionTraffic       ActionKind = "traffic"       // SetTraffic
	ActionTrafficUsage  ActionKind = "traffic_usage" // AddTraffic
	ActionStorage       ActionKind = "storage"       // CreateVolume
	ActionStorageResize ActionKind = "storage_resize"
	ActionStorageDelete ActionKind = "storage_delete"
	ActionStoragePrice  ActionKind = "storage_price" // SetVolumePrice
	ActionCharge        ActionKind = "charge"
	ActionTopUp         ActionKind = "topup"
	ActionBalance       ActionKind = "balance"
	ActionSettings      ActionKind = "settings"
	ActionAdopt         ActionKind = "adopt"   // EnrolStore.AdoptInstance: an announced instance logged as a rental
	ActionIgnore        ActionKind = "ignore"  // EnrolStore.IgnoreInstance: "Not mine"
	ActionSync          ActionKind = "sync"    // PlatformStore.AddSyncedRental: a rental created from a platform's list
	ActionUndo          ActionKind = "undo"    // not undoable itself
	ActionHandled       ActionKind = "handled" // MarkHandled; changes nothing
	// ActionRefused and ActionNoUndo change nothing either (Note): a
	// message that was refused, and an accepted command whose change Undo
	// cannot reverse (/budget, /autorelease). /undo asks before reversing
	// a change when one of them came after it or just before the /undo.
	ActionRefused ActionKind = "refused"
	ActionNoUndo  ActionKind = "no_undo"
	// ActionTeam is a change of a team itself (TeamStore: its members,
	// roles, invites, room, limits, approvals, a record's owner),
	// journaled in the team's ledger with the person who made it. Undo
	// never reverses it: a join or a removal is undone by another one.
	ActionTeam ActionKind = "team"
)

// UndoableKinds lists every kind Undo may report, for catalogs that must
// name each one.
func UndoableKinds() []ActionKind {
	return []ActionKind{ActionRent, ActionStop, ActionResume, ActionPrice, ActionRelease, ActionTraffic,
		ActionTrafficUsage, ActionStorage, ActionStorageResize, ActionStorageDelete, ActionStoragePrice,
		ActionCharge, ActionTopUp, ActionBalance, ActionSettings, ActionAdopt, ActionIgnore, ActionSync,
		ActionChargeDelete, ActionChargeFix, ActionTopUpDelete, ActionTopUpFix, ActionBalanceDelete, ActionBalanceFix,
		ActionTrafficDelete, ActionTrafficFix}
}

// UndoResult says what Undo reversed.
type UndoResult struct {
	Kind ActionKind // the kind of the undone action, e.g. ActionRent, ActionStop, ActionStorage
	Name string     // the rental or volume it touched, if any
	At   time.Time
	// Instance is the announced instance an undone ActionAdopt or
	// ActionIgnore answered (0 for other kinds): it waits for an answer
	// again, and the reply shows it so that the user can give one.
	Instance int64
	// RentalID and VolumeID are the rental and the volume the undone
	// action changed (0 for none), so the reply can say what is true of
	// them now.
	RentalID, VolumeID int64
}

// UndoNext is what Undo would reverse now, for /undo to name it and to
// decide whether to ask first.
type UndoNext struct {
	ID   int64 // its journal entry, which UndoAction takes
	Kind ActionKind
	Name string    // the rental or volume it touched, if any
	At   time.Time // when it was recorded
	Via  Via
	// RentalID is the rental it changed (0 for none), so that a reply can
	// name it by its address when another rental has its name.
	RentalID int64
	// Last is set when nothing else was journaled after it but questions,
	// undone changes and their undos: it is the user's latest change.
	Last bool
	// AfterRefusal is set when the user's latest journal entry is a
	// refused message (ActionRefused).
	AfterRefusal bool
}

// Store keeps users' ledgers: the chat's sets, each the contract of one
// aggregate of the store, and the Book that reads them together.
// Implementations are safe for concurrent use. Every method checks the
// user: a user never reads or changes another user's rows. Errors are
// *Error values (EINVALID, ENOTFOUND, ECONFLICT, EDUPLICATE) or wrapped
// internal errors; a failed call changes nothing.
type Store interface {
	UserStore
	RentalStore
	VolumeStore
	MoneyStore
	JournalStore
	MetaStore

	// Book loads everything the cost engine needs for one user.
	Book(ctx context.Context, userID int64) (*Book, error)
}

// UserStore keeps the users and their settings.
type UserStore interface {
	// EnsureUser returns the user with u.ID, creating it with u's fields
	// (and DefaultSettings where u.Settings is zero) if it does not exist.
	EnsureUser(ctx context.Context, u User) (User, error)
	// User returns one user, or ENOTFOUND.
	User(ctx context.Context, id int64) (User, error)
	// Users returns all users in ID order.
	Users(ctx context.Context) ([]User, error)
	// UpdateUser replaces the user's Lang, TZ and Settings (undoable).
	UpdateUser(ctx context.Context, a Action, u User) (User, error)
}

// RentalStore keeps the rentals, their events and their traffic. Every
// method taking a rental's name takes an address (RentalRef) too.
type RentalStore interface {
	// CreateRental stores a new rental whose Events hold exactly its start.
	// ECONFLICT if an unreleased rental of the user has the same name.
	CreateRental(ctx context.Context, a Action, r Rental) (*Rental, error)
	// AppendEvent adds an event to the user's unreleased rental called name
	// (checked with Rental.CheckEvent). ENOTFOUND if there is none.
	AppendEvent(ctx context.Context, a Action, name string, ev Event) (*Rental, error)
	// SetTraffic sets a rental's traffic terms.
	SetTraffic(ctx context.Context, a Action, name string, t TrafficTerms) (*Rental, error)
	// SetPriceAt records a price change at a past time inside the life of
	// a rental, released or not (Rental.CheckPriceAt), to correct a rate.
	SetPriceAt(ctx context.Context, a Action, name string, ev Event) (*Rental, error)
	// SetTrafficPriceAt changes a rental's traffic price per GB from p.At
	// on (Rental.CheckTrafficPriceAt), released or not (undoable).
	SetTrafficPriceAt(ctx context.Context, a Action, name string, currency Currency, p TrafficPrice) (*Rental, error)
	// AddTraffic records traffic usage for a rental.
	AddTraffic(ctx context.Context, a Action, name string, u TrafficUsage) (*Rental, error)

	// Rental returns the user's rental called name: the unreleased one, or
	// else the most recently created released one, without loading the
	// rest of the ledger; name may be an address (RentalRef). ENOTFOUND if
	// there is none.
	Rental(ctx context.Context, userID int64, name string) (*Rental, error)
	// RentalsNamed returns every rental of the user called name (a bare
	// name), released or not, in creation order, for telling rentals that
	// share a name apart by their addresses (RentalRef).
	RentalsNamed(ctx context.Context, userID int64, name string) ([]*Rental, error)
	// RentalsByState returns the user's rentals in any of states (all of
	// them when none is given), in creation order.
	RentalsByState(ctx context.Context, userID int64, states ...State) ([]*Rental, error)
	// LiveRentals returns every user's unreleased rentals.
	LiveRentals(ctx context.Context) ([]*Rental, error)
	// RentalByID finds a rental by its id, whoever it belongs to.
	RentalLookup
}

// VolumeStore keeps the storage volumes and their prices.
type VolumeStore interface {
	// CreateVolume stores a new volume whose Events hold exactly its
	// creation; v.RentalName, if set, names the rental it is attached to.
	CreateVolume(ctx context.Context, a Action, v Volume) (*Volume, error)
	// SetVolumePrice sets or corrects a volume's price terms from its
	// creation (until its first later change, if any; undoable).
	SetVolumePrice(ctx context.Context, a Action, name string, p Volume) (*Volume, error)
	// SetVolumePriceAt changes a volume's price terms from p.At on, inside
	// its life (Volume.CheckPriceAt), in its currency (undoable).
	SetVolumePriceAt(ctx context.Context, a Action, name string, currency Currency, p VolumePrice) (*Volume, error)
	// AppendVolumeEvent resizes or deletes the user's live volume called name.
	AppendVolumeEvent(ctx context.Context, a Action, name string, ev VolumeEvent) (*Volume, error)
	// Volume returns the user's volume called name: the live one, or else
	// the most recently created deleted one. ENOTFOUND if there is none.
	Volume(ctx context.Context, userID int64, name string) (*Volume, error)
}

// MoneyStore keeps the money that is not a rental's or a volume's time:
// one-off charges, top-ups and balance readings, and their corrections.
type MoneyStore interface {
	// AddCharge records a one-off charge; c.RentalID is resolved from
	// rentalName when that is not empty.
	AddCharge(ctx context.Context, a Action, rentalName string, c Charge) (Charge, error)
	// AddTopUp records a top-up.
	AddTopUp(ctx context.Context, a Action, t TopUp) (TopUp, error)
	// RecordBalance records the balance a platform shows.
	RecordBalance(ctx context.Context, a Action, b BalanceRecord) (BalanceRecord, error)

	// RecordStore lists, deletes and corrects past charges, top-ups,
	// balance readings and traffic records.
	RecordStore
}

// JournalStore is the action journal: every change is an action, and the
// latest undoable one can be reversed.
type JournalStore interface {
	// Undo reverses the user's most recent undoable action. ENOTFOUND if
	// there is nothing to undo.
	Undo(ctx context.Context, a Action) (UndoResult, error)
	// NextUndo says what Undo would reverse now, changing nothing.
	// ENOTFOUND if there is nothing to undo.
	NextUndo(ctx context.Context, userID int64) (UndoNext, error)
	// NextUndoBy is NextUndo of the person by on a team's ledger: only
	// their own entries count, as Undo with Action.By reverses only them
	// (by 0: every entry, NextUndo).
	NextUndoBy(ctx context.Context, userID, by int64) (UndoNext, error)
	// UndoAction reverses the journal entry id (an UndoNext.ID) only while
	// it is what Undo would reverse: ECONFLICT "undo_stale" when another
	// change came on top of it since, "undo_done" when it is undone
	// already; both change nothing.
	UndoAction(ctx context.Context, a Action, id int64) (UndoResult, error)
	// Note journals a message that changed nothing Undo can reverse, as
	// kind ActionRefused or ActionNoUndo, with a.Key when set (EDUPLICATE
	// if recorded already).
	Note(ctx context.Context, a Action, kind ActionKind) error
	// MarkHandled records a.Key for an action that changed nothing (a
	// question), so that the transport's progress is kept with it.
	// EDUPLICATE if the key was already recorded.
	MarkHandled(ctx context.Context, a Action) error
}

// MetaStore keeps small process-wide values (the transport's update
// offset, the owner claim code).
type MetaStore interface {
	Meta(ctx context.Context, key string) (string, bool, error)
	SetMeta(ctx context.Context, key, value string) error
}
