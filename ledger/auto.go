package ledger

import "time"

// AutoAction is what a rental's automatic policy may do to an idle host.
type AutoAction string

// Automatic actions, in increasing order of force.
const (
	AutoOff     AutoAction = "off"     // no idle card at all
	AutoNotify  AutoAction = "notify"  // warn only (the default)
	AutoStop    AutoAction = "stop"    // stop after the grace period
	AutoRelease AutoAction = "release" // release after the grace period
)

// Valid reports whether a is a known action.
func (a AutoAction) Valid() bool {
	switch a {
	case AutoOff, AutoNotify, AutoStop, AutoRelease:
		return true
	}
	return false
}

// DefaultGrace is the time between the idle warning and an automatic
// action when /autorelease gives no "after".
const DefaultGrace = 30 * time.Minute

// MinGrace is the shortest grace period a policy may have. Chat commands
// may ask for more; the store accepts this little for tests and demos.
const MinGrace = 5 * time.Second

// MinAfter and MaxAfter bound the grace a user may give /autorelease
// ("after"): shorter than a minute would act before the warning can be
// read, longer than a week outlives any idle streak worth acting on. The
// parser checks against these, so chat and ledger refuse the same values.
const (
	MinAfter = time.Minute
	MaxAfter = 7 * 24 * time.Hour
)

// AutoPolicy is a rental's /autorelease setting.
type AutoPolicy struct {
	RentalID int64
	Action   AutoAction
	After    time.Duration // grace after the warning; 0 means DefaultGrace
	// WaitFor is who holds the automatic action while connected; the
	// zero value waits for SSH, Jupyter and VS Code alike.
	WaitFor WaitFor
	// IdlePeople bounds the hold: a connection whose person has done
	// nothing for this long (Session.ActiveAt) no longer holds. 0 means
	// DefaultIdlePeople; IdlePeopleNever, no bound.
	IdlePeople time.Duration
	SetAt      time.Time
}

// DefaultIdlePeople is how long a connected person who does nothing holds
// an automatic stop or release: a Jupyter tab or a shell left open over
// lunch keeps the machine, one left open overnight does not. Two hours
// is longer than a meal, a meeting or a long read of the results, and
// much shorter than a night, which is the bill this exists to stop.
const DefaultIdlePeople = 2 * time.Hour

// IdlePeopleNever is the AutoPolicy.IdlePeople of "idle_people=none": a
// connection holds however long its person does nothing.
const IdlePeopleNever time.Duration = -1

// Bounds of an idle_people set in chat.
const (
	MinIdlePeople = 10 * time.Minute
	MaxIdlePeople = 7 * 24 * time.Hour
)

// PeopleBound returns how long an idle connection holds: 0 for no bound.
func (p AutoPolicy) PeopleBound() time.Duration {
	switch {
	case p.IdlePeople < 0:
		return 0
	case p.IdlePeople == 0:
		return DefaultIdlePeople
	}
	return p.IdlePeople
}

// Grace returns the effective grace period.
func (p AutoPolicy) Grace() time.Duration {
	if p.After <= 0 {
		return DefaultGrace
	}
	return p.After
}

// Validate checks a policy from chat: a known action and a grace of 0
// (DefaultGrace) or within MinAfter..MaxAfter. It returns EINVALID with
// key "bad_after" (the grace and both bounds) for a grace out of range.
func (p AutoPolicy) Validate() error {
	if err := p.ValidateStored(); err != nil {
		return err
	}
	if p.After != 0 && p.After < MinAfter && p.Action != AutoOff {
		return Errorc(EINVALID, "bad_after", p.After, MinAfter, MaxAfter)
	}
	return nil
}

// ValidateStored checks a policy the store may keep: chat's rules, except
// that the grace may be as short as MinGrace, so tests and demos of the
// agent need not wait a minute.
func (p AutoPolicy) ValidateStored() error {
	if !p.Action.Valid() {
		return Errorc(EINVALID, "bad_action", p.Action)
	}
	if p.After < 0 || p.After > MaxAfter {
		return Errorc(EINVALID, "bad_after", p.After, MinAfter, MaxAfter)
	}
	if p.After != 0 && p.After < MinGrace && p.Action != AutoOff {
		return Errorc(EINVALID, "after_short", p.After, MinGrace)
	}
	if p.IdlePeople != 0 && p.IdlePeople != IdlePeopleNever && (p.IdlePeople < MinIdlePeople || p.IdlePeople > MaxIdlePeople) {
		return Errorc(EINVALID, "bad_idle_people", p.IdlePeople, MinIdlePeople, MaxIdlePeople)
	}
	return p.WaitFor.Validate()
}

// OrderState is where a release order is in its life.
type OrderState string

