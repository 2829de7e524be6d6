package events_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gpuledger/gpuledger/events"
	"github.com/gpuledger/gpuledger/ledger"
)

// ev is the n-th test event (an instance announced, its ID n).
func ev(n int64) ledger.AgentEvent {
	return ledger.InstanceAnnounced{Instance: ledger.Instance{ID: n}}
}

func id(t *testing.T, e ledger.AgentEvent) int64 {
	t.Helper()
	a, ok := e.(ledger.InstanceAnnounced)
	if !ok {
		t.Fatalf("got %T, want an InstanceAnnounced", e)
	}
	return a.Instance.ID
}

// logBuffer is a logger writing into a buffer, safe to read while written.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newBus(buffer int) (*events.Bus, *logBuffer) {
	lb := &logBuffer{}
	return events.New(events.Config{Buffer: buffer, Logger: slog.New(slog.NewTextHandler(lb, nil))}), lb
}

func TestBus_Order(t *testing.T) {
	t.Run("OneSubscriberSeesEveryEventInOrder", func(t *testing.T) {
		b, _ := newBus(0)
		s := b.Subscribe()
		defer s.Close()
		// Published before anyone reads: kept and delivered in order.
		for i := int64(1); i <= 100; i++ {
			if err := b.Publish(context.Background(), ev(i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := int64(1); i <= 100; i++ {
			if got := id(t, <-s.C()); got != i {
				t.Fatalf("event %d read as %d", i, got)
			}
		}
	})
	t.Run("TwoSubscribersSeeOneOrder", func(t *testing.T) {
		// Concurrent publishers interleave, but both subscribers see the
		// same interleaving (each read on its own goroutine).
		b, _ := newBus(4)
		s1, s2 := b.Subscribe(), b.Subscribe()
		const pubs, each = 4, 50
		read := func(s ledger.Subscription, out *[]int64, wg *sync.WaitGroup) {
			defer wg.Done()
			for range pubs * each {
				*out = append(*out, id(t, <-s.C()))
			}
		}
		var got1, got2 []int64
		var readers, publishers sync.WaitGroup
		readers.Add(2)
		go read(s1, &got1, &readers)
		go read(s2, &got2, &readers)
		for p := range int64(pubs) {
			publishers.Add(1)
			go func() {
				defer publishers.Done()
				for i := range int64(each) {
					if err := b.Publish(context.Background(), ev(p*1000+i)); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		publishers.Wait()
		readers.Wait()
		if len(got1) != pubs*each || !equal(got1, got2) {
			t.Fatalf("subscribers disagree on the order:\n%v\n%v", got1, got2)
		}
		// Each publisher's own events keep their order.
		lastOf := map[int64]int64{}
		for _, n := range got1 {
			p, i := n/1000, n%1000
			if prev, ok := lastOf[p]; ok && i != prev+1 {
				t.Fatalf("publisher %d's event %d came after its %d", p, i, prev)
			}
			lastOf[p] = i
		}
	})
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBus_BackPressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, lb := newBus(2)
		s := b.Subscribe()
		defer s.Close()
		ctx := context.Background()
		for i := int64(1); i <= 2; i++ {
			if err := b.Publish(ctx, ev(i)); err != nil {
				t.Fatal(err)
			}
		}
		if strings.Contains(lb.String(), "publisher waits") {
			t.Fatalf("logged waiting with room in the queue: %s", lb)
		}
		done := make(chan error, 1)
		go func() { done <- b.Publish(ctx, ev(3)) }()
		synctest.Wait() // the publisher is blocked on the full queue
		select {
		case err := <-done:
			t.Fatalf("Publish returned (%v) with the queue full", err)
		default:
		}
		if !strings.Contains(lb.String(), "publisher waits") || !strings.Contains(lb.String(), "InstanceAnnounced") {
			t.Fatalf("no log line for the wait: %q", lb)
		}
		// The consumer reads one: the publisher gets through, in order.
		if got := id(t, <-s.C()); got != 1 {
			t.Fatalf("read %d, want 1", got)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for _, want := range []int64{2, 3} {
			if got := id(t, <-s.C()); got != want {
				t.Fatalf("read %d, want %d", got, want)
			}
		}
	})
}

func TestBus_PublishCtxCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBus(1)
		s := b.Subscribe()
		defer s.Close()
		if err := b.Publish(context.Background(), ev(1)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errs := make(chan error, 3)
		// One publisher waits on the queue, two more for their turn: all
		// three return when their ctx ends, none queues its event.
		for i := int64(2); i <= 4; i++ {
			go func() { errs <- b.Publish(ctx, ev(i)) }()
		}
		synctest.Wait()
		cancel()
		for range 3 {
			if err := <-errs; !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		}
		if got := id(t, <-s.C()); got != 1 {
			t.Fatalf("read %d, want 1", got)
		}
		select {
		case e := <-s.C():
			t.Fatalf("an event whose Publish failed was queued: %v", e)
		default:
		}
		// The bus is not left locked: the next publish goes through.
		if err := b.Publish(context.Background(), ev(5)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBus_Close(t *testing.T) {
	t.Run("UnblocksPublishersAndCountsUnread", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b, lb := newBus(1)
			s := b.Subscribe()
			if err := b.Publish(context.Background(), ev(1)); err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() { errc <- b.Publish(context.Background(), ev(2)) }()
			synctest.Wait()
			s.Close()
			if err := <-errc; !errors.Is(err, events.ErrClosed) {
				t.Fatalf("err = %v, want ErrClosed", err)
			}
			if !strings.Contains(lb.String(), "unread=1") {
				t.Fatalf("the unread event was not counted: %q", lb)
			}
			// A closed subscription is no longer published to: with no
			// subscriber left, Publish reaches nobody and returns.
			if err := b.Publish(context.Background(), ev(3)); err != nil {
				t.Fatal(err)
			}
			s.Close() // twice is harmless
		})
	})
	t.Run("OtherSubscribersStillServed", func(t *testing.T) {
		b, _ := newBus(0)
		gone, kept := b.Subscribe(), b.Subscribe()
		gone.Close()
		if err := b.Publish(context.Background(), ev(7)); err != nil {
			t.Fatal(err)
		}
		if got := id(t, <-kept.C()); got != 7 {
			t.Fatalf("read %d, want 7", got)
		}
		kept.Close()
	})
}

// TestBus_NoGoroutineLeft: the bus starts no goroutine, and no publisher
// stays blocked once its ctx ends or the consumer stops (synctest fails
// the test if a goroutine of the bubble is left blocked).
func TestBus_NoGoroutineLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBus(1)
		s := b.Subscribe()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		for i := range int64(5) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.Publish(ctx, ev(i))
			}()
		}
		synctest.Wait()
		s.Close()
		wg.Wait()
	})
}

func TestBus_Refuses(t *testing.T) {
	b, _ := newBus(0)
	s := b.Subscribe()
	defer s.Close()
	if err := b.Publish(context.Background(), nil); err == nil {
		t.Fatal("a nil event was published")
	}
	select {
	case e := <-s.C():
		t.Fatalf("queued %v", e)
	default:
	}
}

func TestName(t *testing.T) {
	if got := events.Name(ledger.HostBooted{}); got != "HostBooted" {
		t.Fatalf("Name = %q", got)
	}
}
