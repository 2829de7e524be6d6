package ledger

import (
	"context"
	"time"
)

// Enrolment: one token per user that lets agents announce the instances
// they run on, so that a user installs once (in a platform's start-up hook
// or an image) and every instance that boots with it appears in their
// ledger after one tap (DESIGN.md section 6). The token announces and
// nothing else: it reads nothing, and binds an instance to a rental only
// when the user says so.

// Caps on what one user's enrolment tokens can cause.
const (
	// MaxEnrolTokens is how many enrolment tokens a user may hold valid
	// at once; issuing one more revokes the oldest. Several, so that
	// asking for the install line again does not break the images and
	// hooks that carry an earlier one.
	MaxEnrolTokens = 3
	// MaxPendingInstances is how many announced instances may wait for
	// the user's answer at once; a further one is held back (not stored)
	// until they answer.
	MaxPendingInstances = 20
	// MaxCardsPerHour is how many new-instance cards one enrolment token
	// may bring in an hour; further instances are merged into one card
	// that counts them.
	MaxCardsPerHour = 3
	// MaxBootAge is how far before the first announcement a claimed boot
	// time is believed; an older one is clamped to it (and shown as the
	// instance's claim).
	MaxBootAge = 31 * 24 * time.Hour
)

// EnrolToken is the stored form of an enrolment token: its SHA-256, never
// the token.
type EnrolToken struct {
	ID        int64
	UserID    int64
	Hash      [32]byte
	IssuedAt  time.Time
	RevokedAt time.Time // zero while valid
	LastUsed  time.Time // the last announcement; zero if never
	Instances int       // instances announced with it
}

// Valid reports whether the token may still be used.
func (t *EnrolToken) Valid() bool { return t.RevokedAt.IsZero() }

// InstanceState is where an announced instance stands with its user.
type InstanceState string

// Instance states.
const (
	InstancePending InstanceState = "pending" // announced; the user has not answered
	InstanceIgnored InstanceState = "ignored" // the user said "Not mine": announce nothing more
	InstanceBound   InstanceState = "bound"   // logged as RentalID
)

// Instance is an instance an agent announced with an enrolment token. Its
// facts are the agent's claims, shown as such. Key (wire.InstanceFacts.Key)
// is unique per user.
type Instance struct {
	ID         int64
	UserID     int64
	TokenID    int64  // the enrolment token that announced it
	Key        string // "runpod:abc123", "machine:…", "host:…"
	Platform   string // profile key or "" (unknown)
	PlatformID string // the platform's own instance ID, or ""
	Source     string // where the platform was read, e.g. "env RUNPOD_POD_ID"
	Hostname   string
	GPUModel   string // normalised, e.g. "A40"; "" when the agent saw none
	GPUCount   int
	BootAt     time.Time // claimed boot, clamped (ClampBoot)
	FirstSeen  time.Time // server clock
	LastSeen   time.Time
	State      InstanceState
	RentalID   int64 // when bound
	// Carded is true once the user was shown the instance on a card of
	// its own (false while it waits in the merged card).
	Carded    bool
	MessageID int // the card's message, to edit on an answer; 0 none
}

// ClampBoot returns the boot time a rental logged from an announcement
// starts at: the claimed boot, but never after the first announcement
// (a boot in the future), never before the user existed, and never more
// than MaxBootAge before the first announcement. clamped reports whether
// the claim was moved.
func ClampBoot(claimed, firstSeen, userCreated time.Time) (t time.Time, clamped bool) {
	t = claimed
	if t.IsZero() || t.After(firstSeen) {
		return firstSeen, !claimed.IsZero()
	}
	if lo := firstSeen.Add(-MaxBootAge); t.Before(lo) {
		t, clamped = lo, true
	}
	if !userCreated.IsZero() && t.Before(userCreated) {
		t, clamped = userCreated, true
	}
	return t, clamped
}

// EnrolStore keeps enrolment tokens and the instances they announced.
type EnrolStore interface {
	// IssueEnrolToken stores the hash of a new enrolment token for the
	// user. When the user already holds MaxEnrolTokens valid ones, the
	// oldest is revoked in the same transaction and returned as revoked.
	IssueEnrolToken(ctx context.Context, userID int64, hash [32]byte, at time.Time) (tok EnrolToken, revoked *EnrolToken, err error)
	// EnrolTokenByHash returns the enrolment token with that hash, valid
	// or revoked, or ENOTFOUND.
	EnrolTokenByHash(ctx context.Context, hash [32]byte) (EnrolToken, error)
	// EnrolTokens returns the user's valid enrolment tokens, oldest first.
	EnrolTokens(ctx context.Context, userID int64) ([]EnrolToken, error)
	// RevokeEnrolTokens revokes all the user's enrolment tokens and
	// returns how many were valid. Pending instances they announced stay
	// (the user can still answer their cards).
	RevokeEnrolTokens(ctx context.Context, userID int64, at time.Time) (int, error)

	// Announce records an announcement of in (by in.UserID and in.Key):
	// a new instance is stored pending, with FirstSeen = LastSeen = in.LastSeen
	// (created true); a known one gets its LastSeen, Hostname, GPU and
	// BootAt refreshed, and keeps its state. It also sets the token's
	// LastUsed. A new instance while the user has MaxPendingInstances
	// pending is refused with ECONFLICT (key "instances_pending_full")
	// and nothing is stored.
	Announce(ctx context.Context, in Instance) (got Instance, created bool, err error)
	// Instance returns one of the user's instances, or ENOTFOUND.
	Instance(ctx context.Context, userID, id int64) (Instance, error)
	// InstanceByRental returns the instance bound to a rental, or
	// ENOTFOUND (a rental logged by hand has none).
	InstanceByRental(ctx context.Context, rentalID int64) (Instance, error)
	// PendingInstances returns the user's pending instances, oldest first.
	PendingInstances(ctx context.Context, userID int64) ([]Instance, error)
	// SetInstanceCard records that the instance was shown on a card of
	// its own (Carded) as message messageID.
	SetInstanceCard(ctx context.Context, userID, id int64, messageID int) error
	// IgnoreInstance marks a pending instance "Not mine", as the user's
	// action a (undoable, keyed for redelivery). ECONFLICT if it is bound.
	IgnoreInstance(ctx context.Context, a Action, id int64) (Instance, error)
	// AdoptInstance logs a pending (or ignored) instance as the rental r
	// (r.Events[0] its start), binds the instance to it and stores the
	// hash of the rental's own agent token, in one transaction, as the
	// user's action a (undoable: undo removes the rental and revokes the
	// token). ECONFLICT if the instance is bound already; a name in use
	// gets "-2", "-3"... appended.
	AdoptInstance(ctx context.Context, a Action, id int64, r Rental, tokenHash [32]byte) (*Rental, Instance, error)
	// RebindInstance stores the hash of a new agent token for the rental
	// an instance is bound to, revoking its earlier tokens (the instance
	// came back without its token and the user said to reconnect it).
	// ECONFLICT if the rental is released.
	RebindInstance(ctx context.Context, userID, id int64, tokenHash [32]byte, at time.Time) (AgentToken, error)
}
