package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/gpuledger/gpuledger/ledger"
)

const volumeCols = `v.id, v.user_id, v.name, v.rental_id, coalesce(r.name, ''), v.platform, v.currency, v.priced,
	v.price, v.price_unit, v.free_gb, v.stopped_price, v.created_at, v.owner, v.project`

// loadVolumes returns the volumes selected by where (a condition on the
// volumes table aliased v) in id order with their events, in two queries.
func loadVolumes(ctx context.Context, q querier, where string, args ...any) ([]*ledger.Volume, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+volumeCols+` FROM volumes v LEFT JOIN rentals r ON r.id = v.rental_id
		WHERE `+where+` ORDER BY v.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load volumes: %w", err)
	}
	var out []*ledger.Volume
	byID := map[int64]*ledger.Volume{}
	for rows.Next() {
		var (
			v                             ledger.Volume
			rentalID                      sql.NullInt64
			currency, price, unit, freeGB string
			stoppedPrice                  sql.NullString
			createdAt                     int64
		)
		if err := rows.Scan(&v.ID, &v.UserID, &v.Name, &rentalID, &v.RentalName, &v.Platform, &currency, &v.Priced,
			&price, &unit, &freeGB, &stoppedPrice, &createdAt, &v.Owner, &v.Project); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: load volumes: %w", err)
		}
		v.RentalID = rentalID.Int64
		v.Currency = ledger.Currency(currency)
		v.PriceUnit = ledger.StorageUnit(unit)
		v.CreatedAt = fromUnix(createdAt)
		if v.Price, err = dec(price, "volumes.price"); err != nil {
			rows.Close()
			return nil, err
		}
		if v.FreeGB, err = dec(freeGB, "volumes.free_gb"); err != nil {
			rows.Close()
			return nil, err
		}
		if stoppedPrice.Valid {
			v.HasStoppedPrice = true
			if v.StoppedPrice, err = dec(stoppedPrice.String, "volumes.stopped_price"); err != nil {
				rows.Close()
				return nil, err
			}
		}
		out = append(out, &v)
		byID[v.ID] = &v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load volumes: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	rows, err = q.QueryContext(ctx, `SELECT volume_id, id, kind, at, size_gb FROM volume_events
		WHERE volume_id IN (SELECT v.id FROM volumes v WHERE `+where+`) ORDER BY volume_id, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load volume events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			vid, at int64
			ev      ledger.VolumeEvent
			kind    string
			size    sql.NullString
		)
		if err := rows.Scan(&vid, &ev.ID, &kind, &at, &size); err != nil {
			return nil, fmt.Errorf("sqlite: load volume events: %w", err)
		}
		ev.Kind = ledger.VolumeEventKind(kind)
		ev.At = fromUnix(at)
		if size.Valid {
			if ev.SizeGB, err = dec(size.String, "volume_events.size_gb"); err != nil {
				return nil, err
			}
		}
		if v := byID[vid]; v != nil {
			v.Events = append(v.Events, ev)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load volume events: %w", err)
	}
	rows.Close()
	if err := loadVolumePrices(ctx, q, byID, where, args...); err != nil {
		return nil, err
	}
	return out, nil
}

// loadVolumePrices appends to the volumes in byID their price changes,
// in time order and, at the same time, in the order they were recorded.
func loadVolumePrices(ctx context.Context, q querier, byID map[int64]*ledger.Volume, where string, args ...any) error {
	rows, err := q.QueryContext(ctx, `SELECT volume_id, id, at, price, price_unit, stopped_price FROM volume_prices
		WHERE volume_id IN (SELECT v.id FROM volumes v WHERE `+where+`) ORDER BY volume_id, at, id`, args...)
	if err != nil {
		return fmt.Errorf("sqlite: load volume prices: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			vid, at      int64
			p            ledger.VolumePrice
			price, unit  string
			stoppedPrice sql.NullString
		)
		if err := rows.Scan(&vid, &p.ID, &at, &price, &unit, &stoppedPrice); err != nil {
			return fmt.Errorf("sqlite: load volume prices: %w", err)
		}
		p.At, p.PriceUnit = fromUnix(at), ledger.StorageUnit(unit)
		if p.Price, err = dec(price, "volume_prices.price"); err != nil {
			return err
		}
		if stoppedPrice.Valid {
			p.HasStoppedPrice = true
			if p.StoppedPrice, err = dec(stoppedPrice.String, "volume_prices.stopped_price"); err != nil {
				return err
			}
		}
		if v := byID[vid]; v != nil {
			v.Prices = append(v.Prices, p)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: load volume prices: %w", err)
	}
	return nil
}

// findVolume returns the user's volume called name: the live one, or else
// the most recently created deleted one. ENOTFOUND if there is none.
func findVolume(ctx context.Context, q querier, userID int64, name string) (*ledger.Volume, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM volumes WHERE user_id = ? AND name = ?
		ORDER BY deleted, id DESC LIMIT 1`, userID, name).Scan(&id)
	if err == sql.ErrNoRows {
		return nil, ledger.Errorc(ledger.ENOTFOUND, "no_volume_named", name)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: find volume %s: %w", name, err)
	}
	vs, err := loadVolumes(ctx, q, `v.id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("sqlite: volume %d vanished", id)
	}
	return vs[0], nil
}

