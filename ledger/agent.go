package ledger

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// The agent side of the ledger: tokens that tie an on-instance agent to a
// rental, what its heartbeats said (compactly), release orders and the
// automatic decisions taken on the evidence (DESIGN.md sections 6 and 7).
// Plain types and pure rules; the SQLite store persists them and the agent
// hub and scheduler act on them.

// AgentToken is the stored form of a rental's agent token. The token itself
// is shown once and never stored: Hash is its SHA-256, which both
// authenticates heartbeats (by lookup) and keys the HMAC of orders (the
// agent hashes the token it holds; see wire.SignOrder).
type AgentToken struct {
	RentalID  int64
	UserID    int64
	Rental    string   // the rental's name, for the heartbeat response
	Hash      [32]byte // SHA-256 of the token
	IssuedAt  time.Time
	RevokedAt time.Time // zero while valid
}

// Valid reports whether the token may still be used.
func (t *AgentToken) Valid() bool { return t.RevokedAt.IsZero() }

// Verdict is the agent's judgement of a host: busy, idle or unknown. It
// mirrors wire.Verdict so that the ledger does not import the wire.
type Verdict string

// Verdicts. Unknown is never idle.
const (
	VerdictBusy    Verdict = "busy"
	VerdictIdle    Verdict = "idle"
	VerdictUnknown Verdict = "unknown"
)

// Valid reports whether v is a known verdict.
func (v Verdict) Valid() bool {
	return v == VerdictBusy || v == VerdictIdle || v == VerdictUnknown
}

// Beat is one heartbeat reduced to what the server keeps: the time it was
// received (server clock), the window's length split by verdict and the
// GPU utilisation in permille (0-1000, integers so that sums are exact).
type Beat struct {
	RentalID  int64
	At        time.Time // received, server clock
	Verdict   Verdict   // of the last sample
	BusyS     int64     // seconds of the window judged busy
	IdleS     int64
	UnknownS  int64
	UtilMean  int  // permille, mean over GPUs and samples; -1 if no reading
	UtilMax   int  // permille; -1 if no reading
	JobAlive  bool // the wrapped job was running at the end of the window
	Samples   int
	GPUSource string
}

// HourStat is the roll-up of one rental's beats in one UTC hour. A year of
// 30 s heartbeats is 8,760 of these per rental instead of a million beats.
type HourStat struct {
	RentalID int64
	Hour     time.Time // UTC, truncated to the hour
	BusyS    int64
	IdleS    int64
	UnknownS int64
	Beats    int64
	UtilSum  int64 // sum of the beats' UtilMean (permille) over beats with a reading
	UtilN    int64 // beats with a reading
	UtilMax  int   // permille; -1 if none
}

// UtilMeanPermille returns the hour's mean utilisation in permille, or -1.
func (h HourStat) UtilMeanPermille() int {
	if h.UtilN == 0 {
		return -1
	}
	return int(h.UtilSum / h.UtilN)
}

// Add folds b into h.
func (h *HourStat) Add(b Beat) {
	h.BusyS += b.BusyS
	h.IdleS += b.IdleS
	h.UnknownS += b.UnknownS
	h.Beats++
	if b.UtilMean >= 0 {
		h.UtilSum += int64(b.UtilMean)
		h.UtilN++
	}
	if b.UtilMax > h.UtilMax {
		h.UtilMax = b.UtilMax
	}
}

// JobInfo is the wrapped job as the agent last reported it.
type JobInfo struct {
	Command   string
	Label     string // run --label, a ValidLabel; "" none
	Running   bool
	Exited    bool
	ExitCode  int // valid when Exited
	StartedAt time.Time
	EndedAt   time.Time
	Duration  time.Duration
}

// GPUFacts is the hardware an agent reports, reduced to what the rental as
// logged can be checked against.
type GPUFacts struct {
	Model  string // normalised name of the first GPU, e.g. "RTX 4090"
	Count  int
	Source string // "nvml", "simulate" or "none"
}

