package bench

import (
	"time"

	"github.com/gpuledger/gpuledger/agent"
	"github.com/gpuledger/gpuledger/perf"
)

// simulated returns the "bench" of the simulate file at path, stamped
// now with Source "simulate", without touching a GPU or the disk. A
// file that cannot be read, or has no bench, gives a bench that
// measured nothing and says why.
func simulated(path string, now time.Time) perf.Bench {
	b := perf.Bench{StartedAt: now.UTC().Round(0), Source: SourceNone, GPUs: []perf.GPU{}}
	f, err := agent.ReadSimFile(path)
	switch {
	case err != nil:
		b.Skipped = []perf.Skip{{What: "bench", GPU: -1, Why: err.Error()}}
		return b
	case f.Bench == nil:
		b.Skipped = []perf.Skip{{What: "bench", GPU: -1, Why: "the simulate file " + path + " has no \"bench\""}}
		return b
	}
	b = *f.Bench
	b.StartedAt, b.Source = now.UTC().Round(0), SourceSimulate
	if b.GPUs == nil {
		b.GPUs = []perf.GPU{}
	}
	return b
}
