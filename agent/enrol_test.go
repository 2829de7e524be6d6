package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

const (
	testEnrolToken  = "enrol-AAAAsecretenrolmenttokenAAAA"
	testRentalToken = "rentalsecrettokenRRRRRRRRRRRRRRRRRRRRRRRRRR"
)

func newTestEnroller(t *testing.T, dir, key string) (*enroller, *Token, *syncWriter, *string) {
	t.Helper()
	tok := NewToken(testEnrolToken)
	logs := &syncWriter{w: &strings.Builder{}}
	rental := new(string)
	e := &enroller{enrolToken: testEnrolToken, tok: tok, dir: dir, key: func() string { return key },
		setRental: func(s string) { *rental = s }, now: func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) },
		log: newTextLogger(logs)}
	return e, tok, logs, rental
}

func bound(rental, token string) wire.HeartbeatResponse {
	return wire.HeartbeatResponse{Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolBound, Rental: rental, Token: token}}
}

func noTokens(t *testing.T, logs string) {
	t.Helper()
	for _, s := range []string{testEnrolToken, testRentalToken} {
		if strings.Contains(logs, s) {
			t.Fatalf("a token is in the log:\n%s", logs)
		}
	}
}

func TestBinding_SaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if _, ok, err := loadBinding(dir); ok || err != nil {
		t.Fatalf("no file: ok %v err %v", ok, err)
	}
	b := Binding{Rental: "runpod-abc123", Token: testRentalToken, InstanceKey: "runpod:abc123", BoundAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	if err := saveBinding(dir, b); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, BindingFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("binding file mode %v, want 0600", st.Mode())
	}
	got, ok, err := loadBinding(dir)
	if err != nil || !ok || got.Rental != b.Rental || got.Token != b.Token || got.InstanceKey != b.InstanceKey || !got.BoundAt.Equal(b.BoundAt) {
		t.Fatalf("loaded %+v ok %v err %v", got, ok, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("files left in the state dir: %v", ents)
	}
	// A file that is not a binding is an error, not a binding.
	for _, bad := range []string{"{", `{"version":1}`, `{"version":1,"rental":"x","token":"enrol-xyz","instance_key":"k"}`, `{"version":9,"rental":"x","token":"t","instance_key":"k"}`} {
		os.WriteFile(filepath.Join(dir, BindingFile), []byte(bad), 0o600)
		if _, ok, err := loadBinding(dir); ok || err == nil {
			t.Errorf("%s: ok %v err %v, want an error", bad, ok, err)
		}
	}
}

func TestEnroller_Start(t *testing.T) {
	saved := Binding{Rental: "runpod-abc123", Token: testRentalToken, InstanceKey: "runpod:abc123", BoundAt: time.Now().UTC()}
	t.Run("OK", func(t *testing.T) {
		dir := t.TempDir()
		saveBinding(dir, saved)
		e, tok, logs, rental := newTestEnroller(t, dir, "runpod:abc123")
		e.start()
		if tok.Get() != testRentalToken || *rental != "runpod-abc123" {
			t.Fatalf("token switched: %v, rental %q", tok.Get() == testRentalToken, *rental)
		}
		if !strings.Contains(logs.String(), "runpod-abc123") {
			t.Fatalf("log does not say which rental:\n%s", logs.String())
		}
		noTokens(t, logs.String())
	})
	t.Run("Clone", func(t *testing.T) {
		dir := t.TempDir()
		saveBinding(dir, saved)
		e, tok, logs, rental := newTestEnroller(t, dir, "runpod:zzz999")
		e.start()
		if tok.Get() != testEnrolToken || *rental != "" {
			t.Fatalf("a copy used the saved rental token (rental %q)", *rental)
		}
		if !strings.Contains(logs.String(), "this host is not the instance the saved rental token belongs to (a copy of its image?); enrolling as a new instance") {
			t.Fatalf("no clone message:\n%s", logs.String())
		}
		noTokens(t, logs.String())
	})
	t.Run("Unreadable", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, BindingFile), []byte("{"), 0o600)
		e, tok, logs, _ := newTestEnroller(t, dir, "runpod:abc123")
		e.start()
		if tok.Get() != testEnrolToken || !strings.Contains(logs.String(), "level=WARN") {
			t.Fatalf("unreadable binding: token switched %v\n%s", tok.Get() != testEnrolToken, logs.String())
		}
	})
	t.Run("NoStateDir", func(t *testing.T) {
		e, tok, logs, _ := newTestEnroller(t, "", "runpod:abc123")
		e.start()
		if tok.Get() != testEnrolToken || !strings.Contains(logs.String(), "a restart enrols again") {
			t.Fatalf("no warning about the memory-only binding:\n%s", logs.String())
		}
		e.onResponse(bound("runpod-abc123", testRentalToken))
		if tok.Get() != testRentalToken {
			t.Fatal("not switched without a state dir")
		}
	})
}

