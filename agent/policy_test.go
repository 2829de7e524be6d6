package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

func TestPolicyGate(t *testing.T) {
	const tok = "tok-1"
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	sign := func(p wire.Policy, issued time.Time) wire.Policy {
		if p.Rental == "" {
			p.Rental = "box1"
		}
		p.IssuedAt, p.ExpiresAt = issued, issued.Add(wire.PolicyTTL)
		p.Signature = wire.SignPolicy(tok, p)
		return p
	}
	newGate := func(t *testing.T, dir string) (*policyGate, *strings.Builder) {
		var logs strings.Builder
		return &policyGate{token: tok, local: 5, state: newStateAt(t, dir, now), log: newTextLogger(&logs)}, &logs
	}
	lease1 := now.Add(8 * time.Hour)
	lease2 := now.Add(2 * time.Hour)

	t.Run("OK/LowerThresholdTaken", func(t *testing.T) {
		g, _ := newGate(t, t.TempDir())
		eff, ok := g.take(sign(wire.Policy{UtilThreshold: 2, LeaseUntil: &lease1}, now), "box1", now)
		if !ok || eff.threshold != 2 || eff.lease == nil || !eff.lease.Equal(lease1) || g.refusal() != "" {
			t.Fatalf("eff %+v ok %v refused %q", eff, ok, g.refusal())
		}
	})
	t.Run("OK/HigherThresholdKeepsLocal", func(t *testing.T) {
		g, logs := newGate(t, t.TempDir())
		for i := range 3 {
			eff, ok := g.take(sign(wire.Policy{UtilThreshold: 99.9}, now.Add(time.Duration(i)*time.Second)), "box1", now)
			if !ok || eff.threshold != 5 {
				t.Fatalf("eff %+v ok %v", eff, ok)
			}
		}
		if n := strings.Count(logs.String(), "above the local"); n != 1 {
			t.Fatalf("note logged %d times", n)
		}
	})
	t.Run("OK/EmptyUnsignedIgnored", func(t *testing.T) {
		g, logs := newGate(t, t.TempDir())
		if _, ok := g.take(wire.Policy{SampleSeconds: 5}, "box1", now); ok || g.refusal() != "" || logs.Len() != 0 {
			t.Fatalf("ok %v refused %q logs %s", ok, g.refusal(), logs)
		}
	})
	t.Run("OK/RentalLearnt", func(t *testing.T) {
		g, _ := newGate(t, t.TempDir())
		if _, ok := g.take(sign(wire.Policy{UtilThreshold: 2}, now), "", now); !ok {
			t.Fatal("a signed policy refused before the rental is known")
		}
	})
	tampered := sign(wire.Policy{LeaseUntil: &lease1}, now)
	tampered.LeaseUntil = &lease2
	refusals := []struct {
		name string
		p    wire.Policy
		want string
	}{
		{"Unsigned", wire.Policy{UtilThreshold: 99.9, LeaseUntil: &lease2}, "unsigned"},
		{"Tampered", tampered, "signature"},
		{"OtherToken", func() wire.Policy {
			p := sign(wire.Policy{LeaseUntil: &lease2}, now)
			p.Signature = wire.SignPolicy("tok-2", p)
			return p
		}(), "signature"},
		{"Expired", sign(wire.Policy{LeaseUntil: &lease2}, now.Add(-time.Hour)), "expired"},
		{"OtherRental", sign(wire.Policy{Rental: "box2", LeaseUntil: &lease2}, now), "box2"},
		{"OutOfRange", sign(wire.Policy{UtilThreshold: 150}, now), "util_threshold"},
	}
	for _, tt := range refusals {
		t.Run("Err/"+tt.name, func(t *testing.T) {
			g, logs := newGate(t, t.TempDir())
			for range 3 {
				if eff, ok := g.take(tt.p, "box1", now); ok {
					t.Fatalf("refused policy taken: %+v", eff)
				}
			}
			if !strings.Contains(g.refusal(), tt.want) {
				t.Fatalf("refusal %q, want %q", g.refusal(), tt.want)
			}
			if n := strings.Count(logs.String(), "server policy refused"); n != 1 {
				t.Fatalf("logged %d times:\n%s", n, logs)
			}
			// A good one afterwards clears the report.
			if _, ok := g.take(sign(wire.Policy{UtilThreshold: 3}, now.Add(time.Second)), "box1", now); !ok || g.refusal() != "" {
				t.Fatalf("good policy after a refusal: ok %v, refusal %q", ok, g.refusal())
			}
		})
	}
	t.Run("Err/OlderReplayedAfterRestart", func(t *testing.T) {
		dir := t.TempDir()
		old := sign(wire.Policy{LeaseUntil: &lease2}, now) // captured: a short lease
		g, _ := newGate(t, dir)
		if _, ok := g.take(old, "box1", now); !ok {
			t.Fatal("first policy refused")
		}
		if _, ok := g.take(sign(wire.Policy{LeaseUntil: &lease1}, now.Add(time.Minute)), "box1", now.Add(time.Minute)); !ok {
			t.Fatal("the extension was refused")
		}
		if _, ok := g.take(old, "box1", now.Add(2*time.Minute)); ok {
			t.Fatal("a replayed older lease was taken")
		}
		// The agent restarts: the record is on disk.
		g2, _ := newGate(t, dir)
		if _, ok := g2.take(old, "box1", now.Add(3*time.Minute)); ok || !strings.Contains(g2.refusal(), "older") {
			t.Fatalf("an older lease replayed after a restart was taken (%q)", g2.refusal())
		}
	})
	t.Run("OK/IdenticalPoliciesWrittenOnce", func(t *testing.T) {
		// A real hub signs a fresh policy into every heartbeat answer:
		// the state file is written when what the policy asks for
		// changes, not at every heartbeat. Each write renames a new file
		// over the old one, so a new file means a write.
		dir := t.TempDir()
		path := filepath.Join(dir, StateFile)
		g, _ := newGate(t, dir)
		writes, last := 0, statFile(t, path)
		took := func(p wire.Policy, at time.Time) {
			t.Helper()
			if _, ok := g.take(sign(p, at), "box1", at); !ok {
				t.Fatalf("policy at %s refused: %q", at, g.refusal())
			}
			if fi := statFile(t, path); !os.SameFile(fi, last) {
				writes, last = writes+1, fi
			}
		}
		at := now
		for range 20 {
			at = at.Add(30 * time.Second)
			took(wire.Policy{UtilThreshold: 2, LeaseUntil: &lease1}, at)
		}
		if writes != 1 {
			t.Fatalf("20 identical policies wrote the state %d times, want 1", writes)
		}
		at = at.Add(30 * time.Second)
		took(wire.Policy{UtilThreshold: 2, LeaseUntil: &lease2}, at) // the lease changes
		for range 5 {
			at = at.Add(30 * time.Second)
			took(wire.Policy{UtilThreshold: 2, LeaseUntil: &lease2}, at)
		}
		if writes != 2 {
			t.Fatalf("a changed lease and 5 repeats wrote the state %d times, want 2", writes)
		}
		// Replay protection still holds across a restart: the policy
		// before the change is refused, though the newest ones were
		// never written.
		g2, _ := newGate(t, dir)
		replay := sign(wire.Policy{UtilThreshold: 2, LeaseUntil: &lease1}, now.Add(20*30*time.Second))
		if _, ok := g2.take(replay, "box1", at); ok || !strings.Contains(g2.refusal(), "older") {
			t.Fatalf("a replayed policy from before the change was taken after a restart (%q)", g2.refusal())
		}
		// ... and one after restart that asks the same as the state's
		// latest is taken without a write.
		last = statFile(t, path)
		at = at.Add(30 * time.Second)
		if _, ok := g2.take(sign(wire.Policy{UtilThreshold: 2, LeaseUntil: &lease2}, at), "box1", at); !ok {
			t.Fatalf("policy after restart refused: %q", g2.refusal())
		}
		if !os.SameFile(statFile(t, path), last) {
			t.Fatal("the same policy after a restart wrote the state again")
		}
	})
	t.Run("Err/StateUnwritable", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "f")
		os.WriteFile(file, nil, 0o600)
		st, _ := OpenState(filepath.Join(file, "x"), now)
		var logs strings.Builder
		g := &policyGate{token: tok, local: 5, state: st, log: newTextLogger(&logs)}
		if _, ok := g.take(sign(wire.Policy{LeaseUntil: &lease2}, now), "box1", now); ok || g.refusal() == "" {
			t.Fatal("policy taken with no state to record it")
		}
	})
}

func newStateAt(t *testing.T, dir string, now time.Time) *State {
	t.Helper()
	s, err := OpenState(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func statFile(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
