package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.EnrolStore: enrolment tokens (hashed), the
// instances their agents announced, and the user's answers to them
// (AdoptInstance and IgnoreInstance are journaled, undoable actions).

// IssueEnrolToken stores the hash of a new enrolment token for the user.
// When the user holds ledger.MaxEnrolTokens valid ones already, the
// oldest is revoked in the same transaction and returned as revoked.
// Errors: EINVALID (no user), ENOTFOUND (the user is not registered),
// ECONFLICT (a hash collision: try again).
func (ens *Enrolments) IssueEnrolToken(ctx context.Context, userID int64, hash [32]byte, at time.Time) (ledger.EnrolToken, *ledger.EnrolToken, error) {
	return ens.IssueEnrolTokenBy(ctx, userID, 0, hash, at)
}

// IssueEnrolTokenBy is IssueEnrolToken of the team's ledger userID for
// its member createdBy, who is recorded as the token's maker: an instance
// it announces is theirs when adopted, and their tokens are revoked when
// they leave. ENOTFOUND "team_not_member" when createdBy is not a current
// member. createdBy 0 is IssueEnrolToken.
func (ens *Enrolments) IssueEnrolTokenBy(ctx context.Context, userID, createdBy int64, hash [32]byte, at time.Time) (ledger.EnrolToken, *ledger.EnrolToken, error) {
	if userID == 0 {
		return ledger.EnrolToken{}, nil, ledger.Errorf(ledger.EINVALID, "an enrolment token needs a user")
	}
	at = sec(at)
	if at.IsZero() {
		at = ens.db.now()
	}
	var (
		tok     ledger.EnrolToken
		revoked *ledger.EnrolToken
	)
	err := ens.db.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := userByID(ctx, tx, userID); err != nil {
			return err
		}
		if _, err := teamActor(ctx, tx, ledger.Action{UserID: userID, By: createdBy}); err != nil {
			return err
		}
		valid, err := enrolTokens(ctx, tx, `user_id = ? AND revoked_at IS NULL`, userID)
		if err != nil {
			return err
		}
		// Oldest first: revoke from the front until one more fits.
		for i := 0; len(valid)-i >= ledger.MaxEnrolTokens; i++ {
			old := valid[i]
			if _, err := tx.ExecContext(ctx, `UPDATE enrol_tokens SET revoked_at = ? WHERE id = ?`, unix(at), old.ID); err != nil {
				return fmt.Errorf("sqlite: revoke enrolment token: %w", err)
			}
			old.RevokedAt = at
			if revoked == nil {
				revoked = &old
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO enrol_tokens (user_id, hash, issued_at, created_by) VALUES (?, ?, ?, ?)`,
			userID, hash[:], unix(at), createdBy)
		if err != nil {
			return constraintError(err, "insert enrolment token", "token collision: try again")
		}
		id, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("sqlite: insert enrolment token: %w", err)
		}
		tok = ledger.EnrolToken{ID: id, UserID: userID, Hash: hash, IssuedAt: at, CreatedBy: createdBy}
		return nil
	})
	if err != nil {
		return ledger.EnrolToken{}, nil, err
	}
	return tok, revoked, nil
}

const enrolTokenCols = `id, user_id, hash, issued_at, revoked_at, last_used, instances, created_by`

func scanEnrolToken(s scanner) (ledger.EnrolToken, error) {
	var (
		t             ledger.EnrolToken
		hash          []byte
		issued        int64
		revoked, used sql.NullInt64
	)
	if err := s.Scan(&t.ID, &t.UserID, &hash, &issued, &revoked, &used, &t.Instances, &t.CreatedBy); err != nil {
		return t, err
	}
	copy(t.Hash[:], hash)
	t.IssuedAt, t.RevokedAt, t.LastUsed = fromUnix(issued), fromNullUnix(revoked), fromNullUnix(used)
	return t, nil
}

// enrolTokens returns the enrolment tokens matching where, oldest first.
func enrolTokens(ctx context.Context, q querier, where string, args ...any) ([]ledger.EnrolToken, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+enrolTokenCols+` FROM enrol_tokens WHERE `+where+` ORDER BY issued_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: enrolment tokens: %w", err)
	}
	defer rows.Close()
	var out []ledger.EnrolToken
	for rows.Next() {
		t, err := scanEnrolToken(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: enrolment tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: enrolment tokens: %w", err)
	}
	return out, nil
}

// EnrolTokenByHash returns the enrolment token with that hash, valid or
// revoked. Errors: ENOTFOUND (key "enrol_token_unknown").
func (ens *Enrolments) EnrolTokenByHash(ctx context.Context, hash [32]byte) (ledger.EnrolToken, error) {
	t, err := scanEnrolToken(ens.db.reader.QueryRowContext(ctx, `SELECT `+enrolTokenCols+` FROM enrol_tokens WHERE hash = ?`, hash[:]))
	if err == sql.ErrNoRows {
		return t, ledger.Errorc(ledger.ENOTFOUND, "enrol_token_unknown")
	}
	if err != nil {
		return t, storeError(fmt.Errorf("sqlite: enrolment token by hash: %w", err))
	}
	return t, nil
}

// EnrolTokens returns the user's valid enrolment tokens, oldest first.
func (ens *Enrolments) EnrolTokens(ctx context.Context, userID int64) ([]ledger.EnrolToken, error) {
	out, err := enrolTokens(ctx, ens.db.reader, `user_id = ? AND revoked_at IS NULL`, userID)
	return out, storeError(err)
}

// RevokeEnrolTokens revokes all the user's valid enrolment tokens at at
// and returns how many there were. The instances they announced stay as
// they are, and per-rental agent tokens are not touched.
func (ens *Enrolments) RevokeEnrolTokens(ctx context.Context, userID int64, at time.Time) (int, error) {
	at = sec(at)
	if at.IsZero() {
		at = ens.db.now()
	}
	var n int64
	err := ens.db.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE enrol_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL`,
			unix(at), userID)
		if err != nil {
			return fmt.Errorf("sqlite: revoke enrolment tokens: %w", err)
		}
		n, err = res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: revoke enrolment tokens: %w", err)
		}
		return nil
	})
	return int(n), err
}

const instanceCols = `i.id, i.user_id, i.token_id, i.key, i.platform, i.platform_id, i.source, i.hostname, i.gpu_model,
	i.gpu_count, i.boot_at, i.first_seen, i.last_seen, i.state, i.rental_id, i.carded, i.message_id`

func scanInstance(s scanner, extra ...any) (ledger.Instance, error) {
	var (
		in                ledger.Instance
		boot, first, last int64
		state             string
		rental            sql.NullInt64
		carded            bool
	)
	dst := append([]any{&in.ID, &in.UserID, &in.TokenID, &in.Key, &in.Platform, &in.PlatformID, &in.Source, &in.Hostname,
		&in.GPUModel, &in.GPUCount, &boot, &first, &last, &state, &rental, &carded, &in.MessageID}, extra...)
	if err := s.Scan(dst...); err != nil {
		return in, err
	}
	in.BootAt, in.FirstSeen, in.LastSeen = fromUnix(boot), fromUnix(first), fromUnix(last)
	in.State = ledger.InstanceState(state)
	in.RentalID = rental.Int64
	in.Carded = carded
	return in, nil
}

// bootUnix stores a boot time; an unknown (zero) one round-trips as zero.
func bootUnix(t time.Time) int64 { return unix(sec(t)) }

// instanceByID returns the user's instance id; another user's, or none,
// is ENOTFOUND (key "no_instance").
func instanceByID(ctx context.Context, q querier, userID, id int64) (ledger.Instance, error) {
	in, err := scanInstance(q.QueryRowContext(ctx, `SELECT `+instanceCols+` FROM instances i WHERE i.id = ? AND i.user_id = ?`, id, userID))
	if err == sql.ErrNoRows {
		return in, ledger.Errorc(ledger.ENOTFOUND, "no_instance", id)
	}
	if err != nil {
		return in, fmt.Errorf("sqlite: instance %d: %w", id, err)
	}
	return in, nil
}

// pendingCount returns how many of the user's instances wait for an answer.
func pendingCount(ctx context.Context, q querier, userID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM instances WHERE user_id = ? AND state = 'pending'`, userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count pending instances: %w", err)
	}
	return n, nil
}

// Announce records an announcement of in, keyed by (in.UserID, in.Key),
// with the enrolment token in.TokenID, at in.LastSeen (server clock). A
// new instance is stored pending with FirstSeen = LastSeen (created
// true). A known one gets LastSeen, Hostname, GPU and BootAt refreshed and
// keeps its state, except that one bound to a rental that was released
// (or is gone) becomes pending again, un-carded, first seen now, under
// this token (created true: it is announced anew). Every announcement
// sets the token's LastUsed; a created one counts in its Instances.
//
// Errors: EINVALID (no user, no key: "instance_no_key"), ENOTFOUND (the
// token is not the user's: "enrol_token_unknown"), EUNAUTHORIZED (the
// token was revoked: "enrol_token_revoked"), ECONFLICT
// ("instances_pending_full": the user has ledger.MaxPendingInstances
// pending; nothing is stored).
func (ens *Enrolments) Announce(ctx context.Context, in ledger.Instance) (ledger.Instance, bool, error) {
	if in.UserID == 0 {
		return ledger.Instance{}, false, ledger.Errorf(ledger.EINVALID, "an announcement needs a user")
	}
	if in.Key == "" {
		return ledger.Instance{}, false, ledger.Errorc(ledger.EINVALID, "instance_no_key")
	}
	seen := sec(in.LastSeen)
	if seen.IsZero() {
		seen = ens.db.now()
	}
	if in.GPUCount < 0 {
		in.GPUCount = 0
	}
	var (
		got     ledger.Instance
		created bool
	)
	err := ens.db.withTx(ctx, func(tx *sql.Tx) error {
		var (
			tokUser int64
			revoked sql.NullInt64
		)
		switch err := tx.QueryRowContext(ctx, `SELECT user_id, revoked_at FROM enrol_tokens WHERE id = ?`, in.TokenID).Scan(&tokUser, &revoked); {
		case err == sql.ErrNoRows || err == nil && tokUser != in.UserID:
			return ledger.Errorc(ledger.ENOTFOUND, "enrol_token_unknown")
		case err != nil:
			return fmt.Errorf("sqlite: announce: look up token: %w", err)
		case revoked.Valid:
			return ledger.Errorc(ledger.EUNAUTHORIZED, "enrol_token_revoked")
		}
		var released sql.NullBool
		old, err := scanInstance(tx.QueryRowContext(ctx, `SELECT `+instanceCols+`, r.released
			FROM instances i LEFT JOIN rentals r ON r.id = i.rental_id WHERE i.user_id = ? AND i.key = ?`, in.UserID, in.Key), &released)
		known := err == nil
		if err != nil && err != sql.ErrNoRows {
			return fmt.Errorf("sqlite: announce: look up instance: %w", err)
		}
		// A bound instance whose rental was released (or deleted) is
		// a new instance again: the old rental is over.
		anew := known && old.State == ledger.InstanceBound && (!released.Valid || released.Bool)
		if !known || anew {
			n, err := pendingCount(ctx, tx, in.UserID)
			if err != nil {
				return err
			}
			if n >= ledger.MaxPendingInstances {
				return ledger.Errorc(ledger.ECONFLICT, "instances_pending_full", ledger.MaxPendingInstances)
			}
		}
		var id int64
		switch {
		case !known:
			res, err := tx.ExecContext(ctx, `INSERT INTO instances (user_id, token_id, key, platform, platform_id, source,
				hostname, gpu_model, gpu_count, boot_at, first_seen, last_seen, state)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
				in.UserID, in.TokenID, in.Key, in.Platform, in.PlatformID, in.Source, in.Hostname, in.GPUModel, in.GPUCount,
				bootUnix(in.BootAt), unix(seen), unix(seen))
			if err != nil {
				return fmt.Errorf("sqlite: announce: insert instance: %w", err)
			}
			if id, err = res.LastInsertId(); err != nil {
				return fmt.Errorf("sqlite: announce: insert instance: %w", err)
			}
		case anew:
			id = old.ID
			if _, err := tx.ExecContext(ctx, `UPDATE instances SET token_id = ?, hostname = ?, gpu_model = ?, gpu_count = ?,
				boot_at = ?, first_seen = ?, last_seen = ?, state = 'pending', rental_id = NULL, carded = 0, message_id = 0
				WHERE id = ?`, in.TokenID, in.Hostname, in.GPUModel, in.GPUCount, bootUnix(in.BootAt), unix(seen), unix(seen), id); err != nil {
				return fmt.Errorf("sqlite: announce: renew instance: %w", err)
			}
		case old.State == ledger.InstancePending:
			// What the user was shown is what a Log press logs: a later
			// claim (anyone holding the enrolment token can make one for
			// the same key) does not change it.
			id = old.ID
			if _, err := tx.ExecContext(ctx, `UPDATE instances SET last_seen = max(last_seen, ?) WHERE id = ?`, unix(seen), id); err != nil {
				return fmt.Errorf("sqlite: announce: refresh instance: %w", err)
			}
		default:
			id = old.ID
			if _, err := tx.ExecContext(ctx, `UPDATE instances SET hostname = ?, gpu_model = ?, gpu_count = ?, boot_at = ?,
				last_seen = max(last_seen, ?) WHERE id = ?`, in.Hostname, in.GPUModel, in.GPUCount, bootUnix(in.BootAt), unix(seen), id); err != nil {
				return fmt.Errorf("sqlite: announce: refresh instance: %w", err)
			}
		}
		created = !known || anew
		if _, err := tx.ExecContext(ctx, `UPDATE enrol_tokens SET last_used = max(coalesce(last_used, 0), ?),
			instances = instances + ? WHERE id = ?`, unix(seen), boolInt(created), in.TokenID); err != nil {
			return fmt.Errorf("sqlite: announce: update token: %w", err)
		}
		got, err = instanceByID(ctx, tx, in.UserID, id)
		return err
	})
	if err != nil {
		return ledger.Instance{}, false, err
	}
	return got, created, nil
}

// Instance returns the user's instance id. Errors: ENOTFOUND
// ("no_instance"; another user's instance too).
func (ens *Enrolments) Instance(ctx context.Context, userID, id int64) (ledger.Instance, error) {
	in, err := instanceByID(ctx, ens.db.reader, userID, id)
	return in, storeError(err)
}

// InstanceByRental returns the instance bound to the rental. Errors:
// ENOTFOUND (a rental logged by hand has none).
func (ens *Enrolments) InstanceByRental(ctx context.Context, rentalID int64) (ledger.Instance, error) {
	in, err := scanInstance(ens.db.reader.QueryRowContext(ctx, `SELECT `+instanceCols+` FROM instances i
		WHERE i.rental_id = ? AND i.state = 'bound' ORDER BY i.id DESC LIMIT 1`, rentalID))
	if err == sql.ErrNoRows {
		return in, ledger.Errorf(ledger.ENOTFOUND, "rental %d was not logged from an announced instance", rentalID)
	}
	if err != nil {
		return in, storeError(fmt.Errorf("sqlite: instance of rental %d: %w", rentalID, err))
	}
	return in, nil
}

// PendingInstances returns the user's pending instances, oldest first.
func (ens *Enrolments) PendingInstances(ctx context.Context, userID int64) ([]ledger.Instance, error) {
	scan := func(s scanner) (ledger.Instance, error) { return scanInstance(s) }
	return queryAll(ctx, ens.db.reader, "pending instances", scan, `SELECT `+instanceCols+` FROM instances i
		WHERE i.user_id = ? AND i.state = 'pending' ORDER BY i.id`, userID)
}

// SetInstanceCard records that the user's instance id was shown on a card
// of its own, message messageID. Errors: ENOTFOUND ("no_instance").
func (ens *Enrolments) SetInstanceCard(ctx context.Context, userID, id int64, messageID int) error {
	return ens.db.withTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE instances SET carded = 1, message_id = ? WHERE id = ? AND user_id = ?`,
			messageID, id, userID)
		if err != nil {
			return fmt.Errorf("sqlite: set instance card: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: set instance card: %w", err)
		} else if n == 0 {
			return ledger.Errorc(ledger.ENOTFOUND, "no_instance", id)
		}
		return nil
	})
}

// instancePrev is what an answer to an announcement replaced, kept in its
// journal row for Undo.
type instancePrev struct {
	Instance int64                `json:"instance"`
	State    ledger.InstanceState `json:"state"`
}

// IgnoreInstance marks the user's pending instance id "Not mine", as the
// user's action a (journaled as ledger.ActionIgnore, named by
// ledger.InstanceRentalName; Undo makes it pending again). An instance
// already ignored is returned as it is, and the action is not put on the
// undo stack. Errors: ENOTFOUND ("no_instance"), ECONFLICT
// ("instance_bound"), EDUPLICATE (a repeated key changes nothing).
func (ens *Enrolments) IgnoreInstance(ctx context.Context, a ledger.Action, id int64) (ledger.Instance, error) {
	return journaled(ctx, ens.db, a, ledger.ActionIgnore, "", func(tx *wtx, j journal) (ledger.Instance, error) {
		if _, err := teamActor(ctx, tx, a); err != nil {
			return ledger.Instance{}, err
		}
		in, err := instanceByID(ctx, tx, j.userID, id)
		if err != nil {
			return ledger.Instance{}, err
		}
		name := ledger.InstanceRentalName(in)
		// On a team's ledger "Not mine" is for the member who made the
		// enrolment token the instance came with, or an admin: another
		// member would silence a teammate's box.
		if ledger.IsTeamLedger(a.UserID) && in.TokenID != 0 {
			var by int64
			err := tx.QueryRowContext(ctx, `SELECT created_by FROM enrol_tokens WHERE id = ?`, in.TokenID).Scan(&by)
			if err != nil && err != sql.ErrNoRows {
				return ledger.Instance{}, fmt.Errorf("sqlite: who made enrolment token %d: %w", in.TokenID, err)
			}
			if err := mayChange(ctx, tx, a, name, by); err != nil {
				return ledger.Instance{}, err
			}
		}
		switch in.State {
		case ledger.InstanceBound:
			return ledger.Instance{}, ledger.Errorc(ledger.ECONFLICT, "instance_bound", name, rentalName(ctx, tx, in.RentalID))
		case ledger.InstanceIgnored:
			// Nothing changes, so there is nothing to undo.
			if _, err := tx.ExecContext(ctx, `UPDATE actions SET name = ?, undoable = 0 WHERE id = ?`, name, j.id); err != nil {
				return ledger.Instance{}, fmt.Errorf("sqlite: record ignore: %w", err)
			}
			return in, nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE instances SET state = 'ignored' WHERE id = ?`, in.ID); err != nil {
			return ledger.Instance{}, fmt.Errorf("sqlite: ignore instance: %w", err)
		}
		if err := j.target(ctx, tx, 0, 0, instancePrev{Instance: in.ID, State: in.State}); err != nil {
			return ledger.Instance{}, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET name = ? WHERE id = ?`, name, j.id); err != nil {
			return ledger.Instance{}, fmt.Errorf("sqlite: record ignore: %w", err)
		}
		in.State = ledger.InstanceIgnored
		return in, nil
	})
}

// rentalName returns the name of rental id for a message, or its number
// if it cannot be read.
func rentalName(ctx context.Context, q querier, id int64) string {
	var name string
	if err := q.QueryRowContext(ctx, `SELECT name FROM rentals WHERE id = ?`, id).Scan(&name); err != nil {
		return "#" + strconv.FormatInt(id, 10)
	}
	return name
}

// maxNameTries bounds the suffixes AdoptInstance tries for a free name.
const maxNameTries = 1000

// freeName returns base, or base with "-2", "-3"... appended (base
// clipped so the name stays within 32 characters), whichever the user
// has no unreleased rental called: a synced instance keeps the name the
// user gave it on the platform, a released rental's too (the reply names
// the earlier one's address).
func freeName(ctx context.Context, q querier, userID int64, base string) (string, error) {
	return suffixedName(ctx, q, userID, base, nameInUse)
}

// unusedName is freeName, but skips every name a rental of the user has
// had, released ones included. It names an instance logged from its card
// or /adopt: that name is the program's choice (runpod-abc123), and
// taking a released rental's would leave that rental reachable only by
// its address (ledger.RentalRef) for no gain, as the chat's proposal
// offers box2 rather than a released box1.
func unusedName(ctx context.Context, q querier, userID int64, base string) (string, error) {
	return suffixedName(ctx, q, userID, base, nameEverUsed)
}

// suffixedName returns base, or base with "-2", "-3"... appended, the
// first that used reports free.
func suffixedName(ctx context.Context, q querier, userID int64, base string,
	used func(context.Context, querier, int64, string) (bool, error)) (string, error) {
	for n := 1; n <= maxNameTries; n++ {
		name := base
		if n > 1 {
			suffix := "-" + strconv.Itoa(n)
			b := base
			for utf8.RuneCountInString(b)+len(suffix) > 32 {
				_, size := utf8.DecodeLastRuneInString(b)
				b = b[:len(b)-size]
			}
			name = b + suffix
		}
		taken, err := used(ctx, q, userID, name)
		if err != nil {
			return "", err
		}
		if !taken {
			return name, nil
		}
	}
	return "", ledger.Errorf(ledger.ECONFLICT, "every name from %s to %s-%d is in use: release some rentals first", base, base, maxNameTries)
}

// nameEverUsed reports whether any rental of the user, released or not,
// is called name.
func nameEverUsed(ctx context.Context, q querier, userID int64, name string) (bool, error) {
	return anyRow(ctx, q, `SELECT 1 FROM rentals WHERE user_id = ? AND name = ? LIMIT 1`, userID, name)
}

// AdoptInstance logs the user's pending (or ignored) instance id as the
// rental r (r.Events[0] its start; an empty r.Name gets
// ledger.InstanceRentalName), binds the instance to it and stores
// tokenHash as the rental's agent token, in one transaction, as the
// user's action a (journaled as ledger.ActionAdopt, named by the
// rental). A name any rental of the user has had gets "-2", "-3"...
// appended. Undo deletes the rental (and so its token, its agent's state
// and its beats) and puts the instance back in the state it had, with its
// card.
//
// Errors: EINVALID (r's terms, as CreateRental checks them), ENOTFOUND
// ("no_instance", "not_registered"), ECONFLICT ("instance_bound"; a token
// collision), EDUPLICATE.
func (ens *Enrolments) AdoptInstance(ctx context.Context, a ledger.Action, id int64, r ledger.Rental, tokenHash [32]byte) (*ledger.Rental, ledger.Instance, error) {
	var got ledger.Instance
	out, err := journaled(ctx, ens.db, a, ledger.ActionAdopt, r.Name, func(tx *wtx, j journal) (*ledger.Rental, error) {
		in, err := instanceByID(ctx, tx, j.userID, id)
		if err != nil {
			return nil, err
		}
		if in.State == ledger.InstanceBound {
			return nil, ledger.Errorc(ledger.ECONFLICT, "instance_bound", ledger.InstanceRentalName(in), rentalName(ctx, tx, in.RentalID))
		}
		if r.Name == "" {
			r.Name = ledger.InstanceRentalName(in)
		}
		start, err := checkNewRental(&r)
		if err != nil {
			return nil, err
		}
		if r.Name, err = unusedName(ctx, tx, j.userID, r.Name); err != nil {
			return nil, err
		}
		if r.Owner, err = adoptedOwner(ctx, tx, a, in, r); err != nil {
			return nil, err
		}
		rid, err := insertRental(ctx, tx, j, r, start,
			fmt.Sprintf("an unreleased rental named %s already exists (release it first or choose another name)", r.Name))
		if err != nil {
			return nil, err
		}
		if err := j.target(ctx, tx, rid, 0, instancePrev{Instance: in.ID, State: in.State}); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET name = ? WHERE id = ?`, r.Name, j.id); err != nil {
			return nil, fmt.Errorf("sqlite: record adopt: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE instances SET state = 'bound', rental_id = ? WHERE id = ?`, rid, in.ID); err != nil {
			return nil, fmt.Errorf("sqlite: bind instance: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_tokens (rental_id, user_id, hash, issued_at) VALUES (?, ?, ?, ?)`,
			rid, j.userID, tokenHash[:], unix(j.at)); err != nil {
			return nil, constraintError(err, "insert token", "token collision: try again")
		}
		out, err := loadRental(ctx, tx, rid)
		if err != nil {
			return nil, err
		}
		in.State, in.RentalID = ledger.InstanceBound, rid
		got = in
		return out, nil
	})
	if err != nil {
		return nil, ledger.Instance{}, err
	}
	return out, got, nil
}

// adoptedOwner is the owner of the rental adopting instance in makes on
// a team's ledger: the member who made the enrolment token the instance
// announced itself with (enrol_tokens.created_by) while they are still a
// member, else the person adopting it (newOwner's rules).
func adoptedOwner(ctx context.Context, q querier, a ledger.Action, in ledger.Instance, r ledger.Rental) (int64, error) {
	if r.Owner == 0 && ledger.IsTeamLedger(a.UserID) && in.TokenID != 0 {
		var by int64
		err := q.QueryRowContext(ctx, `SELECT created_by FROM enrol_tokens WHERE id = ?`, in.TokenID).Scan(&by)
		if err != nil && err != sql.ErrNoRows {
			return 0, fmt.Errorf("sqlite: who made enrolment token %d: %w", in.TokenID, err)
		}
		if by != 0 {
			if _, err := teamActor(ctx, q, a); err != nil {
				return 0, err
			}
			if _, ok, err := teamRole(ctx, q, a.UserID, by); err != nil {
				return 0, err
			} else if ok {
				return by, nil
			}
		}
	}
	return newOwner(ctx, q, a, r.Name, r.Owner)
}

// RebindInstance stores tokenHash as the new agent token of the rental
// the user's instance id is bound to, revoking the rental's earlier
// tokens. Errors: ENOTFOUND ("no_instance"), ECONFLICT
// ("instance_not_bound"; "agent_released" when the rental is released).
func (ens *Enrolments) RebindInstance(ctx context.Context, userID, id int64, tokenHash [32]byte, at time.Time) (ledger.AgentToken, error) {
	at = sec(at)
	if at.IsZero() {
		at = ens.db.now()
	}
	var tok ledger.AgentToken
	err := ens.db.withTx(ctx, func(tx *sql.Tx) error {
		in, err := instanceByID(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if in.State != ledger.InstanceBound || in.RentalID == 0 {
			return ledger.Errorc(ledger.ECONFLICT, "instance_not_bound", ledger.InstanceRentalName(in), in.ID)
		}
		r, err := loadRental(ctx, tx, in.RentalID)
		if err != nil {
			return err
		}
		if r.State() == ledger.Released {
			return ledger.Errorc(ledger.ECONFLICT, "agent_released", r.Name)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE agent_tokens SET revoked_at = ? WHERE rental_id = ? AND revoked_at IS NULL`,
			unix(at), r.ID); err != nil {
			return fmt.Errorf("sqlite: revoke tokens: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_tokens (rental_id, user_id, hash, issued_at) VALUES (?, ?, ?, ?)`,
			r.ID, userID, tokenHash[:], unix(at)); err != nil {
			return constraintError(err, "insert token", "token collision: try again")
		}
		tok = ledger.AgentToken{RentalID: r.ID, UserID: userID, Rental: r.Name, Hash: tokenHash, IssuedAt: at}
		return nil
	})
	return tok, err
}

// undoInstance puts the instance an adopt or ignore answered back in the
// state it had before (prev, the action's journaled value), if it is
// still where that action left it: bound to no rental (the undo just
// deleted it) or ignored. It returns the instance's ID.
func undoInstance(ctx context.Context, tx querier, kind ledger.ActionKind, prev string) (int64, error) {
	var p instancePrev
	if err := json.Unmarshal([]byte(prev), &p); err != nil {
		return 0, fmt.Errorf("sqlite: undo %s: decode previous instance state: %w", kind, err)
	}
	if p.State != ledger.InstancePending && p.State != ledger.InstanceIgnored {
		p.State = ledger.InstancePending
	}
	q := `UPDATE instances SET state = ?, rental_id = NULL WHERE id = ? AND state = 'bound' AND rental_id IS NULL`
	if kind == ledger.ActionIgnore {
		q = `UPDATE instances SET state = ? WHERE id = ? AND state = 'ignored'`
	}
	if _, err := tx.ExecContext(ctx, q, string(p.State), p.Instance); err != nil {
		return 0, fmt.Errorf("sqlite: undo %s: restore the instance: %w", kind, err)
	}
	return p.Instance, nil
}
