package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// callingBack is the hub's Events as the scheduler is: a consumer that
// calls the hub back (its agents' states, their open orders) as it is
// told, before it records the event.
type callingBack struct {
	h   *hub.Hub
	rid int64
	rec *recorder
}

func (c *callingBack) Publish(ctx context.Context, ev ledger.AgentEvent) error {
	c.h.AgentState(c.rid)
	c.h.OpenOrder(c.rid)
	return c.rec.Publish(ctx, ev)
}

// TestHub_PublishesWithoutItsLock: the hub publishes what a heartbeat made
// after it has let go of its lock and before it answers, so a consumer
// that calls the hub back neither deadlocks the heartbeat nor misses the
// event when the agent has its answer.
func TestHub_PublishesWithoutItsLock(t *testing.T) {
	cb := &callingBack{rec: &recorder{}}
	e := newEnv(t, hub.Config{Events: cb})
	cb.h, cb.rid = e.hub, e.rid
	h := hb(wire.VerdictIdle, 60)
	h.Host.GPUs = []wire.GPUFact{{Name: "NVIDIA GeForce RTX 3090"}}
	answered := make(chan int, 1)
	go func() {
		code, _ := e.beat(e.token, h)
		answered <- code
	}()
	select {
	case code := <-answered:
		if code != 200 {
			t.Fatalf("heartbeat: %d", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("the heartbeat was not answered: the hub published its event holding its lock")
	}
	if got := strings.Join(cb.rec.list(), ","); got != "mismatch:box1" {
		t.Fatalf("published %q by the answer, want the GPU mismatch", got)
	}
}
