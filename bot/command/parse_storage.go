package command

import (
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// --- /storage ----------------------------------------------------------------

var (
	resizeWords = []string{"resize", "扩容", "缩容", "调整", "改大小"}
	deleteWords = []string{"delete", "del", "rm", "remove", "删除", "删"}
)

func (p *parser) storage(toks []string) (Command, error) {
	allowed := []string{"name", "size", "price", "stopped", "free", "rental", "platform", "at", "project"}
	if err := p.split(toks, allowed, true); err != nil {
		return nil, err
	}
	op := ""
	var (
		rest            []string
		sizeSrc, prcSrc string
	)
	for _, w := range p.words {
		lw := strings.ToLower(w)
		switch {
		case contains(resizeWords, lw) || contains(deleteWords, lw):
			o := "resize"
			if contains(deleteWords, lw) {
				o = "delete"
			}
			if op != "" {
				return nil, p.err("twice", noun("operation"), quote(op), quote(w))
			}
			op = o
		case strings.Contains(w, "/") || looksLikePrice(w):
			if err := p.setOnce("price", &prcSrc, w); err != nil {
				return nil, err
			}
		case looksLikeSize(w) || isBareNumber(w) && !strings.ContainsAny(w, "$¥￥€"):
			if err := p.setOnce("size", &sizeSrc, w); err != nil {
				return nil, err
			}
		default:
			rest = append(rest, w)
		}
	}
	if err := p.fromKV("size", &sizeSrc); err != nil {
		return nil, err
	}
	if err := p.fromKV("price", &prcSrc); err != nil {
		return nil, err
	}
	p.words = rest
	vol, err := p.oneName()
	if err != nil {
		return nil, err
	}
	size := func() (ledger.Decimal, error) {
		if sizeSrc == "" {
			return ledger.Decimal{}, p.err("missing_size", string(p.kind))
		}
		d, ok := parseSize(sizeSrc)
		if !ok {
			return ledger.Decimal{}, p.err("bad_size", quote(sizeSrc))
		}
		return d, nil
	}
	onlyFor := func(what string, keys ...string) error {
		for _, k := range keys {
			if v, ok := p.kv[k]; ok {
				return p.err("unexpected", quote(k+"="+v), string(p.kind)+" "+what)
			}
		}
		return nil
	}
	switch op {
	case "delete":
		if sizeSrc != "" || prcSrc != "" {
			return nil, p.err("unexpected", quote(sizeSrc+prcSrc), "storage delete")
		}
		if err := onlyFor("delete", "free", "rental", "platform", "stopped", "project"); err != nil {
			return nil, err
		}
		return StorageDeleteCmd{Volume: vol, At: p.at}, nil
	case "resize":
		if prcSrc != "" {
			return nil, p.err("unexpected", quote(prcSrc), "storage resize")
		}
		if err := onlyFor("resize", "free", "rental", "platform", "stopped", "project"); err != nil {
			return nil, err
		}
		d, err := size()
		if err != nil {
			return nil, err
		}
		return StorageResizeCmd{Volume: vol, SizeGB: d, At: p.at}, nil
	}
	if sizeSrc == "" && prcSrc != "" {
		// A price without a size prices the existing volume.
		if err := onlyFor("price", "free", "rental", "platform", "project"); err != nil {
			return nil, err
		}
		sp, ok := parseStoragePrice(prcSrc)
		if !ok {
			return nil, p.err("bad_storage_price", quote(prcSrc))
		}
		if sp.Amount.Sign() < 0 {
			return nil, p.err("price_negative", quote(prcSrc))
		}
		stopped, err := p.stoppedRate(sp)
		if err != nil {
			return nil, err
		}
		return StorageSetPriceCmd{Volume: vol, Price: sp, Stopped: stopped, At: p.at}, nil
	}
	if prcSrc == "" {
		if err := onlyFor("without a price", "stopped"); err != nil {
			return nil, err
		}
	}
	c := StorageCreateCmd{Volume: vol, At: p.at}
	if c.SizeGB, err = size(); err != nil {
		return nil, err
	}
	if prcSrc != "" {
		sp, ok := parseStoragePrice(prcSrc)
		if !ok {
			return nil, p.err("bad_storage_price", quote(prcSrc))
		}
		if sp.Amount.Sign() < 0 {
			return nil, p.err("price_negative", quote(prcSrc))
		}
		c.Price = &sp
		if c.Stopped, err = p.stoppedRate(sp); err != nil {
			return nil, err
		}
	}
	if v, ok := p.kv["free"]; ok {
		d, ok := parseSize(v)
		if !ok {
			return nil, p.err("bad_size", quote(v))
		}
		c.FreeGB, c.FreeSet = d, true
	}
	if v, ok := p.kv["rental"]; ok {
		if c.Rental, err = p.rentalName(v); err != nil {
			return nil, err
		}
	}
	if v, ok := p.kv["platform"]; ok {
		if c.Rental != "" {
			// The rental's platform is the volume's: two would disagree.
			return nil, p.err("unexpected", quote("platform="+v), string(p.kind)+" rental=")
		}
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, p.err("unexpected", quote("platform="), string(p.kind))
		}
		// As /rent, /topup and /balance name it, so the volume is on the
		// platform its top-ups are under.
		pl, err := p.platform(v)
		if err != nil {
			return nil, err
		}
		c.Platform = pl
	}
	if c.Project, err = p.projectKV(); err != nil {
		return nil, err
	}
	return c, nil
}

// storageUnitText writes a storage unit as the user types it.
var storageUnitText = map[ledger.StorageUnit]string{
	ledger.PerGBHour: "/GB/h", ledger.PerGBDay: "/GB/day", ledger.PerGBMonth: "/GB/month",
}

// stoppedRate reads stopped=PRICE, the rate while the volume's rental is
// stopped or released, in price's unit and currency: a bare amount takes
// them, one written with a unit must use price's (the ledger keeps both
// rates in one unit). nil when stopped= is not given.
func (p *parser) stoppedRate(price StoragePrice) (*ledger.Decimal, error) {
	v, ok := p.kv["stopped"]
	if !ok {
		return nil, nil
	}
	sp, ok := parseStoragePrice(v)
	if !ok {
		a, isAmount := parseAmount(v)
		if !isAmount {
			return nil, p.err("bad_storage_price", quote(v))
		}
		sp = StoragePrice{Amount: a.Value, Unit: price.Unit, Currency: a.Currency}
	}
	if sp.Unit != price.Unit {
		return nil, p.err("stopped_unit", quote("stopped="+v), storageUnitText[price.Unit])
	}
	if sp.Currency != "" && price.Currency != "" && sp.Currency != price.Currency {
		return nil, p.err("currency_conflict", string(sp.Currency), string(price.Currency))
	}
	if sp.Amount.Sign() < 0 {
		return nil, p.err("price_negative", quote(v))
	}
	return &sp.Amount, nil
}
