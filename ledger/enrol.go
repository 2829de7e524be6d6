package ledger

import (
	"context"
	"fmt"
	"math/big"
	"strings"
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
	// CreatedBy is the member who made a team's token (0 on a personal
	// ledger): an instance it announces is theirs when adopted, and their
	// tokens are revoked when they leave the team.
	CreatedBy int64
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
	// IssueEnrolTokenBy is IssueEnrolToken of a team's ledger userID for
	// its member createdBy (ENOTFOUND "team_not_member" when they are
	// not one); createdBy 0 is IssueEnrolToken.
	IssueEnrolTokenBy(ctx context.Context, userID, createdBy int64, hash [32]byte, at time.Time) (tok EnrolToken, revoked *EnrolToken, err error)
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
	// (created true); a known one gets its LastSeen refreshed, and, unless
	// it is pending (its facts stay those the user was shown, which a Log
	// press logs), its Hostname, GPU and BootAt; it keeps its state. It also sets the token's
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

// UnknownPlatform is the platform a rental logged from an instance of an
// unknown platform is filed under (a rental needs one): the agent's
// "unknown" (wire.InstanceFacts.Key uses the same word), never a guess.
const UnknownPlatform = "unknown"

// instanceIDLen is how many characters of the platform's instance ID a
// rental name keeps: enough to tell a user's instances apart at a glance,
// short enough to type (/stop runpod-abc123). Two that share them get
// "-2", "-3"... from the store.
const instanceIDLen = 6

// InstanceRentalName returns the name a rental logged from in gets:
// "PLATFORM-ID6" (the first six letters and digits of the platform's
// instance ID, lower-cased) when the platform gave one, else
// "host-HOSTNAME" (lower-cased, clipped), else the platform (or
// "instance") and the first six letters and digits of the instance key.
// It always passes ValidateName, whatever the agent claimed.
func InstanceRentalName(in Instance) string {
	prefix := "instance"
	if in.Platform != "" && ValidateName(in.Platform) == nil && len(in.Platform) <= 16 {
		prefix = strings.ToLower(in.Platform)
	}
	if in.Platform != "" {
		if id := nameChars(in.PlatformID, false, instanceIDLen); id != "" {
			return prefix + "-" + id
		}
	}
	if h := nameChars(in.Hostname, true, 32-len("host-")); h != "" {
		return "host-" + h
	}
	k := in.Key
	if _, v, ok := strings.Cut(k, ":"); ok {
		k = v
	}
	if id := nameChars(k, false, instanceIDLen); id != "" {
		return prefix + "-" + id
	}
	return fmt.Sprintf("%s-%d", prefix, in.ID)
}

// nameChars lower-cases s and keeps at most n of its ASCII letters and
// digits (and, with punct, the '-', '_' and '.' a host name may hold,
// never at the start), so that the result is safe in a rental name.
func nameChars(s string, punct bool, n int) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if b.Len() == n {
			break
		}
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case punct && b.Len() > 0 && (c == '-' || c == '_' || c == '.'):
		default:
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// PriceOffer is the price a new-instance card offers to log an instance
// at: the rate of the whole instance (all its GPUs), in Currency.
type PriceOffer struct {
	Price    Price
	Currency Currency
}

// OfferFor returns the price to offer for in: that of the user's most
// recently started priced rental on in.Platform with the same GPU model
// (as NormalizeGPUName compares them; any state, released ones too),
// at its latest rate (after its price changes), per GPU, times in's
// GPU count (at least 1). A rental's price is the whole rental's rate,
// so a 2-GPU rental at 1.58/h offers 0.79/h for one GPU. A rate that
// does not divide evenly is rounded half away from zero to two places
// beyond the rate's own (and the currency's); ok is false when in's
// platform is unknown, its GPU model is unknown, or the user never
// rented that model there at a price.
func OfferFor(b *Book, in Instance) (PriceOffer, bool) {
	model := NormalizeGPUName(in.GPUModel)
	if b == nil || in.Platform == "" || model == "" || (in.UserID != 0 && b.User.ID != 0 && in.UserID != b.User.ID) {
		return PriceOffer{}, false
	}
	var last *Rental
	for _, r := range b.Rentals {
		if r.Platform != in.Platform || !r.Priced || len(r.Events) == 0 || NormalizeGPUName(r.GPU) != model {
			continue
		}
		if last == nil || r.StartedAt().After(last.StartedAt()) || r.StartedAt().Equal(last.StartedAt()) && r.ID > last.ID {
			last = r
		}
	}
	if last == nil {
		return PriceOffer{}, false
	}
	p := last.Price
	for _, e := range last.Events {
		if e.Kind == EventPrice {
			p = e.Price
		}
	}
	from, to := max(1, last.GPUCount), max(1, in.GPUCount)
	if from != to {
		x := p.Amount.Rat()
		x.Mul(x, big.NewRat(int64(to), int64(from)))
		scale := min(MaxDecimalScale, max(p.Amount.Scale(), last.Currency.MinorDigits())+2)
		d, ok := decimalFromRat(x, scale)
		if !ok {
			return PriceOffer{}, false
		}
		p.Amount = d
	}
	return PriceOffer{Price: p, Currency: last.Currency}, true
}

// decimalFromRat rounds x half away from zero to scale digits after the
// point; ok is false when the result does not fit a Decimal.
func decimalFromRat(x *big.Rat, scale int) (Decimal, bool) {
	num := new(big.Int).Mul(x.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	q, rem := new(big.Int).QuoRem(num, x.Denom(), new(big.Int))
	rem.Abs(rem).Lsh(rem, 1)
	if rem.Cmp(x.Denom()) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	lim := new(big.Int).Mul(big.NewInt(maxDecimalCoef), big.NewInt(pow10[scale]))
	if new(big.Int).Abs(q).Cmp(lim) >= 0 {
		return Decimal{}, false
	}
	return NewDecimal(q.Int64(), scale), true
}

// RentalFromInstance returns the rental AdoptInstance stores for in: named
// by InstanceRentalName, on in's platform (UnknownPlatform when the
// agent named none), its GPU model and count (a count of 0, no GPU seen,
// is logged as 1), started at start, priced at offer (unpriced when offer
// is nil, to be priced later), and with the platform profile's billing
// mode, currency (the offer's wins), minimum, step, floor and traffic
// rule, as /rent fills them. Without a profile the mode is per-second and
// the currency the offer's; with neither it is empty and the caller must
// set one (AdoptInstance refuses a rental without a currency).
func RentalFromInstance(in Instance, offer *PriceOffer, start time.Time) Rental {
	r := Rental{
		UserID:   in.UserID,
		Name:     InstanceRentalName(in),
		Platform: in.Platform,
		GPU:      in.GPUModel,
		GPUCount: min(max(1, in.GPUCount), MaxGPUCount),
		Events:   []Event{{Kind: EventStart, At: start}},
	}
	if offer != nil {
		r.Priced, r.Price, r.Currency = true, offer.Price, offer.Currency
	}
	if p, ok := LookupProfile(in.Platform); ok && in.Platform != "" {
		p.Apply(&r)
	} else {
		r.Platform = UnknownPlatform
	}
	if r.Mode == "" {
		r.Mode = PerSecond
	}
	return r
}
