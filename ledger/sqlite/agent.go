package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements the agent's sets of the store (ledger.TokenStore,
// BeatStore, IdleStore, PolicyStore, RentalLookup): agent tokens,
// heartbeats and their roll-up, idle intervals and /autorelease policies.
// order.go has the orders and the decision log (ledger.OrderStore).

// IssueToken stores the hash of a new token for the user's unreleased
// rental called name and revokes the rental's earlier tokens, in one
// transaction. Errors: ENOTFOUND, ECONFLICT (the rental is released).
func (ags *Agents) IssueToken(ctx context.Context, userID int64, name string, hash [32]byte, at time.Time) (ledger.AgentToken, error) {
	return ags.IssueTokenBy(ctx, userID, 0, name, hash, at)
}

// IssueTokenBy is IssueToken by the person by (a member of the team
// whose ledger userID is, or 0), kept with the token (issued_by) so that
// their removal from the team revokes it (Rosters.RemoveMember).
func (ags *Agents) IssueTokenBy(ctx context.Context, userID, by int64, name string, hash [32]byte, at time.Time) (ledger.AgentToken, error) {
	at = sec(at)
	var tok ledger.AgentToken
	err := ags.db.withTx(ctx, func(tx *sql.Tx) error {
		r, err := liveRental(ctx, tx, userID, name, "agent_released")
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE agent_tokens SET revoked_at = ? WHERE rental_id = ? AND revoked_at IS NULL`,
			unix(at), r.ID); err != nil {
			return fmt.Errorf("sqlite: revoke tokens: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_tokens (rental_id, user_id, hash, issued_at, issued_by) VALUES (?, ?, ?, ?, ?)`,
			r.ID, userID, hash[:], unix(at), by); err != nil {
			return constraintError(err, "insert token", "token collision: try again")
		}
		// A new token's reports are checked afresh: an earlier answer
		// about the old token's agent (a mismatch kept off) no longer holds.
		if _, err := tx.ExecContext(ctx, `UPDATE agent_trust SET state = 'reset', at = ? WHERE rental_id = ?`, unix(at), r.ID); err != nil {
			return fmt.Errorf("sqlite: reset agent trust: %w", err)
		}
		tok = ledger.AgentToken{RentalID: r.ID, UserID: userID, Rental: r.Name, Hash: hash, IssuedAt: at}
		return nil
	})
	return tok, err
}

const tokenCols = `t.rental_id, t.user_id, r.name, t.hash, t.issued_at, t.revoked_at, r.released`

func scanToken(s scanner) (ledger.AgentToken, error) {
	var (
		t        ledger.AgentToken
		hash     []byte
		issued   int64
		revoked  sql.NullInt64
		released bool
	)
	if err := s.Scan(&t.RentalID, &t.UserID, &t.Rental, &hash, &issued, &revoked, &released); err != nil {
		return t, err
	}
	copy(t.Hash[:], hash)
	t.IssuedAt = fromUnix(issued)
	t.RevokedAt = fromNullUnix(revoked)
	if released && t.RevokedAt.IsZero() {
		// Revoked on release, even before the scheduler writes it down.
		t.RevokedAt = t.IssuedAt
	}
	return t, nil
}

// TokenByHash returns the token with that hash; a token of a released
// rental is returned revoked. Errors: ENOTFOUND.
func (ags *Agents) TokenByHash(ctx context.Context, hash [32]byte) (ledger.AgentToken, error) {
	t, err := scanToken(ags.db.reader.QueryRowContext(ctx, `SELECT `+tokenCols+`
		FROM agent_tokens t JOIN rentals r ON r.id = t.rental_id WHERE t.hash = ?`, hash[:]))
	if err == sql.ErrNoRows {
		return t, ledger.Errorf(ledger.ENOTFOUND, "unknown agent token")
	}
	if err != nil {
		return t, storeError(fmt.Errorf("sqlite: token by hash: %w", err))
	}
	return t, nil
}