func TestEnroller_Answers(t *testing.T) {
	dir := t.TempDir()
	e, tok, logs, rental := newTestEnroller(t, dir, "runpod:abc123")
	e.start()
	for range 3 {
		e.onResponse(wire.HeartbeatResponse{Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolWaiting, Message: "shown to the user"}})
	}
	e.onResponse(wire.HeartbeatResponse{Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolHeld, RetryAfter: 300}})
	e.onResponse(wire.HeartbeatResponse{Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolHeld, RetryAfter: 300}})
	e.onResponse(wire.HeartbeatResponse{Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolWaiting}})
	out := logs.String()
	if n := strings.Count(out, "waiting for the user"); n != 2 {
		t.Fatalf("waiting logged %d times, want once per change (2):\n%s", n, out)
	}
	if n := strings.Count(out, "held back"); n != 1 {
		t.Fatalf("held logged %d times:\n%s", n, out)
	}
	if tok.Get() != testEnrolToken {
		t.Fatal("switched before bound")
	}
	// Bound without a usable token: nothing changes.
	e.onResponse(bound("runpod-abc123", ""))
	e.onResponse(bound("runpod-abc123", "enrol-another"))
	if tok.Get() != testEnrolToken {
		t.Fatal("switched to an unusable token")
	}
	e.onResponse(bound("runpod-abc123", testRentalToken))
	if tok.Get() != testRentalToken || *rental != "runpod-abc123" {
		t.Fatalf("not switched: rental %q", *rental)
	}
	if !strings.Contains(logs.String(), "logged as runpod-abc123; reporting with its own token") {
		t.Fatalf("no bound message:\n%s", logs.String())
	}
	b, ok, err := loadBinding(dir)
	if !ok || err != nil || b.Token != testRentalToken || b.InstanceKey != "runpod:abc123" || b.Rental != "runpod-abc123" || b.BoundAt.IsZero() {
		t.Fatalf("saved binding %+v ok %v err %v", b, ok, err)
	}
	noTokens(t, logs.String())
}

func TestEnroller_Ignored(t *testing.T) {
	e, _, logs, _ := newTestEnroller(t, t.TempDir(), "k")
	for range 3 {
		e.onResponse(wire.HeartbeatResponse{Enrolment: &wire.EnrolmentAnswer{State: wire.EnrolIgnored, RetryAfter: 3600}})
	}
	if n := strings.Count(logs.String(), "not theirs"); n != 1 {
		t.Fatalf("ignored logged %d times:\n%s", n, logs.String())
	}
}

func TestEnroller_Refused(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		why  string
	}{
		{"Conflict", fmt.Errorf("%w: %w: status 409", ErrConflict, ErrPermanent), "another instance"},
		{"Unauthorized", fmt.Errorf("%w: %w: status 401", ErrUnauthorized, ErrPermanent), "no longer accepts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			e, tok, logs, rental := newTestEnroller(t, dir, "runpod:abc123")
			e.start()
			if e.onRefused(c.err) {
				t.Fatal("a refusal of the enrolment token itself switched something")
			}
			e.onResponse(bound("runpod-abc123", testRentalToken))
			if !e.onRefused(c.err) {
				t.Fatal("a refused bound token did not fall back")
			}
			if tok.Get() != testEnrolToken || *rental != "" {
				t.Fatalf("after the fallback: enrol token %v, rental %q", tok.Get() == testEnrolToken, *rental)
			}
			if _, err := os.Stat(filepath.Join(dir, BindingFile)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("binding file kept: %v", err)
			}
			if !strings.Contains(logs.String(), c.why) {
				t.Fatalf("log does not say why (%q):\n%s", c.why, logs.String())
			}
			noTokens(t, logs.String())
			// A second bound answer binds again.
			e.onResponse(bound("runpod-abc123", testRentalToken))
			if tok.Get() != testRentalToken {
				t.Fatal("not bound again")
			}
		})
	}
}
