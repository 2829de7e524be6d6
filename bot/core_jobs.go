package bot

import (
	"context"
	"slices"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// JobStore is what /job and /compare need of ledger.BenchStore: the
// user's job runs, benches and first works, and adding a run.
type JobStore interface {
	AddJobRun(ctx context.Context, run ledger.JobRun) (ledger.JobRun, bool, error)
	JobRuns(ctx context.Context, userID int64, label string) ([]ledger.JobRun, error)
	UserBenches(ctx context.Context, userID int64) ([]ledger.BenchRecord, error)
	FirstWorks(ctx context.Context, userID int64) (map[int64]time.Time, error)
}

// jobStore returns Config.Jobs, else the Store when it keeps job runs,
// else nil.
func (c *Core) jobStore() JobStore {
	if c.jobs != nil {
		return c.jobs
	}
	js, _ := c.store.(JobStore)
	return js
}

// jobs is the family of the user's own jobs as the benchmark: /job names
// and lists a rental's runs, /compare shows the user's own table.
type jobs struct{ *req }

func (jobs) register(t *table) {
	on(t, jobs.name)
	on(t, jobs.list)
	on(t, jobs.compare)
}

// compareLabelRows is how many rows of each label /compare shows; /compare
// LABEL shows them all.
const compareLabelRows = 3

// name records a span of a rental as a run of a label: the span given,
// or the span of the last job its agent ran without a label, unless a
// run named in the chat covers it already. The span must lie in the rental's
// life (ledger.CheckJobSpan). The same run named twice (a message sent
// again) is recorded once.
func (r jobs) name(c command.JobNameCmd) error {
	js := r.c.jobStore()
	if js == nil {
		return r.answer(r.plain(view.JobText(r.lang, "job_off")))
	}
	x, err := r.named(c.Name)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return ledger.Errorc(ledger.ENOTFOUND, "no_rental_called", c.Name)
	}
	if err != nil {
		return err
	}
	name := r.shown(c.Name, x)
	all, err := js.JobRuns(r.ctx, r.ledgerID, "")
	if err != nil {
		return err
	}
	var mine []ledger.JobRun
	for _, j := range all {
		if j.RentalID == x.ID {
			mine = append(mine, j)
		}
	}
	from, to, agentCmd := c.From, c.To, ""
	if from.IsZero() {
		var last *ledger.JobRun
		for i := range mine {
			j := &mine[i]
			if j.Source == ledger.JobFromAgent && j.Label == "" && (last == nil || j.StartedAt.After(last.StartedAt)) {
				last = j
			}
		}
		if last == nil {
			return r.answer(r.plain(view.JobText(r.lang, "job_no_unlabelled", name, c.Label)))
		}
		// Only the last one: naming it twice must not walk back to an
		// older run nobody meant.
		for _, j := range mine {
			if j.Source == ledger.JobFromChat && j.StartedAt.Equal(last.StartedAt) && j.EndedAt.Equal(last.EndedAt) {
				return r.answer(r.plain(view.JobText(r.lang, "job_last_named", name, j.Label, c.Label)))
			}
		}
		if last.ExitCode != 0 {
			return r.answer(r.plain(view.JobText(r.lang, "job_last_failed", name, last.ExitCode, c.Label)))
		}
		from, to, agentCmd = last.StartedAt, last.EndedAt, last.Command
		if agentCmd == "" {
			agentCmd = "?"
		}
	}
	if err := ledger.CheckJobSpan(x, from, to, r.now); err != nil {
		return err
	}
	if slices.ContainsFunc(mine, func(j ledger.JobRun) bool {
		return j.Source == ledger.JobFromChat && j.Label == c.Label && j.StartedAt.Equal(from) && j.EndedAt.Equal(to)
	}) {
		f, t := view.FormatSpan(from, to, r.loc, r.now, r.lang)
		return r.answer(r.plain(view.JobText(r.lang, "job_already", c.Label, name, f, t)))
	}
	run, _, err := js.AddJobRun(r.ctx, ledger.JobRun{RentalID: x.ID, UserID: r.ledgerID, Label: c.Label,
		StartedAt: from, EndedAt: to, Source: ledger.JobFromChat, CreatedAt: r.now})
	if err != nil {
		return err
	}
	b, err := r.book()
	if err != nil {
		return err
	}
	cost, err := ledger.CostOver(b, bookRental(b, x), run.StartedAt, run.EndedAt)
	if err != nil {
		return err
	}
	return r.answer(r.plain(view.JobNamedText(name, run, cost, agentCmd, r.lang, r.loc, r.now)))
}