// RevokeTokens revokes the rental's valid tokens at at.
func (ags *Agents) RevokeTokens(ctx context.Context, rentalID int64, at time.Time) error {
	return ags.db.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE agent_tokens SET revoked_at = ? WHERE rental_id = ? AND revoked_at IS NULL`,
			unix(sec(at)), rentalID); err != nil {
			return fmt.Errorf("sqlite: revoke tokens: %w", err)
		}
		return nil
	})
}

// ValidTokens returns the tokens not revoked whose rental is not released.
func (ags *Agents) ValidTokens(ctx context.Context) ([]ledger.AgentToken, error) {
	return queryAll(ctx, ags.db.reader, "valid tokens", scanToken, `SELECT `+tokenCols+`
		FROM agent_tokens t JOIN rentals r ON r.id = t.rental_id
		WHERE t.revoked_at IS NULL AND r.released = 0 ORDER BY t.id`)
}

// beatChunk bounds the rows of one multi-row INSERT (10 columns each, well
// under SQLite's limit on bound parameters).
const beatChunk = 200

// SaveBeats appends beats, adds them to the hourly roll-up and replaces
// the given agent states, in one transaction. Beats of a rental that no
// longer exists (its /rent was undone) are dropped.
func (ags *Agents) SaveBeats(ctx context.Context, beats []ledger.Beat, states []ledger.AgentState) error {
	if len(beats) == 0 && len(states) == 0 {
		return nil
	}
	// Fold the hourly roll-up in memory first: one upsert per rental-hour.
	type hk struct {
		rental int64
		hour   int64
	}
	hours := map[hk]*ledger.HourStat{}
	var order []hk
	for _, b := range beats {
		k := hk{b.RentalID, b.At.UTC().Truncate(time.Hour).Unix()}
		h := hours[k]
		if h == nil {
			h = &ledger.HourStat{RentalID: b.RentalID, Hour: fromUnix(k.hour), UtilMax: -1}
			hours[k] = h
			order = append(order, k)
		}
		h.Add(b)
	}
	return ags.db.withTx(ctx, func(tx *sql.Tx) error {
		live, err := liveRentalIDs(ctx, tx, beats, states)
		if err != nil {
			return err
		}
		for i := 0; i < len(beats); i += beatChunk {
			chunk := beats[i:min(i+beatChunk, len(beats))]
			var sb strings.Builder
			sb.WriteString(`INSERT INTO agent_beats (rental_id, at, verdict, busy_s, idle_s, unknown_s, util_mean, util_max, job_alive, samples) VALUES `)
			args := make([]any, 0, len(chunk)*10)
			n := 0
			for _, b := range chunk {
				if !live[b.RentalID] {
					continue
				}
				if n > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString(`(?,?,?,?,?,?,?,?,?,?)`)
				args = append(args, b.RentalID, unix(b.At), string(b.Verdict), b.BusyS, b.IdleS, b.UnknownS,
					b.UtilMean, b.UtilMax, boolInt(b.JobAlive), b.Samples)
				n++
			}
			if n == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
				return fmt.Errorf("sqlite: save beats: %w", err)
			}
		}
		for i := 0; i < len(order); i += beatChunk {
			chunk := order[i:min(i+beatChunk, len(order))]
			var sb strings.Builder
			sb.WriteString(`INSERT INTO agent_hours (rental_id, hour, busy_s, idle_s, unknown_s, beats, util_sum, util_n, util_max) VALUES `)
			args := make([]any, 0, len(chunk)*9)
			n := 0
			for _, k := range chunk {
				if !live[k.rental] {
					continue
				}
				h := hours[k]
				if n > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString(`(?,?,?,?,?,?,?,?,?)`)
				args = append(args, k.rental, k.hour, h.BusyS, h.IdleS, h.UnknownS, h.Beats, h.UtilSum, h.UtilN, h.UtilMax)
				n++
			}
			if n == 0 {
				continue
			}
			sb.WriteString(` ON CONFLICT (rental_id, hour) DO UPDATE SET busy_s = busy_s + excluded.busy_s,
				idle_s = idle_s + excluded.idle_s, unknown_s = unknown_s + excluded.unknown_s,
				beats = beats + excluded.beats, util_sum = util_sum + excluded.util_sum,
				util_n = util_n + excluded.util_n, util_max = max(util_max, excluded.util_max)`)
			if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
				return fmt.Errorf("sqlite: roll up beats: %w", err)
			}
		}
		if err := upsertStates(ctx, tx, states, live); err != nil {
			return err
		}
		return extendIdle(ctx, tx, states, live)
	})
}

// extendIdle moves the evidence end (last_at) of each idle state's open
// interval forward to its IdleUntil. It never moves it back, and never
// touches an interval opened after that time (a newer streak), so a flush
// that lost a race with SaveIdle cannot undo it.
func extendIdle(ctx context.Context, tx *sql.Tx, states []ledger.AgentState, live map[int64]bool) error {
	for _, s := range states {
		if !live[s.RentalID] || s.Verdict != ledger.VerdictIdle || s.IdleUntil.IsZero() {
			continue
		}
		u := unix(sec(s.IdleUntil))
		if _, err := tx.ExecContext(ctx, `UPDATE idle_intervals SET last_at = max(coalesce(last_at, from_at), ?)
			WHERE rental_id = ? AND to_at IS NULL AND from_at <= ?`, u, s.RentalID, u); err != nil {
			return fmt.Errorf("sqlite: extend idle: %w", err)
		}
	}
	return nil
}

// upsertStates replaces the agent states of the live rentals.
func upsertStates(ctx context.Context, tx *sql.Tx, states []ledger.AgentState, live map[int64]bool) error {
	for i := 0; i < len(states); i += beatChunk / 2 {
		chunk := states[i:min(i+beatChunk/2, len(states))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO agent_state (rental_id, user_id, first_seen, last_seen, boot_id, seq, verdict, idle_since,
			job, gpu_model, gpu_count, gpu_source, can_release, reasons, sessions,
			instance_key, host_boot, shutdown_at, shutdown_host) VALUES `)
		args := make([]any, 0, len(chunk)*19)
		n := 0
		for _, s := range chunk {
			if !live[s.RentalID] {
				continue
			}
			var job sql.NullString
			if s.Job.Command != "" || s.Job.Running || s.Job.Exited {
				b, err := json.Marshal(s.Job)
				if err != nil {
					return fmt.Errorf("sqlite: encode job: %w", err)
				}
				job = sql.NullString{String: string(b), Valid: true}
			}
			var sessions sql.NullString
			if len(s.Sessions) > 0 {
				b, err := json.Marshal(s.Sessions)
				if err != nil {
					return fmt.Errorf("sqlite: encode sessions: %w", err)
				}
				sessions = sql.NullString{String: string(b), Valid: true}
			}
			if n > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
			first := s.FirstSeen
			if first.IsZero() {
				first = s.LastSeen
			}
			args = append(args, s.RentalID, s.UserID, unix(first), unix(s.LastSeen), s.BootID, int64(s.Seq),
				string(s.Verdict), nullUnix(s.IdleSince), job, s.GPU.Model, s.GPU.Count, s.GPU.Source,
				boolInt(s.CanRelease), s.Reasons, sessions,
				s.InstanceKey, nullUnix(sec(s.HostBoot)), nullUnix(sec(s.ShutdownAt)), boolInt(s.ShutdownHost))
			n++
		}
		if n == 0 {
			continue
		}
		sb.WriteString(` ON CONFLICT (rental_id) DO UPDATE SET last_seen = excluded.last_seen,
			boot_id = excluded.boot_id, seq = excluded.seq, verdict = excluded.verdict,
			idle_since = excluded.idle_since, job = excluded.job, gpu_model = excluded.gpu_model,
			gpu_count = excluded.gpu_count, gpu_source = excluded.gpu_source,
			can_release = excluded.can_release, reasons = excluded.reasons, sessions = excluded.sessions,
			instance_key = excluded.instance_key, host_boot = excluded.host_boot,
			shutdown_at = excluded.shutdown_at, shutdown_host = excluded.shutdown_host`)
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("sqlite: save agent state: %w", err)
		}
	}
	return nil
}

