// Package connector is what the ledger needs from a GPU platform's own
// API: the instances it lists with their state and price, the account's
// balance, and stopping or terminating an instance. One package per
// platform (connector/runpod, connector/vast, connector/lambda,
// connector/autodl) implements Client against the platform's documented
// API; this package holds the shared vocabulary and the HTTP discipline
// every connector follows (exact money, bounded bodies, one error per
// kind of failure, rate limits honoured).
//
// A connector never changes the ledger: it reports what the platform
// said, or an error, and the caller decides. No answer that failed to
// parse in full is turned into facts.
package connector

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// State is an instance's state as the platform reports it, reduced to
// what billing depends on.
type State string

// States.
const (
	// Running: the platform bills the instance's compute (booting,
	// running, and states like Vast.ai's "frozen" that still bill the GPU).
	Running State = "running"
	// Stopped: compute is not billed; storage may be.
	Stopped State = "stopped"
	// Terminated: gone; nothing more is billed.
	Terminated State = "terminated"
	// Unknown: the platform said something this connector does not know;
	// never read as stopped.
	Unknown State = "unknown"
)

// Instance is one instance as the platform lists it.
type Instance struct {
	ID       string // the platform's own ID (the export's "platform_id")
	Name     string // the user's label on the platform, if any
	GPU      string // model as the platform names it, e.g. "RTX 4090"
	GPUCount int
	// Price is the platform's current hourly price for the whole
	// instance, exact (converted from the platform's string or integer,
	// never through a float); PriceOK false when the platform gave none.
	Price    ledger.Decimal
	PriceOK  bool
	Currency ledger.Currency
	State    State
	// RawState is the platform's own word for the state, for messages.
	RawState string
	// StartedAt is when the instance last started running, as the
	// platform says; zero if it does not.
	StartedAt time.Time
	// StateSince is when the platform says the state began; zero if it
	// gives no time (the caller then uses its poll time, marked
	// approximate).
	StateSince time.Time
	// Address is the instance's public IP address as the platform lists
	// it (RunPod's publicIp, Vast.ai's public_ipaddr, Lambda's ip); the
	// zero Addr when the platform gives none. The server compares it
	// with where a rental's agent reports from before it lets that
	// agent's reports move anything through the platform's API.
	Address netip.Addr
}

// ParseAddress reads an address a platform lists for an instance: "" is
// none (the zero Addr, no error); anything else must
// be one plain IPv4 or IPv6 address, without a port, a zone or a prefix
// length. An IPv4-mapped IPv6 address is returned as IPv4, as the hub
// records the address a heartbeat came from. The connectors refuse a
// list with a malformed one (ErrBadAnswer) rather than guess.
func ParseAddress(s string) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, nil
	}
	if len(s) > 64 {
		return netip.Addr{}, fmt.Errorf("%w: address of %d bytes", ErrBadAnswer, len(s))
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%w: %q is not an IP address", ErrBadAnswer, s)
	}
	return a.Unmap(), nil
}

// Balance is the account's balance as the platform reports it.
type Balance struct {
	Amount   ledger.Decimal
	Currency ledger.Currency
	// SpendPerHour is the platform's own current spend rate, where it
	// reports one (RunPod's currentSpendPerHr); OK false otherwise.
	SpendPerHour   ledger.Decimal
	SpendPerHourOK bool
}

// BilledItem is an amount the platform billed for one instance over a
// period, where its API reports billing (RunPod's /billing/pods).
type BilledItem struct {
	InstanceID string
	From, To   time.Time
	Amount     ledger.Decimal
	Currency   ledger.Currency
	BilledFor  time.Duration // the time the platform billed, where it says
}

// Client is one platform account, reached with the user's API key.
type Client interface {
	// Platform is the ledger's profile key ("runpod", "vast", "lambda",
	// "autodl").
	Platform() string
	// Check makes one harmless call that proves the key works (before it
	// is stored). ErrUnauthorized when the platform rejects the key.
	Check(ctx context.Context) error
	// Instances lists the account's instances, all pages.
	Instances(ctx context.Context) ([]Instance, error)
	// Balance returns the account's balance; ErrNotSupported where the
	// platform's API has none (Lambda).
	Balance(ctx context.Context) (Balance, error)
	// Stop stops an instance (compute billing ends, storage may go on);
	// ErrNotSupported where the platform cannot stop (Lambda: terminate
	// only). Terminate destroys it and its data.
	Stop(ctx context.Context, id string) error
	Terminate(ctx context.Context, id string) error
	// Billed returns what the platform billed per instance in [from, to);
	// ErrNotSupported where the API reports no billing.
	Billed(ctx context.Context, from, to time.Time) ([]BilledItem, error)
	// MinInterval is the least time between two polls of Instances that
	// stays within the platform's documented rate limits.
	MinInterval() time.Duration
}

// Errors every connector returns, wrapped with the platform's detail
// (errors.Is tells them apart).
var (
	// ErrUnauthorized: the platform rejected the key (401, 403, or its
	// own "invalid key" answer). Retrying will not help until it is
	// replaced.
	ErrUnauthorized = errors.New("connector: the platform rejected the API key")
	// ErrNotSupported: the platform's API has no such operation.
	ErrNotSupported = errors.New("connector: the platform's API does not offer this")
	// ErrNotFound: the platform knows no such instance.
	ErrNotFound = errors.New("connector: no such instance on the platform")
	// ErrUnavailable: the platform is down, slow, or answered 5xx; try
	// again later with backoff.
	ErrUnavailable = errors.New("connector: the platform is unavailable")
	// ErrBadAnswer: the answer was not what the documented API returns
	// (HTML instead of JSON, fields missing or of the wrong type, a body
	// over the limit). Nothing from it is used.
	ErrBadAnswer = errors.New("connector: the platform's answer could not be read")
)

// RateLimitedError is a 429 (or the platform's own "too frequent"): wait
// RetryAfter before the next call (the platform's hint, or a default).
type RateLimitedError struct {
	Platform   string
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("connector: %s is rate-limiting; retry after %s", e.Platform, e.RetryAfter)
}
