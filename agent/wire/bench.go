package wire

import (
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// PathBench receives a BenchReport from an agent holding a rental's token
// and answers a BenchResponse: 200 stored (or already stored: the same
// ID again is not stored twice), 401 a bad token, 409 an enrolment token
// (no rental yet: keep the report and send it once the agent has its
// rental's token), 400 a body that is not a bench, 413 over
// MaxBenchBodyBytes.
const PathBench = "/v1/agent/bench"

// MaxBenchBodyBytes bounds a bench report's body (MaxGPUs GPUs with every
// figure and a Skip per figure fit in a fraction of it).
const MaxBenchBodyBytes = 64 << 10

// MaxLabelLen bounds a job's label (JobState.Label).
const MaxLabelLen = 64

// BenchReport is the body of POST PathBench: one bench run, sent once per
// rental (HeartbeatResponse.BenchWanted), retried with the same ID until
// answered 200.
type BenchReport struct {
	Version string `json:"version"` // protocol version, Version
	// ID is random per bench run (hex, at most 64 bytes): a retry after a
	// lost answer is recognised and stored once.
	ID           string     `json:"id"`
	AgentVersion string     `json:"agent_version"`
	BootID       string     `json:"boot_id"` // the agent run that benched (HeartbeatRequest.BootID)
	SentAt       time.Time  `json:"sent_at"`
	Bench        perf.Bench `json:"bench"`
}

// BenchResponse answers a BenchReport.
type BenchResponse struct {
	Rental string `json:"rental,omitempty"` // the rental it was stored with
	Stored bool   `json:"stored"`           // false: already had it (same ID)
	// Bounded lists the figures the server did not believe (out of any
	// card's range) and kept as not measured.
	Bounded []string `json:"bounded,omitempty"`
}
