package sqlite_test

import (
	"context"
	"crypto/sha256"
	"net/netip"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestDB_AgentTrust(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	mustUser(t, db, 2)
	r := mustRent(t, db, 1, "box1", t0)
	want := ledger.AgentTrust{RentalID: r.ID, UserID: 1, State: ledger.TrustAsked, MessageID: 42, At: at(time.Minute),
		Said:   ledger.HostFacts{GPU: "NVIDIA GeForce RTX 4090", Address: "203.0.113.1"},
		Listed: ledger.HostFacts{GPU: "A100", Address: "198.51.100.7"}}

	t.Run("NoneYet", func(t *testing.T) {
		if _, ok, err := db.AgentTrust(ctx, r.ID); ok || err != nil {
			t.Fatalf("AgentTrust = %v, %v; want none", ok, err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		if err := db.SaveAgentTrust(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, ok, err := db.AgentTrust(ctx, r.ID)
		if err != nil || !ok || got != want {
			t.Fatalf("AgentTrust = %+v, %v, %v; want %+v", got, ok, err, want)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		bad := want
		bad.State = "maybe"
		if err := db.SaveAgentTrust(ctx, bad); ledger.ErrorCode(err) != ledger.EINVALID {
			t.Fatalf("SaveAgentTrust(bad state) = %v, want EINVALID", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		other := want
		other.UserID = 2
		if err := db.SaveAgentTrust(ctx, other); ledger.ErrorCode(err) != ledger.ENOTFOUND {
			t.Fatalf("SaveAgentTrust(another user's rental) = %v, want ENOTFOUND", err)
		}
		if got, _, _ := db.AgentTrust(ctx, r.ID); got != want {
			t.Fatalf("a refused save changed the row: %+v", got)
		}
	})
	t.Run("NewTokenResets", func(t *testing.T) {
		if _, err := db.IssueToken(ctx, 1, "box1", sha256.Sum256([]byte("t")), at(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, _, err := db.AgentTrust(ctx, r.ID)
		if err != nil || got.State != ledger.TrustReset || !got.At.Equal(at(time.Hour)) {
			t.Fatalf("after a new token: %+v, %v; want reset at the issue", got, err)
		}
	})
}

func TestDB_PlatformInstanceAddress(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	mustUser(t, db, 1)
	in := ledger.PlatformInstance{UserID: 1, Platform: "runpod", PlatformID: "pod-1", Status: ledger.PlatformAsked,
		Address: netip.MustParseAddr("2001:db8::7"), FirstSeen: t0, LastSeen: t0}
	saved, err := db.SavePlatformInstance(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Address != in.Address {
		t.Fatalf("address %v, want %v", saved.Address, in.Address)
	}
	saved.Address = netip.Addr{}
	if saved, err = db.SavePlatformInstance(ctx, saved); err != nil || saved.Address.IsValid() {
		t.Fatalf("address %v, %v; want none", saved.Address, err)
	}
}