// Order states. Pending orders are handed out with every heartbeat until
// the agent reports a result or the order expires; an order with a result
// is never handed out again, so an agent restarted mid-release cannot run
// it twice.
const (
	OrderPending OrderState = "pending" // waiting for the agent to pick it up
	OrderStarted OrderState = "started" // the agent accepted it and runs the release command
	OrderDone    OrderState = "done"    // the release command succeeded; the ledger has the event
	OrderRefused OrderState = "refused" // the agent refused (busy, job, no command, rejected)
	OrderFailed  OrderState = "failed"  // the pre-release or release command failed
	OrderExpired OrderState = "expired" // never picked up in time, or never confirmed
)

// Open reports whether the order is still in flight.
func (s OrderState) Open() bool { return s == OrderPending || s == OrderStarted }

// OrderOrigin says who asked for an order.
type OrderOrigin string

// Order origins.
const (
	OriginButton OrderOrigin = "button" // the user pressed Release now
	OriginAuto   OrderOrigin = "auto"   // the rental's /autorelease policy
)

// Order is a stop or release order for a rental's agent, as the server
// keeps it (the signed wire form is rebuilt from these fields).
type Order struct {
	ID       string
	RentalID int64
	UserID   int64
	Rental   string // the rental's name, signed into the order
	Action   OrderAction
	Origin   OrderOrigin
	// WaitFor, on an automatic order, is the policy's: the agent refuses
	// the order if its fresh sample finds one of those kinds connected
	// (signed into the order). Empty on a button order.
	WaitFor   []string
	IssuedAt  time.Time
	ExpiresAt time.Time
	Nonce     string
	State     OrderState
	Outcome   OrderOutcome // the agent's last outcome, or the hub's own
	Message   string       // the agent's message with it
	// Notes are the agent's reasons with its last outcome, as codes and
	// their values (a NoteCode as the Message's key, then string values),
	// so they are worded in the user's language. Not stored with the
	// order: the decision log keeps them (view.OutcomeKey).
	Notes     []Message
	UpdatedAt time.Time
	BootID    string // the agent boot that accepted it

	// IdlePeople, on an automatic order with WaitFor, is the policy's
	// bound (AutoPolicy.PeopleBound): a session idle that long does not
	// refuse it; 0 none. Signed into the order.
	IdlePeople time.Duration
}

// DecisionKind names an automatic decision.
type DecisionKind string

// Decision kinds recorded for /why.
const (
	DecisionWarn      DecisionKind = "warn"        // idle card shown
	DecisionRemind    DecisionKind = "remind"      // idle reminder (decayed)
	DecisionHold      DecisionKind = "hold"        // an automatic action held back, and why
	DecisionOrder     DecisionKind = "order"       // an automatic stop/release order issued
	DecisionOutcome   DecisionKind = "outcome"     // what the agent did with an order
	DecisionSilent    DecisionKind = "silent"      // silent-agent alert
	DecisionUnconfirm DecisionKind = "unconfirmed" // released rental still reporting
	DecisionMismatch  DecisionKind = "mismatch"    // GPU facts differ from the rental
	DecisionUser      DecisionKind = "user"        // a button press (release, snooze, keep)
)

// Decision is one automatic decision with the evidence it was taken on.
//
// SummaryMsg and EvidenceMsg are what /why shows, by catalog key with
// typed arguments, rendered in the reader's language and zone when read.
// Summary and Evidence are the same in English, with clock times in the
// user's zone when it was decided: for logs, for readers of the table,
// and the text /why shows for a decision recorded without a key (written
// before keys were kept, or by a caller that has none).
type Decision struct {
	ID          int64
	UserID      int64
	RentalID    int64
	At          time.Time
	Kind        DecisionKind
	Summary     string  // one line for /why
	Evidence    string  // the facts it rested on, e.g. "idle 41m (since 10:02), heartbeat 12s ago, no job"
	SummaryMsg  Message // Summary by key; zero for an old decision
	EvidenceMsg Message // Evidence by key; zero for an old decision or none
}

// AutoInput is the evidence an automatic action is decided on.
type AutoInput struct {
	Now         time.Time
	Rental      *Rental
	Policy      AutoPolicy
	Agent       *AgentState // nil: no agent
	WarnedAt    time.Time   // when the idle card was first shown; zero if never
	SnoozeUntil time.Time
	Kept        bool          // the user pressed Keep for this idle streak
	FreshWithin time.Duration // a heartbeat older than this is not fresh
	OpenOrder   bool          // an order is already in flight
	// PeopleRefusedAt is when the agent last refused an automatic order
	// because its fresh sample found someone connected; until a heartbeat
	// received after it, nothing is ordered again.
	PeopleRefusedAt time.Time
}

