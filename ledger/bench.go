package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// What each rental delivered: the bench its agent ran (the receipt), the
// user's own jobs timed on it, and how long it took to start working.
// A bench is the agent's claim, like everything a token holder sends:
// it is bounded at the hub's door, shown as measured by the agent, and
// never moves money or an automatic action.

// BenchRecord is one bench stored with a rental.
type BenchRecord struct {
	ID       int64
	RentalID int64
	UserID   int64
	// ReportID is the agent's ID of the run (wire.BenchReport.ID): the
	// same one again is not stored twice.
	ReportID string
	At       time.Time // received, server clock
	Bench    perf.Bench
	// Bounded names the figures the hub did not believe and zeroed
	// (perf.Bound); they show as not measured.
	Bounded []string
}

// JobSource says where a job run came from.
type JobSource string

// Job sources.
const (
	JobFromAgent JobSource = "agent" // a job the agent wrapped (run --label L -- CMD)
	JobFromChat  JobSource = "chat"  // a span the user named afterwards (/job)
)

// JobRun is one run of the user's own work on a rental: the user's own
// benchmark when it has a label.
type JobRun struct {
	ID        int64
	RentalID  int64
	UserID    int64
	Label     string // "" unlabelled (an agent job run without --label)
	Command   string // as the agent reported it, clipped; "" from the chat
	StartedAt time.Time
	EndedAt   time.Time
	ExitCode  int // valid when Source is JobFromAgent
	Source    JobSource
	CreatedAt time.Time
}

// Duration is the run's length.
func (j JobRun) Duration() time.Duration { return j.EndedAt.Sub(j.StartedAt) }

// Succeeded reports whether the run counts as a completed run of its
// label: an agent job that exited 0, or a span the user named.
func (j JobRun) Succeeded() bool { return j.Source == JobFromChat || j.ExitCode == 0 }

// MaxLabelLen bounds a job's label; labels are [A-Za-z0-9._-] (ValidLabel).
const MaxLabelLen = 64

// ValidLabel reports whether s is a usable job label.
func ValidLabel(s string) bool {
	if s == "" || len(s) > MaxLabelLen {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// FirstWork is when a rental first did sustained GPU work, as its agent's
// heartbeats showed it (server clock): the end of the setup tax that
// began with the rental's start.
type FirstWork struct {
	RentalID int64
	At       time.Time
}

// BenchStore keeps the benches, job runs and first work of rentals.
// Methods taking a userID check it: a user never reads another's rows.
type BenchStore interface {
	// AddBench stores rec (its RentalID, UserID, ReportID, At, Bench and
	// Bounded) and returns it with its ID, and true; when the rental
	// already has a bench with rec.ReportID it stores nothing and returns
	// that one and false. ENOTFOUND if the rental does not exist.
	AddBench(ctx context.Context, rec BenchRecord) (BenchRecord, bool, error)
	// Benches returns the benches of the user's rental, oldest first.
	Benches(ctx context.Context, userID, rentalID int64) ([]BenchRecord, error)
	// UserBenches returns all the user's benches, oldest first (the
	// user's own price/performance table).
	UserBenches(ctx context.Context, userID int64) ([]BenchRecord, error)
	// HasBench reports whether the rental has a bench (the hub then stops
	// asking its agent for one).
	HasBench(ctx context.Context, rentalID int64) (bool, error)

	// AddJobRun stores a run and returns it with its ID, and true; an
	// agent's run already stored (same rental, StartedAt and Source
	// JobFromAgent) is not stored twice: that one and false. EINVALID for
	// a label that is not ValidLabel (other than "" from an agent) or an
	// end before the start; ENOTFOUND if the rental does not exist.
	AddJobRun(ctx context.Context, run JobRun) (JobRun, bool, error)
	// JobRuns returns the user's runs, oldest first: all of them when
	// label is "", else that label's.
	JobRuns(ctx context.Context, userID int64, label string) ([]JobRun, error)

	// SetFirstWork records the rental's first sustained work at at,
	// unless one is recorded (then false, and the first one stays).
	SetFirstWork(ctx context.Context, rentalID int64, at time.Time) (bool, error)
	// FirstWorks returns the recorded first work of the user's rentals,
	// by rental ID.
	FirstWorks(ctx context.Context, userID int64) (map[int64]time.Time, error)
}

// DeliveredReader is what LoadDelivered reads of a BenchStore.
type DeliveredReader interface {
	UserBenches(ctx context.Context, userID int64) ([]BenchRecord, error)
	JobRuns(ctx context.Context, userID int64, label string) ([]JobRun, error)
}

// LoadDelivered fills b.Benches and b.JobRuns with the benches and job
// runs of b's user, read from st. A store's Book leaves them empty: every
// command and page loads a book, and only the few that show what the
// rentals delivered (the JSON export, /quote) read them, through this.
// A nil st leaves them empty.
func LoadDelivered(ctx context.Context, b *Book, st DeliveredReader) error {
	if st == nil {
		return nil
	}
	benches, err := st.UserBenches(ctx, b.User.ID)
	if err != nil {
		return fmt.Errorf("load benches: %w", err)
	}
	runs, err := st.JobRuns(ctx, b.User.ID, "")
	if err != nil {
		return fmt.Errorf("load job runs: %w", err)
	}
	b.Benches, b.JobRuns = benches, runs
	return nil
}

// BenchReported: Rental's agent sent a bench, the rental's first (the
// receipt card), stored as Bench.
type BenchReported struct {
	Rental *Rental
	Bench  BenchRecord
}

// WorkStarted: Rental first did sustained GPU work at At (the setup tax's
// end; the receipt's follow-up).
type WorkStarted struct {
	Rental *Rental
	At     time.Time
}

func (BenchReported) agentEvent() {}
func (WorkStarted) agentEvent()   {}
