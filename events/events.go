// Package events carries the ledger's agent events (ledger.AgentEvent)
// from the part of the server that learns of them (the agent hub) to the
// part that acts on them (the scheduler), so that neither holds the other
// and the server can be built in one pass: the bus first, then the
// publishers and the subscribers, each given it in its constructor.
//
// The rules, which the scheduler and the hub rely on:
//
//   - Order. Every subscriber sees every event in the order Publish was
//     called: one publisher at a time, and one queue per subscriber, read
//     by one goroutine.
//   - Events published before the consumer runs are kept. A subscriber
//     subscribes in its constructor and reads in its Run; what was
//     published in between waits in its queue and is delivered first.
//     Events published while nobody subscribes reach nobody (there is no
//     one to tell: a hub without a scheduler, in tests).
//   - A slow consumer slows the publisher, and nothing is dropped in
//     silence. Each queue is bounded (Config.Buffer); when one is full,
//     Publish logs that it waits and waits, until there is room, the
//     publisher's ctx ends (Publish returns its error: the event was not
//     queued and the publisher decides), or the consumer stops.
//   - Shutdown. A consumer that stops closes its subscription: Publish no
//     longer waits on it and returns ErrClosed for the events it no longer
//     takes, and what it left unread is counted in a log line.
//
// The bus starts no goroutine of its own.
package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/gpuledger/gpuledger/ledger"
)

// ErrClosed is returned by Publish for an event a subscriber did not take
// because it had stopped.
var ErrClosed = errors.New("events: the subscriber has stopped")

// DefaultBuffer is each subscriber's queue length unless Config.Buffer
// says otherwise: the hub tells of an agent's events within a budget of a
// few messages an hour per rental, so a full queue means a stuck consumer,
// not a busy one.
const DefaultBuffer = 1024

// Config configures a Bus.
type Config struct {
	// Buffer is how many events each subscriber's queue holds before
	// Publish waits. Default DefaultBuffer.
	Buffer int
	Logger *slog.Logger // default slog.Default()
}

// Bus is an in-memory ledger.Publisher and ledger.Subscriber. It is safe
// for concurrent use.
type Bus struct {
	buffer int
	log    *slog.Logger
	// turn lets one Publish at a time through, so that every subscriber
	// sees one order; a channel rather than a mutex so that a publisher
	// waiting for its turn still sees its ctx end.
	turn chan struct{}

	mu   sync.Mutex
	subs []*subscription
}

// New returns a bus with no subscribers.
func New(cfg Config) *Bus {
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Bus{buffer: cfg.Buffer, log: cfg.Logger, turn: make(chan struct{}, 1)}
}

// Subscribe returns a queue of the events published from now on. Its
// consumer reads C on one goroutine and calls Close when it stops.
func (b *Bus) Subscribe() ledger.Subscription {
	s := &subscription{bus: b, ch: make(chan ledger.AgentEvent, b.buffer), done: make(chan struct{})}
	b.mu.Lock()
	b.subs = append(b.subs, s)
	b.mu.Unlock()
	return s
}

// Publish queues ev for every subscriber, after the events of the calls
// before it. It waits while a subscriber's queue is full (logging that it
// does) and returns ctx's error if ctx ends first; ErrClosed (wrapped)
// when a subscriber had stopped. A nil event is refused.
func (b *Bus) Publish(ctx context.Context, ev ledger.AgentEvent) error {
	if ev == nil {
		return errors.New("events: publish: nil event")
	}
	select {
	case b.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("events: publish %s: %w", Name(ev), ctx.Err())
	}
	defer func() { <-b.turn }()
	b.mu.Lock()
	subs := slices.Clone(b.subs)
	b.mu.Unlock()
	var errs []error
	for _, s := range subs {
		if err := s.put(ctx, ev); err != nil {
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Name is an event's kind for log lines: "JobFinished", "HostBooted", ….
func Name(ev ledger.AgentEvent) string {
	n := fmt.Sprintf("%T", ev)
	if i := len("ledger."); len(n) > i && n[:i] == "ledger." {
		return n[i:]
	}
	return n
}

func (b *Bus) remove(s *subscription) {
	b.mu.Lock()
	b.subs = slices.DeleteFunc(b.subs, func(x *subscription) bool { return x == s })
	b.mu.Unlock()
}

// subscription is one consumer's queue.
type subscription struct {
	bus  *Bus
	ch   chan ledger.AgentEvent
	done chan struct{} // closed by Close
	once sync.Once
}

func (s *subscription) C() <-chan ledger.AgentEvent { return s.ch }

// Close stops the queue: publishers stop waiting on it, and the events
// left unread are counted in a log line, not delivered.
func (s *subscription) Close() {
	s.once.Do(func() {
		close(s.done)
		s.bus.remove(s)
		left := map[string]int{}
		n := 0
		for {
			select {
			case ev := <-s.ch:
				left[Name(ev)]++
				n++
				continue
			default:
			}
			break
		}
		if n > 0 {
			s.bus.log.Warn("events: the consumer stopped with events unread: they are not delivered", "unread", n, "kinds", left)
		}
	})
}

// put queues ev, waiting while the queue is full.
func (s *subscription) put(ctx context.Context, ev ledger.AgentEvent) error {
	select {
	case <-s.done:
		return fmt.Errorf("events: publish %s: %w", Name(ev), ErrClosed)
	default:
	}
	select {
	case s.ch <- ev:
		return s.taken(ev)
	default:
	}
	s.bus.log.Warn("events: the consumer is behind and its queue is full: the publisher waits", "event", Name(ev), "queue", cap(s.ch))
	select {
	case s.ch <- ev:
		return s.taken(ev)
	case <-s.done:
		return fmt.Errorf("events: publish %s: %w", Name(ev), ErrClosed)
	case <-ctx.Done():
		return fmt.Errorf("events: publish %s: the consumer is behind: %w", Name(ev), ctx.Err())
	}
}

// taken reports whether an event just queued will be read: one queued as
// the consumer closed may sit unread, and is then reported as not taken
// rather than lost in silence.
func (s *subscription) taken(ev ledger.AgentEvent) error {
	select {
	case <-s.done:
		return fmt.Errorf("events: publish %s: %w", Name(ev), ErrClosed)
	default:
		return nil
	}
}