// AgentState is the latest that is known of a rental's agent: one row per
// rental, replaced on every heartbeat.
type AgentState struct {
	RentalID  int64
	UserID    int64
	FirstSeen time.Time
	LastSeen  time.Time // server clock of the last heartbeat
	BootID    string
	Seq       uint64
	Verdict   Verdict
	IdleSince time.Time // server-clock start of the current idle streak; zero unless idle
	// IdleUntil is the server-clock time of the last idle sample heard in
	// the current streak: idle time counts only up to here, never through
	// a silence. Zero unless idle.
	IdleUntil  time.Time
	Job        JobInfo
	GPU        GPUFacts
	CanRelease bool   // the agent has a release command
	Reasons    string // the agent's reasons for its verdict, joined
	// Work is what the agent saw the host working at beyond the GPU (a
	// transfer or install running, disk I/O), with a busy verdict; kept
	// in memory only, until the next heartbeat.
	Work string
	// Sessions are the people the last heartbeat found connected (SSH,
	// Jupyter, VS Code). While one of a kind the rental's policy waits
	// for is there, automatic stops and releases are held.
	Sessions []Session
	// PolicyRefused is why the agent did not take the server's policy
	// (its lease and thresholds), in the agent's words, and
	// PolicyRefusedCode its kind ("" from an agent too old to send one,
	// or a newer agent's code kept as sent); both empty once it takes one.
	// In memory only, until the next heartbeat.
	PolicyRefused     string
	PolicyRefusedCode PolicyRefusal

	// InstanceKey is the identity of the host the agent runs on
	// (wire.InstanceFacts.Key), "" from an agent that does not say.
	InstanceKey string
	// HostBoot is when the host (or container) last started, as its agent
	// claims; zero unknown. A later one from the same instance is a new
	// boot: the host went down in between.
	HostBoot time.Time
	// ShutdownAt is the agent's last shutdown report (server clock) since
	// it last reported normally; zero none. ShutdownHost: the operating
	// system was going down, not only the agent.
	ShutdownAt   time.Time
	ShutdownHost bool

	// Peer is the IP address the last heartbeat came from, as the hub saw
	// it (the TCP peer, or the X-Forwarded-For entry a trusted proxy
	// added); "" unknown. Kept in memory only: after a restart it is
	// unknown until the agent's next heartbeat, which holds automatic
	// actions through a platform's API back until then (Corroborate).
	Peer string
	// InstanceSaid is the instance key the last heartbeat itself reported
	// ("" when it reported none). InstanceKey keeps the last key any
	// heartbeat gave, for the host's boots; corroboration must not lend
	// one heartbeat's facts to the next, which may come from elsewhere.
	// In memory only, as Peer.
	InstanceSaid string
}

// Boot is what the hub saw when a rental's agent reported a new boot of
// its host: the host went down after LastSeen and started at BootAt.
type Boot struct {
	BootAt   time.Time // the new boot (server clock, clamped to [LastSeen, now])
	PrevBoot time.Time // the boot before
	LastSeen time.Time // the last heartbeat of the previous boot
	// ShutdownAt is the previous boot's shutdown report, if one came
	// (zero: the host went silent without one); ShutdownHost whether
	// the operating system said it was going down.
	ShutdownAt   time.Time
	ShutdownHost bool
}

// Session kinds: what a person is connected through.
const (
	SessionSSH     = "ssh"
	SessionJupyter = "jupyter"
	SessionVSCode  = "vscode"
)

// SessionKinds are the kinds, in the order they are shown.
var SessionKinds = []string{SessionSSH, SessionJupyter, SessionVSCode}