// liveRentalIDs returns which of the rentals named by beats and states
// still exist.
func liveRentalIDs(ctx context.Context, tx *sql.Tx, beats []ledger.Beat, states []ledger.AgentState) (map[int64]bool, error) {
	ids := map[int64]bool{}
	for _, b := range beats {
		ids[b.RentalID] = false
	}
	for _, s := range states {
		ids[s.RentalID] = false
	}
	list := make([]any, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	for i := 0; i < len(list); i += 500 {
		chunk := list[i:min(i+500, len(list))]
		rows, err := tx.QueryContext(ctx, `SELECT id FROM rentals WHERE id IN (?`+strings.Repeat(",?", len(chunk)-1)+`)`, chunk...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: check rentals: %w", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite: check rentals: %w", err)
			}
			ids[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: check rentals: %w", err)
		}
	}
	return ids, nil
}

const stateCols = `rental_id, user_id, first_seen, last_seen, boot_id, seq, verdict, idle_since, job,
	gpu_model, gpu_count, gpu_source, can_release, reasons, sessions,
	instance_key, host_boot, shutdown_at, shutdown_host`

func scanState(s scanner, extra ...any) (ledger.AgentState, error) {
	var (
		st               ledger.AgentState
		first, last, seq int64
		idle, boot, down sql.NullInt64
		job, sessions    sql.NullString
		verdict          string
		canRelease       bool
	)
	dst := append([]any{&st.RentalID, &st.UserID, &first, &last, &st.BootID, &seq, &verdict, &idle, &job,
		&st.GPU.Model, &st.GPU.Count, &st.GPU.Source, &canRelease, &st.Reasons, &sessions,
		&st.InstanceKey, &boot, &down, &st.ShutdownHost}, extra...)
	if err := s.Scan(dst...); err != nil {
		return st, err
	}
	st.FirstSeen, st.LastSeen = fromUnix(first), fromUnix(last)
	st.Seq = uint64(seq)
	st.Verdict = ledger.Verdict(verdict)
	st.IdleSince = fromNullUnix(idle)
	st.HostBoot, st.ShutdownAt = fromNullUnix(boot), fromNullUnix(down)
	st.CanRelease = canRelease
	if job.Valid {
		if err := json.Unmarshal([]byte(job.String), &st.Job); err != nil {
			return st, fmt.Errorf("agent_state.job of rental %d: %w", st.RentalID, err)
		}
	}
	if sessions.Valid {
		if err := json.Unmarshal([]byte(sessions.String), &st.Sessions); err != nil {
			return st, fmt.Errorf("agent_state.sessions of rental %d: %w", st.RentalID, err)
		}
	}
	return st, nil
}

