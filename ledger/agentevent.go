package ledger

import (
	"context"
	"time"
)

// AgentEvent is something an agent reported that the user should hear
// about: one of JobFinished, GPUMismatched, ReportedAfterRelease,
// OrderUpdated, InstanceAnnounced, InstanceReturned, HostShutdown,
// HostBooted, BenchReported and WorkStarted (bench.go). The agent hub publishes them; the scheduler acts on them,
// one at a time and in the order they were published (events.Bus carries
// them between the two, so neither holds the other).
//
// The set is closed (the unexported method): a consumer's type switch
// names every kind there is.
type AgentEvent interface {
	agentEvent()
}

// JobFinished: the wrapped job of Rental exited.
type JobFinished struct {
	Rental *Rental
	Job    JobInfo
}

// GPUMismatched: Rental's agent sees other GPUs than the rental as logged
// (told once per distinct mismatch).
type GPUMismatched struct {
	Rental *Rental
	Diff   GPUDiff
}

// ReportedAfterRelease: the agent of the released Rental still reports
// (at At, server clock): the release may not have happened.
type ReportedAfterRelease struct {
	Rental *Rental
	At     time.Time
}

// OrderUpdated: Order changed state (picked up, done, refused, failed,
// expired); Rental is the rental after the change.
type OrderUpdated struct {
	Order  Order
	Rental *Rental
}

// InstanceAnnounced: an enrolment token announced an instance the user
// has not seen before (stored pending). Told once per instance; the
// consumer decides whether it gets a card of its own or joins the merged
// one (MaxCardsPerHour).
type InstanceAnnounced struct {
	Instance Instance
}

// InstanceReturned: an instance bound to Rental reports with the
// enrolment token after its own token was used: a new container that
// lost the token, or a copy of the instance. Told at most once per boot
// of it, once an hour, and within the rental's budget of agent-triggered
// messages.
type InstanceReturned struct {
	Instance Instance
	Rental   *Rental
}

// HostShutdown: Rental's agent said it is stopping at At (server clock);
// Host is true when the operating system is going down.
type HostShutdown struct {
	Rental *Rental
	At     time.Time
	Host   bool
}

// HostBooted: Rental's agent reports a new boot of its host.
type HostBooted struct {
	Rental *Rental
	Boot   Boot
}

func (JobFinished) agentEvent()          {}
func (GPUMismatched) agentEvent()        {}
func (ReportedAfterRelease) agentEvent() {}
func (OrderUpdated) agentEvent()         {}
func (InstanceAnnounced) agentEvent()    {}
func (InstanceReturned) agentEvent()     {}
func (HostShutdown) agentEvent()         {}
func (HostBooted) agentEvent()           {}

// Publisher takes events for whoever acts on them (events.Bus). Publish
// returns once the event is queued for every subscriber, in the order of
// the calls; while a subscriber's queue is full it waits, and returns
// ctx's error if ctx ends first (the event is then not queued), or an
// error when a subscriber has stopped.
type Publisher interface {
	Publish(ctx context.Context, ev AgentEvent) error
}

// Subscriber hands out subscriptions to the events published from then
// on (events.Bus).
type Subscriber interface {
	Subscribe() Subscription
}

// Subscription is one consumer's queue of events, in publication order.
// One goroutine reads C; Close says the consumer is done (publishers stop
// waiting on it, and what it left unread is logged, not delivered).
type Subscription interface {
	C() <-chan AgentEvent
	Close()
}
