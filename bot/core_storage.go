package bot

// The commands about what a rental bills besides compute: /storage (a
// volume, its price, resizes and deletion) and /traffic (its price and
// usage).

import (
	"math/big"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

func (r *req) storageCreate(c StorageCreateCmd) error {
	v := ledger.Volume{
		UserID:     r.u.UserID,
		Name:       c.Volume,
		RentalName: c.Rental,
		FreeGB:     c.FreeGB,
		Events:     []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: r.at(c.At), SizeGB: c.SizeGB}},
	}
	if c.Price != nil {
		v.Priced, v.Price, v.PriceUnit, v.Currency = true, c.Price.Amount, c.Price.Unit, c.Price.Currency
		if c.Stopped != nil {
			v.HasStoppedPrice, v.StoppedPrice = true, *c.Stopped
		}
	}
	platform := c.Platform
	if c.Rental != "" {
		x, err := r.liveRental(c.Rental, v.Currency)
		if err != nil {
			return err
		}
		v.Platform, v.Currency = x.Platform, x.Currency
		platform = x.Platform
	}
	// The platform's profile fills what the user left out, its usual
	// price included; the reply says so, with how to use another.
	var fromProfile *ledger.Profile
	if p, ok := ledger.LookupProfile(platform); ok {
		if p.ApplyVolume(&v) {
			fromProfile = &p
		}
	} else if platform != "" {
		v.Platform = platform
	}
	if c.FreeSet {
		v.FreeGB = c.FreeGB
	}
	assumed := false
	if v.Currency == "" {
		v.Currency, assumed = r.defaultCurrency(nil), true
	}
	created, err := r.c.store.CreateVolume(r.ctx, r.act(), v)
	if err != nil {
		return err
	}
	price := "UNPRICED"
	if created.Priced {
		price = r.storagePriceText(created.Price, created.StoppedPrice, created.HasStoppedPrice, created.PriceUnit, created.Currency)
	}
	text := r.t("volume_created", created.Name, created.SizeGB().String(), price, created.FreeGB.String(), r.when(created.Events[0].At))
	if created.RentalName != "" {
		text += r.t("volume_attached", created.RentalName)
	}
	if fromProfile != nil {
		text += "\n" + r.t("volume_price_profile", fromProfile.Name, created.Name, created.SizeGB().String())
	}
	if !created.Priced {
		// An UNPRICED volume is left out of every total: say so, with the
		// command that prices it from its creation.
		plat := created.Platform
		if plat == "" {
			plat = r.t("unpriced_this_volume")
		}
		cmd, ex := view.PriceCommand(ledger.UnpricedLine{Category: ledger.CategoryStorage, Volume: created})
		text += r.t("volume_unpriced_how", plat, created.Name, cmd, ex)
	}
	text = r.assumedNote(text, assumed && created.Priced, created.Currency)
	return r.send(r.plain(text))
}

// storagePrice sets or corrects an existing volume's price: with at, the
// terms change from that time on (the old price bills before it); without,
// the price from its creation is corrected (up to its first later change).
// /undo restores the old terms.
func (r *req) storagePrice(c StorageSetPriceCmd) error {
	if !c.At.IsZero() {
		p := ledger.VolumePrice{At: c.At, Price: c.Price.Amount, PriceUnit: c.Price.Unit}
		if c.Stopped != nil {
			p.HasStoppedPrice, p.StoppedPrice = true, *c.Stopped
		}
		got, err := r.c.store.SetVolumePriceAt(r.ctx, r.act(), c.Volume, c.Price.Currency, p)
		if err != nil {
			return err
		}
		price := r.storagePriceText(p.Price, p.StoppedPrice, p.HasStoppedPrice, p.PriceUnit, got.Currency)
		text := r.t("volume_priced_from", got.Name, price, r.when(c.At))
		if before := got.PriceAt(c.At.Add(-time.Second)); before.HasStoppedPrice && !p.HasStoppedPrice {
			text += r.t("volume_price_one_rate")
		}
		return r.send(r.plain(text))
	}
	set := ledger.Volume{Priced: true, Price: c.Price.Amount, PriceUnit: c.Price.Unit, Currency: c.Price.Currency}
	if c.Stopped != nil {
		set.HasStoppedPrice, set.StoppedPrice = true, *c.Stopped
	}
	got, err := r.c.store.SetVolumePrice(r.ctx, r.act(), c.Volume, set)
	if err != nil {
		return err
	}
	price := r.storagePriceText(got.Price, got.StoppedPrice, got.HasStoppedPrice, got.PriceUnit, got.Currency)
	text := r.t("volume_priced", got.Name, price, r.when(got.Events[0].At))
	if len(got.Prices) > 0 {
		text += r.t("volume_priced_until", r.when(got.Prices[0].At))
	}
	return r.send(r.plain(text))
}

