// Package bot turns chat messages into ledger operations and ledger facts
// into replies. It knows nothing of Telegram or SQL: transports hand it text
// and render what it returns.
//
// This file holds the typed commands that Parse produces from the chat
// language of DESIGN.md section 3. Each command is its own struct; the core
// dispatches on them with a type switch. A zero time.Time in an At field
// means "not given": the core uses the moment of the action (its own clock,
// read once per action), so a retried message is not shifted in time.
package bot

import (
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// Kind names a command. It is also the English slash command without the
// slash ("rent" for /rent), and the key of its help entry.
type Kind string

// Command kinds, one per command of DESIGN.md section 3, plus the results of
// free text.
const (
	KindRent         Kind = "rent"
	KindStop         Kind = "stop"
	KindResume       Kind = "resume"
	KindRelease      Kind = "release"
	KindPrice        Kind = "price"
	KindStorage      Kind = "storage" // StorageCreate, StorageResize, StorageDelete
	KindTraffic      Kind = "traffic" // TrafficTerms, TrafficUsage
	KindCharge       Kind = "charge"
	KindTopup        Kind = "topup"
	KindBalance      Kind = "balance"
	KindBudget       Kind = "budget"
	KindStatus       Kind = "status"
	KindSpend        Kind = "spend"
	KindSummary      Kind = "summary"
	KindExport       Kind = "export"
	KindUndo         Kind = "undo"
	KindAgent        Kind = "agent"
	KindAutoRelease  Kind = "autorelease"
	KindSettings     Kind = "settings"
	KindWhy          Kind = "why"
	KindHelp         Kind = "help"
	KindStart        Kind = "start"
	KindProposedRent Kind = "proposed_rent" // free text that looks like a rental
	KindNotACommand  Kind = "not_a_command" // free text the bot cannot act on
	KindOtherBot     Kind = "other_bot"     // a command addressed to another bot in a group
)

// Command is one parsed message. The concrete types are the structs in this
// file; Kind tells them apart without a type switch.
type Command interface {
	Kind() Kind
}

// PriceSpec is a compute price as the user wrote it: Amount per Unit, in
// Currency, or with Currency "" when no currency was written (the platform
// profile's default then applies; the core decides).
type PriceSpec struct {
	Amount   ledger.Decimal
	Unit     ledger.Unit
	Currency ledger.Currency
}

// Price returns the ledger's form of p (without its currency).
func (p PriceSpec) Price() ledger.Price { return ledger.Price{Amount: p.Amount, Unit: p.Unit} }

// StoragePrice is a storage price: Amount per GB per Unit, in Currency or
// "" when none was written.
type StoragePrice struct {
	Amount   ledger.Decimal
	Unit     ledger.StorageUnit
	Currency ledger.Currency
}

// Amount is a sum of money as the user wrote it: a Value, and its Currency
// or "" when none was written.
type Amount struct {
	Value    ledger.Decimal
	Currency ledger.Currency
}

// Rent starts a rental: /rent NAME PLATFORM GPU PRICE [MODE] [min=] [step=]
// [floor=] [currency=] [for=] [at TIME].
type Rent struct {
	Name     string
	Platform string // lower case
	GPU      string // normalised model, e.g. "RTX 4090"
	GPUCount int    // ≥ 1
	Price    *PriceSpec
	Mode     ledger.Mode     // "" means the platform profile's default
	Min      time.Duration   // 0: not given
	Step     time.Duration   // 0: not given
	Floor    *ledger.Decimal // nil: not given
	Currency ledger.Currency // currency=CUR, or the price's own; "" if neither
	Lease    time.Duration   // for=DUR; 0: none
	At       time.Time       // zero: now
}

// Stop stops a rental's compute meter: /stop NAME [at TIME].
type Stop struct {
	Name string
	At   time.Time
}

// Resume restarts a stopped rental: /resume NAME [at TIME].
type Resume struct {
	Name string
	At   time.Time
}

// Release ends a rental: /release NAME [at TIME].
type Release struct {
	Name string
	At   time.Time
}

// Price changes a rental's rate from At on: /price NAME PRICE [at TIME].
type Price struct {
	Name  string
	Price PriceSpec
	At    time.Time
}

// StorageCreate creates a volume: /storage VOLUME SIZE PRICE [free=SIZE]
// [rental=NAME] [at TIME].
type StorageCreate struct {
	Volume string
	SizeGB ledger.Decimal
	Price  *StoragePrice // nil: unpriced
	FreeGB ledger.Decimal
	// FreeSet says free= was written, so free=0 means no free quota
	// rather than the platform's.
	FreeSet  bool
	Rental   string // "" if not attached
	Platform string // platform=, for a volume without a rental; "" if not written
	At       time.Time
}

// StorageResize resizes a volume: /storage VOLUME resize SIZE [at TIME].
type StorageResize struct {
	Volume string
	SizeGB ledger.Decimal
	At     time.Time
}

// StorageSetPrice sets or corrects an existing volume's price for its
// whole life: /storage VOLUME price=PRICE (no size).
type StorageSetPrice struct {
	Volume string
	Price  StoragePrice
	At     time.Time // refused if set: a volume has one price from its creation
}

// Kind returns KindStorage: /storage's help covers it.
func (StorageSetPrice) Kind() Kind { return KindStorage }

// StorageDelete deletes a volume: /storage VOLUME delete [at TIME].
type StorageDelete struct {
	Volume string
	At     time.Time
}

// TrafficTerms sets a rental's traffic price: /traffic NAME price=PRICE/GB
// [free=SIZE] [direction=out|in|both].
type TrafficTerms struct {
	Name       string
	PricePerGB ledger.Decimal
	Currency   ledger.Currency // "" if not written
	FreeGB     ledger.Decimal
	FreeSet    bool             // free= was written: no allowance from the platform's profile
	Direction  ledger.Direction // "" means the platform's, else out
}

// TrafficUsage records traffic by hand: /traffic NAME AMOUNT [out|in] [at TIME].
type TrafficUsage struct {
	Name      string
	SizeGB    ledger.Decimal   // GB as written; the ledger counts GiB (2^30 bytes)
	Direction ledger.Direction // In or Out; Out when not written
	At        time.Time
}

// Charge is a one-off charge: /charge NAME AMOUNT NOTE...; NAME is a rental
// or a platform (the core resolves which).
type Charge struct {
	Target string
	Amount Amount // non-zero; negative is a refund
	Note   string
	At     time.Time
}

// Topup records money added to a platform balance: /topup PLATFORM AMOUNT.
type Topup struct {
	Platform string
	Amount   Amount // positive
	At       time.Time
}

// Balance records the balance a platform shows: /balance PLATFORM AMOUNT
// [at TIME]. Without an amount it asks for the balances.
type Balance struct {
	Platform string // "" with Set false: show all balances
	Set      bool
	Amount   Amount // may be negative (an overdue account)
	At       time.Time
}

// Budget sets, removes or shows the monthly budgets, one per currency:
// /budget ¥3000/month, /budget 3000/month currency=CNY, /budget off
// [currency=USD]. Set with a zero amount (or "off") removes the budget in
// Amount.Currency, or every budget when that is empty. An empty
// Amount.Currency with a non-zero amount means no sign was written.
type Budget struct {
	Set    bool
	Amount Amount
}

// Status lists rentals and volumes: /status, /list.
type Status struct{}

// Spend reports what was spent in [From, To) in the user's zone: /spend
// [today|yesterday|week|month|last-month|YYYY-MM]; month when omitted.
type Spend struct {
	Period string // "today", "yesterday", "week", "month", "last-month" or "YYYY-MM"
	From   time.Time
	To     time.Time
}

// Summary sends the nightly summary now: /summary.
type Summary struct{}

// Export sends the ledger as a file: /export [csv|json].
type Export struct {
	Format string // "csv" or "json"
}

// Undo reverses the last change: /undo.
type Undo struct{}

// Agent asks for a rental's agent token and install command: /agent NAME.
type Agent struct {
	Name string
}

// AutoRelease sets what happens to an idle rental: /autorelease NAME
// off|notify|stop|release [after DUR].
type AutoRelease struct {
	Name   string
	Action ledger.AutoAction
	After  time.Duration // grace after the warning; 0: the default
	// WaitFor is who, connected to the host, holds the automatic action
	// (wait_for=); the zero value is every kind, the default.
	WaitFor ledger.WaitFor
}

// QuietHours is a daily window, in minutes after local midnight. From ==
// -1 means none (quiet=off).
type QuietHours struct {
	From, To int
}

// Settings changes a user's preferences; nil fields are unchanged. With no
// field set it asks to show them.
type Settings struct {
	TZ        *string // IANA name, checked with time.LoadLocation
	Lang      *string // "en" or "zh"
	SummaryAt *int    // minutes after midnight; -1: off
	IdleWarn  *time.Duration
	Silent    *time.Duration
	Quiet     *QuietHours
	LongRun   *time.Duration
}

// Empty reports whether s changes nothing (a request to show settings).
func (s Settings) Empty() bool {
	return s.TZ == nil && s.Lang == nil && s.SummaryAt == nil && s.IdleWarn == nil &&
		s.Silent == nil && s.Quiet == nil && s.LongRun == nil
}

// Why shows the log of automatic decisions for a rental: /why NAME.
type Why struct {
	Name string
}

// Help shows the command list, or one command's help: /help [COMMAND].
type Help struct {
	Topic Kind // "" for all
}

// Start is Telegram's first message, optionally with the owner claim code:
// /start [CODE].
type Start struct {
	Code string
}

// ProposedRent is free text that looks like a rental ("rented 2x4090 on
// vast at $0.70/h"). The core suggests a name and asks to confirm; fields
// not found are zero.
type ProposedRent struct {
	Platform string
	GPU      string
	GPUCount int
	// Price is the whole rental's, as the ledger bills it: with a price
	// said to be per card ("每张$1.64/h", "$0.35/h each") it is PerCard
	// times GPUCount.
	Price *PriceSpec
	// PerCard is the price as written when it was per card and GPUCount
	// is more than 1, so the proposal can show the sum; nil otherwise.
	PerCard *PriceSpec
	Mode    ledger.Mode
	At      time.Time // when the text says it started ("3小时前", "2h ago"); zero: not said
}

// ProposedChange is free text that stops, resumes or releases a rental
// ("释放box2", "box2关机了", "stopped box1"). The core proposes the
// command (/stop, /resume or /release) and runs it only when the user
// confirms.
type ProposedChange struct {
	Event ledger.EventKind // EventStop, EventResume or EventRelease
	Name  string           // as written; a valid name
	At    time.Time        // when the text says it happened; zero: not said
}

// KindProposedChange is the kind of a ProposedChange.
const KindProposedChange Kind = "proposed_change"

func (ProposedChange) Kind() Kind { return KindProposedChange }

// NotACommand is text the bot cannot act on; the core replies with help.
type NotACommand struct{}

// OtherBot is a command addressed to another bot (/rent@OtherBot in a
// group); the core ignores it silently.
type OtherBot struct {
	Bot string
}

func (Rent) Kind() Kind          { return KindRent }
func (Stop) Kind() Kind          { return KindStop }
func (Resume) Kind() Kind        { return KindResume }
func (Release) Kind() Kind       { return KindRelease }
func (Price) Kind() Kind         { return KindPrice }
func (StorageCreate) Kind() Kind { return KindStorage }
func (StorageResize) Kind() Kind { return KindStorage }
func (StorageDelete) Kind() Kind { return KindStorage }
func (TrafficTerms) Kind() Kind  { return KindTraffic }
func (TrafficUsage) Kind() Kind  { return KindTraffic }
func (Charge) Kind() Kind        { return KindCharge }
func (Topup) Kind() Kind         { return KindTopup }
func (Balance) Kind() Kind       { return KindBalance }
func (Budget) Kind() Kind        { return KindBudget }
func (Status) Kind() Kind        { return KindStatus }
func (Spend) Kind() Kind         { return KindSpend }
func (Summary) Kind() Kind       { return KindSummary }
func (Export) Kind() Kind        { return KindExport }
func (Undo) Kind() Kind          { return KindUndo }
func (Agent) Kind() Kind         { return KindAgent }
func (AutoRelease) Kind() Kind   { return KindAutoRelease }
func (Settings) Kind() Kind      { return KindSettings }
func (Why) Kind() Kind           { return KindWhy }
func (Help) Kind() Kind          { return KindHelp }
func (Start) Kind() Kind         { return KindStart }
func (ProposedRent) Kind() Kind  { return KindProposedRent }
func (NotACommand) Kind() Kind   { return KindNotACommand }
func (OtherBot) Kind() Kind      { return KindOtherBot }
