package scheduler

import "github.com/gpuledger/gpuledger/chat"

// Messages exposes the catalog to the black-box tests.
func Messages() chat.Catalog { return messages }

// WaitActions waits for the actions through a platform's API in flight.
func (s *Scheduler) WaitActions() { s.acts.Wait() }
