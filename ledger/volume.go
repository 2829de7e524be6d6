package ledger

import "time"

// StorageUnit is the unit a storage price is quoted in.
type StorageUnit string

// Storage price units, per GB (10^9 bytes as the platforms quote them) and time.
const (
	PerGBHour  StorageUnit = "gb_hour"
	PerGBDay   StorageUnit = "gb_day"
	PerGBMonth StorageUnit = "gb_month" // 30 days
)

// Seconds returns the time part of u in seconds, or 0 if u is unknown.
func (u StorageUnit) Seconds() int64 {
	switch u {
	case PerGBHour:
		return 3600
	case PerGBDay:
		return 86400
	case PerGBMonth:
		return 30 * 86400
	}
	return 0
}

// VolumeEventKind is the kind of a storage volume event.
type VolumeEventKind string

// Volume event kinds.
const (
	VolumeCreate VolumeEventKind = "create"
	VolumeResize VolumeEventKind = "resize"
	VolumeDelete VolumeEventKind = "delete"
)

// VolumeEvent is a change in a volume: its creation with a size, a resize
// (a new billing segment) or its deletion.
type VolumeEvent struct {
	ID     int64
	Kind   VolumeEventKind
	At     time.Time
	SizeGB Decimal // for create and resize
}

// Volume is a storage volume billed by size and time in every instance
// state, from creation to deletion.
type Volume struct {
	ID         int64
	UserID     int64
	Name       string
	RentalID   int64  // attached rental, 0 if none
	RentalName string // for display; filled by the store
	Platform   string
	Currency   Currency
	Priced     bool
	Price      Decimal // per GB per PriceUnit
	PriceUnit  StorageUnit
	// StoppedPrice, when HasStoppedPrice, is the price per GB per
	// PriceUnit while the attached rental is stopped or released (RunPod
	// bills a stopped pod's volume disk at twice the running rate, and its
	// container disk not at all). Without it, or without a rental, Price
	// applies in every state.
	StoppedPrice    Decimal
	HasStoppedPrice bool
	FreeGB          Decimal       // size not billed
	Events          []VolumeEvent // in order; Events[0] is the create
	// Prices are the later changes of the price terms, in time order (a
	// change recorded later comes after one at the same time): a platform
	// changed its storage price, or the volume moved to another tier.
	// Price, PriceUnit and the stopped price above apply from creation
	// until the first of them.
	Prices    []VolumePrice
	CreatedAt time.Time

	// Owner and Project as a Rental's (a volume attached to a rental takes
	// the rental's owner and project unless given).
	Owner   int64
	Project string
}

// VolumePrice is a volume's price terms from At on, until the next
// change. The stopped rate changes with it: a tier or tariff change sets
// both rates, so a change without HasStoppedPrice bills Price in every
// state.
type VolumePrice struct {
	ID              int64
	At              time.Time
	Price           Decimal // per GB per PriceUnit
	PriceUnit       StorageUnit
	StoppedPrice    Decimal
	HasStoppedPrice bool
}

// volumePriceSlack is how far past now a price change may lie: clocks
// differ, and the parser accepts as much.
const volumePriceSlack = 5 * time.Minute

// CheckPriceAt reports whether p may be recorded as a change of v's price
// terms at p.At, now being the store's clock: v must have a price (the
// terms from creation come first), and p.At must lie inside v's life,
// after its creation, before its deletion and not in the future.
func (v *Volume) CheckPriceAt(p VolumePrice, now time.Time) error {
	if p.At.IsZero() {
		return Errorc(EINVALID, "no_time")
	}
	if len(v.Events) == 0 {
		return Errorc(EINVALID, "no_volume", v.Name)
	}
	if !v.Priced {
		return Errorc(EINVALID, "volume_price_unpriced", v.Name)
	}
	if created := v.Events[0].At; p.At.Before(created) {
		return Errorc(EINVALID, "volume_price_before_create", p.At, v.Name, created)
	}
	if end, deleted := v.Deleted(); deleted && !p.At.Before(end) {
		return Errorc(EINVALID, "volume_price_after_delete", p.At, v.Name, end)
	}
	if p.At.After(now.Add(volumePriceSlack)) {
		return Errorc(EINVALID, "volume_price_future", p.At, now)
	}
	return checkStorageTerms(p.PriceUnit, p.Price, p.HasStoppedPrice, p.StoppedPrice)
}

