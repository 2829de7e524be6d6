package ledger

import (
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/internal/clip"
)

// Mode is a rental's compute billing mode (DESIGN.md section 4).
type Mode string

// Billing modes.
const (
	PerSecond Mode = "per-second" // every running second; Min and Step refine it
	PerMinute Mode = "per-minute" // per-second with Step = 1m
	PerHour   Mode = "per-hour"   // each running segment in started hours
	AlwaysOn  Mode = "always-on"  // wall-clock time from start to release, stopped or not
)

// Valid reports whether m is one of the known modes.
func (m Mode) Valid() bool {
	switch m {
	case PerSecond, PerMinute, PerHour, AlwaysOn:
		return true
	}
	return false
}

// Unit is the time unit a compute price is quoted in.
type Unit string

// Price units. A month is 30 days, a week 7.
const (
	UnitSecond Unit = "second"
	UnitMinute Unit = "minute"
	UnitHour   Unit = "hour"
	UnitDay    Unit = "day"
	UnitWeek   Unit = "week"
	UnitMonth  Unit = "month"
)

// Seconds returns the length of u in seconds, or 0 for an unknown unit.
func (u Unit) Seconds() int64 {
	switch u {
	case UnitSecond:
		return 1
	case UnitMinute:
		return 60
	case UnitHour:
		return 3600
	case UnitDay:
		return 86400
	case UnitWeek:
		return 7 * 86400
	case UnitMonth:
		return 30 * 86400
	}
	return 0
}

// IsPackage reports whether a price in unit u makes an always-on rental a
// prepaid package (every started period billed in full).
func (u Unit) IsPackage() bool { return u == UnitDay || u == UnitWeek || u == UnitMonth }

// Price is a compute rate for the whole rental (all its GPUs) in the
// rental's currency: Amount per Unit.
type Price struct {
	Amount Decimal
	Unit   Unit
}

// String formats p as "1.88/hour".
func (p Price) String() string { return p.Amount.String() + "/" + string(p.Unit) }

// Validate checks that p is a usable price: a known unit and an amount
// that is not negative. Zero is allowed (a free tier).
func (p Price) Validate() error {
	if p.Unit.Seconds() == 0 {
		return Errorc(EINVALID, "bad_price_unit", p.Unit)
	}
	if p.Amount.Sign() < 0 {
		return Errorc(EINVALID, "price_negative", p.Amount)
	}
	return nil
}

// State is where a rental is in its life.
type State string

// Rental states.
const (
	Running  State = "running"
	Stopped  State = "stopped"
	Released State = "released"
)

// EventKind is the kind of a rental event.
type EventKind string

// Rental event kinds.
const (
	EventStart   EventKind = "start"
	EventStop    EventKind = "stop"
	EventResume  EventKind = "resume"
	EventPrice   EventKind = "price"   // the rate changes from At on
	EventRelease EventKind = "release" // the end: nothing bills after it but kept volumes
)

// Event is one change in a rental's life. Events are kept in the order
// they happened; At is UTC.
type Event struct {
	ID    int64
	Kind  EventKind
	At    time.Time
	Price Price // the new rate, for EventPrice only
	// RecordedAt is when the user logged the event (its action's time),
	// which for a backdated event is later than At. Filled by the store
	// when it loads a rental; ignored when one is written.
	RecordedAt time.Time
}

// Direction is a traffic direction.
type Direction string

// Traffic directions. TrafficUsage is In or Out; TrafficTerms may charge Both.
const (
	In   Direction = "in"
	Out  Direction = "out"
	Both Direction = "both"
)

// TrafficTerms is what a rental's network traffic costs.
type TrafficTerms struct {
	Priced     bool      // false: usage is reported as UNPRICED
	PricePerGB Decimal   // per GiB (2^30 bytes), in the rental's currency
	FreeGB     Decimal   // free allowance per calendar month
	Direction  Direction // which direction is charged; default Out
}