func insertVolumeEvent(ctx context.Context, tx querier, volumeID, actionID int64, ev ledger.VolumeEvent) error {
	var size sql.NullString
	if ev.Kind != ledger.VolumeDelete {
		size = sql.NullString{String: ev.SizeGB.String(), Valid: true}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO volume_events (volume_id, action_id, kind, at, size_gb) VALUES (?, ?, ?, ?, ?)`,
		volumeID, actionID, string(ev.Kind), unix(ev.At), size)
	if err != nil {
		return fmt.Errorf("sqlite: record volume %s: %w", ev.Kind, err)
	}
	return nil
}

// CreateVolume stores a new volume for a.UserID whose Events hold exactly
// its creation (time truncated to seconds). v.RentalName, if set, names
// the user's rental it is attached to (the unreleased one, or else the
// latest released one); an empty Platform or Currency is then taken from
// that rental. Errors: EINVALID, ENOTFOUND (user or rental), ECONFLICT if
// a live volume of the user has the same name, EDUPLICATE.
func (vols *Volumes) CreateVolume(ctx context.Context, a ledger.Action, v ledger.Volume) (*ledger.Volume, error) {
	if len(v.Events) != 1 || v.Events[0].Kind != ledger.VolumeCreate {
		return nil, ledger.Errorf(ledger.EINVALID, "a new volume needs exactly one event, its creation with a size")
	}
	create := v.Events[0]
	create.At = sec(create.At)
	if err := (&ledger.Volume{Name: v.Name}).CheckEvent(create); err != nil {
		return nil, err
	}
	if err := ledger.ValidProject(v.Project); err != nil {
		return nil, err
	}
	return journaled(ctx, vols.db, a, ledger.ActionStorage, v.Name, func(tx *wtx, j journal) (*ledger.Volume, error) {
		var rentalID int64
		var owner int64
		if v.RentalName != "" {
			r, err := findRental(ctx, tx, j.userID, v.RentalName)
			if err != nil {
				return nil, err
			}
			rentalID = r.ID
			if v.Platform == "" {
				v.Platform = r.Platform
			}
			if v.Currency == "" {
				v.Currency = r.Currency
			}
			if v.Owner, err = attachedOwner(ctx, tx, a, r, v.Name, v.Owner); err != nil {
				return nil, err
			}
			if v.Project == "" {
				v.Project = r.Project
			}
			owner = v.Owner
		} else {
			var err error
			if owner, err = newOwner(ctx, tx, a, v.Name, v.Owner); err != nil {
				return nil, err
			}
		}
		if err := v.Validate(); err != nil {
			return nil, err
		}
		conflict := fmt.Sprintf("a volume named %s already exists (delete it first or choose another name)", v.Name)
		var one int
		switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM volumes WHERE user_id = ? AND name = ? AND deleted = 0`,
			j.userID, v.Name).Scan(&one); err {
		case nil:
			return nil, ledger.Errorf(ledger.ECONFLICT, "%s", conflict)
		case sql.ErrNoRows:
		default:
			return nil, fmt.Errorf("sqlite: check volume name: %w", err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO volumes (user_id, action_id, name, rental_id, platform, currency,
			priced, price, price_unit, free_gb, stopped_price, created_at, owner, project)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			j.userID, j.id, v.Name, nullID(rentalID), v.Platform, string(v.Currency), boolInt(v.Priced),
			v.Price.String(), string(v.PriceUnit), v.FreeGB.String(), stoppedPriceArg(v), unix(j.at), owner, v.Project)
		if err != nil {
			return nil, constraintError(err, "create volume", conflict)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, fmt.Errorf("sqlite: create volume: %w", err)
		}
		if err := insertVolumeEvent(ctx, tx, id, j.id, create); err != nil {
			return nil, err
		}
		if err := j.target(ctx, tx, 0, id, nil); err != nil {
			return nil, err
		}
		return reloadVolume(ctx, tx, id)
	})
}

