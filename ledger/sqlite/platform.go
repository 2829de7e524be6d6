package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/netip"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// actionBind is the journal kind of BindPlatformRental's row, written only
// for its key: not undoable (an answer that changes no money).
const actionBind ledger.ActionKind = "bind"

// balanceMergeWindow is how long an API-given balance is updated in place
// rather than followed by a new row (RecordPlatformBalance).
const balanceMergeWindow = time.Hour

const platformInstanceCols = `id, user_id, platform, platform_id, status, rental_id, name, gpu, gpu_count, price,
	currency, state, state_at, price_told, first_seen, last_seen, message_id, address`

// addrText is a listed address as stored: "" for none.
func addrText(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func scanPlatformInstance(s scanner) (ledger.PlatformInstance, error) {
	var (
		in                         ledger.PlatformInstance
		status, currency           string
		rentalID, stateAt          sql.NullInt64
		price, told                sql.NullString
		firstSeen, lastSeen, msgID int64
		addr                       string
	)
	err := s.Scan(&in.ID, &in.UserID, &in.Platform, &in.PlatformID, &status, &rentalID, &in.Name, &in.GPU, &in.GPUCount,
		&price, &currency, &in.State, &stateAt, &told, &firstSeen, &lastSeen, &msgID, &addr)
	if err != nil {
		return in, err
	}
	if addr != "" {
		if in.Address, err = netip.ParseAddr(addr); err != nil {
			return in, fmt.Errorf("sqlite: platform_instances.address: %w", err)
		}
	}
	in.Status = ledger.PlatformStatus(status)
	in.RentalID = rentalID.Int64
	in.Currency = ledger.Currency(currency)
	in.StateAt = fromNullUnix(stateAt)
	in.FirstSeen, in.LastSeen = fromUnix(firstSeen), fromUnix(lastSeen)
	in.MessageID = int(msgID)
	if price.Valid {
		if in.Price, err = dec(price.String, "platform_instances.price"); err != nil {
			return in, err
		}
		in.PriceOK = true
	}
	if told.Valid {
		if in.PriceTold, err = dec(told.String, "platform_instances.price_told"); err != nil {
			return in, err
		}
		in.PriceToldOK = true
	}
	return in, nil
}

// platformInstances returns the instances selected by where, by platform
// and platform ID.
func platformInstances(ctx context.Context, q querier, where string, args ...any) ([]ledger.PlatformInstance, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+platformInstanceCols+` FROM platform_instances WHERE `+where+
		` ORDER BY platform, platform_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: platform instances: %w", err)
	}
	defer rows.Close()
	var out []ledger.PlatformInstance
	for rows.Next() {
		in, err := scanPlatformInstance(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: platform instances: %w", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: platform instances: %w", err)
	}
	return out, nil
}

// storedInstance returns the user's stored instance of platform with
// platformID, and false if there is none.
func storedInstance(ctx context.Context, q querier, userID int64, platform, platformID string) (ledger.PlatformInstance, bool, error) {
	ins, err := platformInstances(ctx, q, `user_id = ? AND platform = ? AND platform_id = ?`, userID, platform, platformID)
	if err != nil || len(ins) == 0 {
		return ledger.PlatformInstance{}, false, err
	}
	return ins[0], true, nil
}

// PlatformInstances returns the user's instances listed on platform, by
// PlatformID. Errors: EINVALID (a malformed platform name).
func (ps *Platforms) PlatformInstances(ctx context.Context, userID int64, platform string) ([]ledger.PlatformInstance, error) {
	if err := checkPlatform(platform); err != nil {
		return nil, err
	}
	out, err := platformInstances(ctx, ps.db.reader, `user_id = ? AND platform = ?`, userID, platform)
	return out, storeError(err)
}

// PlatformInstance returns the user's instance with row ID id. Errors:
// ENOTFOUND "no_platform_instance" (another user's included).
func (ps *Platforms) PlatformInstance(ctx context.Context, userID, id int64) (ledger.PlatformInstance, error) {
	ins, err := platformInstances(ctx, ps.db.reader, `user_id = ? AND id = ?`, userID, id)
	if err != nil {
		return ledger.PlatformInstance{}, storeError(err)
	}
	if len(ins) == 0 {
		return ledger.PlatformInstance{}, ledger.Errorc(ledger.ENOTFOUND, "no_platform_instance", id)
	}
	return ins[0], nil
}

// checkInstance validates in for userID (0: in.UserID) as the store
// will keep it, its times truncated to seconds.
func checkInstance(in *ledger.PlatformInstance, userID int64) error {
	if userID != 0 {
		if in.UserID != 0 && in.UserID != userID {
			return ledger.Errorf(ledger.EINVALID, "the instance belongs to user %d, not to the action's user %d", in.UserID, userID)
		}
		in.UserID = userID
	}
	if in.UserID == 0 {
		return ledger.Errorf(ledger.EINVALID, "the instance has no user")
	}
	in.StateAt, in.FirstSeen, in.LastSeen = sec(in.StateAt), sec(in.FirstSeen), sec(in.LastSeen)
	return in.Validate()
}

// userExists returns ENOTFOUND "not_registered" for an unknown user.
func userExists(ctx context.Context, q querier, userID int64) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM users WHERE id = ?`, userID).Scan(&one)
	if err == sql.ErrNoRows {
		return ledger.Errorc(ledger.ENOTFOUND, "not_registered", userID)
	}
	if err != nil {
		return fmt.Errorf("sqlite: look up user %d: %w", userID, err)
	}
	return nil
}

