package wire_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

func policy() wire.Policy {
	lease := time.Date(2026, 11, 1, 18, 0, 0, 0, time.UTC)
	return wire.Policy{Rental: "box1", IssuedAt: t0, ExpiresAt: t0.Add(10 * time.Minute), UtilThreshold: 3.5, LeaseUntil: &lease}
}

func TestCanonicalPolicy(t *testing.T) {
	got := string(wire.CanonicalPolicy(policy()))
	want := "19:gpuledger-policy-v1,4:box1,20:2026-11-01T10:00:00Z,20:2026-11-01T10:10:00Z,3:3.5,20:2026-11-01T18:00:00Z,1:0,1:0,"
	if got != want {
		t.Fatalf("canonical:\n got %s\nwant %s", got, want)
	}
	// Computed independently: HMAC-SHA256(key=SHA-256("secret-token"), canonical).
	const sig = "5069614ccd6113698f05422d2dd095ee91a27d28a3455e42c878a003bfa88a9b"
	if got := wire.SignPolicy("secret-token", policy()); got != sig {
		t.Fatalf("signature %s, want %s", got, sig)
	}
	// A JSON round trip (zones, nanoseconds, odd floats) keeps the form.
	p := policy()
	p.IssuedAt = p.IssuedAt.In(time.FixedZone("CST", 8*3600)).Add(123456789)
	p.UtilThreshold = 0.1 + 0.2
	b, _ := json.Marshal(p)
	var back wire.Policy
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if string(wire.CanonicalPolicy(p)) != string(wire.CanonicalPolicy(back)) {
		t.Fatalf("json round trip changed the canonical form:\n%s\n%s", wire.CanonicalPolicy(p), wire.CanonicalPolicy(back))
	}
	// Absent lease and present lease differ.
	q := policy()
	q.LeaseUntil = nil
	if string(wire.CanonicalPolicy(q)) == string(wire.CanonicalPolicy(policy())) {
		t.Fatal("lease not signed")
	}
	// A policy's signature is never an order's.
	if string(wire.CanonicalPolicy(wire.Policy{})) == string(wire.CanonicalOrder(wire.Order{})) {
		t.Fatal("domains collide")
	}
}

func TestVerifyPolicy(t *testing.T) {
	const tok = "secret-token"
	signed := func(mut func(*wire.Policy)) wire.Policy {
		p := policy()
		if mut != nil {
			mut(&p)
		}
		p.Signature = wire.SignPolicy(tok, p)
		return p
	}
	tampered := signed(nil)
	tampered.UtilThreshold = 99.9
	past := t0.Add(-time.Hour)
	tamperedLease := signed(nil)
	tamperedLease.LeaseUntil = &past
	zero := time.Time{}
	tests := []struct {
		name string
		p    wire.Policy
		now  time.Time
		tok  string
		want error
	}{
		{"OK", signed(nil), t0.Add(time.Minute), tok, nil},
		{"OK/NoThreshold", signed(func(p *wire.Policy) { p.UtilThreshold = 0; p.LeaseUntil = nil }), t0, tok, nil},
		{"ErrUnsigned", policy(), t0, tok, wire.ErrPolicyUnsigned},
		{"ErrTamperedThreshold", tampered, t0, tok, wire.ErrPolicyBadSignature},
		{"ErrTamperedLease", tamperedLease, t0, tok, wire.ErrPolicyBadSignature},
		{"ErrOtherToken", signed(nil), t0, "other-token", wire.ErrPolicyBadSignature},
		{"ErrNotHex", func() wire.Policy { p := signed(nil); p.Signature = "zz"; return p }(), t0, tok, wire.ErrPolicyBadSignature},
		{"ErrExpired", signed(nil), t0.Add(10 * time.Minute), tok, wire.ErrPolicyExpired},
		{"ErrFuture", signed(nil), t0.Add(-6 * time.Minute), tok, wire.ErrPolicyNotYetValid},
		{"ErrTooLong", signed(func(p *wire.Policy) { p.ExpiresAt = p.IssuedAt.Add(2 * time.Hour) }), t0, tok, wire.ErrPolicyInvalid},
		{"ErrNoRental", signed(func(p *wire.Policy) { p.Rental = "" }), t0, tok, wire.ErrPolicyInvalid},
		{"ErrThreshold100", signed(func(p *wire.Policy) { p.UtilThreshold = 100 }), t0, tok, wire.ErrPolicyInvalid},
		{"ErrThresholdNegative", signed(func(p *wire.Policy) { p.UtilThreshold = -1 }), t0, tok, wire.ErrPolicyInvalid},
		{"ErrThresholdNaN", func() wire.Policy { p := policy(); p.UtilThreshold = math.NaN(); p.Signature = "00"; return p }(), t0, tok, wire.ErrPolicyInvalid},
		{"ErrZeroLease", signed(func(p *wire.Policy) { p.LeaseUntil = &zero }), t0, tok, wire.ErrPolicyInvalid},
		{"ErrNegativeHint", signed(func(p *wire.Policy) { p.IntervalSeconds = -1 }), t0, tok, wire.ErrPolicyInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wire.VerifyPolicy(tt.tok, tt.p, tt.now)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
}

func TestPolicy_Movable(t *testing.T) {
	lease := t0
	for _, tt := range []struct {
		p    wire.Policy
		want bool
	}{
		{wire.Policy{}, false},
		{wire.Policy{SampleSeconds: 5, IntervalSeconds: 30}, false},
		{wire.Policy{UtilThreshold: 99.9}, true},
		{wire.Policy{LeaseUntil: &lease}, true},
	} {
		if got := tt.p.Movable(); got != tt.want {
			t.Errorf("%+v: Movable %v", tt.p, got)
		}
	}
}
