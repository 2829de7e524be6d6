package wire_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

var t0 = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

func order() wire.Order {
	return wire.Order{ID: "o1", Rental: "box1", Action: wire.ActionStop,
		IssuedAt: t0, ExpiresAt: t0.Add(5 * time.Minute), Nonce: "n1"}
}

func TestCanonicalOrder(t *testing.T) {
	got := string(wire.CanonicalOrder(order()))
	want := "18:gpuledger-order-v1,2:o1,4:box1,4:stop,20:2026-11-01T10:00:00Z,20:2026-11-01T10:05:00Z,2:n1,"
	if got != want {
		t.Fatalf("canonical:\n got %s\nwant %s", got, want)
	}
	// Zone and JSON round trip do not change the encoding.
	o := order()
	o.IssuedAt = o.IssuedAt.In(time.FixedZone("CST", 8*3600)).Add(123456789 * time.Nanosecond)
	b, _ := json.Marshal(o)
	var back wire.Order
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if string(wire.CanonicalOrder(o)) != string(wire.CanonicalOrder(back)) {
		t.Fatalf("json round trip changed canonical form")
	}
	// Field boundaries cannot be shifted.
	a, c := order(), order()
	a.ID, a.Rental = "o1,4:box", "1"
	c.ID, c.Rental = "o1", ",4:box1"
	if string(wire.CanonicalOrder(a)) == string(wire.CanonicalOrder(c)) {
		t.Fatal("ambiguous encoding")
	}
}