// AgentStates returns the state of every agent seen, in rental order.
// The idle fields are rebuilt from the rental's open idle interval, not
// taken from the state row: the row is written in batches and may be a
// flush behind the intervals after a crash, and the intervals are what
// the ledger bills idle time from. With an interval open the state is
// idle since its from_at, with evidence up to its last_at; with none open
// a state stored as idle is reported unknown (its streak was closed, and
// the next heartbeat tells what the host does now).
func (ags *Agents) AgentStates(ctx context.Context) ([]ledger.AgentState, error) {
	rows, err := ags.db.reader.QueryContext(ctx, `SELECT `+stateCols+`,
		(SELECT i.from_at FROM idle_intervals i WHERE i.rental_id = s.rental_id AND i.to_at IS NULL ORDER BY i.from_at DESC LIMIT 1),
		(SELECT i.last_at FROM idle_intervals i WHERE i.rental_id = s.rental_id AND i.to_at IS NULL ORDER BY i.from_at DESC LIMIT 1)
		FROM agent_state s ORDER BY rental_id`)
	if err != nil {
		return nil, storeError(fmt.Errorf("sqlite: agent states: %w", err))
	}
	defer rows.Close()
	var out []ledger.AgentState
	for rows.Next() {
		var from, last sql.NullInt64
		st, err := scanState(rows, &from, &last)
		if err != nil {
			return nil, storeError(fmt.Errorf("sqlite: agent states: %w", err))
		}
		switch {
		case from.Valid:
			st.Verdict, st.IdleSince, st.IdleUntil = ledger.VerdictIdle, fromUnix(from.Int64), fromUnix(from.Int64)
			if last.Valid && last.Int64 > from.Int64 {
				st.IdleUntil = fromUnix(last.Int64)
			}
		case st.Verdict == ledger.VerdictIdle:
			st.Verdict, st.IdleSince = ledger.VerdictUnknown, time.Time{}
			st.Reasons = "no idle streak open since the server restarted"
		default:
			st.IdleSince = time.Time{}
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, storeError(fmt.Errorf("sqlite: agent states: %w", err))
	}
	return out, nil
}

// Beats returns the rental's raw beats received in [from, to), oldest first.
func (ags *Agents) Beats(ctx context.Context, rentalID int64, from, to time.Time) ([]ledger.Beat, error) {
	return queryAll(ctx, ags.db.reader, "beats", func(rows scanner) (ledger.Beat, error) {
		var (
			b       ledger.Beat
			at      int64
			verdict string
		)
		if err := rows.Scan(&b.RentalID, &at, &verdict, &b.BusyS, &b.IdleS, &b.UnknownS, &b.UtilMean, &b.UtilMax,
			&b.JobAlive, &b.Samples); err != nil {
			return b, err
		}
		b.At, b.Verdict = fromUnix(at), ledger.Verdict(verdict)
		return b, nil
	}, `SELECT rental_id, at, verdict, busy_s, idle_s, unknown_s, util_mean, util_max,
		job_alive, samples FROM agent_beats WHERE rental_id = ? AND at >= ? AND at < ? ORDER BY at, rowid`,
		rentalID, unix(from), unix(to))
}

// HourStats returns the rental's hourly roll-ups whose hour starts in
// [from, to), oldest first.
func (ags *Agents) HourStats(ctx context.Context, rentalID int64, from, to time.Time) ([]ledger.HourStat, error) {
	return queryAll(ctx, ags.db.reader, "hour stats", func(rows scanner) (ledger.HourStat, error) {
		var (
			h    ledger.HourStat
			hour int64
		)
		if err := rows.Scan(&h.RentalID, &hour, &h.BusyS, &h.IdleS, &h.UnknownS, &h.Beats, &h.UtilSum, &h.UtilN, &h.UtilMax); err != nil {
			return h, err
		}
		h.Hour = fromUnix(hour)
		return h, nil
	}, `SELECT rental_id, hour, busy_s, idle_s, unknown_s, beats, util_sum, util_n, util_max
		FROM agent_hours WHERE rental_id = ? AND hour >= ? AND hour < ? ORDER BY hour`, rentalID, unix(from), unix(to))
}

// PruneBeats deletes raw beats received before t and returns how many.
func (ags *Agents) PruneBeats(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := ags.db.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM agent_beats WHERE at < ?`, unix(before))
		if err != nil {
			return fmt.Errorf("sqlite: prune beats: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

// OpenIdle starts an idle interval at from unless one is open.
func (ags *Agents) OpenIdle(ctx context.Context, rentalID int64, from time.Time) error {
	return ags.db.withTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM idle_intervals WHERE rental_id = ? AND to_at IS NULL`, rentalID).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: open idle: %w", err)
		}
		if n > 0 {
			return nil
		}
		// Never overlap the previous interval.
		var last sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(to_at) FROM idle_intervals WHERE rental_id = ?`, rentalID).Scan(&last); err != nil {
			return fmt.Errorf("sqlite: open idle: %w", err)
		}
		f := unix(sec(from))
		if last.Valid && f < last.Int64 {
			f = last.Int64
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO idle_intervals (rental_id, from_at) VALUES (?, ?)`, rentalID, f); err != nil {
			return constraintError(err, "open idle", fmt.Sprintf("rental %d does not exist", rentalID))
		}
		return nil
	})
}

