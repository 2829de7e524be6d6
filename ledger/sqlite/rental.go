package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

const rentalCols = `r.id, r.user_id, r.name, r.platform, r.gpu, r.gpu_count, r.mode, r.priced, r.price, r.price_unit,
	r.currency, r.min_s, r.step_s, r.floor, r.lease_ns, r.traffic_priced, r.traffic_price_per_gb,
	r.traffic_free_gb, r.traffic_direction, r.created_at, r.platform_id, r.owner, r.project`

func scanRental(s scanner) (*ledger.Rental, error) {
	var (
		r                                   ledger.Rental
		priced, trafficPriced               bool
		price, floor, tPrice, tFree         string
		unit, currency, mode, dir           string
		minS, stepS, leaseNS, createdAtUnix int64
		platformID                          sql.NullString
	)
	err := s.Scan(&r.ID, &r.UserID, &r.Name, &r.Platform, &r.GPU, &r.GPUCount, &mode, &priced, &price, &unit,
		&currency, &minS, &stepS, &floor, &leaseNS, &trafficPriced, &tPrice, &tFree, &dir, &createdAtUnix, &platformID,
		&r.Owner, &r.Project)
	if err != nil {
		return nil, err
	}
	r.PlatformID = platformID.String
	r.Mode = ledger.Mode(mode)
	r.Priced = priced
	r.Price.Unit = ledger.Unit(unit)
	r.Currency = ledger.Currency(currency)
	r.Min = time.Duration(minS) * time.Second
	r.Step = time.Duration(stepS) * time.Second
	r.Lease = time.Duration(leaseNS)
	r.CreatedAt = fromUnix(createdAtUnix)
	r.Traffic.Priced = trafficPriced
	r.Traffic.Direction = ledger.Direction(dir)
	if r.Price.Amount, err = dec(price, "rentals.price"); err != nil {
		return nil, err
	}
	if r.Floor, err = dec(floor, "rentals.floor"); err != nil {
		return nil, err
	}
	if r.Traffic.PricePerGB, err = dec(tPrice, "rentals.traffic_price_per_gb"); err != nil {
		return nil, err
	}
	if r.Traffic.FreeGB, err = dec(tFree, "rentals.traffic_free_gb"); err != nil {
		return nil, err
	}
	return &r, nil
}

