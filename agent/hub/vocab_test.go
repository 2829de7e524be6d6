package hub

import (
	"testing"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestVocab_RoundTrip walks every order action, outcome, note code and
// policy refusal the ledger names to its wire string and back: a value
// added on one side without the other, or mapped to another's string,
// fails here rather than as a refused order result.
func TestVocab_RoundTrip(t *testing.T) {
	t.Run("Actions", func(t *testing.T) {
		roundTrip(t, ledger.OrderActions, wireActions, inverse(wireActions))
		// The wire's own list: what the agent accepts.
		for _, w := range []string{wire.ActionStop, wire.ActionRelease} {
			if _, ok := inverse(wireActions)[w]; !ok {
				t.Errorf("wire action %q has no ledger word", w)
			}
		}
	})
	t.Run("Outcomes", func(t *testing.T) { roundTrip(t, ledger.AgentOutcomes, wireOutcomes, ledgerOutcomes) })
	t.Run("Notes", func(t *testing.T) { roundTrip(t, ledger.NoteCodes, wireNotes, ledgerNotes) })
	t.Run("PolicyRefusals", func(t *testing.T) { roundTrip(t, ledger.PolicyRefusals, wirePolicyRefusals, ledgerPolicyRefusals) })
	t.Run("HubOutcomesStayHome", func(t *testing.T) {
		// Expired and agent-restarted are the hub's own: an agent that
		// sent one would be refused, not believed.
		for _, o := range []ledger.OrderOutcome{ledger.OutcomeExpired, ledger.OutcomeRestarted} {
			if _, ok := ledgerOutcome(string(o)); ok {
				t.Errorf("%q is accepted from an agent", o)
			}
		}
	})
	t.Run("UnknownKeptAsSent", func(t *testing.T) {
		if got := ledgerNote("gpu_temp"); got != "gpu_temp" {
			t.Errorf("ledgerNote(gpu_temp) = %q", got)
		}
		if got := ledgerPolicyRefusal("too_new"); got != "too_new" {
			t.Errorf("ledgerPolicyRefusal(too_new) = %q", got)
		}
		if o, ok := ledgerOutcome("exploded"); ok {
			t.Errorf("ledgerOutcome(exploded) = %q, true", o)
		}
	})
}

// roundTrip checks that every value of all maps to a wire string and back
// to itself, that the table holds nothing else, and that no two values
// share a string.
func roundTrip[K ~string](t *testing.T, all []K, toWire map[K]string, fromWire map[string]K) {
	t.Helper()
	if len(toWire) != len(all) || len(fromWire) != len(all) {
		t.Errorf("%d ledger values, %d mapped to the wire, %d back", len(all), len(toWire), len(fromWire))
	}
	for _, v := range all {
		w, ok := toWire[v]
		if !ok {
			t.Errorf("%q has no wire string", v)
			continue
		}
		if back, ok := fromWire[w]; !ok || back != v {
			t.Errorf("%q → wire %q → %q, %v", v, w, back, ok)
		}
		if string(v) != w {
			t.Errorf("%q is %q on the wire: stored orders and decision logs hold the wire's string", v, w)
		}
	}
}