// Session is one person connected to a rental's host, as its agent
// reported it.
type Session struct {
	Kind   string    `json:"kind"`           // SessionSSH, SessionJupyter or SessionVSCode
	Client string    `json:"client"`         // the client's address; "local" through a proxy on the host
	User   string    `json:"user,omitempty"` // the SSH login, where known
	Since  time.Time `json:"since,omitzero"` // when the agent first saw it; zero if not said
	// ActiveAt is when the person last did something the agent could
	// see (typed in the terminal, ran a Jupyter cell); zero unknown,
	// which holds as a session always did.
	ActiveAt time.Time `json:"active_at,omitzero"`
}

// SessionGroup is the sessions of one kind, as they are shown: how many,
// and who (at most three) by login and address.
type SessionGroup struct {
	Kind string
	N    int
	Who  []SessionWho
}

// SessionWho is one named session of a group. Client is empty for a
// Jupyter or VS Code client through a proxy on the host ("local"), which
// names nobody.
type SessionWho struct{ User, Client string }

// GroupSessions groups ss by kind, in SessionKinds order, leaving out
// kinds nobody is connected by. Every language's text is made from it.
func GroupSessions(ss []Session) []SessionGroup {
	var out []SessionGroup
	for _, k := range SessionKinds {
		g := SessionGroup{Kind: k}
		for _, s := range ss {
			if s.Kind != k {
				continue
			}
			g.N++
			w := SessionWho{User: s.User}
			if s.Client != "local" || s.Kind == SessionSSH {
				w.Client = s.Client
			}
			if len(g.Who) < 3 && (w.User != "" || w.Client != "") {
				g.Who = append(g.Who, w)
			}
		}
		if g.N > 0 {
			out = append(out, g)
		}
	}
	return out
}