// checkStorageTerms checks a storage price's unit and that its running
// and stopped rates are not negative: a volume's first terms and each
// change of them.
func checkStorageTerms(unit StorageUnit, price Decimal, hasStopped bool, stopped Decimal) error {
	if unit.Seconds() == 0 {
		return Errorc(EINVALID, "bad_storage_unit", unit)
	}
	if price.Sign() < 0 {
		return Errorc(EINVALID, "storage_negative", price)
	}
	if hasStopped && stopped.Sign() < 0 {
		return Errorc(EINVALID, "stopped_negative", stopped)
	}
	return nil
}

// PriceAt returns the price terms in force at t: the last change at or
// before t, or else the terms from creation (ID 0, At the creation).
func (v *Volume) PriceAt(t time.Time) VolumePrice {
	for i := len(v.Prices) - 1; i >= 0; i-- {
		if !v.Prices[i].At.After(t) {
			return v.Prices[i]
		}
	}
	return v.firstPrice()
}

// firstPrice returns the terms from v's creation.
func (v *Volume) firstPrice() VolumePrice {
	p := VolumePrice{Price: v.Price, PriceUnit: v.PriceUnit, StoppedPrice: v.StoppedPrice, HasStoppedPrice: v.HasStoppedPrice}
	if len(v.Events) > 0 {
		p.At = v.Events[0].At
	}
	return p
}

// Deleted returns the deletion time and true if the volume was deleted.
func (v *Volume) Deleted() (time.Time, bool) {
	if n := len(v.Events); n > 0 && v.Events[n-1].Kind == VolumeDelete {
		return v.Events[n-1].At, true
	}
	return time.Time{}, false
}

// SizeGB returns the current size.
func (v *Volume) SizeGB() Decimal {
	var s Decimal
	for _, e := range v.Events {
		if e.Kind != VolumeDelete {
			s = e.SizeGB
		}
	}
	return s
}

// MaxSizeGB bounds a volume at 10 PB: anything above is a typo. The
// parser refuses a larger size too. Read it; never assign it.
var MaxSizeGB = MustDecimal("10000000")

// CheckEvent reports whether ev may be appended to v's history.
func (v *Volume) CheckEvent(ev VolumeEvent) error {
	if ev.At.IsZero() {
		return Errorc(EINVALID, "no_time")
	}
	if ev.Kind == VolumeCreate || ev.Kind == VolumeResize {
		if ev.SizeGB.Sign() < 0 || ev.SizeGB.Cmp(MaxSizeGB) > 0 {
			return Errorc(EINVALID, "bad_volume_size", ev.SizeGB, MaxSizeGB)
		}
	}
	if len(v.Events) == 0 {
		if ev.Kind != VolumeCreate {
			return Errorc(EINVALID, "no_volume", v.Name)
		}
		return nil
	}
	if last := v.Events[len(v.Events)-1]; ev.At.Before(last.At) {
		return Errorc(EINVALID, "volume_before_last", ev.Kind, ev.At, v.Name, last.At)
	}
	if _, deleted := v.Deleted(); deleted {
		return Errorc(ECONFLICT, "volume_deleted", v.Name)
	}
	if ev.Kind == VolumeCreate {
		return Errorc(ECONFLICT, "volume_exists", v.Name)
	}
	return nil
}

// Validate checks a new volume's fixed terms.
func (v *Volume) Validate() error {
	if err := ValidateName(v.Name); err != nil {
		return err
	}
	if v.Priced {
		if err := checkStorageTerms(v.PriceUnit, v.Price, v.HasStoppedPrice, v.StoppedPrice); err != nil {
			return err
		}
	}
	if v.FreeGB.Sign() < 0 {
		return Errorc(EINVALID, "free_negative", v.FreeGB)
	}
	if v.Currency == "" {
		return Errorc(EINVALID, "volume_no_currency", v.Name)
	}
	return nil
}