// usersRental loads rental id if it is userID's; ENOTFOUND "no_rental_id"
// otherwise (another user's rental is not told apart from none).
func usersRental(ctx context.Context, q querier, userID, id int64) (*ledger.Rental, error) {
	rs, err := loadRentals(ctx, q, `r.id = ? AND r.user_id = ?`, id, userID)
	if err != nil {
		return nil, err
	}
	if len(rs) != 1 {
		return nil, ledger.Errorc(ledger.ENOTFOUND, "no_rental_id", id)
	}
	return rs[0], nil
}

// platformIDFree returns ECONFLICT "platform_id_in_use" if a live rental
// of the user other than except is platform's instance platformID.
func platformIDFree(ctx context.Context, q querier, userID int64, platform, platformID string, except int64) error {
	if platformID == "" {
		return nil
	}
	var name string
	err := q.QueryRowContext(ctx, `SELECT name FROM rentals WHERE user_id = ? AND platform = ? AND platform_id = ?
		AND released = 0 AND id <> ? LIMIT 1`, userID, platform, platformID, except).Scan(&name)
	switch err {
	case sql.ErrNoRows:
		return nil
	case nil:
		return ledger.Errorc(ledger.ECONFLICT, "platform_id_in_use", name, platformID)
	}
	return fmt.Errorf("sqlite: look up platform ID: %w", err)
}

