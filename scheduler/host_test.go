package scheduler_test

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestDecideHost covers every row of the stop/resume table: profile rule ×
// rental state × shutdown report or none × the gap before a new boot.
func TestDecideHost(t *testing.T) {
	down := t0.Add(8 * time.Hour)       // the shutdown report
	seen := down.Add(-20 * time.Second) // the last heartbeat before it
	boot := down.Add(16 * time.Hour)    // the new boot
	rules := []ledger.ShutdownRule{ledger.ShutdownStops, ledger.ShutdownBills, ledger.ShutdownUnknown}
	type row struct {
		name string
		ev   scheduler.HostEvent
		// want per rule: stops, bills, unknown
		want [3]scheduler.HostDecision
	}
	none := scheduler.HostDecision{}
	same := func(d scheduler.HostDecision) [3]scheduler.HostDecision { return [3]scheduler.HostDecision{d, d, d} }
	rows := []row{
		{"shutdown host running", scheduler.HostEvent{State: ledger.Running, ShutdownAt: down, Host: true},
			[3]scheduler.HostDecision{{Do: scheduler.HostRecordStop, From: down}, {Do: scheduler.HostAskStop, From: down}, {Do: scheduler.HostAskStop, From: down}}},
		{"shutdown agent only running", scheduler.HostEvent{State: ledger.Running, ShutdownAt: down}, same(none)},
		{"shutdown host stopped", scheduler.HostEvent{State: ledger.Stopped, ShutdownAt: down, Host: true}, same(none)},
		{"shutdown host released", scheduler.HostEvent{State: ledger.Released, ShutdownAt: down, Host: true}, same(none)},
		{"boot stopped", scheduler.HostEvent{Boot: true, State: ledger.Stopped, LastSeen: seen, BootAt: boot},
			same(scheduler.HostDecision{Do: scheduler.HostRecordBoot, To: boot})},
		{"boot stopped with report", scheduler.HostEvent{Boot: true, State: ledger.Stopped, ShutdownAt: down, Host: true, LastSeen: seen, BootAt: boot},
			same(scheduler.HostDecision{Do: scheduler.HostRecordBoot, To: boot})},
		{"boot running host report", scheduler.HostEvent{Boot: true, State: ledger.Running, ShutdownAt: down, Host: true, LastSeen: seen, BootAt: boot},
			[3]scheduler.HostDecision{{Do: scheduler.HostRecordCycle, From: down, To: boot}, {Do: scheduler.HostAskCycle, From: down, To: boot}, {Do: scheduler.HostAskCycle, From: down, To: boot}}},
		{"boot running agent-only report", scheduler.HostEvent{Boot: true, State: ledger.Running, ShutdownAt: down, LastSeen: seen, BootAt: boot},
			[3]scheduler.HostDecision{{Do: scheduler.HostRecordCycle, From: down, To: boot}, {Do: scheduler.HostAskCycle, From: down, To: boot}, {Do: scheduler.HostAskCycle, From: down, To: boot}}},
		{"boot running no report long gap", scheduler.HostEvent{Boot: true, State: ledger.Running, LastSeen: seen, BootAt: seen.Add(scheduler.RebootGap + time.Second)},
			same(scheduler.HostDecision{Do: scheduler.HostAskCycle, From: seen, To: seen.Add(scheduler.RebootGap + time.Second)})},
		{"boot running no report gap of a reboot", scheduler.HostEvent{Boot: true, State: ledger.Running, LastSeen: seen, BootAt: seen.Add(scheduler.RebootGap)}, same(none)},
		{"boot running no report no last heartbeat", scheduler.HostEvent{Boot: true, State: ledger.Running, BootAt: boot}, same(none)},
		{"boot released", scheduler.HostEvent{Boot: true, State: ledger.Released, ShutdownAt: down, Host: true, LastSeen: seen, BootAt: boot}, same(none)},
		{"shutdown host running stopped lately", scheduler.HostEvent{State: ledger.Running, ShutdownAt: down, Host: true, LastStop: down.Add(-scheduler.AutoStopEvery + time.Second)},
			same(scheduler.HostDecision{Do: scheduler.HostAskStop, From: down})},
		{"shutdown host running stopped long ago", scheduler.HostEvent{State: ledger.Running, ShutdownAt: down, Host: true, LastStop: down.Add(-scheduler.AutoStopEvery)},
			[3]scheduler.HostDecision{{Do: scheduler.HostRecordStop, From: down}, {Do: scheduler.HostAskStop, From: down}, {Do: scheduler.HostAskStop, From: down}}},
		{"boot running host report stopped lately", scheduler.HostEvent{Boot: true, State: ledger.Running, ShutdownAt: down, Host: true, LastSeen: seen, BootAt: boot, LastStop: down.Add(-time.Hour)},
			same(scheduler.HostDecision{Do: scheduler.HostAskCycle, From: down, To: boot})},
		{"shutdown host running this stop recorded", scheduler.HostEvent{State: ledger.Running, ShutdownAt: down, Host: true, LastStop: down},
			[3]scheduler.HostDecision{{Do: scheduler.HostRecordStop, From: down}, {Do: scheduler.HostAskStop, From: down}, {Do: scheduler.HostAskStop, From: down}}},
		{"boot stopped stopped lately", scheduler.HostEvent{Boot: true, State: ledger.Stopped, LastSeen: seen, BootAt: boot, LastStop: down},
			same(scheduler.HostDecision{Do: scheduler.HostRecordBoot, To: boot})},
	}
	for _, r := range rows {
		for i, rule := range rules {
			name := r.name + "/" + string(rule)
			if rule == "" {
				name = r.name + "/unknown"
			}
			t.Run(name, func(t *testing.T) {
				ev := r.ev
				ev.Rule = rule
				got := scheduler.DecideHost(ev)
				want := r.want[i]
				if got.Do != want.Do || !got.From.Equal(want.From) || !got.To.Equal(want.To) {
					t.Errorf("DecideHost(%+v) = %+v, want %+v", ev, got, want)
				}
			})
		}
	}
}
