// Package command reads one chat message into a typed Command: the chat
// language of DESIGN.md section 3, slash commands and free text, English and
// Chinese. It never calls the ledger's store or the core: an error is a
// *ParseError holding a catalog key and arguments, which the core renders in
// the user's language.
//
// This file holds the typed commands that Parse produces. Each command is
// its own struct; the core looks its handler up by the type. A zero
// time.Time in an At field means "not given": the core uses the moment of
// the action (its own clock, read once per action), so a retried message is
// not shifted in time.
package command

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
	KindAdopt        Kind = "adopt"
	KindAutoRelease  Kind = "autorelease"
	KindSettings     Kind = "settings"
	KindWhy          Kind = "why"
	KindConnect      Kind = "connect"
	KindDisconnect   Kind = "disconnect"
	KindReconcile    Kind = "reconcile"
	KindDashboard    Kind = "dashboard"
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

// RentCmd starts a rental: /rent NAME PLATFORM GPU PRICE [MODE] [min=] [step=]
// [floor=] [currency=] [for=] [at TIME].
type RentCmd struct {
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
	Project  string          // project=NAME on a team's ledger; "": the person's default

	// modeChosen: the user has seen what Mode means against the platform's
	// profile (pressed a choice of the mode question, or confirmed a
	// proposal that said it), so it is not asked about again.
	ModeChosen bool
}

// StopCmd stops a rental's compute meter: /stop NAME [at TIME].
type StopCmd struct {
	Name string
	At   time.Time
}

// ResumeCmd restarts a stopped rental: /resume NAME [at TIME].
type ResumeCmd struct {
	Name string
	At   time.Time
}

// ReleaseCmd ends a rental: /release NAME [at TIME].
type ReleaseCmd struct {
	Name string
	At   time.Time
}

// PriceCmd changes a rental's rate from At on: /price NAME PRICE [at TIME].
type PriceCmd struct {
	Name  string
	Price PriceSpec
	At    time.Time
}

// StorageCreateCmd creates a volume: /storage VOLUME SIZE PRICE [free=SIZE]
// [rental=NAME] [at TIME].
type StorageCreateCmd struct {
	Volume string
	SizeGB ledger.Decimal
	Price  *StoragePrice // nil: unpriced
	// Stopped is stopped=, the rate in Price's unit while the rental is
	// stopped or released; nil: Price in every state (or the profile's).
	Stopped *ledger.Decimal
	FreeGB  ledger.Decimal
	// FreeSet says free= was written, so free=0 means no free quota
	// rather than the platform's.
	FreeSet  bool
	Rental   string // "" if not attached
	Platform string // platform=, for a volume without a rental; "" if not written
	At       time.Time
	Project  string // project=NAME; "": the rental's, else the person's default
}

// StorageResizeCmd resizes a volume: /storage VOLUME resize SIZE [at TIME].
type StorageResizeCmd struct {
	Volume string
	SizeGB ledger.Decimal
	At     time.Time
}

// StorageSetPriceCmd sets or corrects an existing volume's price:
// /storage VOLUME price=PRICE [at TIME] (no size). Without a time it
// corrects the price from the volume's creation.
type StorageSetPriceCmd struct {
	Volume string
	Price  StoragePrice
	// Stopped is stopped=, the rate in Price's unit while the rental is
	// stopped or released; nil: Price in every state.
	Stopped *ledger.Decimal
	At      time.Time // the price applies from then on; zero: from the creation
}

// Kind returns KindStorage: /storage's help covers it.
func (StorageSetPriceCmd) Kind() Kind { return KindStorage }

// StorageDeleteCmd deletes a volume: /storage VOLUME delete [at TIME].
type StorageDeleteCmd struct {
	Volume string
	At     time.Time
}

// TrafficTermsCmd sets a rental's traffic price: /traffic NAME price=PRICE/GB
// [free=SIZE] [direction=out|in|both].
type TrafficTermsCmd struct {
	Name       string
	PricePerGB ledger.Decimal
	Currency   ledger.Currency // "" if not written
	FreeGB     ledger.Decimal
	FreeSet    bool             // free= was written: no allowance from the platform's profile
	Direction  ledger.Direction // "" means the platform's, else out
	// At, when set, changes only the price, from then on (at TIME):
	// FreeGB and Direction are then unset.
	At time.Time
}