// storagePriceText writes a storage price, with its stopped rate if it
// has one.
func (r *req) storagePriceText(price, stopped ledger.Decimal, hasStopped bool, unit ledger.StorageUnit, cur ledger.Currency) string {
	text := view.FormatStoragePrice(price, unit, cur, r.lang)
	if hasStopped {
		text += r.t("volume_price_stopped", view.FormatStoragePrice(stopped, unit, cur, r.lang))
	}
	return text
}

func (r *req) volumeEvent(name string, ev ledger.VolumeEvent) error {
	v, err := r.c.store.AppendVolumeEvent(r.ctx, r.act(), name, ev)
	if err != nil {
		return err
	}
	if ev.Kind == ledger.VolumeDelete {
		return r.send(r.plain(r.t("volume_deleted", v.Name, r.when(ev.At))))
	}
	return r.send(r.plain(r.t("volume_resized", v.Name, ev.SizeGB.String(), r.when(ev.At))))
}

// trafficTerms sets a rental's traffic price, released or not: the
// traffic bill often comes after the release. With at, only the price
// changes, from that time on.
func (r *req) trafficTerms(c TrafficTermsCmd) error {
	x, err := r.named(c.Name)
	if err != nil {
		return err
	}
	if err := sameCurrency(c.Currency, x.Currency, x.Name); err != nil {
		return err
	}
	if !c.At.IsZero() {
		x, err = r.c.store.SetTrafficPriceAt(r.ctx, r.act(), c.Name, c.Currency, ledger.TrafficPrice{At: c.At, PricePerGB: c.PricePerGB})
		if err != nil {
			return err
		}
		return r.send(r.plain(r.t("traffic_priced_from", x.Name, view.FormatAmount(c.PricePerGB, x.Currency), r.when(c.At))))
	}
	terms := ledger.TrafficTerms{Priced: true, PricePerGB: c.PricePerGB, FreeGB: c.FreeGB, Direction: c.Direction}
	// The rental's platform gives the free allowance (AWS's 100 GB a
	// month) unless free= was written, and the charged direction unless
	// one was named.
	prof, known := ledger.LookupProfile(x.Platform)
	if known {
		terms = prof.TrafficDefaults(terms, c.FreeSet)
	} else if terms.Direction == "" {
		terms.Direction = ledger.Out
	}
	x, err = r.c.store.SetTraffic(r.ctx, r.act(), c.Name, terms)
	if err != nil {
		return err
	}
	text := r.t("traffic_priced", x.Name, view.FormatAmount(terms.PricePerGB, x.Currency), terms.FreeGB.String(), string(terms.Direction))
	if known && !c.FreeSet && !terms.FreeGB.IsZero() {
		text += "\n" + r.t("traffic_free_profile", prof.Name, terms.FreeGB.String())
	}
	return r.send(r.plain(text))
}

// gibBytes converts GB as written (the ledger counts GiB, 2^30 bytes) to
// bytes, rounding down to a whole byte.
func gibBytes(gb ledger.Decimal) int64 {
	q := gb.Rat()
	q.Mul(q, new(big.Rat).SetInt64(1<<30))
	return new(big.Int).Quo(q.Num(), q.Denom()).Int64()
}

func (r *req) trafficUsage(c TrafficUsageCmd) error {
	dir := c.Direction
	if dir == "" {
		dir = ledger.Out
	}
	u := ledger.TrafficUsage{At: r.at(c.At), Bytes: gibBytes(c.SizeGB), Direction: dir}
	x, err := r.c.store.AddTraffic(r.ctx, r.act(), c.Name, u)
	if err != nil {
		return err
	}
	text := r.t("traffic_used", x.Name, c.SizeGB.String(), string(dir), r.when(u.At))
	if !x.Traffic.Priced {
		cmd, ex := view.PriceCommand(ledger.UnpricedLine{Category: ledger.CategoryTraffic, Rental: x})
		text += r.t("traffic_unpriced_how", x.Name, cmd, ex)
	}
	return r.send(r.plain(text))
}
