package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// Bounds of what a bench row keeps (the migration's checks say the same).
const (
	maxReportID   = 64
	maxBenchJSON  = 128 << 10
	maxBoundedLen = 4 << 10
	maxJobCommand = 1024
)

// rentalOwner returns the user of rental id; ENOTFOUND "no_rental_id"
// when it does not exist, or when userID is not 0 and not its user (a
// user never learns another's rental exists).
func rentalOwner(ctx context.Context, q querier, id, userID int64) (int64, error) {
	var owner int64
	err := q.QueryRowContext(ctx, `SELECT user_id FROM rentals WHERE id = ?`, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && userID != 0 && owner != userID) {
		return 0, ledger.Errorc(ledger.ENOTFOUND, "no_rental_id", id)
	}
	if err != nil {
		return 0, storeError(fmt.Errorf("sqlite: read rental %d: %w", id, err))
	}
	return owner, nil
}

// AddBench stores rec with its rental (see ledger.BenchStore). The
// rental's user is the store's, whatever rec.UserID says: the hub knows
// the rental by its agent's token. A zero At is the store's clock.
// Errors: EINVALID ("bench_report_id"), ENOTFOUND ("no_rental_id").
func (b *Benchmarks) AddBench(ctx context.Context, rec ledger.BenchRecord) (ledger.BenchRecord, bool, error) {
	if rec.ReportID == "" || len(rec.ReportID) > maxReportID {
		return ledger.BenchRecord{}, false, ledger.Errorc(ledger.EINVALID, "bench_report_id")
	}
	body, err := json.Marshal(rec.Bench)
	if err != nil {
		return ledger.BenchRecord{}, false, fmt.Errorf("sqlite: add bench: %w", err)
	}
	bounded := rec.Bounded
	if bounded == nil {
		bounded = []string{}
	}
	names, err := json.Marshal(bounded)
	if err != nil {
		return ledger.BenchRecord{}, false, fmt.Errorf("sqlite: add bench: %w", err)
	}
	if len(body) > maxBenchJSON {
		return ledger.BenchRecord{}, false, ledger.Errorf(ledger.EINVALID, "bench of %d bytes is over the store's %d", len(body), maxBenchJSON)
	}
	if len(names) > maxBoundedLen {
		// The hub caps the names it keeps well within this (capBounded).
		return ledger.BenchRecord{}, false, ledger.Errorf(ledger.EINVALID, "bench's bounded names of %d bytes are over the store's %d", len(names), maxBoundedLen)
	}
	var out ledger.BenchRecord
	var added bool
	err = b.db.withTx(ctx, func(tx *sql.Tx) error {
		owner, err := rentalOwner(ctx, tx, rec.RentalID, 0)
		if err != nil {
			return err
		}
		at := rec.At
		if at.IsZero() {
			at = b.db.now()
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO benches (rental_id, user_id, report_id, received_at, bench, bounded)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (rental_id, report_id) DO NOTHING`,
			rec.RentalID, owner, rec.ReportID, unix(at), string(body), string(names))
		if err != nil {
			return constraintError(err, "add bench", "the bench breaks a rule of the store")
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: add bench: %w", err)
		}
		added = n == 1
		out, err = scanBench(tx.QueryRowContext(ctx, `SELECT `+benchCols+` FROM benches WHERE rental_id = ? AND report_id = ?`,
			rec.RentalID, rec.ReportID))
		if err != nil {
			return fmt.Errorf("sqlite: add bench: %w", err)
		}
		return nil
	})
	if err != nil {
		return ledger.BenchRecord{}, false, storeError(err)
	}
	return out, added, nil
}

const benchCols = `id, rental_id, user_id, report_id, received_at, bench, bounded`

func scanBench(s scanner) (ledger.BenchRecord, error) {
	var (
		r           ledger.BenchRecord
		at          int64
		body, names string
	)
	if err := s.Scan(&r.ID, &r.RentalID, &r.UserID, &r.ReportID, &at, &body, &names); err != nil {
		return r, err
	}
	r.At = fromUnix(at)
	if err := json.Unmarshal([]byte(body), &r.Bench); err != nil {
		return r, fmt.Errorf("bench %d: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(names), &r.Bounded); err != nil {
		return r, fmt.Errorf("bench %d: bounded: %w", r.ID, err)
	}
	if len(r.Bounded) == 0 {
		r.Bounded = nil
	}
	return r, nil
}

// Benches returns the benches of the user's rental, oldest first; none
// for a rental that is not the user's.
func (b *Benchmarks) Benches(ctx context.Context, userID, rentalID int64) ([]ledger.BenchRecord, error) {
	return queryAll(ctx, b.db.reader, "list benches", scanBench,
		`SELECT `+benchCols+` FROM benches WHERE user_id = ? AND rental_id = ? ORDER BY received_at, id`, userID, rentalID)
}

// UserBenches returns all the user's benches, oldest first.
func (b *Benchmarks) UserBenches(ctx context.Context, userID int64) ([]ledger.BenchRecord, error) {
	return queryAll(ctx, b.db.reader, "list user's benches", scanBench,
		`SELECT `+benchCols+` FROM benches WHERE user_id = ? ORDER BY received_at, id`, userID)
}

// HasBench reports whether the rental has a bench.
func (b *Benchmarks) HasBench(ctx context.Context, rentalID int64) (bool, error) {
	var one int
	err := b.db.reader.QueryRowContext(ctx, `SELECT 1 FROM benches WHERE rental_id = ? LIMIT 1`, rentalID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, storeError(fmt.Errorf("sqlite: has bench: %w", err))
	}
	return true, nil
}

// AddJobRun stores run (see ledger.BenchStore). For an agent's run the
// rental's user is the store's (the hub knows the rental by its token);
// for a span named in chat run.UserID must be the rental's user. A zero
// CreatedAt is the store's clock. Errors: EINVALID ("job_label",
// "job_span"), ENOTFOUND ("no_rental_id").
func (b *Benchmarks) AddJobRun(ctx context.Context, run ledger.JobRun) (ledger.JobRun, bool, error) {
	switch run.Source {
	case ledger.JobFromAgent:
		if run.Label != "" && !ledger.ValidLabel(run.Label) {
			return ledger.JobRun{}, false, ledger.Errorc(ledger.EINVALID, "job_label", run.Label)
		}
	case ledger.JobFromChat:
		if !ledger.ValidLabel(run.Label) {
			return ledger.JobRun{}, false, ledger.Errorc(ledger.EINVALID, "job_label", run.Label)
		}
	default:
		return ledger.JobRun{}, false, ledger.Errorf(ledger.EINVALID, "unknown job source %q", run.Source)
	}
	start, end := sec(run.StartedAt), sec(run.EndedAt)
	if start.IsZero() || end.Before(start) {
		return ledger.JobRun{}, false, ledger.Errorc(ledger.EINVALID, "job_span", run.StartedAt, run.EndedAt)
	}
	if len(run.Command) > maxJobCommand {
		run.Command = run.Command[:maxJobCommand]
	}
	checkUser := run.UserID
	if run.Source == ledger.JobFromAgent {
		checkUser = 0
	}
	var out ledger.JobRun
	var added bool
	err := b.db.withTx(ctx, func(tx *sql.Tx) error {
		owner, err := rentalOwner(ctx, tx, run.RentalID, checkUser)
		if err != nil {
			return err
		}
		created := run.CreatedAt
		if created.IsZero() {
			created = b.db.now()
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO job_runs (rental_id, user_id, label, command, started_at, ended_at, exit_code, source, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (rental_id, started_at, source) WHERE source = 'agent' DO NOTHING`,
			run.RentalID, owner, run.Label, run.Command, unix(start), unix(end), run.ExitCode, string(run.Source), unix(created))
		if err != nil {
			return constraintError(err, "add job run", "the job run breaks a rule of the store")
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: add job run: %w", err)
		}
		added = n == 1
		if added {
			id, err := res.LastInsertId()
			if err != nil {
				return fmt.Errorf("sqlite: add job run: %w", err)
			}
			out, err = scanJobRun(tx.QueryRowContext(ctx, `SELECT `+jobRunCols+` FROM job_runs WHERE id = ?`, id))
		} else {
			out, err = scanJobRun(tx.QueryRowContext(ctx, `SELECT `+jobRunCols+` FROM job_runs
				WHERE rental_id = ? AND started_at = ? AND source = 'agent'`, run.RentalID, unix(start)))
		}
		if err != nil {
			return fmt.Errorf("sqlite: add job run: %w", err)
		}
		return nil
	})
	if err != nil {
		return ledger.JobRun{}, false, storeError(err)
	}
	return out, added, nil
}