// TrafficPrice is a rental's traffic price per GB from At on, until the
// next change.
type TrafficPrice struct {
	ID         int64
	At         time.Time
	PricePerGB Decimal
}

// CheckTrafficPriceAt reports whether p may be recorded as a change of
// r's traffic price at p.At, now being the store's clock: r's traffic
// must be priced (the price from the start comes first), and p.At must
// lie from r's start on and not in the future. A released rental takes a
// change too: its traffic bill often comes later.
func (r *Rental) CheckTrafficPriceAt(p TrafficPrice, now time.Time) error {
	if p.At.IsZero() {
		return Errorc(EINVALID, "no_time")
	}
	if len(r.Events) == 0 {
		return Errorc(EINVALID, "not_started", r.Name)
	}
	if !r.Traffic.Priced {
		return Errorc(EINVALID, "traffic_price_unpriced", r.Name)
	}
	if start := r.StartedAt(); p.At.Before(start) {
		return Errorc(EINVALID, "traffic_price_before_start", p.At, r.Name, start)
	}
	if p.At.After(now.Add(volumePriceSlack)) {
		return Errorc(EINVALID, "volume_price_future", p.At, now)
	}
	if p.PricePerGB.Sign() < 0 {
		return Errorc(EINVALID, "price_negative", p.PricePerGB)
	}
	return nil
}

// TrafficUsage is bytes moved, recorded by hand or reported by the agent.
type TrafficUsage struct {
	ID        int64
	At        time.Time
	Bytes     int64
	Direction Direction // In or Out

	// Ref is its reference in the chat (#Ref): the journal ID of the
	// action that recorded it (Record.Ref).
	Ref int64
}

// Interval is a half-open time interval [From, To). A zero To means still open.
type Interval struct {
	From, To time.Time
}

// Rental is one rented instance and its history.
type Rental struct {
	ID       int64
	UserID   int64
	Name     string // unique among the user's unreleased rentals
	Platform string // lower-case profile key ("autodl") or the user's own name
	GPU      string // normalised model, e.g. "RTX 4090"
	GPUCount int    // ≥ 1
	Mode     Mode
	Priced   bool  // false: compute is reported as UNPRICED
	Price    Price // the rate at start; later rates come from EventPrice
	Currency Currency
	Min      time.Duration // minimum billed per running segment; 0 none
	Step     time.Duration // billing increment per segment, partial steps round up; 0 means 1s
	Floor    Decimal       // lifetime minimum compute charge; 0 none
	Lease    time.Duration // for=DUR: the planned length; 0 none

	Events       []Event        // in order; Events[0] is the start
	Traffic      TrafficTerms   // zero value: traffic unpriced
	TrafficUsage []TrafficUsage // in order of At
	Idle         []Interval     // idle periods the agent saw, in order, non-overlapping

	// TrafficPrices are later changes of Traffic's price per GB, in time
	// order: traffic used from a change's At on is billed at its price.
	// The allowance and the charged direction stay Traffic's.
	TrafficPrices []TrafficPrice

	// PlatformID is the platform's own ID of the instance (a RunPod pod
	// ID, a Vast.ai instance ID) when the rental is synced from the
	// platform's API or bound to a listed instance; "" for a rental known
	// only from the chat. The export's "platform_id".
	PlatformID string

	// Owner is the person the rental is for, in a team's ledger: who
	// logged, adopted or was handed it (0: not known yet, a synced
	// rental the team's room is asked about). On a personal ledger it is
	// 0. Project is the team's project it is charged to ("" none).
	Owner   int64
	Project string

	CreatedAt time.Time
}

// State returns the rental's state after its last event.
func (r *Rental) State() State {
	st := Running
	for _, e := range r.Events {
		switch e.Kind {
		case EventStart, EventResume:
			st = Running
		case EventStop:
			st = Stopped
		case EventRelease:
			st = Released
		}
	}
	return st
}

// StartedAt returns the time of the start event (zero if there is none).
func (r *Rental) StartedAt() time.Time {
	if len(r.Events) == 0 {
		return time.Time{}
	}
	return r.Events[0].At
}

