package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/clip"
)

// Executor carries out release orders and the local lease, one at a time.
// It never releases while the wrapped job lives, nor unless a fresh sample
// says idle: busy and unknown both refuse.
type Executor struct {
	Token             string          // used when Current is nil
	Current           *Token          // when set, the token orders must be signed with (read at every order)
	Rental            func() string   // the rental this agent serves; "" when not known yet
	Nonces            wire.NonceStore // nonces of accepted orders; a State keeps them across restarts; nil: no replay check (tests)
	Sampler           *Sampler
	Job               *Job
	ReleaseCmd        string // run with /bin/sh -c; "" means report only
	PreReleaseCmd     string
	PreReleaseTimeout time.Duration // default 10 min
	ReleaseTimeout    time.Duration // default 10 min
	Report            func(ctx context.Context, r wire.OrderResult) error
	Now               func() time.Time
	Log               *slog.Logger

	// RecordSince is when the nonce record began (State.Since). An order
	// issued before it is refused: an earlier agent whose record was lost
	// may have carried it out. Zero: no such check.
	RecordSince time.Time

	mu sync.Mutex // one release at a time
}

// LocalLeaseID is the order id used for results of the local lease.
const LocalLeaseID = "local-lease"

func (e *Executor) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Executor) log() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (e *Executor) report(ctx context.Context, r wire.OrderResult) {
	r.At = e.now().Round(0)
	e.log().Info("order result", "order", r.OrderID, "outcome", r.Outcome, "exit_code", derefInt(r.ExitCode), "message", r.Message)
	if e.Report == nil || r.OrderID == LocalLeaseID {
		return
	}
	if err := e.Report(ctx, r); err != nil {
		e.log().Warn("order result not delivered", "order", r.OrderID, "err", err)
	}
}

func derefInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// HandleOrder verifies o and, if it is genuine, fresh and for this rental,
// tries to release. Each step is reported; the final outcome is returned.
func (e *Executor) HandleOrder(ctx context.Context, o wire.Order) string {
	if err := e.verify(o); err != nil {
		out := wire.OutcomeRejectedInvalid
		switch {
		case errors.Is(err, wire.ErrUnsigned), errors.Is(err, wire.ErrBadSignature):
			out = wire.OutcomeRejectedSignature
		case errors.Is(err, wire.ErrExpired), errors.Is(err, wire.ErrNotYetValid), errors.Is(err, wire.ErrTooLong):
			out = wire.OutcomeRejectedExpired
		case errors.Is(err, wire.ErrReplayed), errors.Is(err, errBeforeRecord):
			out = wire.OutcomeRejectedReplay
		case errors.Is(err, wire.ErrNonceStore):
			out = wire.OutcomeRefusedState
		}
		if out == wire.OutcomeRefusedState {
			e.log().Error("order refused: the agent cannot record it, so it could not refuse a replay of it later; fix the state directory (--state-dir)", "order", o.ID, "err", err)
		} else {
			e.log().Warn("order rejected", "order", o.ID, "err", err)
		}
		if o.ID != "" && !errors.Is(err, wire.ErrReplayed) {
			// A replay already has its result; the rest are reported so
			// the server sees why nothing happened.
			e.report(ctx, wire.OrderResult{OrderID: o.ID, Outcome: out, Message: clip.Bytes(err.Error(), 512, "…")})
		}
		return out
	}
	if want := e.rental(); want != "" && o.Rental != want {
		msg := fmt.Sprintf("order is for rental %q, this agent serves %q", o.Rental, want)
		e.log().Warn("order rejected", "order", o.ID, "err", msg)
		e.report(ctx, wire.OrderResult{OrderID: o.ID, Outcome: wire.OutcomeRejectedRental, Message: msg})
		return wire.OutcomeRejectedRental
	}
	e.log().Info("order accepted", "order", o.ID, "action", o.Action)
	return e.release(ctx, o.ID, o.Action, o.WaitFor, time.Duration(o.IdlePeopleSeconds)*time.Second)
}