// writeInstance inserts or updates in by (user, platform, platform ID),
// keeping the first FirstSeen, and returns it as stored. Zero seen times
// are now.
func writeInstance(ctx context.Context, tx querier, in ledger.PlatformInstance, now time.Time) (ledger.PlatformInstance, error) {
	if in.FirstSeen.IsZero() {
		in.FirstSeen = now
	}
	if in.LastSeen.IsZero() {
		in.LastSeen = now
	}
	var price, told sql.NullString
	if in.PriceOK {
		price = sql.NullString{String: in.Price.String(), Valid: true}
	}
	if in.PriceToldOK {
		told = sql.NullString{String: in.PriceTold.String(), Valid: true}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO platform_instances (user_id, platform, platform_id, status, rental_id,
			name, gpu, gpu_count, price, currency, state, state_at, price_told, first_seen, last_seen, message_id, address)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id, platform, platform_id) DO UPDATE SET status = excluded.status,
			rental_id = excluded.rental_id, name = excluded.name, gpu = excluded.gpu, gpu_count = excluded.gpu_count,
			price = excluded.price, currency = excluded.currency, state = excluded.state, state_at = excluded.state_at,
			price_told = excluded.price_told, first_seen = min(first_seen, excluded.first_seen),
			last_seen = excluded.last_seen, message_id = excluded.message_id, address = excluded.address`,
		in.UserID, in.Platform, in.PlatformID, string(in.Status), nullID(in.RentalID), in.Name, in.GPU, in.GPUCount,
		price, string(in.Currency), in.State, nullUnix(in.StateAt), told, unix(in.FirstSeen), unix(in.LastSeen), in.MessageID, addrText(in.Address))
	if err != nil {
		return in, constraintError(err, "save platform instance", "the platform instance breaks a rule of the store")
	}
	got, ok, err := storedInstance(ctx, tx, in.UserID, in.Platform, in.PlatformID)
	if err == nil && !ok {
		err = fmt.Errorf("sqlite: save platform instance: the row is gone")
	}
	return got, err
}

// SavePlatformInstance inserts or updates in by (UserID, Platform,
// PlatformID): the sync's bookkeeping, not journaled. A bound instance's
// RentalID must be the user's rental of in.Platform that is this
// instance (AddSyncedRental or BindPlatformRental made it so). Times are
// truncated to seconds; a zero FirstSeen or LastSeen is the store's now,
// and the first FirstSeen stored is kept. Errors: EINVALID
// (PlatformInstance.Validate's keys), ENOTFOUND ("not_registered",
// "no_rental_id"), ECONFLICT ("rental_other_instance").
func (ps *Platforms) SavePlatformInstance(ctx context.Context, in ledger.PlatformInstance) (ledger.PlatformInstance, error) {
	if err := checkInstance(&in, 0); err != nil {
		return ledger.PlatformInstance{}, err
	}
	var out ledger.PlatformInstance
	err := ps.db.withWrite(ctx, func(tx *wtx) error {
		if err := userExists(ctx, tx, in.UserID); err != nil {
			return err
		}
		if in.Status == ledger.PlatformBound {
			r, err := usersRental(ctx, tx, in.UserID, in.RentalID)
			if err != nil {
				return err
			}
			if r.Platform != in.Platform || r.PlatformID != in.PlatformID {
				return ledger.Errorc(ledger.ECONFLICT, "rental_other_instance", r.Name, in.PlatformID)
			}
		}
		var err error
		out, err = writeInstance(ctx, tx, in, ps.db.now())
		return err
	})
	if err != nil {
		return ledger.PlatformInstance{}, err
	}
	return out, nil
}

// TellPlatformInstance is SavePlatformInstance with n written to the
// outbox in the same transaction (n.Text is called with the bound
// rental, nil when in is not bound): a price told is stored as told
// exactly when its notice is stored to be sent. Errors:
// SavePlatformInstance's, and EINVALID for a bad notice.
func (ps *Platforms) TellPlatformInstance(ctx context.Context, in ledger.PlatformInstance, n ledger.Notice) (ledger.PlatformInstance, error) {
	if err := checkInstance(&in, 0); err != nil {
		return ledger.PlatformInstance{}, err
	}
	var out ledger.PlatformInstance
	err := ps.db.withWrite(ctx, func(tx *wtx) error {
		if err := userExists(ctx, tx, in.UserID); err != nil {
			return err
		}
		var r *ledger.Rental
		if in.Status == ledger.PlatformBound {
			var err error
			if r, err = usersRental(ctx, tx, in.UserID, in.RentalID); err != nil {
				return err
			}
			if r.Platform != in.Platform || r.PlatformID != in.PlatformID {
				return ledger.Errorc(ledger.ECONFLICT, "rental_other_instance", r.Name, in.PlatformID)
			}
		}
		var err error
		if out, err = writeInstance(ctx, tx, in, ps.db.now()); err != nil {
			return err
		}
		_, err = ps.db.writeOutbox(ctx, tx, in.UserID, &n, r)
		return err
	})
	if err != nil {
		return ledger.PlatformInstance{}, err
	}
	return out, nil
}

// boundElsewhere returns ECONFLICT "platform_bound" if the stored
// instance is bound to a rental other than rentalID.
func boundElsewhere(ctx context.Context, q querier, in ledger.PlatformInstance, rentalID int64) error {
	cur, ok, err := storedInstance(ctx, q, in.UserID, in.Platform, in.PlatformID)
	if err != nil {
		return err
	}
	if ok && cur.Status == ledger.PlatformBound && cur.RentalID != rentalID {
		return ledger.Errorc(ledger.ECONFLICT, "platform_bound", in.PlatformID, rentalName(ctx, q, cur.RentalID))
	}
	return nil
}

// AddSyncedRental creates r as the platform's instance in (r.PlatformID
// is in.PlatformID; an empty r.Platform is in.Platform, another one is
// EINVALID "platform_mismatch") and saves in as bound to it, in one
// transaction, as the action a journaled as ledger.ActionSync. r.Events
// is its start, or its start and a stop (an instance first listed
// stopped): both are the one action, so one /undo removes it. A name in
// use by a live rental gets "-2", "-3"... appended, as AdoptInstance
// does: the sync chose it, not the user. Undo deletes the rental and the
// instance is declined (the rentals_unbind_platform trigger), so the
// next poll does not create it again. Errors: CreateRental's (EINVALID,
// ENOTFOUND, EDUPLICATE for a repeated a.Key, which changes nothing),
// PlatformInstance.Validate's, ECONFLICT "platform_bound" if the instance
// is bound already and "platform_id_in_use" if a live rental is it.
func (ps *Platforms) AddSyncedRental(ctx context.Context, a ledger.Action, in ledger.PlatformInstance, r ledger.Rental) (*ledger.Rental, ledger.PlatformInstance, error) {
	if r.Platform == "" {
		r.Platform = in.Platform
	}
	if r.Platform != in.Platform {
		return nil, ledger.PlatformInstance{}, ledger.Errorc(ledger.EINVALID, "platform_mismatch", r.Name, r.Platform, in.Platform)
	}
	r.PlatformID = in.PlatformID
	in.Status, in.RentalID = ledger.PlatformBound, 1 // checked as bound; the real ID follows
	if err := checkInstance(&in, a.UserID); err != nil {
		return nil, ledger.PlatformInstance{}, err
	}
	stop, err := syncedStop(&r)
	if err != nil {
		return nil, ledger.PlatformInstance{}, err
	}
	start, err := checkNewRental(&r)
	if err != nil {
		return nil, ledger.PlatformInstance{}, err
	}
	if stop != nil {
		if err := (&ledger.Rental{Name: r.Name, Events: []ledger.Event{start}}).CheckEvent(*stop); err != nil {
			return nil, ledger.PlatformInstance{}, err
		}
	}
	tell := a.Tell
	a.Tell = nil
	var got ledger.PlatformInstance
	out, err := journaled(ctx, ps.db, a, ledger.ActionSync, r.Name, func(tx *wtx, j journal) (*ledger.Rental, error) {
		if err := boundElsewhere(ctx, tx, in, 0); err != nil {
			return nil, err
		}
		name, err := freeName(ctx, tx, j.userID, r.Name)
		if err != nil {
			return nil, err
		}
		r.Name = name
		// A synced rental's owner is unknown (0) unless the sync names
		// one: the scheduler asks the team's room whose it is.
		if r.Owner, err = newOwner(ctx, tx, a, r.Name, r.Owner); err != nil {
			return nil, err
		}
		rid, err := insertRental(ctx, tx, j, r, start,
			fmt.Sprintf("an unreleased rental named %s already exists (release it first or choose another name)", r.Name))
		if err != nil {
			return nil, err
		}
		if stop != nil {
			if _, err := addEvent(ctx, tx, rid, j.id, *stop); err != nil {
				return nil, err
			}
		}
		if err := j.target(ctx, tx, rid, 0, nil); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET name = ? WHERE id = ?`, r.Name, j.id); err != nil {
			return nil, fmt.Errorf("sqlite: record sync: %w", err)
		}
		in.RentalID = rid
		if got, err = writeInstance(ctx, tx, in, j.at); err != nil {
			return nil, err
		}
		out, err := loadRental(ctx, tx, rid)
		if err != nil {
			return nil, err
		}
		if tell != nil {
			_, err = ps.db.writeOutbox(ctx, tx, j.userID, tell, out)
		}
		return out, err
	})
	if err != nil {
		return nil, ledger.PlatformInstance{}, err
	}
	return out, got, nil
}

