package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Errors returned by VerifyOrder. Test with errors.Is.
var (
	ErrUnsigned     = errors.New("wire: order is unsigned")
	ErrBadSignature = errors.New("wire: order signature does not match")
	ErrExpired      = errors.New("wire: order has expired")
	ErrNotYetValid  = errors.New("wire: order is issued in the future")
	ErrTooLong      = errors.New("wire: order lifetime exceeds the maximum")
	ErrReplayed     = errors.New("wire: order nonce was already used")
	ErrInvalidOrder = errors.New("wire: order is malformed")
	// ErrNonceStore: the nonce could not be recorded (the agent's state
	// file cannot be written), so the order cannot be checked against
	// replays later and is refused.
	ErrNonceStore = errors.New("wire: order nonce could not be recorded")
)

// Limits VerifyOrder applies.
const (
	// MaxClockSkew is how far in the future an order's IssuedAt may lie
	// (server and host clocks disagree).
	MaxClockSkew = 5 * time.Minute
	// MaxOrderLifetime bounds ExpiresAt-IssuedAt, and so how long a nonce
	// must be remembered.
	MaxOrderLifetime = 24 * time.Hour
	// MaxNonceLen bounds an order's nonce (the hub's are 32 hex digits),
	// and so what a replay record holds per order.
	MaxNonceLen = 128
)

// signingDomain starts every canonical order encoding, so a signature over
// an order can never be mistaken for a signature over anything else.
const signingDomain = "gpuledger-order-v1"

// CanonicalOrder returns the exact bytes that are signed for o.
//
// The encoding is the domain string "gpuledger-order-v1" followed by the
// fields id, rental, action, issued_at, expires_at and nonce, in that order,
// each written as its length in bytes in decimal, a colon, the bytes, and a
// comma (a netstring). Times are written in UTC as RFC 3339 with nanoseconds
// and no trailing zeros (Go's time.RFC3339Nano), which survives a JSON round
// trip exactly. When WaitFor is not empty, one more netstring follows:
// "wait_for=" and the kinds joined with commas, in the order given; an
// order without it encodes exactly as before the field existed. Then,
// when IdlePeopleSeconds is not 0, "idle_people_s=" and it in decimal. The
// signature field itself is not signed. Example for
// id "o1", rental "box1", action "stop", issued 2026-11-01T10:00:00Z,
// expiring 2026-11-01T10:05:00Z, nonce "n1":
//
//	18:gpuledger-order-v1,2:o1,4:box1,4:stop,20:2026-11-01T10:00:00Z,20:2026-11-01T10:05:00Z,2:n1,
func CanonicalOrder(o Order) []byte {
	fields := []string{
		signingDomain,
		o.ID,
		o.Rental,
		o.Action,
		o.IssuedAt.UTC().Format(time.RFC3339Nano),
		o.ExpiresAt.UTC().Format(time.RFC3339Nano),
		o.Nonce,
	}
	if len(o.WaitFor) > 0 {
		fields = append(fields, "wait_for="+strings.Join(o.WaitFor, ","))
	}
	if o.IdlePeopleSeconds != 0 {
		fields = append(fields, "idle_people_s="+strconv.FormatInt(o.IdlePeopleSeconds, 10))
	}
	return netstrings(fields...)
}

// netstrings writes each field as its length in bytes in decimal, a
// colon, the bytes and a comma: an encoding no choice of field values can
// make ambiguous.
func netstrings(fields ...string) []byte {
	var b strings.Builder
	for _, f := range fields {
		b.WriteString(strconv.Itoa(len(f)))
		b.WriteByte(':')
		b.WriteString(f)
		b.WriteByte(',')
	}
	return []byte(b.String())
}

// SignOrder returns the signature of o under token: the lowercase hex
// HMAC-SHA256 of CanonicalOrder(o), keyed with SigningKey(token).
// o.Signature is ignored.
func SignOrder(token string, o Order) string {
	return SignOrderWithKey(SigningKey(token), o)
}