// loadRentals returns the rentals selected by where (a condition on the
// rentals table aliased r) in id order, with their events, traffic usage
// and idle intervals: four queries however many rentals match, each child
// table read in one pass and attached by rental_id.
func loadRentals(ctx context.Context, q querier, where string, args ...any) ([]*ledger.Rental, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+rentalCols+` FROM rentals r WHERE `+where+` ORDER BY r.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load rentals: %w", err)
	}
	var out []*ledger.Rental
	byID := map[int64]*ledger.Rental{}
	for rows.Next() {
		r, err := scanRental(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: load rentals: %w", err)
		}
		out = append(out, r)
		byID[r.ID] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load rentals: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	sub := `SELECT r.id FROM rentals r WHERE ` + where

	// Events: one row per rental with its events packed by SQLite into
	// one text, in insertion order (which CheckEvent keeps in time order):
	// "id kind at [recorded] [price unit]" separated by ";", recorded
	// being the time of the action that logged the event, left out when
	// it is at (an event logged as it happened). A year of history is
	// ~10^5 events, and crossing from SQLite to Go once per event, column
	// by column, was most of Book's cost.
	rows, err = q.QueryContext(ctx, `SELECT e.rental_id, group_concat(
			e.id || ' ' || e.kind || ' ' || e.at || iif(a.at = e.at, '', ' ' || a.at) ||
			iif(e.price IS NULL, '', ' ' || e.price || ' ' || e.price_unit), ';' ORDER BY e.id)
		FROM rental_events e JOIN actions a ON a.id = e.action_id
		WHERE e.rental_id IN (`+sub+`) GROUP BY e.rental_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load rental events: %w", err)
	}
	var (
		rid    int64
		packed sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&rid, &packed); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: load rental events: %w", err)
		}
		r := byID[rid]
		if r == nil {
			continue
		}
		if r.Events, err = unpackEvents(packed); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: load events of rental %d: %w", rid, err)
		}
		r.PriceFromStart()
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load rental events: %w", err)
	}

	rows, err = q.QueryContext(ctx, `SELECT rental_id, id, action_id, at, bytes, direction FROM traffic_usage
		WHERE rental_id IN (`+sub+`) ORDER BY rental_id, at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load traffic usage: %w", err)
	}
	for rows.Next() {
		var (
			rid, at int64
			u       ledger.TrafficUsage
			dir     string
		)
		if err := rows.Scan(&rid, &u.ID, &u.Ref, &at, &u.Bytes, &dir); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: load traffic usage: %w", err)
		}
		u.At = fromUnix(at)
		u.Direction = ledger.Direction(dir)
		if r := byID[rid]; r != nil {
			r.TrafficUsage = append(r.TrafficUsage, u)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load traffic usage: %w", err)
	}

	rows, err = q.QueryContext(ctx, `SELECT rental_id, id, at, price_per_gb FROM traffic_prices
		WHERE rental_id IN (`+sub+`) ORDER BY rental_id, at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load traffic prices: %w", err)
	}
	for rows.Next() {
		var (
			rid, at int64
			p       ledger.TrafficPrice
			price   string
		)
		if err := rows.Scan(&rid, &p.ID, &at, &price); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: load traffic prices: %w", err)
		}
		p.At = fromUnix(at)
		if p.PricePerGB, err = dec(price, "traffic_prices.price_per_gb"); err != nil {
			rows.Close()
			return nil, err
		}
		if r := byID[rid]; r != nil {
			r.TrafficPrices = append(r.TrafficPrices, p)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load traffic prices: %w", err)
	}

	rows, err = q.QueryContext(ctx, `SELECT rental_id, from_at, to_at FROM idle_intervals
		WHERE rental_id IN (`+sub+`) ORDER BY rental_id, from_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load idle intervals: %w", err)
	}
	for rows.Next() {
		var (
			rid, from int64
			to        sql.NullInt64
		)
		if err := rows.Scan(&rid, &from, &to); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: load idle intervals: %w", err)
		}
		if r := byID[rid]; r != nil {
			r.Idle = append(r.Idle, ledger.Interval{From: fromUnix(from), To: fromNullUnix(to)})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load idle intervals: %w", err)
	}
	return out, nil
}

// unpackEvents parses the packed form loadRentals selects.
func unpackEvents(b []byte) ([]ledger.Event, error) {
	evs := make([]ledger.Event, 0, bytes.Count(b, []byte{';'})+1)
	for len(b) > 0 {
		var rec []byte
		rec, b, _ = bytes.Cut(b, []byte{';'})
		var f [6][]byte
		n, rest := 0, rec
		for n < len(f) && len(rest) > 0 {
			f[n], rest, _ = bytes.Cut(rest, []byte{' '})
			n++
		}
		if n < 3 {
			return nil, fmt.Errorf("malformed event record %q", rec)
		}
		id, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("event id %q: %w", f[0], err)
		}
		at, err := strconv.ParseInt(string(f[2]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("event time %q: %w", f[2], err)
		}
		ev := ledger.Event{ID: id, Kind: eventKind(f[1]), At: fromUnix(at)}
		ev.RecordedAt = ev.At
		// Three or five fields: recorded when it happened; four or six:
		// with the time it was recorded.
		opt := f[3:n]
		if n == 4 || n == 6 {
			recorded, err := strconv.ParseInt(string(f[3]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("event recorded time %q: %w", f[3], err)
			}
			ev.RecordedAt = fromUnix(recorded)
			opt = f[4:n]
		}
		if len(opt) == 2 {
			if ev.Price.Amount, err = dec(string(opt[0]), "rental_events.price"); err != nil {
				return nil, err
			}
			ev.Price.Unit = ledger.Unit(opt[1])
		}
		evs = append(evs, ev)
	}
	// Events are packed in the order they were recorded; a price change
	// recorded later for an earlier time (SetPriceAt) goes back to its
	// place in time, after the events of the same second.
	if !sort.SliceIsSorted(evs, func(i, j int) bool { return evs[i].At.Before(evs[j].At) }) {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].At.Before(evs[j].At) })
	}
	return evs, nil
}

// eventKind converts a stored kind without allocating for the known ones.
func eventKind(b []byte) ledger.EventKind {
	switch string(b) {
	case string(ledger.EventStart):
		return ledger.EventStart
	case string(ledger.EventStop):
		return ledger.EventStop
	case string(ledger.EventResume):
		return ledger.EventResume
	case string(ledger.EventPrice):
		return ledger.EventPrice
	case string(ledger.EventRelease):
		return ledger.EventRelease
	}
	return ledger.EventKind(b)
}

// findRental returns the user's rental called name: the unreleased one,
// or else the most recently created released one; a name written as an
// address (yolo@2026-11-02, ledger.RentalRef) is the rental of that name
// that started that day in the user's zone, released or not. ENOTFOUND if
// the user has none by that name ("no_rental_at" for an address no rental
// of the user has), EINVALID for a malformed address. Only the user's own
// rentals are ever found.
func findRental(ctx context.Context, q querier, userID int64, name string) (*ledger.Rental, error) {
	if ledger.IsRentalRef(name) {
		return findRentalRef(ctx, q, userID, name)
	}
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM rentals WHERE user_id = ? AND name = ?
		ORDER BY released, id DESC LIMIT 1`, userID, name).Scan(&id)
	if err == sql.ErrNoRows {
		return nil, ledger.Errorc(ledger.ENOTFOUND, "no_rental_named", name)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: find rental %s: %w", name, err)
	}
	return loadRental(ctx, q, id)
}

