package hub_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// An enrolment token sent where only a rental's agent token is taken (an
// order result, as an agent that has just fallen back from its rental's
// token may post one) is unknown there, but stays a valid enrolment token:
// its next heartbeat is taken.
func TestEnrol_TokenRefusedAsAgentTokenStaysValid(t *testing.T) {
	e := newEnrolEnv(t)
	boot := e.clk.Now().Add(-time.Hour)
	e.answer(e.facts("abc123", boot))
	if code := e.result(e.enrol, wire.OrderResult{OrderID: "o1", Outcome: wire.OutcomeRejectedExpired}); code != http.StatusUnauthorized {
		t.Fatalf("order result with an enrolment token = %d, want 401", code)
	}
	if code, _, msg := e.send(e.enrol, e.facts("abc123", boot)); code != http.StatusOK {
		t.Fatalf("enrolment heartbeat after the order result = %d %q, want 200", code, msg)
	}
}
