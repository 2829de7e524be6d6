package bot

import (
	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// money is the family of the money around the rentals: /charge, /topup
// and /balance, a platform's account rather than a rental's bill.
type money struct{ *req }

func (money) register(t *table) {
	on(t, money.charge)
	on(t, money.topup)
	on(t, money.balance)
}

func (r money) balance(c command.BalanceCmd) error {
	if !c.Set {
		return r.showBalances()
	}
	return r.recordBalance(c)
}

// charge records a one-off charge on a rental, or on a platform when the
// user has no rental of that name: a volume's charge on the volume's
// platform. A name that is none of the user's is held (typo.go).
func (r money) charge(c command.ChargeCmd) error {
	x, err := r.named(c.Target)
	if err != nil && ledger.ErrorCode(err) != ledger.ENOTFOUND {
		return err
	}
	ch := ledger.Charge{UserID: r.ledgerID, Amount: c.Amount.Value, Currency: c.Amount.Currency, Note: c.Note, At: r.at(c.At)}
	rentalName, volume := "", ""
	if x != nil {
		if err := sameCurrency(ch.Currency, x.Currency, x.Name); err != nil {
			return err
		}
		// The name as written: an address must reach the same rental.
		rentalName, ch.Currency, ch.Platform = c.Target, x.Currency, x.Platform
		if ref := r.olderAt(c.Target, x, ch.At); ref != "" {
			// Dated before this one started, while an earlier one of the
			// name ran: that one is meant, and must be named.
			return ledger.Errorc(ledger.EINVALID, "ref_other_then", x.Name, ch.At, ref)
		}
	} else if p, ok := ledger.LookupProfile(c.Target); ok {
		ch.Platform = p.Key
		if ch.Currency == "" {
			ch.Currency = p.Currency
		}
	} else {
		// Neither a rental nor a known platform: a volume's, a platform
		// the user has, or a typo (typo.go) that must not create a name.
		b, err := r.book()
		if err != nil {
			return err
		}
		ch.Platform = c.Target
		if v := volumeNamed(b, c.Target); v != nil {
			if err := sameCurrency(ch.Currency, v.Currency, v.Name); err != nil {
				return err
			}
			ch.Currency, volume = v.Currency, v.Name
			if v.Platform != "" {
				ch.Platform = v.Platform
			}
		} else {
			c.At = ch.At
			if asked, err := r.checkTarget(b, c.Target, func(t string) command.Command { d := c; d.Target = t; return d }); asked || err != nil {
				return err
			}
		}
	}
	assumed := false
	if ch.Currency == "" {
		ch.Currency, assumed = r.defaultCurrency(nil), true
	}
	ch.Project = c.Project
	if rentalName == "" {
		// On a rental it takes the rental's owner and project (the store's).
		if ch.Project, err = r.project(c.Project); err != nil {
			return err
		}
	}
	got, err := r.c.store.AddCharge(r.ctx, r.act(), rentalName, ch)
	if err != nil {
		return r.otherAt(err, rentalName, ch.At)
	}
	target, took := got.Platform, ""
	if rentalName != "" {
		target, took = r.shown(rentalName, x), r.tookNote(rentalName, x)
	} else if volume != "" && volume != got.Platform {
		target = volume + " (" + got.Platform + ")"
	}
	text := r.t("charged", view.FormatAmount(got.Amount, got.Currency), target, got.Note)
	if !c.At.IsZero() {
		text += r.t("charged_at", r.when(got.At))
	}
	return r.send(r.plain(r.assumedNote(text, assumed, got.Currency) + took + r.refLine(got.Ref)))
}

// platformCurrency is the currency of money recorded for a platform: the
// one given, else the profile's, else that of the user's last balance or
// rental there (the only case that reads the user's ledger), else the
// default (assumed).
func (r money) platformCurrency(platform string, given ledger.Currency) (string, ledger.Currency, bool, error) {
	if p, ok := ledger.LookupProfile(platform); ok {
		platform = p.Key
		if given == "" {
			given = p.Currency
		}
	}
	if given != "" {
		return platform, given, false, nil
	}
	b, err := r.book()
	if err != nil {
		return "", "", false, err
	}
	for i := len(b.Balances) - 1; i >= 0; i-- {
		if b.Balances[i].Platform == platform {
			return platform, b.Balances[i].Currency, false, nil
		}
	}
	for i := len(b.Rentals) - 1; i >= 0; i-- {
		if b.Rentals[i].Platform == platform {
			return platform, b.Rentals[i].Currency, false, nil
		}
	}
	return platform, r.defaultCurrency(b), true, nil
}

// platformMoney records money on a platform (a top-up or a balance) in
// the platform's currency and answers with what write says.
func (r money) platformMoney(platform string, amount command.Amount, write func(plat string, cur ledger.Currency) (string, error)) error {
	plat, cur, assumed, err := r.platformCurrency(platform, amount.Currency)
	if err != nil {
		return err
	}
	text, err := write(plat, cur)
	if err != nil {
		return err
	}
	return r.send(r.plain(r.assumedNote(text, assumed, cur)))
}

func (r money) topup(c command.TopupCmd) error {
	c.At = r.at(c.At)
	if asked, err := r.checkPlatform(c.Platform, func(p string) command.Command { d := c; d.Platform = p; return d }); asked || err != nil {
		return err
	}
	return r.platformMoney(c.Platform, c.Amount, func(plat string, cur ledger.Currency) (string, error) {
		t, err := r.c.store.AddTopUp(r.ctx, r.act(), ledger.TopUp{UserID: r.ledgerID, Platform: plat, Amount: c.Amount.Value, Currency: cur, At: r.at(c.At)})
		if err != nil {
			return "", err
		}
		return r.t("topped_up", view.FormatAmount(t.Amount, t.Currency), view.PlatformWord(r.lang, t.Platform)) + r.refLine(t.Ref), nil
	})
}

func (r money) recordBalance(c command.BalanceCmd) error {
	c.At = r.at(c.At)
	if asked, err := r.checkPlatform(c.Platform, func(p string) command.Command { d := c; d.Platform = p; return d }); asked || err != nil {
		return err
	}
	return r.platformMoney(c.Platform, c.Amount, func(plat string, cur ledger.Currency) (string, error) {
		rec, err := r.c.store.RecordBalance(r.ctx, r.act(), ledger.BalanceRecord{UserID: r.ledgerID, Platform: plat, Amount: c.Amount.Value, Currency: cur, At: r.at(c.At)})
		if err != nil {
			return "", err
		}
		return r.t("balance_set", view.PlatformWord(r.lang, rec.Platform), view.FormatAmount(rec.Amount, rec.Currency), r.when(rec.At)) + r.refLine(rec.Ref), nil
	})
}

func (r money) showBalances() error {
	b, err := r.book()
	if err != nil {
		return err
	}
	text := view.Balances(b, r.now, r.lang)
	if text == "" {
		text = r.t("balances_none")
	}
	return r.answer(r.plain(text))
}
