package ledger

// The words of an order's life that the agent and the server share: what an
// order asks, what the agent answered, the reasons it gives with an answer
// and why it refused the server's policy. They are the ledger's types so
// that the scheduler and the views speak of orders without the wire
// protocol; the agent hub maps each to its wire string and back at its edge
// (agent/hub, whose test checks that every value here has a wire twin).
// The strings are the wire's own, so orders stored before these types
// existed read the same.

// OrderAction is what an order asks a rental's agent to do. Both run the
// host's release command; the server prefers stop.
type OrderAction string

// Order actions.
const (
	OrderStop    OrderAction = "stop"
	OrderRelease OrderAction = "release"
)

// OrderActions lists every order action, for the edges' mapping tests.
var OrderActions = []OrderAction{OrderStop, OrderRelease}

// Valid reports whether a is an order action.
func (a OrderAction) Valid() bool { return a == OrderStop || a == OrderRelease }

// OrderOutcome is what the agent (or the hub, for OutcomeExpired and
// OutcomeRestarted) last reported about an order.
type OrderOutcome string

// Outcomes an agent reports.
const (
	OutcomeRejectedSignature OrderOutcome = "rejected_signature"       // unsigned or bad signature
	OutcomeRejectedExpired   OrderOutcome = "rejected_expired"         // expired, or issued too far in the future
	OutcomeRejectedReplay    OrderOutcome = "rejected_replay"          // nonce already seen, or issued before the agent's replay record began
	OutcomeRejectedRental    OrderOutcome = "rejected_rental"          // for another rental
	OutcomeRejectedInvalid   OrderOutcome = "rejected_invalid"         // unknown action, missing fields
	OutcomeRefusedNoCommand  OrderOutcome = "refused_no_release_cmd"   // the host has no release command
	OutcomeRefusedJob        OrderOutcome = "refused_job_running"      // a wrapped job runs
	OutcomeRefusedBusy       OrderOutcome = "refused_busy"             // the fresh sample is busy
	OutcomeRefusedUnknown    OrderOutcome = "refused_unknown"          // the fresh sample could not tell
	OutcomeRefusedState      OrderOutcome = "refused_state"            // the agent could not record the nonce: fail safe
	OutcomeRefusedPeople     OrderOutcome = "refused_people_connected" // an automatic order, and someone is connected (Order.WaitFor)
	OutcomePreReleaseFailed  OrderOutcome = "pre_release_failed"
	OutcomeReleaseStarted    OrderOutcome = "release_started"
	OutcomeReleaseFailed     OrderOutcome = "release_failed"
	OutcomeDone              OrderOutcome = "done"
)

// Outcomes the hub records itself on an order.
const (
	OutcomeExpired   OrderOutcome = "expired"         // never picked up in time, or never confirmed
	OutcomeRestarted OrderOutcome = "agent_restarted" // the agent restarted while the command ran
)

// AgentOutcomes lists every outcome an agent may report (not the hub's
// own), for the edges' mapping tests.
var AgentOutcomes = []OrderOutcome{
	OutcomeRejectedSignature, OutcomeRejectedExpired, OutcomeRejectedReplay, OutcomeRejectedRental,
	OutcomeRejectedInvalid, OutcomeRefusedNoCommand, OutcomeRefusedJob, OutcomeRefusedBusy,
	OutcomeRefusedUnknown, OutcomeRefusedState, OutcomeRefusedPeople, OutcomePreReleaseFailed,
	OutcomeReleaseStarted, OutcomeReleaseFailed, OutcomeDone,
}

// NoteCode names one of the reasons an agent gives with an outcome (the
// key of an Order.Notes message; its arguments are the note's values as
// strings, in the order given here).
type NoteCode string

// Note codes.
const (
	NoteGPUUtil      NoteCode = "gpu_util"       // index, util %
	NoteGPUUtilMean  NoteCode = "gpu_util_mean"  // index, max %, mean %, samples
	NoteJob          NoteCode = "job"            // pid
	NoteWatchGrew    NoteCode = "watch_grew"     // path
	NoteCPU          NoteCode = "cpu"            // %
	NoteNet          NoteCode = "net"            // KiB/s
	NoteTransfers    NoteCode = "transfers"      // names
	NoteDisk         NoteCode = "disk"           // MB/s
	NoteGPUError     NoteCode = "gpu_error"      // the library's error
	NoteNoGPUs       NoteCode = "no_gpus"        // none
	NoteGPUNoReading NoteCode = "gpu_no_reading" // index, why
	NoteCPUNoReading NoteCode = "cpu_no_reading" // why
	NoteNetNoReading NoteCode = "net_no_reading" // why
	NoteNoCommand    NoteCode = "no_release_cmd" // none
	NoteJobPID       NoteCode = "job_pid"        // pid
	NoteConnected    NoteCode = "connected"      // count
	NoteSession      NoteCode = "session"        // kind, user, client
	NoteSessionFrom  NoteCode = "session_from"   // kind, client
)

// NoteCodes lists every note code, for the edges' mapping tests.
var NoteCodes = []NoteCode{
	NoteGPUUtil, NoteGPUUtilMean, NoteJob, NoteWatchGrew, NoteCPU, NoteNet, NoteTransfers, NoteDisk,
	NoteGPUError, NoteNoGPUs, NoteGPUNoReading, NoteCPUNoReading, NoteNetNoReading, NoteNoCommand,
	NoteJobPID, NoteConnected, NoteSession, NoteSessionFrom,
}

// PolicyRefusal is why an agent refused the server's signed policy
// (AgentState.PolicyRefusedCode); "" from an agent that gives no code.
type PolicyRefusal string

// Policy refusals.
const (
	PolicyRefusedUnsigned     PolicyRefusal = "unsigned"
	PolicyRefusedBadSignature PolicyRefusal = "bad_signature"
	PolicyRefusedExpired      PolicyRefusal = "expired"       // check the host's clock
	PolicyRefusedFuture       PolicyRefusal = "not_yet_valid" // issued in the future: check the host's clock
	PolicyRefusedInvalid      PolicyRefusal = "invalid"
	PolicyRefusedRental       PolicyRefusal = "other_rental"
	PolicyRefusedOlder        PolicyRefusal = "older"
	PolicyRefusedState        PolicyRefusal = "state" // the agent could not record it
)

// PolicyRefusals lists every policy refusal, for the edges' mapping tests.
var PolicyRefusals = []PolicyRefusal{
	PolicyRefusedUnsigned, PolicyRefusedBadSignature, PolicyRefusedExpired, PolicyRefusedFuture,
	PolicyRefusedInvalid, PolicyRefusedRental, PolicyRefusedOlder, PolicyRefusedState,
}