// DescribeSessions says who is connected, in English, grouped by kind:
// "1 SSH session (root from 1.2.3.4), 1 Jupyter client". At most three
// sessions are named per kind.
func DescribeSessions(ss []Session) string {
	var parts []string
	for _, g := range GroupSessions(ss) {
		noun := map[string][2]string{SessionSSH: {"SSH session", "SSH sessions"}, SessionJupyter: {"Jupyter client", "Jupyter clients"},
			SessionVSCode: {"VS Code client", "VS Code clients"}}[g.Kind][min(g.N-1, 1)]
		p := fmt.Sprintf("%d %s", g.N, noun)
		var who []string
		for _, w := range g.Who {
			who = append(who, strings.TrimSpace(w.User+" "+prefixed("from ", w.Client)))
		}
		if len(who) > 0 {
			p += " (" + strings.Join(who, ", ") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// prefixed returns p+s, or "" for an empty s.
func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// WaitFor is the set of session kinds that hold a rental's automatic
// stop or release. The zero value
// waits for every kind (the default); WaitNone waits for nobody. Its
// string form is "ssh,jupyter,vscode", a subset of it, or "none".
type WaitFor string

// WaitNone is the WaitFor that holds for nobody.
const WaitNone WaitFor = "none"

// ParseWaitFor parses "none", "all", or kinds separated by commas ("ssh",
// "ssh,jupyter"; "code" is vscode). The result is canonical: kinds in
// SessionKinds order, "" for all of them. EINVALID for anything else.
func ParseWaitFor(s string) (WaitFor, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "none", "nobody", "off", "no":
		return WaitNone, nil
	case "", "all", "default", "any":
		return "", nil
	}
	have := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "ssh":
		case "jupyter", "notebook", "jupyterlab":
			f = SessionJupyter
		case "vscode", "code", "code-server":
			f = SessionVSCode
		default:
			return "", Errorc(EINVALID, "bad_wait_for", s, f)
		}
		have[f] = true
	}
	var kinds []string
	for _, k := range SessionKinds {
		if have[k] {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == len(SessionKinds) {
		return "", nil
	}
	return WaitFor(strings.Join(kinds, ",")), nil
}

// Kinds returns the kinds w waits for, in SessionKinds order.
func (w WaitFor) Kinds() []string {
	switch w {
	case "":
		return append([]string(nil), SessionKinds...)
	case WaitNone:
		return nil
	}
	return strings.Split(string(w), ",")
}

// String returns the canonical form: "ssh,jupyter,vscode" for the default.
func (w WaitFor) String() string {
	if w == "" {
		return strings.Join(SessionKinds, ",")
	}
	return string(w)
}

// Holding returns the sessions of the kinds w waits for.
func (w WaitFor) Holding(ss []Session) []Session {
	var out []Session
	for _, s := range ss {
		if slices.Contains(w.Kinds(), s.Kind) {
			out = append(out, s)
		}
	}
	return out
}

// Holding returns the sessions of the kinds p waits for that hold its
// automatic action at now (held), and those of those kinds whose person
// has done nothing for p's bound (idle: connected, holding nothing). A
// session whose activity is unknown holds.
func (p AutoPolicy) Holding(ss []Session, now time.Time) (held, idle []Session) {
	bound := p.PeopleBound()
	for _, s := range p.WaitFor.Holding(ss) {
		if bound > 0 && !s.ActiveAt.IsZero() && now.Sub(s.ActiveAt) >= bound {
			idle = append(idle, s)
		} else {
			held = append(held, s)
		}
	}
	return held, idle
}

// Validate checks a WaitFor that did not come from ParseWaitFor.
func (w WaitFor) Validate() error {
	if w == "" || w == WaitNone {
		return nil
	}
	got, err := ParseWaitFor(string(w))
	if err != nil {
		return err
	}
	if got != w {
		return Errorc(EINVALID, "wait_for_canonical", w, got.String())
	}
	return nil
}

// Seen reports whether a heartbeat was ever received.
func (s *AgentState) Seen() bool { return !s.LastSeen.IsZero() }

// Fresh reports whether the last heartbeat is at most maxAge old at now.
func (s *AgentState) Fresh(now time.Time, maxAge time.Duration) bool {
	return s.Seen() && now.Sub(s.LastSeen) <= maxAge && !s.LastSeen.After(now.Add(time.Minute))
}

// IdleFor returns how long the host has been idle at now (0 unless idle):
// the time covered by heartbeats that reported idle, from IdleSince to
// IdleUntil (or now, whichever is earlier), so that a silent agent's
// silence is never counted as idle.
func (s *AgentState) IdleFor(now time.Time) time.Duration {
	if s.Verdict != VerdictIdle || s.IdleSince.IsZero() || now.Before(s.IdleSince) {
		return 0
	}
	end := now
	if !s.IdleUntil.IsZero() && s.IdleUntil.Before(now) {
		end = s.IdleUntil
	}
	if end.Before(s.IdleSince) {
		return 0
	}
	return end.Sub(s.IdleSince)
}

// GPUDisplayName is a GPU name as NVML reports it, as a person writes
// it ("NVIDIA GeForce RTX 4090" is "RTX 4090"): perf.DisplayName, kept
// here for the ledger's callers.
func GPUDisplayName(s string) string { return perf.DisplayName(s) }

// NormalizeGPUName reduces a GPU name to a coarse comparable key
// ("4090", "h100"): perf.ModelKey, kept here for the ledger's callers.
func NormalizeGPUName(s string) string { return perf.ModelKey(s) }

// GPUDiff is how the GPUs an agent sees differ from the rental as
// logged. It holds the facts only: each edge words them in its user's
// language. The zero value means they agree.
type GPUDiff struct {
	SeenModel, LoggedModel string // both set when the models differ
	SeenCount, PaidCount   int    // both set when fewer GPUs are seen than paid for
}

// IsZero reports whether the agent's GPUs agree with the rental.
func (d GPUDiff) IsZero() bool { return d == GPUDiff{} }

// String is the difference in English, for logs; the decision log keeps
// the facts as message arguments and words them when /why is read.
func (d GPUDiff) String() string {
	var parts []string
	if d.SeenModel != "" {
		parts = append(parts, fmt.Sprintf("the agent sees %s, you logged %s", d.SeenModel, d.LoggedModel))
	}
	if d.PaidCount != 0 {
		parts = append(parts, fmt.Sprintf("the agent sees only %d of the %d GPUs you pay for", d.SeenCount, d.PaidCount))
	}
	return strings.Join(parts, "; ")
}

// GPUMismatch compares what the agent sees with the rental as logged: the
// model differs, or there are fewer GPUs than paid for. It returns the
// zero GPUDiff when they agree or the agent sees no real GPU.
func GPUMismatch(r *Rental, f GPUFacts) GPUDiff {
	var d GPUDiff
	if f.Count == 0 || f.Source == "none" {
		return d
	}
	if want, got := NormalizeGPUName(r.GPU), NormalizeGPUName(f.Model); want != "" && got != "" && want != got {
		d.SeenModel, d.LoggedModel = f.Model, r.GPU
	}
	if f.Count < r.GPUCount {
		d.SeenCount, d.PaidCount = f.Count, r.GPUCount
	}
	return d
}

// The agent's side of the store comes in small sets, each the methods one
// concern needs: a consumer's interface embeds the sets it uses
// (agent/hub.Store, scheduler.Store), and each aggregate of ledger/sqlite
// implements its sets (the DB embeds them all). Implementations are safe
// for concurrent use; errors are *Error values (EINVALID, ENOTFOUND, ECONFLICT, and
// EUNAVAILABLE or EFULL when the store cannot serve now) or wrapped
// internal errors.

// TokenStore keeps the agent tokens, by hash.
type TokenStore interface {
	// IssueToken stores the hash of a new token for the rental, revoking
	// any earlier one, and returns the stored record. ENOTFOUND if the user
	// has no unreleased rental by that name.
	IssueToken(ctx context.Context, userID int64, rental string, hash [32]byte, at time.Time) (AgentToken, error)
	// IssueTokenBy is IssueToken on a team's ledger userID by its member
	// by, recorded with the token: removing that member revokes the
	// tokens they issued for rentals still in the team (TeamStore's
	// RemoveMember). by 0 is IssueToken.
	IssueTokenBy(ctx context.Context, userID, by int64, rental string, hash [32]byte, at time.Time) (AgentToken, error)
	// TokenByHash returns the token with that hash, valid or revoked, or
	// ENOTFOUND.
	TokenByHash(ctx context.Context, hash [32]byte) (AgentToken, error)
	// RevokeTokens revokes the rental's tokens; revoking none is not an error.
	RevokeTokens(ctx context.Context, rentalID int64, at time.Time) error
	// ValidTokens returns every token not revoked.
	ValidTokens(ctx context.Context) ([]AgentToken, error)
	// TokenIssued reports whether a token was ever issued for the user's
	// rental, valid or revoked.
	TokenIssued(ctx context.Context, userID, rentalID int64) (bool, error)
}

// BeatStore keeps what the agents report: raw beats, their hourly
// roll-up and each agent's latest state.
type BeatStore interface {
	// SaveBeats appends beats, folds them into the hourly roll-up and
	// replaces the agents' states, in one transaction; for an idle state
	// it moves the open idle interval's evidence end forward to IdleUntil.
	SaveBeats(ctx context.Context, beats []Beat, states []AgentState) error
	// AgentStates returns the state of every rental's agent that was seen.
	// Its idle fields (Verdict idle, IdleSince, IdleUntil) come from the
	// rental's open idle interval, the single source of truth for them.
	AgentStates(ctx context.Context) ([]AgentState, error)
	// Beats returns a rental's raw beats received in [from, to).
	Beats(ctx context.Context, rentalID int64, from, to time.Time) ([]Beat, error)
	// HourStats returns a rental's hourly roll-ups in [from, to).
	HourStats(ctx context.Context, rentalID int64, from, to time.Time) ([]HourStat, error)
	// PruneBeats deletes raw beats received before t (the roll-ups stay).
	PruneBeats(ctx context.Context, before time.Time) (int64, error)
}

// IdleStore keeps each rental's idle intervals.
type IdleStore interface {
	// OpenIdle starts an idle interval for the rental at from, unless one
	// is open. CloseIdle ends the open one at to (not before its start).
	OpenIdle(ctx context.Context, rentalID int64, from time.Time) error
	CloseIdle(ctx context.Context, rentalID int64, to time.Time) error
	// SaveIdle ends the rental's open idle interval at closeAt (zero:
	// none to end), opens a new one at openAt ending its evidence at
	// st.IdleUntil (zero: none to open), and stores st, all in one
	// transaction: an idle interval and the agent state it goes with are
	// never stored apart. A rental that no longer exists is skipped.
	SaveIdle(ctx context.Context, st AgentState, closeAt, openAt time.Time) error
}

// PolicyStore keeps each rental's /autorelease policy and the log of
// automatic decisions.
type PolicyStore interface {
	// SetAutoPolicy replaces the policy of the user's unreleased rental
	// called name. AutoPolicy returns a rental's policy (Action notify if
	// none was set).
	SetAutoPolicy(ctx context.Context, userID int64, name string, p AutoPolicy) (AutoPolicy, error)
	AutoPolicy(ctx context.Context, rentalID int64) (AutoPolicy, error)
	// AddDecision records an automatic decision, its messages with their
	// typed arguments (EINVALID for an argument of a type a Message cannot
	// keep); Decisions returns a rental's latest ones, newest first, each
	// argument of the type it was written with.
	AddDecision(ctx context.Context, d Decision) (Decision, error)
	Decisions(ctx context.Context, rentalID int64, limit int) ([]Decision, error)
}

// OrderStore keeps the stop and release orders handed to agents.
type OrderStore interface {
	// CreateOrder stores a new pending order. ECONFLICT if the rental has
	// an open order (so two presses of Release make one order).
	CreateOrder(ctx context.Context, o Order) (Order, error)
	// Order returns one order, or ENOTFOUND.
	Order(ctx context.Context, id string) (Order, error)
	// OpenOrders returns the open orders of a rental (or of all rentals
	// when rentalID is 0), oldest first.
	OpenOrders(ctx context.Context, rentalID int64) ([]Order, error)
	// UpdateOrder changes an order's state, outcome and message. When ev
	// is not nil, the event is appended to the rental in the same
	// transaction (the stop or release the agent confirmed), unless the
	// rental already has it.
	UpdateOrder(ctx context.Context, o Order, ev *Event) (Order, *Rental, error)
}

// RentalLookup finds a rental by id, whoever it belongs to: an agent's
// token names a rental, not a user.
type RentalLookup interface {
	// RentalByID returns any rental by its id, or ENOTFOUND.
	RentalByID(ctx context.Context, id int64) (*Rental, error)
}

// LeaseEnd is where a rental's lease (for=DUR) stands: its end, moved by
// Extend, and whether the user chose Release at end (then the agent is
// told the deadline and enforces it, even without the server).
type LeaseEnd struct {
	RentalID     int64
	EndsAt       time.Time
	ReleaseAtEnd bool
}

// LeaseStore keeps lease ends. Implementations are safe for concurrent use.
type LeaseStore interface {
	// LeaseEnd returns the rental's stored lease end; ok is false when the
	// lease was never extended or chosen to end in a release (its end is
	// then the rental's start plus Lease).
	LeaseEnd(ctx context.Context, rentalID int64) (l LeaseEnd, ok bool, err error)
	// SetLeaseEnd stores l.
	SetLeaseEnd(ctx context.Context, l LeaseEnd) error
}

// LeaseEndOf returns the effective lease end of r given the stored one,
// and false when r has no lease.
func LeaseEndOf(r *Rental, stored LeaseEnd, ok bool) (LeaseEnd, bool) {
	if ok {
		return stored, true
	}
	if r.Lease <= 0 {
		return LeaseEnd{}, false
	}
	return LeaseEnd{RentalID: r.ID, EndsAt: r.StartedAt().Add(r.Lease)}, true
}
