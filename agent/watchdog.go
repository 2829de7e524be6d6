package agent

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrHung reports a call that did not return within its watchdog timeout,
// or that was not started because an earlier one is still hung. NVML calls
// (and nvidia-smi) have hung for 15-20 s on some systems.
var ErrHung = errors.New("agent: gpu read timed out")

// watchdog runs calls on another goroutine and stops waiting after a
// timeout. A call that hangs is left running (Go cannot cancel a C call),
// and no new call starts until it returns, so hung goroutines never pile up.
// Panics in the call are recovered and returned as errors.
type watchdog struct {
	timeout time.Duration
	busy    atomic.Bool
}

func (w *watchdog) do(ctx context.Context, f func() error) error {
	if !w.busy.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: an earlier read has not returned", ErrHung)
	}
	done := make(chan error, 1)
	go func() {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("agent: gpu read panicked: %v", r)
				}
			}()
			err = f()
		}()
		// Clear busy before handing over the result, so the caller's
		// next call never sees a finished call as still running.
		w.busy.Store(false)
		done <- err
	}()
	timeout := w.timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("%w after %s", ErrHung, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}
