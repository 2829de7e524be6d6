package testkit

import (
	"sync"
	"time"
)

// Clock is a manual clock: Now returns the time it was last set to, and
// only Add and Set move it, so a test decides exactly when a deadline
// passes. Its Now method is the func() time.Time the packages take as
// their clock. It is safe for concurrent use (handlers and flush loops
// read it while the test moves it).
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock showing t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d (backwards when d is negative, as a clock
// stepped back by NTP does).
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set sets the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}