// Keys of the messages AutoDecide returns (ledger.Message): the reasons it
// holds back, and the evidence of an action. view renders them.
const (
	AutoNoPolicy      = "auto_no_policy"       // no automatic action chosen
	AutoNotRunning    = "auto_not_running"     // the rental is not running
	AutoNoAgent       = "auto_no_agent"        // no agent reports for it
	AutoOrderOpen     = "auto_order_open"      // an order is already in flight
	AutoNoWarning     = "auto_no_warning"      // no idle warning shown yet
	AutoGrace         = "auto_grace"           // warned at, acting not before: time.Time, time.Time
	AutoSnoozed       = "auto_snoozed"         // snoozed until: time.Time
	AutoKept          = "auto_kept"            // the user chose Keep
	AutoStale         = "auto_stale"           // last heartbeat ago: time.Duration
	AutoJob           = "auto_job"             // the wrapped job is running
	AutoBusy          = "auto_busy"            // the host is busy
	AutoNotIdle       = "auto_not_idle"        // the host's verdict is not idle (unknown)
	AutoPeopleRefused = "auto_people_refused"  // the agent found someone connected at: time.Time
	AutoPeopleHeld    = "auto_people_held"     // held by: []Session, WaitFor, rental name, action word as typed
	AutoEvidence      = "auto_evidence"        // idle, warned ago, heartbeat ago (durations), who (Message), AutoAction, grace
	AutoNobody        = "auto_nobody"          // nobody reported connected
	AutoPeopleIgnored = "auto_people_not_held" // []Session connected, not waited for (WaitFor)
	AutoPeopleIdle    = "auto_people_idle"     // []Session connected, nothing done for the bound: time.Duration
)

// AutoKeys returns every key AutoDecide's messages use, so that an edge's
// catalog can be checked to hold them all.
func AutoKeys() []string {
	return []string{AutoNoPolicy, AutoNotRunning, AutoNoAgent, AutoOrderOpen, AutoNoWarning, AutoGrace, AutoSnoozed,
		AutoKept, AutoStale, AutoJob, AutoBusy, AutoNotIdle, AutoPeopleRefused, AutoPeopleHeld, AutoEvidence, AutoNobody, AutoPeopleIgnored, AutoPeopleIdle}
}

// AutoDecide applies DESIGN.md section 7: an automatic stop or release
// only where the user chose it for the rental, only after a warning shown
// at least the grace period earlier, with a fresh idle heartbeat, no live
// job and no snooze. It returns the action ("" for none) and the evidence
// or the reason for holding back, as a message whose times and durations
// are typed arguments: the reader's zone and language are applied when it
// is shown.
func AutoDecide(in AutoInput) (action OrderAction, why Message) {
	p := in.Policy
	if p.Action != AutoStop && p.Action != AutoRelease {
		return "", Msg(AutoNoPolicy)
	}
	if in.Rental == nil || in.Rental.State() != Running {
		return "", Msg(AutoNotRunning)
	}
	a := in.Agent
	if a == nil || !a.Seen() {
		return "", Msg(AutoNoAgent)
	}
	if in.OpenOrder {
		return "", Msg(AutoOrderOpen)
	}
	if in.WarnedAt.IsZero() {
		return "", Msg(AutoNoWarning)
	}
	if wait := in.WarnedAt.Add(p.Grace()); in.Now.Before(wait) {
		return "", Msg(AutoGrace, in.WarnedAt, wait)
	}
	if in.Now.Before(in.SnoozeUntil) {
		return "", Msg(AutoSnoozed, in.SnoozeUntil)
	}
	if in.Kept {
		return "", Msg(AutoKept)
	}
	if !a.Fresh(in.Now, in.FreshWithin) {
		return "", Msg(AutoStale, in.Now.Sub(a.LastSeen).Round(time.Second))
	}
	if a.Job.Running {
		return "", Msg(AutoJob)
	}
	switch a.Verdict {
	case VerdictIdle:
	case VerdictBusy:
		return "", Msg(AutoBusy)
	default:
		return "", Msg(AutoNotIdle)
	}
	if !in.PeopleRefusedAt.IsZero() && !a.LastSeen.After(in.PeopleRefusedAt) {
		return "", Msg(AutoPeopleRefused, in.PeopleRefusedAt)
	}
	held, idle := p.Holding(a.Sessions, in.Now)
	if len(held) > 0 {
		return "", Msg(AutoPeopleHeld, held, p.WaitFor, in.Rental.Name, string(p.Action))
	}
	people := Msg(AutoNobody)
	switch {
	case len(idle) > 0:
		people = Msg(AutoPeopleIdle, idle, p.PeopleBound())
	case len(a.Sessions) > 0:
		people = Msg(AutoPeopleIgnored, a.Sessions, p.WaitFor)
	}
	return OrderAction(p.Action), Msg(AutoEvidence, a.IdleFor(in.Now).Round(time.Minute), in.Now.Sub(in.WarnedAt).Round(time.Minute),
		in.Now.Sub(a.LastSeen).Round(time.Second), people, p.Action, p.Grace())
}