// TrafficUsageCmd records traffic by hand: /traffic NAME AMOUNT [out|in] [at TIME].
type TrafficUsageCmd struct {
	Name      string
	SizeGB    ledger.Decimal   // GB as written; the ledger counts GiB (2^30 bytes)
	Direction ledger.Direction // In or Out; Out when not written
	At        time.Time
}

// ChargeCmd is a one-off charge: /charge NAME AMOUNT NOTE...; NAME is a rental
// or a platform (the core resolves which).
type ChargeCmd struct {
	Target string
	Amount Amount // non-zero; negative is a refund
	Note   string
	At     time.Time
	// Project is project=NAME; "": the rental's, else the person's
	// default in the ledger.
	Project string
}

// TopupCmd records money added to a platform balance: /topup PLATFORM AMOUNT.
type TopupCmd struct {
	Platform string
	Amount   Amount // positive
	At       time.Time
}

// BalanceCmd records the balance a platform shows: /balance PLATFORM AMOUNT
// [at TIME]. Without an amount it asks for the balances.
type BalanceCmd struct {
	Platform string // "" with Set false: show all balances
	Set      bool
	Amount   Amount // may be negative (an overdue account)
	At       time.Time
}

// BudgetCmd sets, removes or shows the monthly budgets, one per currency:
// /budget ¥3000/month, /budget 3000/month currency=CNY, /budget off
// [currency=USD|$|USD], /budget off all. Set with a zero amount (or "off")
// removes the budget in Amount.Currency, or every budget when All; with
// neither, the one budget there is (several are asked about). An empty
// Amount.Currency with a non-zero amount means no sign was written.
type BudgetCmd struct {
	Set    bool
	All    bool
	Amount Amount
}

// StatusCmd lists rentals and volumes: /status, /list.
type StatusCmd struct{}

// SpendCmd reports what was spent in [From, To) in the user's zone: /spend
// [today|yesterday|week|month|last-month|YYYY-MM]; month when omitted.
type SpendCmd struct {
	Period string // "today", "yesterday", "week", "last-week", "month", "last-month", "YYYY-MM", "YYYY-MM-DD" or "YYYY-MM-DD..YYYY-MM-DD"
	From   time.Time
	To     time.Time
}

// SummaryCmd sends the nightly summary now: /summary.
type SummaryCmd struct{}

// ExportCmd sends the ledger as a file: /export [csv|json].
type ExportCmd struct {
	Format string // "csv" or "json"
}

// DashboardCmd asks for a one-time sign-in link to the dashboard:
// /dashboard.
type DashboardCmd struct{}

// UndoCmd reverses the last change: /undo.
type UndoCmd struct{}

// AgentCmd asks for a rental's agent token and install command: /agent NAME.
type AgentCmd struct {
	Name string
}

// AgentEnrolCmd asks for a new enrolment token and its install line, and
// lists the valid ones: /agent with no name.
type AgentEnrolCmd struct{}

// AgentRevokeCmd revokes all the user's enrolment tokens: /agent revoke.
type AgentRevokeCmd struct{}

// AdoptCmd logs an announced instance as a rental: /adopt ID [PRICE].
// Price nil: the price the instance's card offers, or none.
type AdoptCmd struct {
	ID    int64
	Price *PriceSpec
}

// AutoReleaseCmd sets what happens to an idle rental: /autorelease NAME
// off|notify|stop|release [after DUR].
type AutoReleaseCmd struct {
	Name   string
	Action ledger.AutoAction
	After  time.Duration // grace after the warning; 0: the default
	// WaitFor is who, connected to the host, holds the automatic action
	// (wait_for=); the zero value is every kind, the default.
	WaitFor ledger.WaitFor
	// IdlePeople is how long a connected person who does nothing holds it
	// (idle_people=3h; none: for ever); 0: ledger.DefaultIdlePeople.
	IdlePeople time.Duration
}

// QuietHours is a daily window, in minutes after local midnight. From ==
// -1 means none (quiet=off).
type QuietHours struct {
	From, To int
}

// SettingsCmd changes a user's preferences; nil fields are unchanged. With no
// field set it asks to show them.
type SettingsCmd struct {
	TZ        *string // IANA name, checked with time.LoadLocation
	Lang      *string // "en" or "zh"
	SummaryAt *int    // minutes after midnight; -1: off
	IdleWarn  *time.Duration
	Silent    *time.Duration
	Quiet     *QuietHours
	LongRun   *time.Duration
	BenchOff  *bool // bench=off|on: whether agents bench and receipt cards come
}