// ReleasedAt returns the release time and true if the rental was released.
func (r *Rental) ReleasedAt() (time.Time, bool) {
	if n := len(r.Events); n > 0 && r.Events[n-1].Kind == EventRelease {
		return r.Events[n-1].At, true
	}
	return time.Time{}, false
}

// LastEventAt returns the time of the latest event.
func (r *Rental) LastEventAt() time.Time {
	if len(r.Events) == 0 {
		return time.Time{}
	}
	return r.Events[len(r.Events)-1].At
}

// The bounds of a rental's terms. The parser checks what a user writes
// against these, so chat and ledger refuse the same values, and both name
// them in their refusals.
//
// A GPU count above MaxGPUCount is a typo (the largest single rentals on
// the platforms we know are 8- or 16-GPU nodes). min= and step= lie within
// MinBillingTerm..MaxBillingTerm in whole seconds: the ledger bills in
// seconds, and no platform has a minimum or an increment longer than a
// month; 0 is stored for "not given" (no minimum, the mode's step, or the
// profile's default), so a user never writes 0. for= lies within
// MinLease..MaxLease: a lease shorter than a minute ends before its
// reminder can be read, and a year (a leap one) is the longest any
// platform rents by; 0 is stored for "no lease".
const (
	MinGPUCount    = 1
	MaxGPUCount    = 64
	MinBillingTerm = time.Second
	MaxBillingTerm = 31 * 24 * time.Hour
	MinLease       = time.Minute
	MaxLease       = 366 * 24 * time.Hour
)

// Validate checks a new rental's fixed terms (not its events).
func (r *Rental) Validate() error {
	if err := ValidateName(r.Name); err != nil {
		return err
	}
	if r.Platform == "" {
		return Errorc(EINVALID, "no_platform", r.Name)
	}
	if r.GPUCount < MinGPUCount || r.GPUCount > MaxGPUCount {
		return Errorc(EINVALID, "bad_count", r.GPUCount, MinGPUCount, MaxGPUCount)
	}
	if !r.Mode.Valid() {
		return Errorc(EINVALID, "bad_mode", r.Mode)
	}
	if r.Priced {
		if err := r.Price.Validate(); err != nil {
			return err
		}
		if err := checkRate(r.Price); err != nil {
			return err
		}
	}
	if r.Currency == "" {
		return Errorc(EINVALID, "no_currency", r.Name)
	}
	if !billingTermOK(r.Min) {
		return Errorc(EINVALID, "bad_min", r.Min, MinBillingTerm, MaxBillingTerm)
	}
	if !billingTermOK(r.Step) {
		return Errorc(EINVALID, "bad_step", r.Step, MinBillingTerm, MaxBillingTerm)
	}
	if r.Floor.Sign() < 0 {
		return Errorc(EINVALID, "floor_negative", r.Floor)
	}
	if r.Lease != 0 && (r.Lease < MinLease || r.Lease > MaxLease) {
		return Errorc(EINVALID, "bad_lease", r.Lease, MinLease, MaxLease)
	}
	if r.PlatformID != "" {
		return CheckPlatformID(r.PlatformID)
	}
	return nil
}

// billingTermOK reports whether d is a storable min= or step=: 0 (not
// given) or whole seconds within MinBillingTerm..MaxBillingTerm.
func billingTermOK(d time.Duration) bool {
	return d == 0 || d >= MinBillingTerm && d <= MaxBillingTerm && d%time.Second == 0
}

// maxHourly bounds a compute price at 100,000 currency units per hour (a
// 64-GPU cluster costs a few hundred): anything above is a typo.
var maxHourly = MustDecimal("100000")