func TestVerifyOrder(t *testing.T) {
	const tok = "secret-token"
	signed := func(mut func(*wire.Order)) wire.Order {
		o := order()
		if mut != nil {
			mut(&o)
		}
		o.Signature = wire.SignOrder(tok, o)
		return o
	}
	tests := []struct {
		name string
		o    wire.Order
		now  time.Time
		tok  string
		want error
	}{
		{"OK", signed(nil), t0.Add(time.Minute), tok, nil},
		{"ErrUnsigned", order(), t0, tok, wire.ErrUnsigned},
		{"ErrBadSignature/otherToken", signed(nil), t0, "other", wire.ErrBadSignature},
		{"ErrBadSignature/notHex", func() wire.Order { o := order(); o.Signature = "zz"; return o }(), t0, tok, wire.ErrBadSignature},
		{"ErrBadSignature/tampered", func() wire.Order { o := signed(nil); o.Action = wire.ActionRelease; return o }(), t0, tok, wire.ErrBadSignature},
		{"ErrBadSignature/emptyToken", signed(nil), t0, "", wire.ErrBadSignature},
		{"ErrExpired", signed(nil), t0.Add(5 * time.Minute), tok, wire.ErrExpired},
		{"ErrNotYetValid", signed(nil), t0.Add(-time.Hour), tok, wire.ErrNotYetValid},
		{"ErrTooLong", signed(func(o *wire.Order) { o.ExpiresAt = t0.Add(48 * time.Hour) }), t0, tok, wire.ErrTooLong},
		{"ErrInvalidOrder/action", signed(func(o *wire.Order) { o.Action = "format-disk" }), t0, tok, wire.ErrInvalidOrder},
		{"ErrInvalidOrder/nonce", signed(func(o *wire.Order) { o.Nonce = "" }), t0, tok, wire.ErrInvalidOrder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wire.VerifyOrder(tt.tok, tt.o, tt.now, &wire.MemoryNonceStore{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("VerifyOrder = %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("ErrReplayed", func(t *testing.T) {
		var seen wire.MemoryNonceStore
		o := signed(nil)
		if err := wire.VerifyOrder(tok, o, t0, &seen); err != nil {
			t.Fatal(err)
		}
		if err := wire.VerifyOrder(tok, o, t0, &seen); !errors.Is(err, wire.ErrReplayed) {
			t.Fatalf("replay: %v", err)
		}
	})
	t.Run("ForgeryDoesNotBurnNonce", func(t *testing.T) {
		var seen wire.MemoryNonceStore
		forged := signed(nil)
		forged.Signature = strings.Repeat("0", 64)
		if err := wire.VerifyOrder(tok, forged, t0, &seen); !errors.Is(err, wire.ErrBadSignature) {
			t.Fatal(err)
		}
		if err := wire.VerifyOrder(tok, signed(nil), t0, &seen); err != nil {
			t.Fatalf("genuine order refused after forgery: %v", err)
		}
	})
}

func TestMemoryNonceStore_Bounded(t *testing.T) {
	s := wire.MemoryNonceStore{Max: 2}
	add := func(n string, until, now time.Time) bool {
		ok, err := s.Add(n, until, now)
		if ok != (err == nil) && ok {
			t.Fatalf("Add(%s) = %v, %v", n, ok, err)
		}
		return ok
	}
	if !add("a", t0.Add(time.Minute), t0) || !add("b", t0.Add(time.Hour), t0) {
		t.Fatal("fresh nonces refused")
	}
	if ok, err := s.Add("c", t0.Add(time.Hour), t0); ok || !errors.Is(err, wire.ErrNoncesFull) {
		t.Fatalf("full store: %v %v", ok, err)
	}
	if !add("c", t0.Add(time.Hour), t0.Add(2*time.Minute)) {
		t.Fatal("expired entry not pruned")
	}
	if s.Len() != 2 {
		t.Fatalf("len %d", s.Len())
	}
}

func TestPathOrderResult(t *testing.T) {
	if got := wire.PathOrderResult("a/b c"); got != "/v1/agent/orders/a%2Fb%20c/result" {
		t.Fatal(got)
	}
}

func BenchmarkSignOrder(b *testing.B) {
	o := order()
	for b.Loop() {
		wire.SignOrder("secret-token", o)
	}
}

func TestSignOrder_Vector(t *testing.T) {
	// Computed independently: HMAC-SHA256(key=SHA-256("secret-token"), canonical).
	const want = "43cb28f64818d7c2a096727b68ae483967f71ea6e8eb5b90d3a8447fb387f841"
	if got := wire.SignOrder("secret-token", order()); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestCanonicalOrder_WaitFor(t *testing.T) {
	o := order()
	plain := string(wire.CanonicalOrder(o))
	o.WaitFor = []string{wire.SessionSSH, wire.SessionJupyter}
	got := string(wire.CanonicalOrder(o))
	if want := plain + "20:wait_for=ssh,jupyter,"; got != want {
		t.Fatalf("canonical:\n got %s\nwant %s", got, want)
	}
	// Dropping wait_for from a signed automatic order breaks the signature.
	const tok = "secret-token"
	o.Signature = wire.SignOrder(tok, o)
	stripped := o
	stripped.WaitFor = nil
	if err := wire.VerifyOrder(tok, stripped, t0, nil); !errors.Is(err, wire.ErrBadSignature) {
		t.Fatalf("wait_for stripped: %v, want ErrBadSignature", err)
	}
	if err := wire.VerifyOrder(tok, o, t0, nil); err != nil {
		t.Fatal(err)
	}
}

// TestCanonicalOrder_IdlePeople: the bound on how long an idle person
// holds an automatic order is signed after wait_for; an order without it
// encodes as before, and a captured order whose bound was shortened (to
// release under someone at work) fails verification.
func TestCanonicalOrder_IdlePeople(t *testing.T) {
	o := order()
	o.WaitFor = []string{wire.SessionJupyter}
	plain := string(wire.CanonicalOrder(o))
	o.IdlePeopleSeconds = 10800
	got := string(wire.CanonicalOrder(o))
	if want := plain + "19:idle_people_s=10800,"; got != want {
		t.Fatalf("canonical:\n got %s\nwant %s", got, want)
	}
	const tok = "secret-token"
	o.Signature = wire.SignOrder(tok, o)
	for _, bound := range []int64{0, 1, 10799} {
		forged := o
		forged.IdlePeopleSeconds = bound
		if err := wire.VerifyOrder(tok, forged, t0, nil); !errors.Is(err, wire.ErrBadSignature) {
			t.Fatalf("bound changed to %d: %v, want ErrBadSignature", bound, err)
		}
	}
	if err := wire.VerifyOrder(tok, o, t0, nil); err != nil {
		t.Fatal(err)
	}
}
