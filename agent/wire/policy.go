package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Errors returned by VerifyPolicy. Test with errors.Is.
var (
	ErrPolicyUnsigned     = errors.New("wire: policy is unsigned")
	ErrPolicyBadSignature = errors.New("wire: policy signature does not match")
	ErrPolicyExpired      = errors.New("wire: policy has expired")
	ErrPolicyNotYetValid  = errors.New("wire: policy is issued in the future")
	ErrPolicyInvalid      = errors.New("wire: policy is malformed")
)

// MaxPolicyLifetime bounds ExpiresAt-IssuedAt of a signed policy, and so
// how long a captured one can be replayed. The hub signs each answer's
// policy afresh, valid for PolicyTTL.
const MaxPolicyLifetime = time.Hour

// PolicyTTL is how long the hub makes each signed policy valid: long
// enough for a heartbeat answer that waited in a slow network, short
// enough that a captured policy is soon worthless.
const PolicyTTL = 10 * time.Minute

// policyDomain starts every canonical policy encoding, so a policy's
// signature can never pass for an order's (whose domain differs) or the
// other way round. A new version of the form gets a new domain.
const policyDomain = "gpuledger-policy-v1"

// Movable reports whether p carries anything that can change what the
// agent does about a release (a lease deadline or a threshold). Only such
// a policy needs a signature to be taken; the hints (sample_s,
// interval_s) the agent never applies.
func (p Policy) Movable() bool { return p.LeaseUntil != nil || p.UtilThreshold != 0 }

// CanonicalPolicy returns the exact bytes that are signed for p.
//
// The encoding is the domain string "gpuledger-policy-v1" followed by the
// fields rental, issued_at, expires_at, util_threshold, lease_until,
// sample_s and interval_s, in that order, each a netstring (its length in
// bytes in decimal, a colon, the bytes, a comma), as for orders. Times are
// UTC RFC 3339 with nanoseconds (time.RFC3339Nano); an absent lease_until
// is the empty string. util_threshold is Go's shortest decimal form of
// the float64 (strconv 'g', -1), "0" when absent, which survives a JSON
// round trip exactly; sample_s and interval_s are decimal integers. The
// signature field itself is not signed. Example for rental "box1" issued
// 2026-11-01T10:00:00Z, expiring 2026-11-01T10:10:00Z, threshold 3.5,
// lease until 2026-11-01T18:00:00Z:
//
//	19:gpuledger-policy-v1,4:box1,20:2026-11-01T10:00:00Z,20:2026-11-01T10:10:00Z,3:3.5,20:2026-11-01T18:00:00Z,1:0,1:0,
func CanonicalPolicy(p Policy) []byte {
	lease := ""
	if p.LeaseUntil != nil {
		lease = p.LeaseUntil.UTC().Format(time.RFC3339Nano)
	}
	return netstrings(
		policyDomain,
		p.Rental,
		p.IssuedAt.UTC().Format(time.RFC3339Nano),
		p.ExpiresAt.UTC().Format(time.RFC3339Nano),
		strconv.FormatFloat(p.UtilThreshold, 'g', -1, 64),
		lease,
		strconv.Itoa(p.SampleSeconds),
		strconv.Itoa(p.IntervalSeconds),
	)
}

// SignPolicyWithKey returns p's signature under key (the token's
// SHA-256, SigningKey): the lowercase hex HMAC-SHA256 of
// CanonicalPolicy(p). p.Signature is ignored.
func SignPolicyWithKey(key []byte, p Policy) string {
	m := hmac.New(sha256.New, key)
	m.Write(CanonicalPolicy(p))
	return hex.EncodeToString(m.Sum(nil))
}

// SignPolicy is SignPolicyWithKey for a caller that holds the token.
func SignPolicy(token string, p Policy) string { return SignPolicyWithKey(SigningKey(token), p) }

// VerifyPolicy checks a signed policy against token at time now: rental,
// issued_at and expires_at present and the values in range
// (ErrPolicyInvalid: util_threshold 0 or above 0 and below 100, a
// lease_until that is not the zero time), a signature (ErrPolicyUnsigned)
// equal to SignPolicy(token, p) in constant time (ErrPolicyBadSignature),
// IssuedAt no more than MaxClockSkew after now (ErrPolicyNotYetValid), a
// lifetime of at most MaxPolicyLifetime (ErrPolicyInvalid) and now before
// ExpiresAt (ErrPolicyExpired).
//
// VerifyPolicy is stateless: the caller checks the rental and that p is
// not older than the newest policy it accepted (a replayed older lease).
func VerifyPolicy(token string, p Policy, now time.Time) error {
	if p.Signature == "" {
		return ErrPolicyUnsigned
	}
	if p.Rental == "" || p.IssuedAt.IsZero() || p.ExpiresAt.IsZero() {
		return fmt.Errorf("%w: rental, issued_at and expires_at are required", ErrPolicyInvalid)
	}
	if t := p.UtilThreshold; math.IsNaN(t) || t < 0 || t >= 100 {
		return fmt.Errorf("%w: util_threshold %v: want above 0 and below 100", ErrPolicyInvalid, t)
	}
	if p.LeaseUntil != nil && p.LeaseUntil.IsZero() {
		return fmt.Errorf("%w: lease_until is the zero time", ErrPolicyInvalid)
	}
	if p.SampleSeconds < 0 || p.IntervalSeconds < 0 {
		return fmt.Errorf("%w: negative sample_s or interval_s", ErrPolicyInvalid)
	}
	if err := checkSignature(token, p.Signature, SignPolicy, p, ErrPolicyBadSignature); err != nil {
		return err
	}
	if p.IssuedAt.After(now.Add(MaxClockSkew)) {
		return fmt.Errorf("%w: issued %s, now %s", ErrPolicyNotYetValid, p.IssuedAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if p.ExpiresAt.Sub(p.IssuedAt) > MaxPolicyLifetime {
		return fmt.Errorf("%w: lifetime %s is over %s", ErrPolicyInvalid, p.ExpiresAt.Sub(p.IssuedAt), MaxPolicyLifetime)
	}
	if !now.Before(p.ExpiresAt) {
		return fmt.Errorf("%w: at %s, now %s", ErrPolicyExpired, p.ExpiresAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}