// AppendVolumeEvent resizes or deletes the user's live volume called name
// (time truncated to seconds), checked with Volume.CheckEvent. Errors:
// EINVALID, ECONFLICT (a volume that was deleted), ENOTFOUND, EDUPLICATE.
func (vols *Volumes) AppendVolumeEvent(ctx context.Context, a ledger.Action, name string, ev ledger.VolumeEvent) (*ledger.Volume, error) {
	ev.At = sec(ev.At)
	ev.ID = 0
	var kind ledger.ActionKind
	switch ev.Kind {
	case ledger.VolumeResize:
		kind = ledger.ActionStorageResize
	case ledger.VolumeDelete:
		kind = ledger.ActionStorageDelete
	case ledger.VolumeCreate:
		kind = ledger.ActionStorage // CheckEvent rejects it below
	default:
		return nil, ledger.Errorc(ledger.EINVALID, "bad_volume_event", ev.Kind)
	}
	return changeVolume(ctx, vols.db, a, kind, name, func(tx *wtx, j journal, v *ledger.Volume) (*ledger.Volume, any, error) {
		if err := v.CheckEvent(ev); err != nil {
			return nil, nil, err
		}
		if err := insertVolumeEvent(ctx, tx, v.ID, j.id, ev); err != nil {
			return nil, nil, err
		}
		if ev.Kind == ledger.VolumeDelete {
			if _, err := tx.ExecContext(ctx, `UPDATE volumes SET deleted = 1 WHERE id = ?`, v.ID); err != nil {
				return nil, nil, fmt.Errorf("sqlite: delete volume %s: %w", name, err)
			}
		}
		after, err := reloadVolume(ctx, tx, v.ID)
		return after, nil, err
	})
}

// Volume returns the user's volume called name: the live one, or else the
// most recently created deleted one. Errors: ENOTFOUND.
func (vols *Volumes) Volume(ctx context.Context, userID int64, name string) (*ledger.Volume, error) {
	var v *ledger.Volume
	err := vols.db.withRead(ctx, func(tx *sql.Tx) error {
		var err error
		v, err = findVolume(ctx, tx, userID, name)
		return err
	})
	return v, err
}

// stoppedPriceArg is v's stopped price for the stopped_price column: NULL
// when it has none, so Price applies in every state.
func stoppedPriceArg(v ledger.Volume) any {
	if !v.HasStoppedPrice {
		return nil
	}
	return v.StoppedPrice.String()
}

// volumePrev is a volume's price terms as journaled for Undo (Decimals
// marshal as text).
type volumePrev struct {
	Priced          bool
	Price           ledger.Decimal
	PriceUnit       ledger.StorageUnit
	Currency        ledger.Currency
	StoppedPrice    ledger.Decimal
	HasStoppedPrice bool
}

func priceOf(v *ledger.Volume) volumePrev {
	return volumePrev{v.Priced, v.Price, v.PriceUnit, v.Currency, v.StoppedPrice, v.HasStoppedPrice}
}

func writeVolumePrice(ctx context.Context, tx querier, volumeID int64, p volumePrev) error {
	v := ledger.Volume{StoppedPrice: p.StoppedPrice, HasStoppedPrice: p.HasStoppedPrice}
	_, err := tx.ExecContext(ctx, `UPDATE volumes SET priced = ?, price = ?, price_unit = ?, currency = ?, stopped_price = ?
		WHERE id = ?`, boolInt(p.Priced), p.Price.String(), string(p.PriceUnit), string(p.Currency), stoppedPriceArg(v), volumeID)
	if err != nil {
		return fmt.Errorf("sqlite: set volume price: %w", err)
	}
	return nil
}

func restoreVolumePrice(ctx context.Context, tx querier, volumeID int64, prev string) error {
	var p volumePrev
	if err := json.Unmarshal([]byte(prev), &p); err != nil {
		return fmt.Errorf("sqlite: undo storage price: decode previous value: %w", err)
	}
	return writeVolumePrice(ctx, tx, volumeID, p)
}

