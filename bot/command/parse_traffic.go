package command

import (
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// --- /traffic ----------------------------------------------------------------

var directionWords = map[string]ledger.Direction{
	"out": ledger.Out, "egress": ledger.Out, "出": ledger.Out, "出站": ledger.Out, "上行": ledger.Out, "出网": ledger.Out,
	"in": ledger.In, "ingress": ledger.In, "入": ledger.In, "入站": ledger.In, "下行": ledger.In, "入网": ledger.In,
	"both": ledger.Both, "双向": ledger.Both, "all": ledger.Both,
}

func (p *parser) traffic(toks []string) (Command, error) {
	allowed := []string{"name", "price", "free", "direction", "amount", "at"}
	if err := p.split(toks, allowed, true); err != nil {
		return nil, err
	}
	var (
		rest           []string
		amtSrc, prcSrc string
		dir            ledger.Direction
		dirSrc         string
	)
	setDir := func(w string) error {
		d, ok := directionWords[strings.ToLower(w)]
		if !ok {
			return p.err("bad_direction", quote(w))
		}
		if dirSrc != "" {
			return p.err("twice", noun("direction"), quote(dirSrc), quote(w))
		}
		dir, dirSrc = d, w
		return nil
	}
	for _, w := range p.words {
		switch {
		case directionWords[strings.ToLower(w)] != "":
			if err := setDir(w); err != nil {
				return nil, err
			}
		case strings.Contains(w, "/") || looksLikePrice(w):
			if err := p.setOnce("price", &prcSrc, w); err != nil {
				return nil, err
			}
		case looksLikeSize(w) || isBareNumber(w):
			if err := p.setOnce("amount", &amtSrc, w); err != nil {
				return nil, err
			}
		default:
			rest = append(rest, w)
		}
	}
	if v, ok := p.kv["direction"]; ok {
		if err := setDir(v); err != nil {
			return nil, err
		}
	}
	if err := p.fromKV("price", &prcSrc); err != nil {
		return nil, err
	}
	if err := p.fromKV("amount", &amtSrc); err != nil {
		return nil, err
	}
	p.words = rest
	n, err := p.oneRental()
	if err != nil {
		return nil, err
	}
	if prcSrc != "" {
		if amtSrc != "" {
			return nil, p.err("unexpected", quote(amtSrc), string(p.kind))
		}
		amt, cur, ok := parseTrafficPrice(prcSrc)
		if !ok {
			return nil, p.err("bad_traffic_price", quote(prcSrc))
		}
		if amt.Sign() < 0 {
			return nil, p.err("price_negative", quote(prcSrc))
		}
		if p.atSrc != "" {
			// From a time on only the price changes: the allowance and the
			// charged direction are the rental's terms.
			if v, ok := p.kv["free"]; ok {
				return nil, p.err("unexpected", quote("free="+v), string(p.kind)+" price= at")
			}
			if dirSrc != "" {
				return nil, p.err("unexpected", quote(dirSrc), string(p.kind)+" price= at")
			}
			return TrafficTermsCmd{Name: n, PricePerGB: amt, Currency: cur, At: p.at}, nil
		}
		t := TrafficTermsCmd{Name: n, PricePerGB: amt, Currency: cur, Direction: dir}
		if v, ok := p.kv["free"]; ok {
			d, ok := parseSize(v)
			if !ok {
				return nil, p.err("bad_size", quote(v))
			}
			t.FreeGB, t.FreeSet = d, true
		}
		return t, nil
	}
	if amtSrc == "" {
		return nil, p.err("missing_traffic")
	}
	if v, ok := p.kv["free"]; ok {
		return nil, p.err("unexpected", quote("free="+v), string(p.kind))
	}
	d, ok := parseSize(amtSrc)
	if !ok {
		return nil, p.err("bad_size", quote(amtSrc))
	}
	if dir == ledger.Both {
		return nil, p.err("bad_direction", quote(dirSrc))
	}
	if dir == "" {
		dir = ledger.Out
	}
	return TrafficUsageCmd{Name: n, SizeGB: d, Direction: dir, At: p.at}, nil
}
