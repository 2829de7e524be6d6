package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// StateFile is the name of the agent's state file in its state directory.
const StateFile = "agent-state.json"

// maxStateNonces bounds the order nonces the state file keeps. Orders
// are a few a day per rental and each is kept only until it expires (at
// most a day): a thousand unexpired ones mean someone is flooding, and
// the store then refuses new orders (fail safe) until some expire.
const maxStateNonces = 1000

// ErrStateFull is returned when the state holds maxStateNonces unexpired
// nonces.
var ErrStateFull = errors.New("agent: too many unexpired order nonces in the state file")

// State is what the agent keeps across restarts so that nothing captured
// on the wire can be replayed to it after a restart: the nonces of the
// orders it accepted (until they expire), the issue time of the newest
// server policy it accepted, and when this record began. It implements
// wire.NonceStore. It is safe for concurrent use.
//
// Every change is on disk before the method that makes it returns (a
// temporary file, fsync, rename, fsync of the directory), so an order's
// nonce is durable before its release command runs. The one exception is
// a policy that asks for the same as the last one written (a hub signs a
// fresh one into every heartbeat answer): its issue time moves in memory
// only, see AcceptPolicy. When the file cannot be written the change is
// refused and the error returned: the caller then does not act (fail
// safe).
type State struct {
	path string

	mu     sync.Mutex
	since  time.Time
	nonces map[string]time.Time
	policy time.Time
	effect string // what the policy on disk asks for, see AcceptPolicy
	broken error  // set when the state directory cannot be used at all
}

// stateJSON is the file's form.
type stateJSON struct {
	Version int `json:"version"`
	// Since is when this record began (agent wall clock). An order
	// issued before it may have been seen by an earlier agent whose
	// record is lost, so it is refused.
	Since          time.Time            `json:"since"`
	Nonces         map[string]time.Time `json:"nonces"`                    // nonce: expiry of its order
	PolicyIssuedAt time.Time            `json:"policy_issued_at,omitzero"` // newest accepted server policy written
	PolicyEffect   string               `json:"policy_effect,omitempty"`   // what it asks for (AcceptPolicy's effect)
}

// OpenState loads the state in dir, creating dir (0700) and the file when
// missing. A file that cannot be parsed is moved aside to
// agent-state.json.bad and the record starts again at now: what the lost
// record knew is then covered by Since (older orders are refused). When
// dir cannot be used, OpenState returns a State that refuses every change
// with the reason, and that reason.
func OpenState(dir string, now time.Time) (*State, error) {
	s := &State{path: filepath.Join(dir, StateFile), nonces: map[string]time.Time{}}
	if dir == "" {
		s.broken = errors.New("agent: no state directory (set --state-dir or GPULEDGER_AGENT_STATE_DIR)")
		return s, s.broken
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.broken = fmt.Errorf("agent: state directory: %w", err)
		return s, s.broken
	}
	var warn error
	b, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.since = now
	case err != nil:
		s.broken = fmt.Errorf("agent: read state: %w", err)
		return s, s.broken
	default:
		var f stateJSON
		if err := json.Unmarshal(b, &f); err != nil || f.Version != 1 || f.Since.IsZero() {
			bad := s.path + ".bad"
			os.Rename(s.path, bad)
			warn = fmt.Errorf("agent: state file %s unreadable (moved to %s); orders issued before now are refused: %v", s.path, bad, err)
			s.since = now
		} else {
			s.since, s.policy, s.effect = f.Since, f.PolicyIssuedAt, f.PolicyEffect
			if s.since.After(now) {
				// Begun under a clock since set back: now is still after
				// the moment the record really began (see
				// Executor.verify), and a future Since would refuse
				// every order until the clock caught up.
				s.since = now
			}
			for n, u := range f.Nonces {
				if now.Before(u) {
					s.nonces[n] = u
				}
			}
		}
	}
	if err := s.saveLocked(); err != nil {
		s.broken = err
		return s, err
	}
	return s, warn
}

// Since returns when this record began: orders issued earlier are refused.
func (s *State) Since() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.since
}

// Err returns why the state cannot be written, or nil.
func (s *State) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broken
}

// Add implements wire.NonceStore: it records nonce until the given time
// and returns once the record is on disk.
func (s *State) Add(nonce string, until, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return false, s.broken
	}
	if _, ok := s.nonces[nonce]; ok {
		return false, nil
	}
	for n, u := range s.nonces {
		if !now.Before(u) {
			delete(s.nonces, n)
		}
	}
	if len(s.nonces) >= maxStateNonces {
		return false, ErrStateFull
	}
	s.nonces[nonce] = until
	if err := s.saveLocked(); err != nil {
		delete(s.nonces, nonce)
		return false, err
	}
	return true, nil
}

// PolicyIssuedAt returns the issue time of the newest policy accepted.
func (s *State) PolicyIssuedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy
}

// AcceptPolicy records t as the issue time of the newest policy accepted,
// unless a newer one was accepted already; effect is what that policy
// asks for, in a form that is equal for policies that ask for the same.
// It returns an error, and records nothing, when t is older than the
// newest accepted or the state cannot be written.
//
// t is written to disk only when effect differs from that of the policy
// last written, so that identical policies, one per heartbeat, cost no
// fsync each. Replay protection does not suffer: after a restart the
// newest policy on disk is the first one with the effect now in force,
// and every policy accepted since asks for that same effect, so a
// replayed one either is refused as older or changes nothing.
func (s *State) AcceptPolicy(t time.Time, effect string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	if t.Before(s.policy) {
		return fmt.Errorf("%w: issued %s, one issued %s was accepted", errPolicyOlder, t.UTC().Format(time.RFC3339Nano), s.policy.UTC().Format(time.RFC3339Nano))
	}
	if t.Equal(s.policy) {
		return nil
	}
	if effect == s.effect {
		s.policy = t
		return nil
	}
	old, oldEffect := s.policy, s.effect
	s.policy, s.effect = t, effect
	if err := s.saveLocked(); err != nil {
		s.policy, s.effect = old, oldEffect
		return err
	}
	return nil
}

var errPolicyOlder = errors.New("policy is older than the newest accepted")

// saveLocked writes the state atomically and durably: a temporary file
// in the same directory, fsync, rename over the old file, fsync of the
// directory (so the rename itself survives a power cut).
func (s *State) saveLocked() error {
	b, err := json.Marshal(stateJSON{Version: 1, Since: s.since, Nonces: s.nonces, PolicyIssuedAt: s.policy, PolicyEffect: s.effect})
	if err != nil {
		return fmt.Errorf("agent: encode state: %w", err)
	}
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, "."+StateFile+".*")
	if err != nil {
		return fmt.Errorf("agent: write state: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("agent: write state %s: %w", s.path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
