package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// BindingFile is the name of the file, in the state directory, that
// keeps the rental token an enrolment agent was handed.
const BindingFile = "binding.json"

// Binding is what an agent started with an enrolment token keeps once the
// user logged its instance: the rental's name and own token, and the key
// of the instance it was handed to. A copy of the host (an image made
// from it, with the state directory in it) has another key and does not
// use it.
type Binding struct {
	Version     int       `json:"version"`
	Rental      string    `json:"rental"`
	Token       string    `json:"token"`
	InstanceKey string    `json:"instance_key"`
	BoundAt     time.Time `json:"bound_at"`
}

// saveBinding writes b to dir/binding.json, owner-only, atomically and
// durably (a temporary file, fsync, rename, fsync of the directory).
func saveBinding(dir string, b Binding) error {
	b.Version = 1
	data, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("agent: encode binding: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("agent: write binding: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+BindingFile+".*") // mode 0600
	if err != nil {
		return fmt.Errorf("agent: write binding: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	path := filepath.Join(dir, BindingFile)
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("agent: write binding %s: %w", path, err)
	}
	return nil
}

// loadBinding reads dir/binding.json; ok is false when there is none.
// A file that does not hold a usable binding is an error.
func loadBinding(dir string) (b Binding, ok bool, err error) {
	path := filepath.Join(dir, BindingFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Binding{}, false, nil
	}
	if err != nil {
		return Binding{}, false, fmt.Errorf("agent: read binding: %w", err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return Binding{}, false, fmt.Errorf("agent: binding %s: %w", path, err)
	}
	if b.Version != 1 || b.Rental == "" || b.Token == "" || wire.IsEnrolToken(b.Token) {
		return Binding{}, false, fmt.Errorf("agent: binding %s holds no usable rental token (version %d)", path, b.Version)
	}
	return b, true, nil
}

// enroller runs an agent started with an enrolment token: it uses a
// saved binding made on this very instance, takes the rental token the
// hub hands over once the user logs the instance (saving it), and falls
// back to the enrolment token when the hub refuses the rental's. Its
// methods run on the reporter's goroutine (start before it); the token
// they switch is read everywhere through tok.
type enroller struct {
	enrolToken string
	tok        *Token
	dir        string        // state directory; "" keeps the binding in memory only
	key        func() string // this host's wire.InstanceFacts.Key
	setRental  func(string)  // the rental the agent serves ("" when unbound)
	now        func() time.Time
	log        *slog.Logger

	mu    sync.Mutex
	bound *Binding // the binding in use; nil while enrolling
	said  string   // the enrolment state last logged
}

// start uses the saved binding if it was made on this instance.
func (e *enroller) start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dir == "" {
		e.log.Warn("enrolment token without a usable state directory: once the instance is logged its rental token is kept in memory only, and a restart enrols again (fix --state-dir)")
		e.log.Info("enrolling: this instance is announced to the user, who logs it in the chat")
		return
	}
	b, ok, err := loadBinding(e.dir)
	switch {
	case err != nil:
		e.log.Warn("the saved binding is unreadable; enrolling again", "err", err)
	case ok && b.InstanceKey != e.key():
		e.log.Warn("this host is not the instance the saved rental token belongs to (a copy of its image?); enrolling as a new instance",
			"saved_rental", b.Rental, "saved_for", b.InstanceKey, "this_host", e.key())
	case ok:
		e.useLocked(b)
		e.log.Info("using the saved rental token of "+b.Rental, "rental", b.Rental, "bound_at", b.BoundAt.UTC().Format(time.RFC3339))
		return
	}
	e.log.Info("enrolling: this instance is announced to the user, who logs it in the chat")
}

func (e *enroller) useLocked(b Binding) {
	e.bound = &b
	e.tok.Set(b.Token)
	e.setRental(b.Rental)
}

// onResponse takes an enrolment answer: it logs a change of state once,
// and on bound saves the binding and switches to the rental's token.
func (e *enroller) onResponse(resp wire.HeartbeatResponse) {
	a := resp.Enrolment
	if a == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bound != nil {
		return // an answer to an enrolment heartbeat sent before the switch
	}
	attrs := []any{"hub_says", a.Message}
	if a.RetryAfter > 0 {
		attrs = append(attrs, "next_try_in", (time.Duration(a.RetryAfter) * time.Second).String())
	}
	switch a.State {
	case wire.EnrolBound:
		if a.Token == "" || wire.IsEnrolToken(a.Token) || a.Rental == "" {
			if e.said != "bound-bad" {
				e.said = "bound-bad"
				e.log.Warn("the hub says this instance was logged but handed no usable rental token; still enrolling", append(attrs, "rental", a.Rental)...)
			}
			return
		}
		b := Binding{Version: 1, Rental: a.Rental, Token: a.Token, InstanceKey: e.key(), BoundAt: e.now().UTC()}
		if e.dir != "" {
			if err := saveBinding(e.dir, b); err != nil {
				e.log.Warn("the rental token could not be saved: it is kept in memory only, and a restart enrols again", "err", err)
			}
		}
		e.useLocked(b)
		e.said = ""
		e.log.Info("logged as "+b.Rental+"; reporting with its own token", "rental", b.Rental)
		return
	}
	if a.State == e.said {
		return
	}
	e.said = a.State
	switch a.State {
	case wire.EnrolWaiting:
		e.log.Info("instance announced; waiting for the user to log it in the chat", attrs...)
	case wire.EnrolHeld:
		e.log.Warn("too many instances wait for the user's answer: this one is held back and asks again later", attrs...)
	case wire.EnrolIgnored:
		e.log.Warn("the user said this instance is not theirs: it reports nothing and asks again once in a while", attrs...)
	default:
		e.log.Warn("the hub answered an enrolment state this agent does not know", append(attrs, "state", a.State)...)
	}
}

// onRefused is told of a 401, 403 or 409 answer. When the refused token
// is the rental's, it forgets the binding (the file too) and goes back to
// the enrolment token, and reports true.
func (e *enroller) onRefused(err error) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bound == nil {
		return false
	}
	why := "the hub no longer accepts the rental's token (the rental was released, or its token revoked)"
	if errors.Is(err, ErrConflict) {
		why = "the hub says the rental's token belongs to another instance (this host is a copy of it?)"
	}
	if e.dir != "" {
		if rerr := os.Remove(filepath.Join(e.dir, BindingFile)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			e.log.Warn("the saved binding could not be removed", "err", rerr)
		}
	}
	rental := e.bound.Rental
	e.bound, e.said = nil, ""
	e.tok.Set(e.enrolToken)
	e.setRental("")
	e.log.Warn("dropped the rental token of "+rental+"; enrolling again with the enrolment token", "rental", rental, "why", why, "err", err)
	return true
}