// SigningKey returns the HMAC key of a token's orders: the SHA-256 of the
// token's bytes. The server stores only this hash of a token (it
// authenticates heartbeats by looking the hash up), so keying the HMAC with
// the hash lets it sign orders without keeping the token; the agent, which
// holds the token, derives the same key. The hash of a 32-byte random token
// is as hard to guess as the token itself.
func SigningKey(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// SignOrderWithKey is SignOrder for a caller that holds the signing key
// (the token's SHA-256) rather than the token.
func SignOrderWithKey(key []byte, o Order) string {
	m := hmac.New(sha256.New, key)
	m.Write(CanonicalOrder(o))
	return hex.EncodeToString(m.Sum(nil))
}

// VerifyOrder checks o against token at time now and records its nonce in
// seen. Checks, in order: required fields present and action known
// (ErrInvalidOrder), signature present (ErrUnsigned) and equal to
// SignOrder(token, o) in constant time (ErrBadSignature), IssuedAt no more
// than MaxClockSkew after now (ErrNotYetValid), lifetime at most
// MaxOrderLifetime (ErrTooLong), now before ExpiresAt (ErrExpired), and the
// nonce not seen before (ErrReplayed) and recorded (ErrNonceStore when the
// store could not keep it: fail safe). The nonce is recorded only when all
// other checks pass, so a forged order cannot burn a genuine nonce.
// VerifyOrder does not check the rental; the caller compares o.Rental with
// the rental it serves. seen may be nil to skip the replay check (tests).
func VerifyOrder(token string, o Order, now time.Time, seen NonceStore) error {
	if o.ID == "" || o.Nonce == "" || o.IssuedAt.IsZero() || o.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: id, nonce, issued_at and expires_at are required", ErrInvalidOrder)
	}
	if len(o.Nonce) > MaxNonceLen {
		return fmt.Errorf("%w: nonce over %d bytes", ErrInvalidOrder, MaxNonceLen)
	}
	if o.Action != ActionStop && o.Action != ActionRelease {
		return fmt.Errorf("%w: unknown action %q", ErrInvalidOrder, o.Action)
	}
	if o.Signature == "" {
		return ErrUnsigned
	}
	if err := checkSignature(token, o.Signature, SignOrder, o, ErrBadSignature); err != nil {
		return err
	}
	if o.IssuedAt.After(now.Add(MaxClockSkew)) {
		return fmt.Errorf("%w: issued %s, now %s", ErrNotYetValid, o.IssuedAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if o.ExpiresAt.Sub(o.IssuedAt) > MaxOrderLifetime {
		return ErrTooLong
	}
	if !now.Before(o.ExpiresAt) {
		return fmt.Errorf("%w: at %s", ErrExpired, o.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if seen == nil {
		return nil
	}
	fresh, err := seen.Add(o.Nonce, o.ExpiresAt, now)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNonceStore, err)
	}
	if !fresh {
		return ErrReplayed
	}
	return nil
}

// NonceStore remembers order nonces until their order expires.
type NonceStore interface {
	// Add records nonce as used until the given time and reports whether it
	// was new. Entries whose time has passed (relative to now) may be
	// forgotten: an order that old fails the expiry check anyway. A store
	// that keeps nonces across restarts returns only once the record is
	// durable, and an error (with false) when it cannot be made so.
	Add(nonce string, until, now time.Time) (bool, error)
}

// MemoryNonceStore is a NonceStore in memory, bounded in size. It is safe
// for concurrent use. The zero value is ready to use.
type MemoryNonceStore struct {
	// Max is the most nonces held; when full, Add refuses new nonces
	// (fails closed) until some expire. Zero means 10000.
	Max int

	mu   sync.Mutex
	seen map[string]time.Time
}

// ErrNoncesFull is returned by MemoryNonceStore.Add when it holds Max
// unexpired nonces.
var ErrNoncesFull = errors.New("wire: too many unexpired order nonces held")

// Add implements NonceStore.
func (s *MemoryNonceStore) Add(nonce string, until, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = make(map[string]time.Time)
	}
	if _, ok := s.seen[nonce]; ok {
		return false, nil
	}
	max := s.Max
	if max <= 0 {
		max = 10000
	}
	if len(s.seen) >= max {
		for n, u := range s.seen {
			if !now.Before(u) {
				delete(s.seen, n)
			}
		}
		if len(s.seen) >= max {
			return false, ErrNoncesFull
		}
	}
	s.seen[nonce] = until
	return true, nil
}

// Len returns the number of nonces held.
func (s *MemoryNonceStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// checkSignature checks sig, lowercase hex, against sign(token, v) in
// constant time; a failure wraps bad. Orders and policies share it.
func checkSignature[T any](token, sig string, sign func(string, T) string, v T, bad error) error {
	if token == "" {
		return fmt.Errorf("%w: no token to verify with", bad)
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: not hex", bad)
	}
	want, _ := hex.DecodeString(sign(token, v))
	if !hmac.Equal(got, want) {
		return bad
	}
	return nil
}
