package bot

// The commands about what a rental bills besides compute: /storage (a
// volume, its price, resizes and deletion) and /traffic (its price and
// usage).

import (
	"math/big"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// storage is the family of what a rental bills besides compute: /storage
// and /traffic.
type storage struct{ *req }

func (storage) register(t *table) {
	on(t, storage.storageCreate)
	on(t, storage.storageResize)
	on(t, storage.storagePrice)
	on(t, storage.storageDelete)
	on(t, storage.trafficTerms)
	on(t, storage.trafficUsage)
}

func (r storage) storageResize(c command.StorageResizeCmd) error {
	return r.volumeEvent(c.Volume, ledger.VolumeEvent{Kind: ledger.VolumeResize, At: r.at(c.At), SizeGB: c.SizeGB})
}

func (r storage) storageDelete(c command.StorageDeleteCmd) error {
	return r.volumeEvent(c.Volume, ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: r.at(c.At)})
}

func (r storage) storageCreate(c command.StorageCreateCmd) error {
	v := ledger.Volume{
		UserID:     r.ledgerID,
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
	v.Project = c.Project
	if c.Rental == "" {
		// Attached, it takes its rental's owner and project (the store's).
		p, err := r.project(c.Project)
		if err != nil {
			return err
		}
		v.Project = p
	}
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
	if created.FreeGB.Sign() == 0 {
		// No allowance: "free 0GB" says nothing.
		text = r.t("volume_created_nofree", created.Name, created.SizeGB().String(), price, r.when(created.Events[0].At))
	}
	if created.RentalName != "" {
		text += r.t("volume_attached", created.RentalName)
	}
	if fromProfile != nil {
		text += "\n" + r.t("volume_price_profile", view.PlatformName(r.lang, fromProfile.Key), created.Name, created.SizeGB().String())
	}
	if p, ok := ledger.LookupProfile(platform); ok && fromProfile == nil && created.Priced && !created.HasStoppedPrice &&
		p.Storage.HasStoppedPrice && p.Currency == created.Currency {
		// The user's own price is one rate in every state; the platform
		// bills a stopped instance's volume at another: say so.
		stopped := inUnit(p.Storage.StoppedPrice, p.Storage.Unit, created.PriceUnit)
		text += r.t("volume_profile_stopped", view.PlatformName(r.lang, p.Key), view.FormatStoragePrice(p.Storage.StoppedPrice, p.Storage.Unit, created.Currency, r.lang),
			created.Name, storageCmd(created.Name, created.Price, stopped, created.PriceUnit, time.Time{}))
	}
	if !created.Priced {
		// An UNPRICED volume is left out of every total: say so, with the
		// command that prices it from its creation.
		plat := view.PlatformWord(r.lang, created.Platform)
		if created.Platform == "" {
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
func (r storage) storagePrice(c command.StorageSetPriceCmd) error {
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
			stopped := inUnit(before.StoppedPrice, before.PriceUnit, p.PriceUnit)
			text += r.t("volume_price_one_rate") + r.t("volume_price_keep", storageCmd(got.Name, p.Price, stopped, p.PriceUnit, c.At.In(r.loc)))
		}
		return r.send(r.plain(text))
	}
	set := ledger.Volume{Priced: true, Price: c.Price.Amount, PriceUnit: c.Price.Unit, Currency: c.Price.Currency}
	if c.Stopped != nil {
		set.HasStoppedPrice, set.StoppedPrice = true, *c.Stopped
	}
	// The terms before, to say what the correction replaced.
	var old *ledger.Volume
	if b, err := r.book(); err == nil {
		old = volumeNamed(b, c.Volume)
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
	if old != nil && old.Priced && old.HasStoppedPrice && c.Stopped == nil {
		// A price without stopped= is one rate in every state (a tier or
		// tariff sets both), so the stopped rate it had is gone: say so,
		// with the command that keeps it.
		stopped := inUnit(old.StoppedPrice, old.PriceUnit, got.PriceUnit)
		text += r.t("volume_stopped_replaced", view.FormatStoragePrice(old.StoppedPrice, old.PriceUnit, got.Currency, r.lang),
			view.FormatStoragePrice(got.Price, got.PriceUnit, got.Currency, r.lang), storageCmd(got.Name, got.Price, stopped, got.PriceUnit, time.Time{}))
	}
	return r.send(r.plain(text))
}

// storageUnitWords is how a command writes a storage price's unit.
var storageUnitWords = map[ledger.StorageUnit]string{
	ledger.PerGBHour: "/GB/h", ledger.PerGBDay: "/GB/day", ledger.PerGBMonth: "/GB/month",
}

// storageCmd is the /storage command that sets volume vol's price and
// stopped rate, both in unit, from at (zero: from its creation), as the
// parser reads it back.
func storageCmd(vol string, price, stopped ledger.Decimal, unit ledger.StorageUnit, at time.Time) string {
	u := storageUnitWords[unit]
	cmd := "/storage " + vol + " price=" + price.String() + u + " stopped=" + stopped.String() + u
	if !at.IsZero() {
		cmd += " at " + at.Format(commandTimeLayout)
	}
	return cmd
}

// inUnit converts a storage rate from one unit to another: exact where
// the decimal ends, else to six places (a suggestion the user reads).
func inUnit(d ledger.Decimal, from, to ledger.StorageUnit) ledger.Decimal {
	if from == to || from.Seconds() == 0 || to.Seconds() == 0 {
		return d
	}
	q := d.Rat()
	q.Mul(q, big.NewRat(to.Seconds(), from.Seconds()))
	s := q.FloatString(6)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	out, err := ledger.ParseDecimal(s)
	if err != nil {
		return d
	}
	return out
}

// storagePriceText writes a storage price, with its stopped rate if it
// has one.
func (r storage) storagePriceText(price, stopped ledger.Decimal, hasStopped bool, unit ledger.StorageUnit, cur ledger.Currency) string {
	text := view.FormatStoragePrice(price, unit, cur, r.lang)
	if hasStopped {
		text += r.t("volume_price_stopped", view.FormatStoragePrice(stopped, unit, cur, r.lang))
	}
	return text
}

func (r storage) volumeEvent(name string, ev ledger.VolumeEvent) error {
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
func (r storage) trafficTerms(c command.TrafficTermsCmd) error {
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
			return r.otherAt(err, c.Name, c.At)
		}
		return r.send(r.plain(r.t("traffic_priced_from", r.shown(c.Name, x), view.FormatAmount(c.PricePerGB, x.Currency), r.when(c.At)) + r.tookNote(c.Name, x)))
	}
	terms := ledger.TrafficTerms{Priced: true, PricePerGB: c.PricePerGB, FreeGB: c.FreeGB, Direction: c.Direction}
	// A new price of traffic that has one keeps the allowance and the
	// direction set before unless free= or direction= is written: the
	// user changes a price, not the rest of the terms.
	freeSet, kept := c.FreeSet, false
	if x.Traffic.Priced && (!c.FreeSet || c.Direction == "") {
		kept = true
		if !c.FreeSet {
			terms.FreeGB, freeSet = x.Traffic.FreeGB, true
		}
		if terms.Direction == "" {
			terms.Direction = x.Traffic.Direction
		}
	}
	// The rental's platform gives the free allowance (AWS's 100 GB a
	// month) unless free= was written, and the charged direction unless
	// one was named.
	prof, known := ledger.LookupProfile(x.Platform)
	if known {
		terms = prof.TrafficDefaults(terms, freeSet)
	} else if terms.Direction == "" {
		terms.Direction = ledger.Out
	}
	x, err = r.c.store.SetTraffic(r.ctx, r.act(), c.Name, terms)
	if err != nil {
		return err
	}
	text := r.t("traffic_priced", r.shown(c.Name, x), view.FormatAmount(terms.PricePerGB, x.Currency), terms.FreeGB.String(), string(terms.Direction))
	if known && !freeSet && !terms.FreeGB.IsZero() {
		text += "\n" + r.t("traffic_free_profile", view.PlatformName(r.lang, prof.Key), terms.FreeGB.String())
	}
	if kept {
		text += r.t("traffic_terms_kept")
	}
	return r.send(r.plain(text + r.tookNote(c.Name, x)))
}

func (r storage) trafficUsage(c command.TrafficUsageCmd) error {
	dir := c.Direction
	if dir == "" {
		dir = ledger.Out
	}
	u := ledger.TrafficUsage{At: r.at(c.At), Bytes: command.GibBytes(c.SizeGB), Direction: dir}
	x, err := r.c.store.AddTraffic(r.ctx, r.act(), c.Name, u)
	if err != nil {
		return r.otherAt(err, c.Name, u.At)
	}
	text := r.t("traffic_used", r.shown(c.Name, x), c.SizeGB.String(), string(dir), r.when(u.At))
	var ref int64 // the record just made has the newest action of the rental's traffic
	for _, t := range x.TrafficUsage {
		ref = max(ref, t.Ref)
	}
	text += r.refLine(ref)
	if !x.Traffic.Priced {
		line := ledger.UnpricedLine{Category: ledger.CategoryTraffic, Rental: x}
		name := r.shown(c.Name, x)
		if name != x.Name {
			line.Ref = name // the rental as the reply names it
		}
		cmd, ex := view.PriceCommand(line)
		text += r.t("traffic_unpriced_how", name, cmd, ex)
	}
	return r.send(r.plain(text + r.tookNote(c.Name, x)))
}