// CloseIdle ends the rental's open idle interval at to (clamped to its
// start); with none open it does nothing.
func (ags *Agents) CloseIdle(ctx context.Context, rentalID int64, to time.Time) error {
	return ags.db.withTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE idle_intervals SET to_at = max(from_at, ?) WHERE rental_id = ? AND to_at IS NULL`,
			unix(sec(to)), rentalID)
		if err != nil {
			return fmt.Errorf("sqlite: close idle: %w", err)
		}
		return nil
	})
}

// SaveIdle ends the rental's open idle interval at closeAt (clamped to its
// start; zero: none to end), opens one at openAt whose evidence ends at
// st.IdleUntil (zero: none to open; never overlapping the previous
// interval, and not when one is still open), and replaces the rental's
// agent state with st, in one transaction: after any crash the intervals
// and the state agree. A rental that no longer exists is skipped.
func (ags *Agents) SaveIdle(ctx context.Context, st ledger.AgentState, closeAt, openAt time.Time) error {
	return ags.db.withTx(ctx, func(tx *sql.Tx) error {
		live, err := liveRentalIDs(ctx, tx, nil, []ledger.AgentState{st})
		if err != nil {
			return err
		}
		if !live[st.RentalID] {
			return nil
		}
		id := st.RentalID
		if !closeAt.IsZero() {
			if _, err := tx.ExecContext(ctx, `UPDATE idle_intervals SET to_at = max(from_at, ?) WHERE rental_id = ? AND to_at IS NULL`,
				unix(sec(closeAt)), id); err != nil {
				return fmt.Errorf("sqlite: close idle: %w", err)
			}
		}
		if !openAt.IsZero() {
			var open int
			var last sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE to_at IS NULL), max(to_at) FROM idle_intervals WHERE rental_id = ?`,
				id).Scan(&open, &last); err != nil {
				return fmt.Errorf("sqlite: open idle: %w", err)
			}
			if open == 0 {
				f := unix(sec(openAt))
				if last.Valid && f < last.Int64 {
					f = last.Int64
				}
				l := max(f, unix(sec(st.IdleUntil)))
				if _, err := tx.ExecContext(ctx, `INSERT INTO idle_intervals (rental_id, from_at, last_at) VALUES (?, ?, ?)`, id, f, l); err != nil {
					return fmt.Errorf("sqlite: open idle: %w", err)
				}
			}
		}
		if err := upsertStates(ctx, tx, []ledger.AgentState{st}, live); err != nil {
			return err
		}
		return extendIdle(ctx, tx, []ledger.AgentState{st}, live)
	})
}

// TokenIssued reports whether an agent token was ever issued for the
// user's rental, valid or revoked: the bot mentions a revoked token only
// when there was one.
func (ags *Agents) TokenIssued(ctx context.Context, userID, rentalID int64) (bool, error) {
	var n int
	err := ags.db.reader.QueryRowContext(ctx,
		`SELECT count(*) FROM agent_tokens WHERE rental_id = ? AND user_id = ?`, rentalID, userID).Scan(&n)
	if err != nil {
		return false, storeError(fmt.Errorf("sqlite: token issued: %w", err))
	}
	return n > 0, nil
}