// errBeforeRecord marks a genuine order issued before the agent's nonce
// record began.
var errBeforeRecord = errors.New("agent: order issued before this agent's replay record began")

// verify checks o's signature, lifetime and rental-independent fields,
// that it was issued after the nonce record began, and records its nonce
// (durably, before anything runs).
func (e *Executor) verify(o wire.Order) error {
	now := e.now()
	tok := e.Token
	if e.Current != nil {
		tok = e.Current.Get()
	}
	if err := wire.VerifyOrder(tok, o, now, nil); err != nil {
		return err
	}
	// Whole seconds: the hub issues orders on the second. A record that
	// began "after now" was begun by a clock since set back: now still
	// lies after the moment it really began, so refusing what was issued
	// before now is enough (and does not refuse every order until then).
	since := e.RecordSince
	if since.After(now) {
		since = now
	}
	if !since.IsZero() && o.IssuedAt.Before(since.Truncate(time.Second)) {
		return fmt.Errorf("%w (issued %s, record since %s: the state file is new, so whether it already ran is unknown); send it again",
			errBeforeRecord, o.IssuedAt.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339))
	}
	if e.Nonces == nil {
		return nil
	}
	fresh, err := e.Nonces.Add(o.Nonce, o.ExpiresAt, now)
	if err != nil {
		return fmt.Errorf("%w: %w", wire.ErrNonceStore, err)
	}
	if !fresh {
		return wire.ErrReplayed
	}
	return nil
}

func (e *Executor) rental() string {
	if e.Rental == nil {
		return ""
	}
	return e.Rental()
}

// Release runs the release procedure for order id: refuse without a
// release command, while the job lives, or unless a fresh sample is idle;
// then the pre-release command (its failure aborts), then the release
// command. It returns the final outcome.
func (e *Executor) Release(ctx context.Context, id, action string) string {
	return e.release(ctx, id, action, nil, 0)
}

// release is Release for an order that names the session kinds that hold
// it (an automatic order: wire.Order.WaitFor): the fresh sample's people
// connected of those kinds refuse it, unless idleBound is set and they
// have done nothing for that long (wire.Order.IdlePeopleSeconds).
func (e *Executor) release(ctx context.Context, id, action string, waitFor []string, idleBound time.Duration) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ReleaseCmd == "" {
		n := note(wire.NoteNoCommand)
		e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomeRefusedNoCommand,
			Message: NoteText(n), Notes: []wire.Note{n}})
		return wire.OutcomeRefusedNoCommand
	}
	if e.Job.Alive() {
		st := e.Job.State()
		n := note(wire.NoteJobPID, strconv.Itoa(st.PID))
		e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomeRefusedJob,
			Message: NoteText(n), Notes: []wire.Note{n}})
		return wire.OutcomeRefusedJob
	}
	var v wire.Verdict = wire.VerdictUnknown
	var why []string
	var notes []wire.Note
	var people []wire.Session
	if e.Sampler != nil {
		s := e.Sampler.Sample(ctx)
		v, why, notes = s.Verdict, s.Reasons, s.Notes
		people = holding(s.Sessions, waitFor, idleBound, s.At)
	}
	if len(people) > 0 && v == wire.VerdictIdle {
		e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomeRefusedPeople, Verdict: v,
			Message: peopleNote(people), Notes: peopleNotes(people)})
		return wire.OutcomeRefusedPeople
	}
	switch v {
	case wire.VerdictBusy:
		e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomeRefusedBusy, Verdict: v, Message: joinNotes(why), Notes: notes})
		return wire.OutcomeRefusedBusy
	case wire.VerdictUnknown:
		e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomeRefusedUnknown, Verdict: v, Message: joinNotes(why), Notes: notes})
		return wire.OutcomeRefusedUnknown
	}
	env := []string{"GPULEDGER_ORDER_ID=" + id, "GPULEDGER_ORDER_ACTION=" + action}
	if e.PreReleaseCmd != "" {
		code, out, err := runShell(ctx, e.PreReleaseCmd, orDur(e.PreReleaseTimeout, 10*time.Minute), env)
		if err != nil || code != 0 {
			msg := fmt.Sprintf("pre-release command failed (exit %d): %v %s", code, err, out)
			e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomePreReleaseFailed, ExitCode: &code, Verdict: v, Message: clip.Bytes(msg, 1024, "")})
			return wire.OutcomePreReleaseFailed
		}
	}
	// Re-check: the pre-release command may have taken long, and a job
	// may have started meanwhile.
	if e.PreReleaseCmd != "" && e.Sampler != nil {
		if s := e.Sampler.Sample(ctx); s.Verdict == wire.VerdictBusy {
			e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomeRefusedBusy, Verdict: s.Verdict, Message: joinNotes(s.Reasons), Notes: s.Notes})
			return wire.OutcomeRefusedBusy
		}
	}
	e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomeReleaseStarted, Verdict: v, Message: "running release command"})
	code, out, err := runShell(ctx, e.ReleaseCmd, orDur(e.ReleaseTimeout, 10*time.Minute), env)
	if err != nil || code != 0 {
		msg := fmt.Sprintf("release command failed (exit %d): %v %s", code, err, out)
		e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomeReleaseFailed, ExitCode: &code, Message: clip.Bytes(msg, 1024, "")})
		return wire.OutcomeReleaseFailed
	}
	e.report(ctx, wire.OrderResult{OrderID: id, Outcome: wire.OutcomeDone, ExitCode: &code, Message: clip.Bytes(out, 1024, "")})
	return wire.OutcomeDone
}

func orDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// runShell runs cmd with /bin/sh -c in its own process group, killed as a
// group at the timeout. It returns the exit code (-1 if it did not exit
// normally) and the last 1 KiB of combined output.
func runShell(ctx context.Context, cmd string, timeout time.Duration, env []string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Env = append(os.Environ(), env...)
	var out tailBuffer
	c.Stdout, c.Stderr = &out, &out
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 5 * time.Second
	err := c.Run()
	code := -1
	if c.ProcessState != nil {
		code = c.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		err = nil // a non-zero exit is reported by its code
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("agent: %q timed out after %s: %w", cmd, timeout, ctx.Err())
	}
	return code, string(bytes.TrimSpace(out.b)), err
}

// tailBuffer keeps the last 1 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 1024 {
		t.b = t.b[len(t.b)-1024:]
	}
	return len(p), nil
}

// holding returns the sessions whose kind is in kinds and that are not
// idle beyond idleBound at now: a session whose person has done nothing
// (ActiveAt) for idleBound or longer no longer holds. A session whose
// activity is unknown holds, as does every one when idleBound is 0.
func holding(ss []wire.Session, kinds []string, idleBound time.Duration, now time.Time) []wire.Session {
	var out []wire.Session
	for _, s := range ss {
		if idleBound > 0 && s.ActiveAt != nil && now.Sub(*s.ActiveAt) >= idleBound {
			continue
		}
		for _, k := range kinds {
			if s.Kind == k {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// peopleNote says who is connected, for an order result: "2 connected:
// ssh root from 1.2.3.4, jupyter from local".
// peopleNotes is peopleNote as notes: how many, then each session.
func peopleNotes(ss []wire.Session) []wire.Note {
	out := []wire.Note{note(wire.NoteConnected, strconv.Itoa(len(ss)))}
	for _, s := range ss {
		if len(out) == wire.MaxNotes {
			break
		}
		if s.User != "" {
			out = append(out, note(wire.NoteSession, s.Kind, s.User, s.Client))
		} else {
			out = append(out, note(wire.NoteSessionFrom, s.Kind, s.Client))
		}
	}
	return out
}

func peopleNote(ss []wire.Session) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d connected:", len(ss))
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(" " + s.Kind)
		if s.User != "" {
			b.WriteString(" " + s.User)
		}
		b.WriteString(" from " + s.Client)
	}
	return clip.Bytes(b.String(), 512, "…")
}
