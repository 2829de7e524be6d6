package hub

import (
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// The hub is where the ledger's words for orders meet the wire's: the
// scheduler and the views speak ledger.OrderAction, ledger.OrderOutcome,
// ledger.NoteCode and ledger.PolicyRefusal, the agent speaks agent/wire,
// and these tables translate at the door, one per vocabulary (the test
// walks every ledger value to its wire string and back).
var (
	wireActions = map[ledger.OrderAction]string{
		ledger.OrderStop:    wire.ActionStop,
		ledger.OrderRelease: wire.ActionRelease,
	}
	wireOutcomes = map[ledger.OrderOutcome]string{
		ledger.OutcomeRejectedSignature: wire.OutcomeRejectedSignature,
		ledger.OutcomeRejectedExpired:   wire.OutcomeRejectedExpired,
		ledger.OutcomeRejectedReplay:    wire.OutcomeRejectedReplay,
		ledger.OutcomeRejectedRental:    wire.OutcomeRejectedRental,
		ledger.OutcomeRejectedInvalid:   wire.OutcomeRejectedInvalid,
		ledger.OutcomeRefusedNoCommand:  wire.OutcomeRefusedNoCommand,
		ledger.OutcomeRefusedJob:        wire.OutcomeRefusedJob,
		ledger.OutcomeRefusedBusy:       wire.OutcomeRefusedBusy,
		ledger.OutcomeRefusedUnknown:    wire.OutcomeRefusedUnknown,
		ledger.OutcomeRefusedState:      wire.OutcomeRefusedState,
		ledger.OutcomeRefusedPeople:     wire.OutcomeRefusedPeople,
		ledger.OutcomePreReleaseFailed:  wire.OutcomePreReleaseFailed,
		ledger.OutcomeReleaseStarted:    wire.OutcomeReleaseStarted,
		ledger.OutcomeReleaseFailed:     wire.OutcomeReleaseFailed,
		ledger.OutcomeDone:              wire.OutcomeDone,
	}
	wireNotes = map[ledger.NoteCode]string{
		ledger.NoteGPUUtil:      wire.NoteGPUUtil,
		ledger.NoteGPUUtilMean:  wire.NoteGPUUtilMean,
		ledger.NoteJob:          wire.NoteJob,
		ledger.NoteWatchGrew:    wire.NoteWatchGrew,
		ledger.NoteCPU:          wire.NoteCPU,
		ledger.NoteNet:          wire.NoteNet,
		ledger.NoteTransfers:    wire.NoteTransfers,
		ledger.NoteDisk:         wire.NoteDisk,
		ledger.NoteGPUError:     wire.NoteGPUError,
		ledger.NoteNoGPUs:       wire.NoteNoGPUs,
		ledger.NoteGPUNoReading: wire.NoteGPUNoReading,
		ledger.NoteCPUNoReading: wire.NoteCPUNoReading,
		ledger.NoteNetNoReading: wire.NoteNetNoReading,
		ledger.NoteNoCommand:    wire.NoteNoCommand,
		ledger.NoteJobPID:       wire.NoteJobPID,
		ledger.NoteConnected:    wire.NoteConnected,
		ledger.NoteSession:      wire.NoteSession,
		ledger.NoteSessionFrom:  wire.NoteSessionFrom,
	}
	wirePolicyRefusals = map[ledger.PolicyRefusal]string{
		ledger.PolicyRefusedUnsigned:     wire.PolicyRefusedUnsigned,
		ledger.PolicyRefusedBadSignature: wire.PolicyRefusedBadSignature,
		ledger.PolicyRefusedExpired:      wire.PolicyRefusedExpired,
		ledger.PolicyRefusedFuture:       wire.PolicyRefusedFuture,
		ledger.PolicyRefusedInvalid:      wire.PolicyRefusedInvalid,
		ledger.PolicyRefusedRental:       wire.PolicyRefusedRental,
		ledger.PolicyRefusedOlder:        wire.PolicyRefusedOlder,
		ledger.PolicyRefusedState:        wire.PolicyRefusedState,
	}

	ledgerOutcomes       = inverse(wireOutcomes)
	ledgerNotes          = inverse(wireNotes)
	ledgerPolicyRefusals = inverse(wirePolicyRefusals)
)

// inverse returns m's wire strings mapped back to the ledger's values.
func inverse[K ~string](m map[K]string) map[string]K {
	out := make(map[string]K, len(m))
	for k, v := range m {
		out[v] = k
	}
	return out
}

// ledgerOutcome is the ledger's word for an agent's outcome; false for an
// outcome this server does not know (a newer agent's), which the hub
// refuses.
func ledgerOutcome(s string) (ledger.OrderOutcome, bool) {
	o, ok := ledgerOutcomes[s]
	return o, ok
}

// ledgerNote is the ledger's note code for an agent's; a code this server
// does not know is kept as sent (already clipped and printable), so the
// views fall back to the agent's own message for it.
func ledgerNote(code string) ledger.NoteCode {
	if c, ok := ledgerNotes[code]; ok {
		return c
	}
	return ledger.NoteCode(code)
}

// ledgerPolicyRefusal is the ledger's word for an agent's policy refusal
// code; an unknown one is kept as sent, and the views show the agent's
// own words for it.
func ledgerPolicyRefusal(code string) ledger.PolicyRefusal {
	if r, ok := ledgerPolicyRefusals[code]; ok {
		return r
	}
	return ledger.PolicyRefusal(code)
}