// findRentalRef is findRental for an address.
func findRentalRef(ctx context.Context, q querier, userID int64, s string) (*ledger.Rental, error) {
	ref, err := ledger.ParseRentalRef(s)
	if err != nil {
		return nil, err
	}
	var tz string
	err = q.QueryRowContext(ctx, `SELECT tz FROM users WHERE id = ?`, userID).Scan(&tz)
	if err != nil && err != sql.ErrNoRows {
		return nil, fmt.Errorf("sqlite: find rental %s: %w", s, err)
	}
	u := ledger.User{TZ: tz}
	rs, err := rentalsNamed(ctx, q, userID, ref.Name)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, ledger.Errorc(ledger.ENOTFOUND, "no_rental_named", ref.Name)
	}
	if x := ledger.PickRental(rs, ref, u.Location()); x != nil {
		return x, nil
	}
	return nil, ledger.Errorc(ledger.ENOTFOUND, "no_rental_at", ref.String(), ref.Name, ref.Date())
}

// rentalsNamed returns every rental of the user called name (a bare
// name), released or not, in creation order.
func rentalsNamed(ctx context.Context, q querier, userID int64, name string) ([]*ledger.Rental, error) {
	return loadRentals(ctx, q, `r.user_id = ? AND r.name = ?`, userID, name)
}