// syncedStop takes the stop off a synced rental's events (start, stop):
// an instance first listed stopped is created stopped in the same action,
// so one /undo removes it. Any other second event, or a third, is
// EINVALID.
func syncedStop(r *ledger.Rental) (*ledger.Event, error) {
	if len(r.Events) != 2 {
		return nil, nil // checkNewRental says what is wrong with another count
	}
	if r.Events[0].Kind != ledger.EventStart || r.Events[1].Kind != ledger.EventStop {
		return nil, ledger.Errorf(ledger.EINVALID, "a synced rental's events are its start, and a stop only if the platform lists it stopped")
	}
	stop := r.Events[1]
	stop.At, stop.ID, stop.Price = sec(stop.At), 0, ledger.Price{}
	r.Events = r.Events[:1]
	return &stop, nil
}

// BindPlatformRental binds in to the user's rental rentalID (one logged
// by hand): it sets the rental's PlatformID and saves in as bound, in one
// transaction. Not journaled and not undoable (an answer that changes no
// money); a.Key, when set, is recorded so a retried answer is EDUPLICATE
// and changes nothing. Binding a rental to the instance it already is
// succeeds again. Errors: EINVALID (Validate's), ENOTFOUND
// ("no_rental_id": not the user's), ECONFLICT ("platform_mismatch": a
// rental on another platform; "platform_bound": the rental is another
// instance, or the instance another rental; "platform_id_in_use"),
// EDUPLICATE.
func (ps *Platforms) BindPlatformRental(ctx context.Context, a ledger.Action, in ledger.PlatformInstance, rentalID int64) (*ledger.Rental, ledger.PlatformInstance, error) {
	if err := noTell(a); err != nil {
		return nil, ledger.PlatformInstance{}, err
	}
	in.Status, in.RentalID = ledger.PlatformBound, rentalID
	if err := checkInstance(&in, a.UserID); err != nil {
		return nil, ledger.PlatformInstance{}, err
	}
	var (
		out *ledger.Rental
		got ledger.PlatformInstance
	)
	err := ps.db.withWrite(ctx, func(tx *wtx) error {
		now := ps.db.now()
		if a.Key != "" {
			j, err := ps.db.beginAction(ctx, tx, a, actionBind, "", false, true)
			if err != nil {
				return err
			}
			now = j.at
		} else if err := userExists(ctx, tx, in.UserID); err != nil {
			return err
		}
		r, err := usersRental(ctx, tx, in.UserID, rentalID)
		if err != nil {
			return err
		}
		if err := mayChange(ctx, tx, a, r.Name, r.Owner); err != nil {
			return err
		}
		if r.Platform != in.Platform {
			return ledger.Errorc(ledger.ECONFLICT, "platform_mismatch", r.Name, r.Platform, in.Platform)
		}
		if r.PlatformID != "" && r.PlatformID != in.PlatformID {
			return ledger.Errorc(ledger.ECONFLICT, "platform_bound", r.PlatformID, r.Name)
		}
		if err := boundElsewhere(ctx, tx, in, r.ID); err != nil {
			return err
		}
		if err := platformIDFree(ctx, tx, in.UserID, in.Platform, in.PlatformID, r.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE rentals SET platform_id = ? WHERE id = ?`, in.PlatformID, r.ID); err != nil {
			return constraintError(err, "bind rental", fmt.Sprintf("%s cannot be bound to instance %s", r.Name, in.PlatformID))
		}
		r.PlatformID = in.PlatformID
		if a.Key != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE actions SET name = ?, rental_id = ? WHERE key = ?`, r.Name, r.ID, a.Key); err != nil {
				return fmt.Errorf("sqlite: record bind: %w", err)
			}
		}
		if got, err = writeInstance(ctx, tx, in, now); err != nil {
			return err
		}
		out = r
		return nil
	})
	if err != nil {
		return nil, ledger.PlatformInstance{}, err
	}
	return out, got, nil
}

