package scheduler

import (
	"context"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// InstanceAnnounced shows the user a new instance an enrolment token
// announced.
func (s *Scheduler) InstanceAnnounced(ctx context.Context, in ledger.Instance) {
	s.log.Info("scheduler: instance announced", "user", in.UserID, "instance", in.ID, "key", in.Key)
}

// InstanceReturned tells the user that an instance logged as r reports
// again without its own token.
func (s *Scheduler) InstanceReturned(ctx context.Context, in ledger.Instance, r *ledger.Rental) {
	s.log.Info("scheduler: instance returned without its token", "rental", r.ID, "instance", in.ID)
}

// HostShutdown handles an agent's shutdown report.
func (s *Scheduler) HostShutdown(ctx context.Context, r *ledger.Rental, at time.Time, host bool) {
	s.log.Info("scheduler: host shutdown reported", "rental", r.ID, "at", at, "host", host)
}

// HostBooted handles a new boot of a rental's host.
func (s *Scheduler) HostBooted(ctx context.Context, r *ledger.Rental, b ledger.Boot) {
	s.log.Info("scheduler: host booted", "rental", r.ID, "boot", b.BootAt)
}
