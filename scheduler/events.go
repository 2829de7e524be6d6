package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/teamroom"
)

// The agents' events (ledger.AgentEvent) reach the scheduler through the
// subscription New takes from Config.Events: the hub publishes, Run
// consumes on its own goroutine, one event at a time, in order. What was
// published before Run starts waits in the subscription and goes first.
// When Run ends it closes the subscription: the hub stops waiting on it,
// and what was left unread is logged by the bus.

// Handle acts on one agent event: the card, the note or the decision it
// calls for. Run calls it for each event in turn; tests call it directly.
// Errors are logged, not returned: one event's failure does not hold the
// next one up.
func (s *Scheduler) Handle(ctx context.Context, ev ledger.AgentEvent) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("scheduler: an event's handling panicked", "event", fmt.Sprintf("%T", ev), "panic", p, "stack", string(debug.Stack()))
		}
	}()
	var err error
	var rental int64
	switch e := ev.(type) {
	case ledger.JobFinished:
		rental, err = e.Rental.ID, s.jobFinished(ctx, e.Rental, e.Job)
	case ledger.GPUMismatched:
		s.onGPUMismatch(ctx, e.Rental, e.Diff)
	case ledger.ReportedAfterRelease:
		s.onReportAfterRelease(ctx, e.Rental, e.At)
	case ledger.OrderUpdated:
		rental, err = e.Rental.ID, s.orderUpdated(ctx, e.Order, e.Rental)
	case ledger.InstanceAnnounced:
		s.onInstanceAnnounced(ctx, e.Instance)
	case ledger.InstanceReturned:
		s.onInstanceReturned(ctx, e.Instance, e.Rental)
	case ledger.HostShutdown:
		rental, err = e.Rental.ID, s.hostEvent(ctx, e.Rental, HostEvent{ShutdownAt: e.At, Host: e.Host})
	case ledger.BenchReported:
		rental, err = e.Rental.ID, s.benchReported(ctx, e.Rental, e.Bench)
	case ledger.WorkStarted:
		rental, err = e.Rental.ID, s.workStarted(ctx, e.Rental, e.At)
	case ledger.HostBooted:
		b := e.Boot
		rental, err = e.Rental.ID, s.hostEvent(ctx, e.Rental,
			HostEvent{Boot: true, LastSeen: b.LastSeen, BootAt: b.BootAt, ShutdownAt: b.ShutdownAt, Host: b.ShutdownHost})
	default:
		s.log.Error("scheduler: an event of no known kind", "event", fmt.Sprintf("%T", ev))
	}
	if err != nil {
		s.log.Error("scheduler: handle an event", "event", fmt.Sprintf("%T", ev), "rental", rental, "err", err)
	}
}

// consume handles the subscription's events until ctx ends.
func (s *Scheduler) consume(ctx context.Context) {
	if s.events == nil {
		<-ctx.Done()
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-s.events.C():
			s.Handle(ctx, ev)
		}
	}
}

// DrainEvents handles the events already queued for the scheduler, on the
// caller's goroutine, and returns when none is left: for tests and tools
// that drive the jobs without Run. It must not be called while Run runs
// (the events would lose their one order).
func (s *Scheduler) DrainEvents(ctx context.Context) {
	if s.events == nil {
		return
	}
	for {
		select {
		case ev := <-s.events.C():
			s.Handle(ctx, ev)
		default:
			return
		}
	}
}

// errNoSender is Run's refusal to start without a sender.
var errNoSender = errors.New("scheduler: Run: no sender (the chat transport) to notify through")

// useSender makes snd the scheduler's way to the chat, once: Run's
// argument, or Config.Sender for a scheduler driven without Run. It is
// wrapped to follow a team's room (teamroom.Sender): a room Telegram
// moved to a supergroup is moved and sent to again; a room that let the
// bot go is unbound, its owners told once, and a new card goes to the
// first owner privately, as the sync's notices do.
func (s *Scheduler) useSender(snd chat.Sender) {
	s.sndOnce.Do(func() {
		s.snd = teamroom.Wrap(snd, teamroom.Config{Teams: s.teams(), Store: s.store, ChatID: s.cfg.ChatID, Now: s.now, Logger: s.log})
		close(s.sndReady)
	})
}

// send delivers m through the sender Run was given. A notice made before
// Run starts (a button press that comes first) waits for it, or for ctx.
func (s *Scheduler) send(ctx context.Context, m chat.Outgoing) (int, error) {
	select {
	case <-s.sndReady:
	case <-ctx.Done():
		return 0, fmt.Errorf("scheduler: send before Run had a sender: %w", ctx.Err())
	}
	return s.snd.Send(ctx, m)
}