const jobRunCols = `id, rental_id, user_id, label, command, started_at, ended_at, exit_code, source, created_at`

func scanJobRun(s scanner) (ledger.JobRun, error) {
	var (
		j                   ledger.JobRun
		start, end, created int64
		source              string
	)
	if err := s.Scan(&j.ID, &j.RentalID, &j.UserID, &j.Label, &j.Command, &start, &end, &j.ExitCode, &source, &created); err != nil {
		return j, err
	}
	j.StartedAt, j.EndedAt, j.CreatedAt, j.Source = fromUnix(start), fromUnix(end), fromUnix(created), ledger.JobSource(source)
	return j, nil
}

// JobRuns returns the user's runs, oldest first: all of them when label
// is "", else that label's.
func (b *Benchmarks) JobRuns(ctx context.Context, userID int64, label string) ([]ledger.JobRun, error) {
	if label == "" {
		return queryAll(ctx, b.db.reader, "list job runs", scanJobRun,
			`SELECT `+jobRunCols+` FROM job_runs WHERE user_id = ? ORDER BY started_at, id`, userID)
	}
	return queryAll(ctx, b.db.reader, "list job runs", scanJobRun,
		`SELECT `+jobRunCols+` FROM job_runs WHERE user_id = ? AND label = ? ORDER BY started_at, id`, userID, label)
}

// SetFirstWork records the rental's first sustained work at at, unless
// one is recorded (then false). Errors: ENOTFOUND ("no_rental_id").
func (b *Benchmarks) SetFirstWork(ctx context.Context, rentalID int64, at time.Time) (bool, error) {
	var added bool
	err := b.db.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := rentalOwner(ctx, tx, rentalID, 0); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO first_work (rental_id, at) VALUES (?, ?) ON CONFLICT (rental_id) DO NOTHING`,
			rentalID, unix(at))
		if err != nil {
			return fmt.Errorf("sqlite: set first work: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: set first work: %w", err)
		}
		added = n == 1
		return nil
	})
	if err != nil {
		return false, storeError(err)
	}
	return added, nil
}

// FirstWorks returns the recorded first work of the user's rentals, by
// rental ID.
func (b *Benchmarks) FirstWorks(ctx context.Context, userID int64) (map[int64]time.Time, error) {
	type fw struct {
		id int64
		at time.Time
	}
	rows, err := queryAll(ctx, b.db.reader, "list first work", func(s scanner) (fw, error) {
		var v fw
		var at int64
		err := s.Scan(&v.id, &at)
		v.at = fromUnix(at)
		return v, err
	}, `SELECT f.rental_id, f.at FROM first_work f JOIN rentals r ON r.id = f.rental_id WHERE r.user_id = ?`, userID)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]time.Time, len(rows))
	for _, v := range rows {
		out[v.id] = v.at
	}
	return out, nil
}
