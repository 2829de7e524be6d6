package bot

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
	allowed := []string{"name", "size", "price", "free", "rental", "platform", "at"}
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
		if err := onlyFor("delete", "free", "rental", "platform"); err != nil {
			return nil, err
		}
		return StorageDeleteCmd{Volume: vol, At: p.at}, nil
	case "resize":
		if prcSrc != "" {
			return nil, p.err("unexpected", quote(prcSrc), "storage resize")
		}
		if err := onlyFor("resize", "free", "rental", "platform"); err != nil {
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
		if err := onlyFor("price", "free", "rental", "platform"); err != nil {
			return nil, err
		}
		sp, ok := parseStoragePrice(prcSrc)
		if !ok {
			return nil, p.err("bad_storage_price", quote(prcSrc))
		}
		if sp.Amount.Sign() < 0 {
			return nil, p.err("price_negative", quote(prcSrc))
		}
		return StorageSetPriceCmd{Volume: vol, Price: sp, At: p.at}, nil
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
	}
	if v, ok := p.kv["free"]; ok {
		d, ok := parseSize(v)
		if !ok {
			return nil, p.err("bad_size", quote(v))
		}
		c.FreeGB, c.FreeSet = d, true
	}
	if v, ok := p.kv["rental"]; ok {
		if c.Rental, err = p.name(v); err != nil {
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
	return c, nil
}