// bookRental returns the book's copy of x (the engine reads its volumes
// through the book), x itself when the book has none.
func bookRental(b *ledger.Book, x *ledger.Rental) *ledger.Rental {
	for _, r := range b.Rentals {
		if r.ID == x.ID {
			return r
		}
	}
	return x
}

// list shows a rental's runs with what each cost.
func (r jobs) list(c command.JobListCmd) error {
	js := r.c.jobStore()
	if js == nil {
		return r.answer(r.plain(view.JobText(r.lang, "job_off")))
	}
	x, err := r.named(c.Name)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return ledger.Errorc(ledger.ENOTFOUND, "no_rental_called", c.Name)
	}
	if err != nil {
		return err
	}
	all, err := js.JobRuns(r.ctx, r.ledgerID, "")
	if err != nil {
		return err
	}
	b, err := r.book()
	if err != nil {
		return err
	}
	br := bookRental(b, x)
	var mine []ledger.JobRun
	for _, j := range all {
		if j.RentalID == x.ID {
			mine = append(mine, j)
		}
	}
	var runs []view.JobRun
	for _, j := range mine {
		if j.Source == ledger.JobFromAgent && j.Label == "" && slices.ContainsFunc(mine, func(c ledger.JobRun) bool {
			return c.Source == ledger.JobFromChat && c.StartedAt.Equal(j.StartedAt) && c.EndedAt.Equal(j.EndedAt)
		}) {
			continue // the agent's run is listed as the run that names it
		}
		cost, err := ledger.CostOver(b, br, j.StartedAt, j.EndedAt)
		if err != nil {
			return err
		}
		runs = append(runs, view.JobRun{Run: j, Cost: cost})
	}
	return r.answer(r.plain(view.JobRunsText(r.shown(c.Name, x), runs, r.lang, r.loc, r.now)))
}

// compare shows the user's own table, or one label's.
func (r jobs) compare(c command.CompareCmd) error {
	js := r.c.jobStore()
	if js == nil {
		return r.answer(r.plain(view.JobText(r.lang, "job_off")))
	}
	b, err := r.book()
	if err != nil {
		return err
	}
	benches, err := js.UserBenches(r.ctx, r.ledgerID)
	if err != nil {
		return err
	}
	runs, err := js.JobRuns(r.ctx, r.ledgerID, "")
	if err != nil {
		return err
	}
	works, err := js.FirstWorks(r.ctx, r.ledgerID)
	if err != nil {
		return err
	}
	t := ledger.Compare(ledger.CompareInput{Book: b, Benches: benches, Runs: runs, FirstWorks: works, Now: r.now})
	if c.Label != "" {
		l, ok := t.Label(c.Label)
		if !ok {
			have := t.LabelNames()
			return r.answer(r.plain(view.CompareUnknownLabel(c.Label, have, command.Nearest(c.Label, have), r.lang)))
		}
		return r.answer(r.plain(view.CompareLabelText(l, r.lang)))
	}
	if t.Empty() {
		return r.answer(r.plain(view.CompareEmptyText(r.lang)))
	}
	return r.answer(r.plain(view.CompareText(t, r.lang, compareLabelRows)))
}