func checkRate(p Price) error {
	// amount*3600/unitSeconds > max  ⇔ amount*3600 > max*unitSeconds
	lhs := p.Amount.Rat()
	lhs.Mul(lhs, DecimalFromInt(3600).Rat())
	rhs := maxHourly.Rat()
	rhs.Mul(rhs, DecimalFromInt(p.Unit.Seconds()).Rat())
	if lhs.Cmp(rhs) > 0 {
		return Errorc(EINVALID, "price_absurd", p, maxHourly)
	}
	return nil
}

// ValidateName checks a rental or volume name: 1 to 32 characters, letters,
// digits, '-', '_' or '.', not starting with '-' (names come from chat, so
// they must be easy to type and safe to show).
func ValidateName(name string) error {
	n := 0
	for i, c := range name {
		n++
		ok := c == '_' || c == '.' || (c == '-' && i > 0) ||
			(c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= 0x4e00 && c <= 0x9fff)
		if !ok {
			return Errorc(EINVALID, "bad_name", clip.Runes(name, 40, "…"))
		}
	}
	if n == 0 || n > 32 {
		return Errorc(EINVALID, "name_length", clip.Runes(name, 40, "…"))
	}
	return nil
}

// CheckEvent reports whether ev may be appended to r's history: events
// come in time order, nothing follows a release, stop needs a running
// rental, resume a stopped one, and a price change must be valid. It
// returns an *Error with code EINVALID or ECONFLICT naming the problem.
func (r *Rental) CheckEvent(ev Event) error {
	if ev.At.IsZero() {
		return Errorc(EINVALID, "no_time")
	}
	if len(r.Events) == 0 {
		if ev.Kind != EventStart {
			return Errorc(EINVALID, "not_started", r.Name)
		}
		return nil
	}
	start := r.StartedAt()
	if ev.At.Before(start) {
		return Errorc(EINVALID, "before_start", ev.Kind, ev.At, r.Name, start)
	}
	if last := r.LastEventAt(); ev.At.Before(last) {
		return Errorc(EINVALID, "before_last", ev.Kind, ev.At, r.Name, last)
	}
	st := r.State()
	if st == Released {
		return Errorc(ECONFLICT, "already_released", r.Name, ev.Kind)
	}
	switch ev.Kind {
	case EventStart:
		return Errorc(ECONFLICT, "already_started", r.Name)
	case EventStop:
		if st != Running {
			return Errorc(ECONFLICT, "already_stopped", r.Name)
		}
	case EventResume:
		if st != Stopped {
			return Errorc(ECONFLICT, "not_stopped", r.Name)
		}
	case EventPrice:
		if err := ev.Price.Validate(); err != nil {
			return err
		}
		if err := checkRate(ev.Price); err != nil {
			return err
		}
	case EventRelease:
	default:
		return Errorc(EINVALID, "bad_event", ev.Kind)
	}
	return nil
}

// CheckPriceAt reports whether a price change ev may be recorded in r's
// past, to correct the rate from the time it applied. Unlike CheckEvent it
// may fall before later events and on a released rental (a wrong rate is
// often noticed on the bill, after the release), but it must lie inside
// the rental's life: at or after its start and, once released, before the
// release. The price gets the same checks as a new one.
func (r *Rental) CheckPriceAt(ev Event) error {
	if ev.Kind != EventPrice {
		return Errorc(EINVALID, "price_past_kind", ev.Kind)
	}
	if ev.At.IsZero() {
		return Errorc(EINVALID, "no_time")
	}
	if len(r.Events) == 0 {
		return Errorc(EINVALID, "not_started", r.Name)
	}
	// The times are arguments, not text: the edges show them in the
	// user's zone and the chat's format.
	if start := r.StartedAt(); ev.At.Before(start) {
		return Errorc(EINVALID, "price_before_start", ev.At, r.Name, start)
	}
	if end, released := r.ReleasedAt(); released && !ev.At.Before(end) {
		return Errorc(EINVALID, "price_after_release", ev.At, r.Name, end)
	}
	if err := ev.Price.Validate(); err != nil {
		return err
	}
	return checkRate(ev.Price)
}