// Empty reports whether s changes nothing (a request to show settings).
func (s SettingsCmd) Empty() bool {
	return s.TZ == nil && s.Lang == nil && s.SummaryAt == nil && s.IdleWarn == nil &&
		s.Silent == nil && s.Quiet == nil && s.LongRun == nil && s.BenchOff == nil
}

// WhyCmd shows the log of automatic decisions for a rental: /why NAME.
type WhyCmd struct {
	Name string
}

// HelpCmd shows the command list, or one command's help: /help [COMMAND].
type HelpCmd struct {
	Topic Kind // "" for all
}

// StartCmd is Telegram's first message, optionally with the owner claim code:
// /start [CODE], or a team's join code from an invite link: /start
// join-CODE (a deep link's parameter takes only [A-Za-z0-9_-]).
type StartCmd struct {
	Code string
	Join string
}

// ProposedRentCmd is free text that looks like a rental ("rented 2x4090 on
// vast at $0.70/h"). The core suggests a name and asks to confirm; fields
// not found are zero.
type ProposedRentCmd struct {
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

// ProposedChangeCmd is free text that stops, resumes or releases a rental
// ("释放box2", "box2关机了", "stopped box1"). The core proposes the
// command (/stop, /resume or /release) and runs it only when the user
// confirms.
type ProposedChangeCmd struct {
	Event ledger.EventKind // EventStop, EventResume or EventRelease
	Name  string           // as written; a valid name
	At    time.Time        // when the text says it happened; zero: not said
}

// KindProposedChange is the kind of a ProposedChange.
const KindProposedChange Kind = "proposed_change"

func (ProposedChangeCmd) Kind() Kind { return KindProposedChange }

// NotACommand is text the bot cannot act on; the core replies with help.
type NotACommand struct{}

// OtherBot is a command addressed to another bot (/rent@OtherBot in a
// group); the core ignores it silently.
type OtherBot struct {
	Bot string
}

func (RentCmd) Kind() Kind          { return KindRent }
func (StopCmd) Kind() Kind          { return KindStop }
func (ResumeCmd) Kind() Kind        { return KindResume }
func (ReleaseCmd) Kind() Kind       { return KindRelease }
func (PriceCmd) Kind() Kind         { return KindPrice }
func (StorageCreateCmd) Kind() Kind { return KindStorage }
func (StorageResizeCmd) Kind() Kind { return KindStorage }
func (StorageDeleteCmd) Kind() Kind { return KindStorage }
func (TrafficTermsCmd) Kind() Kind  { return KindTraffic }
func (TrafficUsageCmd) Kind() Kind  { return KindTraffic }
func (ChargeCmd) Kind() Kind        { return KindCharge }
func (TopupCmd) Kind() Kind         { return KindTopup }
func (BalanceCmd) Kind() Kind       { return KindBalance }
func (BudgetCmd) Kind() Kind        { return KindBudget }
func (StatusCmd) Kind() Kind        { return KindStatus }
func (SpendCmd) Kind() Kind         { return KindSpend }
func (SummaryCmd) Kind() Kind       { return KindSummary }
func (ExportCmd) Kind() Kind        { return KindExport }
func (UndoCmd) Kind() Kind          { return KindUndo }
func (DashboardCmd) Kind() Kind     { return KindDashboard }
func (AgentCmd) Kind() Kind         { return KindAgent }
func (AgentEnrolCmd) Kind() Kind    { return KindAgent }
func (AgentRevokeCmd) Kind() Kind   { return KindAgent }
func (AdoptCmd) Kind() Kind         { return KindAdopt }
func (AutoReleaseCmd) Kind() Kind   { return KindAutoRelease }
func (SettingsCmd) Kind() Kind      { return KindSettings }
func (WhyCmd) Kind() Kind           { return KindWhy }
func (HelpCmd) Kind() Kind          { return KindHelp }
func (StartCmd) Kind() Kind         { return KindStart }
func (ProposedRentCmd) Kind() Kind  { return KindProposedRent }
func (NotACommand) Kind() Kind      { return KindNotACommand }
func (OtherBot) Kind() Kind         { return KindOtherBot }
