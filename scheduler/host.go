package scheduler

import (
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// RebootGap is the longest silence around a new boot, without a shutdown
// report, that is taken for a reboot: the instance was not stopped, and
// nothing is asked. A longer one may have been a stop (or a stop and a
// start by the platform), which only the user can tell.
const RebootGap = 10 * time.Minute

// AutoStopEvery is the least time between a stop already in the ledger
// and one that a host's shutdown or boot records by itself (where the
// profile says a shutdown stops billing). A stop within it is asked
// about instead. Whoever holds a rental's agent token can forge
// shutdowns and boots as often as its budget of messages allows; without
// this, each pair would take the time between them off the bill without
// a tap. A real host stopped and started more often than this still has
// each stop recorded, by one press on the card.
const AutoStopEvery = 6 * time.Hour

// HostDo is what a host's shutdown or boot does to the ledger.
type HostDo string

// What a host event leads to. "Record" changes the ledger by itself (the
// profile says what happened to billing, or a running host bills on every
// platform); "Ask" sends a card whose buttons make the change.
const (
	HostNothing     HostDo = ""
	HostRecordStop  HostDo = "record_stop"   // stop at From
	HostAskStop     HostDo = "ask_stop"      // [Stopped at From] [Still billing]
	HostRecordBoot  HostDo = "record_resume" // resume at To
	HostRecordCycle HostDo = "record_cycle"  // stop at From, resume at To
	HostAskCycle    HostDo = "ask_cycle"     // [Stopped From–To] [It billed]
)

// HostEvent is what an agent said of its host, with the rental as the
// ledger holds it: a shutdown report (Boot false) or a new boot.
type HostEvent struct {
	Rule  ledger.ShutdownRule // the rental's platform profile; unknown without one
	State ledger.State        // the rental's state now
	Boot  bool                // a new boot (HostBooted) rather than a shutdown report

	// A shutdown report: when, and whether the operating system was going
	// down (not only the agent).
	ShutdownAt time.Time
	Host       bool

	// A new boot: the previous boot's last heartbeat and the new boot's
	// start; ShutdownAt (above) is the previous boot's shutdown report, zero
	// when the host went silent without one.
	LastSeen time.Time
	BootAt   time.Time

	// LastStop is the latest stop in the rental's history (zero if none):
	// a stop recorded by itself needs it AutoStopEvery before.
	LastStop time.Time
}

// HostDecision is what DecideHost chose, with the times of the stop (From)
// and the resume (To) it records or asks about.
type HostDecision struct {
	Do       HostDo
	From, To time.Time
}

// DecideHost decides what a host's shutdown or new boot does to a rental
// (design: "Stops and restarts"). It changes the ledger by itself only
// where the platform profile says a shutdown from inside stops billing,
// or where a stopped rental's host is running again (a running host bills
// everywhere); where the profile says it bills, or does not say, it asks.
// A shutdown of the agent alone, a released rental and a short gap
// without a report (a reboot) do nothing. Silence alone never reaches it.
// A stop it would record within AutoStopEvery of the rental's last stop
// is asked about instead.
func DecideHost(e HostEvent) HostDecision {
	d := decideHost(e)
	// A last stop at From is this one, recorded already (a report told
	// twice): recording it again changes nothing.
	if !e.LastStop.IsZero() && !e.LastStop.Equal(d.From) && d.From.Sub(e.LastStop) < AutoStopEvery {
		switch d.Do {
		case HostRecordStop:
			d.Do = HostAskStop
		case HostRecordCycle:
			d.Do = HostAskCycle
		}
	}
	return d
}

func decideHost(e HostEvent) HostDecision {
	if e.State == ledger.Released {
		return HostDecision{}
	}
	if !e.Boot {
		if !e.Host || e.State != ledger.Running {
			return HostDecision{}
		}
		if e.Rule == ledger.ShutdownStops {
			return HostDecision{Do: HostRecordStop, From: e.ShutdownAt}
		}
		return HostDecision{Do: HostAskStop, From: e.ShutdownAt}
	}
	if e.State == ledger.Stopped {
		return HostDecision{Do: HostRecordBoot, To: e.BootAt}
	}
	if !e.ShutdownAt.IsZero() {
		if e.Rule == ledger.ShutdownStops {
			return HostDecision{Do: HostRecordCycle, From: e.ShutdownAt, To: e.BootAt}
		}
		return HostDecision{Do: HostAskCycle, From: e.ShutdownAt, To: e.BootAt}
	}
	if e.LastSeen.IsZero() || e.BootAt.Sub(e.LastSeen) <= RebootGap {
		return HostDecision{}
	}
	return HostDecision{Do: HostAskCycle, From: e.LastSeen, To: e.BootAt}
}