// PriceFromStart prices an UNPRICED rental with the price change recorded
// at its start, if there is one (the last recorded, as the engine takes
// it): a rental logged without a price is priced by a price change at its
// start (/price NAME PRICE), so that /undo, which removes that event,
// leaves it UNPRICED again. The store calls it as it loads a rental, so
// every reader (the engine, the replies, the export) sees the same terms.
// Events must be in time order.
func (r *Rental) PriceFromStart() {
	if r.Priced || len(r.Events) == 0 {
		return
	}
	start := r.StartedAt()
	for _, ev := range r.Events[1:] {
		if !ev.At.Equal(start) {
			break
		}
		if ev.Kind == EventPrice {
			r.Priced, r.Price = true, ev.Price
		}
	}
}

// InsertEvent puts ev into r.Events in time order, after the events at
// the same time, which is where the store's loading puts it back (events
// ordered by time, then by when they were recorded).
func (r *Rental) InsertEvent(ev Event) {
	i := len(r.Events)
	for i > 0 && r.Events[i-1].At.After(ev.At) {
		i--
	}
	r.Events = append(r.Events, Event{})
	copy(r.Events[i+1:], r.Events[i:])
	r.Events[i] = ev
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// Charge is a one-off charge (an image fee, support), attached to a rental
// or only to a platform.
type Charge struct {
	ID       int64
	UserID   int64
	RentalID int64 // 0 if not attached to a rental
	Platform string
	Amount   Decimal
	Currency Currency
	Note     string // at most MaxNoteRunes runes
	At       time.Time

	// Ref is its reference in the chat (#Ref): the journal ID of the
	// action that recorded it (Record.Ref); 0 for none.
	Ref int64

	// Owner and Project as a Rental's (a charge on a rental takes the
	// rental's owner and project unless given).
	Owner   int64
	Project string
}

// MaxNoteRunes bounds a charge's note in runes: it is shown in summaries.
// The parser shortens a longer note to fit; the store refuses one.
const MaxNoteRunes = 200

// TopUp is money added to a prepaid platform balance.
type TopUp struct {
	ID       int64
	UserID   int64
	Platform string
	Amount   Decimal
	Currency Currency
	At       time.Time
	// Ref is its reference in the chat (#Ref): the journal ID of the
	// action that recorded it (Record.Ref); 0 for none.
	Ref int64
}

// BalanceRecord is the balance a platform showed at a moment.
type BalanceRecord struct {
	ID       int64
	UserID   int64
	Platform string
	Amount   Decimal
	Currency Currency
	At       time.Time
	// API: the platform's API gave it (PlatformStore.RecordPlatformBalance),
	// not the user; it is not on the undo stack.
	API bool
	// Ref is its reference in the chat (#Ref): the journal ID of the
	// action that recorded it (Record.Ref); 0 for none, as for a
	// balance the API gave.
	Ref int64
}

// Book is everything one user's ledger holds: the cost engine's input.
type Book struct {
	User     User
	Rentals  []*Rental
	Volumes  []*Volume
	Charges  []Charge
	TopUps   []TopUp
	Balances []BalanceRecord
	// What the rentals delivered: the benches of the user's rentals and
	// the user's job runs, oldest first, for the JSON export and /quote.
	// A store's Book leaves them empty; LoadDelivered fills them. The cost
	// engine reads neither: a bench is the agent's claim and never moves
	// money.
	Benches []BenchRecord
	JobRuns []JobRun
}

// Rental returns the unreleased rental with the given name, or else the
// most recently started released one, or nil.
func (b *Book) Rental(name string) *Rental {
	var found *Rental
	for _, r := range b.Rentals {
		if r.Name != name {
			continue
		}
		if r.State() != Released {
			return r
		}
		if found == nil || r.StartedAt().After(found.StartedAt()) {
			found = r
		}
	}
	return found
}

// String helps debugging: "box1 (autodl RTX 4090, running)".
func (r *Rental) String() string {
	return fmt.Sprintf("%s (%s %s, %s)", r.Name, r.Platform, r.GPU, r.State())
}