// SetVolumePrice sets or corrects the price terms of the user's volume
// called name (the live one, or else the latest deleted one: the bill
// often comes later) from p's Priced, Price, PriceUnit, Currency and
// stopped price; its other fields are ignored. The new terms apply from
// the volume's creation until its first later change (SetVolumePriceAt),
// or for its whole life if it has none. The previous terms are journaled
// for Undo. Errors: EINVALID (Volume.Validate's messages, a currency
// other than an attached rental's), ENOTFOUND, EDUPLICATE.
func (vols *Volumes) SetVolumePrice(ctx context.Context, a ledger.Action, name string, p ledger.Volume) (*ledger.Volume, error) {
	return changeVolume(ctx, vols.db, a, ledger.ActionStoragePrice, name, func(tx *wtx, _ journal, v *ledger.Volume) (*ledger.Volume, any, error) {
		return setFirstVolumePrice(ctx, tx, v, p)
	})
}

// setFirstVolumePrice replaces v's terms from its creation with p's and
// returns the old ones, for the journal to keep for Undo.
func setFirstVolumePrice(ctx context.Context, tx querier, v *ledger.Volume, p ledger.Volume) (*ledger.Volume, any, error) {
	next := *v
	next.Priced, next.Price, next.PriceUnit = p.Priced, p.Price, p.PriceUnit
	next.StoppedPrice, next.HasStoppedPrice = p.StoppedPrice, p.HasStoppedPrice
	if p.Currency != "" && p.Currency != v.Currency {
		if v.RentalID != 0 {
			return nil, nil, ledger.Errorf(ledger.EINVALID, "volume %s is billed in %s with its rental, not %s: give the price in %s",
				v.Name, v.Currency, p.Currency, v.Currency)
		}
		next.Currency = p.Currency
	}
	if err := next.Validate(); err != nil {
		return nil, nil, err
	}
	if err := writeVolumePrice(ctx, tx, v.ID, priceOf(&next)); err != nil {
		return nil, nil, err
	}
	return &next, priceOf(v), nil
}

// SetVolumePriceAt records a change of the price terms of the user's
// volume called name (the live one, or else the latest deleted one) from
// p.At on (truncated to seconds): the old terms bill before it, p's after,
// until a later change. A change at the volume's creation corrects its
// first price, as SetVolumePrice does. currency, if set, must be the
// volume's: the terms change, the currency does not. Undo removes the
// change. Errors: EINVALID (Volume.CheckPriceAt's: before the creation,
// not before the deletion, in the future, an unpriced volume; a bad unit
// or a negative price; currency_mismatch), ENOTFOUND, EDUPLICATE.
func (vols *Volumes) SetVolumePriceAt(ctx context.Context, a ledger.Action, name string, currency ledger.Currency, p ledger.VolumePrice) (*ledger.Volume, error) {
	p.At, p.ID = sec(p.At), 0
	return changeVolume(ctx, vols.db, a, ledger.ActionStoragePrice, name, func(tx *wtx, j journal, v *ledger.Volume) (*ledger.Volume, any, error) {
		if currency != "" && currency != v.Currency {
			return nil, nil, ledger.Errorc(ledger.EINVALID, "currency_mismatch", v.Name, v.Currency, currency)
		}
		if err := v.CheckPriceAt(p, j.at); err != nil {
			return nil, nil, err
		}
		if p.At.Equal(v.Events[0].At) {
			first := ledger.Volume{Priced: true, Price: p.Price, PriceUnit: p.PriceUnit,
				StoppedPrice: p.StoppedPrice, HasStoppedPrice: p.HasStoppedPrice}
			return setFirstVolumePrice(ctx, tx, v, first)
		}
		var stopped any
		if p.HasStoppedPrice {
			stopped = p.StoppedPrice.String()
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO volume_prices (volume_id, action_id, at, price, price_unit, stopped_price)
			VALUES (?, ?, ?, ?, ?, ?)`, v.ID, j.id, unix(p.At), p.Price.String(), string(p.PriceUnit), stopped); err != nil {
			return nil, nil, fmt.Errorf("sqlite: record volume price: %w", err)
		}
		after, err := reloadVolume(ctx, tx, v.ID)
		return after, nil, err
	})
}
