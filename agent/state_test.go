package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newState(t *testing.T, dir string) *State {
	t.Helper()
	s, err := OpenState(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestState(t *testing.T) {
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	t.Run("OK/SurvivesReopen", func(t *testing.T) {
		dir := t.TempDir()
		s, err := OpenState(dir, now)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Add("n1", now.Add(10*time.Minute), now); !ok || err != nil {
			t.Fatalf("Add: %v %v", ok, err)
		}
		if err := s.AcceptPolicy(now.Add(time.Minute), "a"); err != nil {
			t.Fatal(err)
		}
		s2, err := OpenState(dir, now.Add(2*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if !s2.Since().Equal(now) || !s2.PolicyIssuedAt().Equal(now.Add(time.Minute)) {
			t.Fatalf("since %s policy %s", s2.Since(), s2.PolicyIssuedAt())
		}
		// Within its order's life the nonce is still known...
		s3, _ := OpenState(dir, now.Add(5*time.Minute))
		if ok, _ := s3.Add("n1", now.Add(10*time.Minute), now.Add(5*time.Minute)); ok {
			t.Fatal("nonce forgotten across a restart")
		}
		// ...and after it, forgotten (the file does not grow forever).
		s4, _ := OpenState(dir, now.Add(time.Hour))
		if len(s4.nonces) != 0 {
			t.Fatalf("expired nonces kept: %v", s4.nonces)
		}
		if err := s2.AcceptPolicy(now, "b"); err == nil || !errors.Is(err, errPolicyOlder) {
			t.Fatalf("older policy accepted: %v", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("temporary files left: %v", entries)
		}
	})
	t.Run("OK/ClockSetBack", func(t *testing.T) {
		dir := t.TempDir()
		newStateAt(t, dir, now.Add(365*24*time.Hour)) // first start under a clock a year ahead
		s := newStateAt(t, dir, now)
		if !s.Since().Equal(now) {
			t.Fatalf("since %s after the clock was corrected to %s", s.Since(), now)
		}
	})
	t.Run("OK/CorruptMovedAside", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, StateFile), []byte("{not json"), 0o600)
		s, err := OpenState(dir, now)
		if err == nil || !strings.Contains(err.Error(), "unreadable") || s.Err() != nil {
			t.Fatalf("err %v, broken %v", err, s.Err())
		}
		if !s.Since().Equal(now) {
			t.Fatal("record does not start again at now")
		}
		if _, err := os.Stat(filepath.Join(dir, StateFile+".bad")); err != nil {
			t.Fatal("corrupt file not kept aside")
		}
	})
	t.Run("ErrBounded", func(t *testing.T) {
		s := newState(t, t.TempDir())
		for i := range maxStateNonces {
			if ok, err := s.Add(strings.Repeat("x", 10)+itoa(i), now.Add(time.Hour), now); !ok || err != nil {
				t.Fatalf("Add %d: %v", i, err)
			}
		}
		if ok, err := s.Add("one-more", now.Add(time.Hour), now); ok || !errors.Is(err, ErrStateFull) {
			t.Fatalf("full state: %v %v", ok, err)
		}
		if ok, err := s.Add("one-more", now.Add(2*time.Hour), now.Add(time.Hour)); !ok || err != nil {
			t.Fatalf("expired nonces not pruned: %v", err)
		}
	})
	t.Run("ErrUnwritable", func(t *testing.T) {
		// A path below a regular file, which even root cannot create
		// (a 0500 directory would not stop root).
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, nil, 0o600)
		s, err := OpenState(filepath.Join(file, "state"), now)
		if err == nil || s.Err() == nil {
			t.Fatal("no error for an unusable state directory")
		}
		if ok, err := s.Add("n", now.Add(time.Minute), now); ok || err == nil {
			t.Fatal("nonce accepted without a state file")
		}
		if err := s.AcceptPolicy(now, "a"); err == nil {
			t.Fatal("policy accepted without a state file")
		}
		if _, err := OpenState("", now); err == nil {
			t.Fatal("no error for no state directory")
		}
	})
	t.Run("ErrWriteFailsLater", func(t *testing.T) {
		dir := t.TempDir()
		s := newState(t, dir)
		// The directory vanishes under the agent (a volume unmounted).
		os.RemoveAll(dir)
		if ok, err := s.Add("n", now.Add(time.Minute), now); ok || err == nil {
			t.Fatalf("Add succeeded with nowhere to write: %v", err)
		}
		if ok, _ := s.Add("n", now.Add(time.Minute), now); ok {
			t.Fatal("a nonce that was never written counts as recorded")
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