// ApplyPlatformEvent appends ev (a stop, resume or release the platform
// listed; its time truncated to seconds) to the rental the stored
// instance in is bound to, and saves in (its State, StateAt and listed
// facts) in the same transaction, as the action a journaled as the
// event's kind: /undo reverses it like a typed one (the instance keeps
// the state applied, so the next poll does not redo it). A failed event
// leaves the instance as it was. Errors: EINVALID ("bad_event" for
// another kind; Validate's), AppendEvent's (CheckEvent's, EDUPLICATE),
// ENOTFOUND "platform_not_bound" if the stored instance is not bound,
// ECONFLICT "platform_bound" if in names another rental than the stored
// binding.
func (ps *Platforms) ApplyPlatformEvent(ctx context.Context, a ledger.Action, in ledger.PlatformInstance, ev ledger.Event) (*ledger.Rental, ledger.PlatformInstance, error) {
	switch ev.Kind {
	case ledger.EventStop, ledger.EventResume, ledger.EventRelease:
	default:
		return nil, ledger.PlatformInstance{}, ledger.Errorc(ledger.EINVALID, "bad_event", ev.Kind)
	}
	ev.At, ev.ID, ev.Price = sec(ev.At), 0, ledger.Price{}
	wantRental := in.RentalID
	in.Status = ledger.PlatformBound
	if in.RentalID == 0 {
		in.RentalID = 1 // checked as bound; the stored binding follows
	}
	if err := checkInstance(&in, a.UserID); err != nil {
		return nil, ledger.PlatformInstance{}, err
	}
	tell := a.Tell
	a.Tell = nil
	var got ledger.PlatformInstance
	out, err := journaled(ctx, ps.db, a, ledger.ActionKind(ev.Kind), "", func(tx *wtx, j journal) (*ledger.Rental, error) {
		cur, ok, err := storedInstance(ctx, tx, in.UserID, in.Platform, in.PlatformID)
		if err != nil {
			return nil, err
		}
		if !ok || cur.Status != ledger.PlatformBound {
			return nil, ledger.Errorc(ledger.ENOTFOUND, "platform_not_bound", in.PlatformID)
		}
		if wantRental != 0 && wantRental != cur.RentalID {
			return nil, ledger.Errorc(ledger.ECONFLICT, "platform_bound", in.PlatformID, rentalName(ctx, tx, cur.RentalID))
		}
		r, err := usersRental(ctx, tx, in.UserID, cur.RentalID)
		if err != nil {
			return nil, err
		}
		if err := appendRentalEvent(ctx, tx, j, r, ev); err != nil {
			return nil, err
		}
		if err := j.target(ctx, tx, r.ID, 0, nil); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET name = ? WHERE id = ?`, r.Name, j.id); err != nil {
			return nil, fmt.Errorf("sqlite: record %s: %w", ev.Kind, err)
		}
		in.RentalID = cur.RentalID
		if got, err = writeInstance(ctx, tx, in, j.at); err != nil {
			return nil, err
		}
		if tell != nil {
			_, err = ps.db.writeOutbox(ctx, tx, j.userID, tell, r)
		}
		return r, err
	})
	if err != nil {
		return nil, ledger.PlatformInstance{}, err
	}
	return out, got, nil
}

// RentalByPlatformID returns the user's newest rental (released or not)
// that is platform's instance platformID. Errors: EINVALID (a malformed
// platform or ID), ENOTFOUND "no_platform_rental".
func (ps *Platforms) RentalByPlatformID(ctx context.Context, userID int64, platform, platformID string) (*ledger.Rental, error) {
	if err := checkPlatform(platform); err != nil {
		return nil, err
	}
	if err := ledger.CheckPlatformID(platformID); err != nil {
		return nil, err
	}
	rs, err := loadRentals(ctx, ps.db.reader, `r.id = (SELECT id FROM rentals WHERE user_id = ? AND platform = ?
		AND platform_id = ? ORDER BY id DESC LIMIT 1)`, userID, platform, platformID)
	if err != nil {
		return nil, storeError(err)
	}
	if len(rs) == 0 {
		return nil, ledger.Errorc(ledger.ENOTFOUND, "no_platform_rental", platform, platformID)
	}
	return rs[0], nil
}

// RecordPlatformBalance records a balance the platform's API gave (it
// may be negative), not journaled: the row has no action (source 'api')
// and /undo never removes it. It updates in place the user's latest
// API-given record of that platform and currency when that is at most
// balanceMergeWindow older than b.At (and not newer) and no balance record
// or top-up of the platform came at or after it: the balance history
// keeps a point before every change the user made, for reconciliation,
// and one row per hour otherwise. A zero b.At is the store's now.
// Errors: EINVALID (a malformed platform, a currency that is not an
// upper-case ISO code), ENOTFOUND ("not_registered").
func (ps *Platforms) RecordPlatformBalance(ctx context.Context, b ledger.BalanceRecord) (ledger.BalanceRecord, error) {
	if err := checkPlatform(b.Platform); err != nil {
		return ledger.BalanceRecord{}, err
	}
	if c, err := ledger.ParseCurrency(string(b.Currency)); err != nil || c != b.Currency {
		return ledger.BalanceRecord{}, ledger.Errorc(ledger.EINVALID, "instance_currency", b.Currency)
	}
	if b.UserID == 0 {
		return ledger.BalanceRecord{}, ledger.Errorf(ledger.EINVALID, "the balance has no user")
	}
	b.At, b.API, b.ID = sec(b.At), true, 0
	err := ps.db.withWrite(ctx, func(tx *wtx) error {
		if b.At.IsZero() {
			b.At = ps.db.now()
		}
		if err := userExists(ctx, tx, b.UserID); err != nil {
			return err
		}
		var lastID, lastAt int64
		err := tx.QueryRowContext(ctx, `SELECT id, at FROM balances WHERE user_id = ? AND platform = ? AND currency = ?
			AND source = 'api' ORDER BY at DESC, id DESC LIMIT 1`, b.UserID, b.Platform, string(b.Currency)).Scan(&lastID, &lastAt)
		if err != nil && err != sql.ErrNoRows {
			return fmt.Errorf("sqlite: latest platform balance: %w", err)
		}
		if err == nil && lastAt <= unix(b.At) && unix(b.At)-lastAt < int64(balanceMergeWindow/time.Second) {
			var later int
			err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM balances WHERE user_id = ?1 AND platform = ?2 AND id <> ?3 AND at >= ?4)
				OR EXISTS (SELECT 1 FROM topups WHERE user_id = ?1 AND platform = ?2 AND at >= ?4)`,
				b.UserID, b.Platform, lastID, lastAt).Scan(&later)
			if err != nil {
				return fmt.Errorf("sqlite: platform balance: %w", err)
			}
			if later == 0 {
				if _, err := tx.ExecContext(ctx, `UPDATE balances SET amount = ?, at = ? WHERE id = ?`,
					b.Amount.String(), unix(b.At), lastID); err != nil {
					return fmt.Errorf("sqlite: update platform balance: %w", err)
				}
				b.ID = lastID
				return nil
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO balances (user_id, action_id, platform, amount, currency, at, source)
			VALUES (?, NULL, ?, ?, ?, ?, 'api')`, b.UserID, b.Platform, b.Amount.String(), string(b.Currency), unix(b.At))
		if err != nil {
			return fmt.Errorf("sqlite: record platform balance: %w", err)
		}
		b.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return ledger.BalanceRecord{}, err
	}
	return b, nil
}