// loadRental loads one rental by id with q; a missing one is an error
// (callers ask for a rental they just found or wrote).
func loadRental(ctx context.Context, q querier, id int64) (*ledger.Rental, error) {
	rs, err := loadRentals(ctx, q, `r.id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(rs) != 1 {
		return nil, ledger.Errorf(ledger.ENOTFOUND, "rental %d does not exist", id)
	}
	return rs[0], nil
}

func validateTraffic(t *ledger.TrafficTerms) error {
	if t.Direction == "" {
		t.Direction = ledger.Out
	}
	switch t.Direction {
	case ledger.In, ledger.Out, ledger.Both:
	default:
		return ledger.Errorc(ledger.EINVALID, "bad_traffic_direction", t.Direction)
	}
	if t.PricePerGB.Sign() < 0 {
		return ledger.Errorf(ledger.EINVALID, "traffic price %s/GB is negative, e.g. price=0.8/GB", t.PricePerGB)
	}
	if t.FreeGB.Sign() < 0 {
		return ledger.Errorf(ledger.EINVALID, "free traffic %sGB is negative, e.g. free=100GB", t.FreeGB)
	}
	return nil
}

// CreateRental stores a new rental for a.UserID (r.UserID is ignored)
// whose Events hold exactly its start; times are truncated to seconds.
// Its traffic terms and its PlatformID are stored when set. Errors:
// EINVALID (the domain's Validate and CheckEvent messages, a PlatformID's
// "platform_id_long", "platform_id_chars"), ENOTFOUND for an unknown user,
// ECONFLICT if an unreleased rental of the user has the same name (or,
// "platform_id_in_use", the same platform and PlatformID), EDUPLICATE.
func (rt *Rentals) CreateRental(ctx context.Context, a ledger.Action, r ledger.Rental) (*ledger.Rental, error) {
	start, err := checkNewRental(&r)
	if err != nil {
		return nil, err
	}
	return journaled(ctx, rt.db, a, ledger.ActionRent, r.Name, func(tx *wtx, j journal) (*ledger.Rental, error) {
		var err error
		if r.Owner, err = newOwner(ctx, tx, a, r.Name, r.Owner); err != nil {
			return nil, err
		}
		conflict := fmt.Sprintf("an unreleased rental named %s already exists (release it first or choose another name)", r.Name)
		switch used, err := nameInUse(ctx, tx, j.userID, r.Name); {
		case err != nil:
			return nil, err
		case used:
			return nil, ledger.Errorf(ledger.ECONFLICT, "%s", conflict)
		}
		id, err := insertRental(ctx, tx, j, r, start, conflict)
		if err != nil {
			return nil, err
		}
		if err := j.target(ctx, tx, id, 0, nil); err != nil {
			return nil, err
		}
		return loadRental(ctx, tx, id)
	})
}

// checkNewRental checks a new rental's terms and its one event, the
// start, and returns the start truncated to seconds. Its traffic terms,
// when set, are normalised (an empty direction is out).
func checkNewRental(r *ledger.Rental) (ledger.Event, error) {
	if len(r.Events) != 1 || r.Events[0].Kind != ledger.EventStart {
		return ledger.Event{}, ledger.Errorf(ledger.EINVALID, "a new rental needs exactly one event, its start")
	}
	start := r.Events[0]
	start.At = sec(start.At)
	if err := r.Validate(); err != nil {
		return start, err
	}
	if err := ledger.ValidProject(r.Project); err != nil {
		return start, err
	}
	if err := (&ledger.Rental{Name: r.Name}).CheckEvent(start); err != nil {
		return start, err
	}
	if r.Traffic != (ledger.TrafficTerms{}) {
		if err := validateTraffic(&r.Traffic); err != nil {
			return start, err
		}
	}
	return start, nil
}

// liveRental is findRental for a change only an unreleased rental takes:
// the latest released one of that name is ECONFLICT with the message
// released (its key in the ledger's catalog).
func liveRental(ctx context.Context, q querier, userID int64, name, released string) (*ledger.Rental, error) {
	r, err := findRental(ctx, q, userID, name)
	if err != nil {
		return nil, err
	}
	if r.State() == ledger.Released {
		return nil, ledger.Errorc(ledger.ECONFLICT, released, name)
	}
	return r, nil
}

// nameInUse reports whether the user has an unreleased rental called name.
func nameInUse(ctx context.Context, tx querier, userID int64, name string) (bool, error) {
	return anyRow(ctx, tx, `SELECT 1 FROM rentals WHERE user_id = ? AND name = ? AND released = 0`, userID, name)
}

// anyRow reports whether the rental-name query (user_id, name) finds a row.
func anyRow(ctx context.Context, q querier, query string, userID int64, name string) (bool, error) {
	var one int
	switch err := q.QueryRowContext(ctx, query, userID, name).Scan(&one); err {
	case nil:
		return true, nil
	case sql.ErrNoRows:
		return false, nil
	default:
		return false, fmt.Errorf("sqlite: check rental name: %w", err)
	}
}

// insertRental stores the checked rental r and its start as action j's
// and returns its id; conflict is the message of a name in use. A
// PlatformID that a live rental of the user on the same platform has is
// ECONFLICT "platform_id_in_use".
func insertRental(ctx context.Context, tx querier, j journal, r ledger.Rental, start ledger.Event, conflict string) (int64, error) {
	if err := platformIDFree(ctx, tx, j.userID, r.Platform, r.PlatformID, 0); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO rentals (user_id, action_id, name, platform, gpu, gpu_count, mode,
			priced, price, price_unit, currency, min_s, step_s, floor, lease_ns, traffic_priced, traffic_price_per_gb,
			traffic_free_gb, traffic_direction, created_at, platform_id, owner, project)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.userID, j.id, r.Name, r.Platform, r.GPU, r.GPUCount, string(r.Mode), boolInt(r.Priced),
		r.Price.Amount.String(), string(r.Price.Unit), string(r.Currency), int64(r.Min/time.Second),
		int64(r.Step/time.Second), r.Floor.String(), int64(r.Lease), boolInt(r.Traffic.Priced),
		r.Traffic.PricePerGB.String(), r.Traffic.FreeGB.String(), string(r.Traffic.Direction), unix(j.at),
		sql.NullString{String: r.PlatformID, Valid: r.PlatformID != ""}, r.Owner, r.Project)
	if err != nil {
		return 0, constraintError(err, "create rental", conflict)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("sqlite: create rental: %w", err)
	}
	if _, err := addEvent(ctx, tx, id, j.id, start); err != nil {
		return 0, err
	}
	return id, nil
}

// addEvent inserts ev and returns its id.
func addEvent(ctx context.Context, tx querier, rentalID, actionID int64, ev ledger.Event) (int64, error) {
	var price, unit sql.NullString
	if ev.Kind == ledger.EventPrice {
		price = sql.NullString{String: ev.Price.Amount.String(), Valid: true}
		unit = sql.NullString{String: string(ev.Price.Unit), Valid: true}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO rental_events (rental_id, action_id, kind, at, price, price_unit)
		VALUES (?, ?, ?, ?, ?, ?)`, rentalID, actionID, string(ev.Kind), unix(ev.At), price, unit)
	if err != nil {
		return 0, fmt.Errorf("sqlite: record %s event: %w", ev.Kind, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("sqlite: record %s event: %w", ev.Kind, err)
	}
	return id, nil
}

// AppendEvent adds an event (stop, resume, price, release; its time
// truncated to seconds) to the user's unreleased rental called name,
// after checking it against the stored history with Rental.CheckEvent.
// A release frees the name for a new rental. Errors: EINVALID and
// ECONFLICT with the domain's message (out of order, stop when stopped,
// anything after a release: a name that only a released rental has gets
// "already released"), ENOTFOUND if the user has no rental by that name,
// EDUPLICATE.
func (rt *Rentals) AppendEvent(ctx context.Context, a ledger.Action, name string, ev ledger.Event) (*ledger.Rental, error) {
	ev.At = sec(ev.At)
	ev.ID = 0
	switch ev.Kind {
	case ledger.EventStop, ledger.EventResume, ledger.EventPrice, ledger.EventRelease, ledger.EventStart:
	default:
		return nil, ledger.Errorf(ledger.EINVALID, "unknown event %q: use stop, resume, price or release", ev.Kind)
	}
	return changeRental(ctx, rt.db, a, ledger.ActionKind(ev.Kind), name, func(tx *wtx, j journal, r *ledger.Rental) (*ledger.Rental, any, error) {
		return r, nil, appendRentalEvent(ctx, tx, j, r, ev)
	})
}

// appendRentalEvent checks ev against the history of r (loaded in this
// transaction), stores it as action j's (a release also frees r's name)
// and appends it to r: the new event is all that changed.
func appendRentalEvent(ctx context.Context, tx querier, j journal, r *ledger.Rental, ev ledger.Event) error {
	if err := r.CheckEvent(ev); err != nil {
		return err
	}
	var err error
	if ev.ID, err = addEvent(ctx, tx, r.ID, j.id, ev); err != nil {
		return err
	}
	if ev.Kind != ledger.EventPrice {
		ev.Price = ledger.Price{} // stored only for price changes
	}
	if ev.Kind == ledger.EventRelease {
		if _, err := tx.ExecContext(ctx, `UPDATE rentals SET released = 1 WHERE id = ?`, r.ID); err != nil {
			return fmt.Errorf("sqlite: release %s: %w", r.Name, err)
		}
	}
	ev.RecordedAt = j.at
	r.Events = append(r.Events, ev)
	return nil
}

// SetPriceAt records a price change ev at a time in the past of the
// user's rental called name (the unreleased one, or else the latest
// released one), checked with Rental.CheckPriceAt: it corrects the rate
// from the time it applied, before later events or after the release. It
// is journaled as a price change; Undo removes it. Errors: EINVALID (a time
// outside the rental's life, a bad price), ENOTFOUND, EDUPLICATE.
func (rt *Rentals) SetPriceAt(ctx context.Context, a ledger.Action, name string, ev ledger.Event) (*ledger.Rental, error) {
	ev.At = sec(ev.At)
	ev.ID = 0
	return changeRental(ctx, rt.db, a, ledger.ActionPrice, name, func(tx *wtx, j journal, r *ledger.Rental) (*ledger.Rental, any, error) {
		if err := r.CheckPriceAt(ev); err != nil {
			return nil, nil, err
		}
		var err error
		if ev.ID, err = addEvent(ctx, tx, r.ID, j.id, ev); err != nil {
			return nil, nil, err
		}
		ev.RecordedAt = j.at
		r.InsertEvent(ev)
		return r, nil, nil
	})
}

// SetTraffic sets the traffic terms of the user's rental called name (the
// unreleased one, or else the latest released one: a traffic bill may come
// after the release). An empty direction means out. The previous terms are
// journaled for Undo. Errors: EINVALID, ENOTFOUND, EDUPLICATE.
func (rt *Rentals) SetTraffic(ctx context.Context, a ledger.Action, name string, t ledger.TrafficTerms) (*ledger.Rental, error) {
	if err := validateTraffic(&t); err != nil {
		return nil, err
	}
	return changeRental(ctx, rt.db, a, ledger.ActionTraffic, name, func(tx *wtx, j journal, r *ledger.Rental) (*ledger.Rental, any, error) {
		if err := writeTraffic(ctx, tx, r.ID, t); err != nil {
			return nil, nil, err
		}
		prev := trafficPrev(r.Traffic)
		r.Traffic = t
		return r, prev, nil
	})
}

// trafficPrev is TrafficTerms as journaled (Decimals marshal as text).
type trafficPrev ledger.TrafficTerms

func writeTraffic(ctx context.Context, tx querier, rentalID int64, t ledger.TrafficTerms) error {
	_, err := tx.ExecContext(ctx, `UPDATE rentals SET traffic_priced = ?, traffic_price_per_gb = ?, traffic_free_gb = ?,
		traffic_direction = ? WHERE id = ?`,
		boolInt(t.Priced), t.PricePerGB.String(), t.FreeGB.String(), string(t.Direction), rentalID)
	if err != nil {
		return fmt.Errorf("sqlite: set traffic terms: %w", err)
	}
	return nil
}

func restoreTraffic(ctx context.Context, tx querier, rentalID int64, prev string) error {
	var p trafficPrev
	if err := json.Unmarshal([]byte(prev), &p); err != nil {
		return fmt.Errorf("sqlite: undo traffic: decode previous value: %w", err)
	}
	t := ledger.TrafficTerms(p)
	return writeTraffic(ctx, tx, rentalID, t)
}

// SetTrafficPriceAt records a change of the traffic price per GB of the
// user's rental called name (the unreleased one, or else the latest
// released one: the traffic bill often comes later) from p.At on
// (truncated to seconds): traffic used before it is billed at the old
// price, from it on at p's, until a later change. The allowance and the
// charged direction stay the rental's. currency, if set, must be the
// rental's. Undo removes the change. Errors: EINVALID
// (Rental.CheckTrafficPriceAt's: before the start, in the future, unpriced
// traffic, a negative price; currency_mismatch), ENOTFOUND, EDUPLICATE.
func (rt *Rentals) SetTrafficPriceAt(ctx context.Context, a ledger.Action, name string, currency ledger.Currency, p ledger.TrafficPrice) (*ledger.Rental, error) {
	p.At, p.ID = sec(p.At), 0
	return changeRental(ctx, rt.db, a, ledger.ActionTraffic, name, func(tx *wtx, j journal, r *ledger.Rental) (*ledger.Rental, any, error) {
		if currency != "" && currency != r.Currency {
			return nil, nil, ledger.Errorc(ledger.EINVALID, "currency_mismatch", r.Name, r.Currency, currency)
		}
		if err := r.CheckTrafficPriceAt(p, j.at); err != nil {
			return nil, nil, err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO traffic_prices (rental_id, action_id, at, price_per_gb) VALUES (?, ?, ?, ?)`,
			r.ID, j.id, unix(p.At), p.PricePerGB.String())
		if err != nil {
			return nil, nil, fmt.Errorf("sqlite: record traffic price: %w", err)
		}
		if p.ID, err = res.LastInsertId(); err != nil {
			return nil, nil, fmt.Errorf("sqlite: record traffic price: %w", err)
		}
		i := len(r.TrafficPrices)
		for i > 0 && r.TrafficPrices[i-1].At.After(p.At) {
			i--
		}
		r.TrafficPrices = append(r.TrafficPrices[:i], append([]ledger.TrafficPrice{p}, r.TrafficPrices[i:]...)...)
		return r, nil, nil
	})
}

// AddTraffic records traffic usage for the user's rental called name (the
// unreleased one, or else the latest released one). A zero u.At means the
// action's time; an empty direction means out. Errors: EINVALID (no
// bytes, a time before the rental started), ENOTFOUND, EDUPLICATE.
func (rt *Rentals) AddTraffic(ctx context.Context, a ledger.Action, name string, u ledger.TrafficUsage) (*ledger.Rental, error) {
	if u.Bytes <= 0 {
		return nil, ledger.Errorc(ledger.EINVALID, "traffic_positive", u.Bytes, name)
	}
	if u.Direction == "" {
		u.Direction = ledger.Out
	}
	if u.Direction != ledger.In && u.Direction != ledger.Out {
		return nil, ledger.Errorc(ledger.EINVALID, "traffic_in_out", u.Direction, name)
	}
	return changeRental(ctx, rt.db, a, ledger.ActionTrafficUsage, name, func(tx *wtx, j journal, r *ledger.Rental) (*ledger.Rental, any, error) {
		at := sec(u.At)
		if at.IsZero() {
			at = j.at
		}
		if start := r.StartedAt(); at.Before(start) {
			return nil, nil, ledger.Errorc(ledger.EINVALID, "traffic_before_start", at, name, start)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO traffic_usage (rental_id, action_id, at, bytes, direction) VALUES (?, ?, ?, ?, ?)`,
			r.ID, j.id, unix(at), u.Bytes, string(u.Direction))
		if err != nil {
			return nil, nil, fmt.Errorf("sqlite: record traffic: %w", err)
		}
		after, err := loadRental(ctx, tx, r.ID)
		return after, nil, err
	})
}

// Rental returns the user's rental called name: the unreleased one, or
// else the most recently created released one. Errors: ENOTFOUND.
func (rt *Rentals) Rental(ctx context.Context, userID int64, name string) (*ledger.Rental, error) {
	return findRental(ctx, rt.db.reader, userID, name)
}

// RentalsNamed returns every rental of the user called name (a bare
// name: an address is refused with EINVALID), released or not, in
// creation order: what the chat needs to tell them apart by address.
func (rt *Rentals) RentalsNamed(ctx context.Context, userID int64, name string) ([]*ledger.Rental, error) {
	if ledger.IsRentalRef(name) {
		return nil, ledger.Errorc(ledger.EINVALID, "bad_name", name)
	}
	return rentalsNamed(ctx, rt.db.reader, userID, name)
}

// RentalsByState returns the user's rentals whose current state is one
// of states (all rentals if none is given), in creation order.
func (rt *Rentals) RentalsByState(ctx context.Context, userID int64, states ...ledger.State) ([]*ledger.Rental, error) {
	where := `r.user_id = ?`
	want := map[ledger.State]bool{}
	for _, s := range states {
		want[s] = true
	}
	if len(states) > 0 && !want[ledger.Released] {
		where += ` AND r.released = 0`
	}
	var rs []*ledger.Rental
	err := rt.db.withRead(ctx, func(tx *sql.Tx) error {
		var err error
		rs, err = loadRentals(ctx, tx, where, userID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(states) == 0 {
		return rs, nil
	}
	out := rs[:0]
	for _, r := range rs {
		if want[r.State()] {
			out = append(out, r)
		}
	}
	return out, nil
}

// LiveRentals returns every user's unreleased rentals, ordered by user
// and creation, for the scheduler's idle, silent and lease checks.
func (rt *Rentals) LiveRentals(ctx context.Context) ([]*ledger.Rental, error) {
	var rs []*ledger.Rental
	err := rt.db.withRead(ctx, func(tx *sql.Tx) error {
		var err error
		rs, err = loadRentals(ctx, tx, `r.released = 0`)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(rs, func(a, b *ledger.Rental) int { return cmp.Compare(a.UserID, b.UserID) })
	return rs, nil
}

// RentalByID returns any rental by id. Errors: ENOTFOUND.
func (rt *Rentals) RentalByID(ctx context.Context, id int64) (*ledger.Rental, error) {
	var r *ledger.Rental
	err := rt.db.withRead(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = loadRental(ctx, tx, id)
		return err
	})
	return r, err
}
