package command

import (
	"math/big"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// KindQuote is /quote: the whole bill of a rental before it is made.
const KindQuote Kind = "quote"

// QuoteCmd asks what a rental would cost on each platform the user has a
// price for: /quote GPU HOURS [storage=SIZE] [stopped=HOURS]
// [traffic=SIZE] [price=AMOUNT] [platform=NAME] [MODE].
type QuoteCmd struct {
	GPU      string // normalised model ("RTX 4090"), or the word as written for a model the parser does not know
	GPUCount int    // ≥ 1
	Running  time.Duration
	Stopped  time.Duration // stopped=; 0 none
	// StorageGB is storage=; nil: the size of the user's own past rental.
	StorageGB *ledger.Decimal
	TrafficGB ledger.Decimal // traffic=; 0 none
	// Price is price=, per GPU (the unit a platform lists); nil none.
	Price *PriceSpec
	// Platform is platform= or a known platform's name: where Price
	// applies; without a price, the one platform quoted. "" none.
	Platform string
	Mode     ledger.Mode // a mode word for Price; "" the platform's
}

// Kind returns KindQuote.
func (QuoteCmd) Kind() Kind { return KindQuote }

// quoteHoursMax bounds HOURS and stopped=: a year.
const quoteHoursMax = ledger.MaxQuoteHours * time.Hour

// quote reads /quote: the GPU (a model the parser knows, with a count, or
// any word), HOURS (a number of hours or a duration), then the options.
func (p *parser) quote(toks []string) (Command, error) {
	allowed := []string{"gpu", "hours", "storage", "stopped", "traffic", "price", "platform", "mode"}
	if err := p.split(toks, allowed, false); err != nil {
		return nil, err
	}
	var c QuoteCmd
	var gpuSrc, hoursSrc, priceSrc, platSrc, modeSrc string
	for _, w := range p.words {
		lw := strings.ToLower(w)
		_, _, isGPU := parseGPU(lw)
		_, isMode := parseMode(lw)
		_, isPlat := knownPlatform(w)
		switch {
		case isMode:
			if err := p.setOnce("mode", &modeSrc, w); err != nil {
				return nil, err
			}
		case isPlat && !isGPU:
			if err := p.setOnce("platform", &platSrc, w); err != nil {
				return nil, err
			}
		case isGPU && gpuSrc == "":
			gpuSrc = w
		case looksLikePrice(w):
			if err := p.setOnce("price", &priceSrc, w); err != nil {
				return nil, err
			}
		case looksLikeHours(w):
			if err := p.setOnce("hours", &hoursSrc, w); err != nil {
				return nil, err
			}
		case gpuSrc == "":
			gpuSrc = w
		default:
			return nil, p.err("unexpected", quote(w), string(p.kind))
		}
	}
	for _, f := range []struct {
		key string
		src *string
	}{{"gpu", &gpuSrc}, {"hours", &hoursSrc}, {"price", &priceSrc}, {"platform", &platSrc}, {"mode", &modeSrc}} {
		if err := p.fromKV(f.key, f.src); err != nil {
			return nil, err
		}
	}
	if gpuSrc == "" {
		return nil, p.err("quote_missing_gpu")
	}
	if m, n, ok := parseGPU(gpuSrc); ok {
		if n == 0 {
			return nil, p.err("bad_count", append([]string{quote(gpuSrc)}, countBoundsArgs()...)...)
		}
		c.GPU, c.GPUCount = m, n
	} else {
		if ledger.ValidateName(gpuSrc) != nil {
			return nil, p.err("bad_gpu", quote(gpuSrc))
		}
		c.GPU, c.GPUCount = gpuSrc, 1
	}
	if hoursSrc == "" {
		return nil, p.err("quote_missing_hours", gpuSrc)
	}
	var err error
	if c.Running, err = p.quoteHours(hoursSrc, false); err != nil {
		return nil, err
	}
	if v, ok := p.kv["stopped"]; ok {
		if c.Stopped, err = p.quoteHours(v, true); err != nil {
			return nil, err
		}
	}
	if v, ok := p.kv["storage"]; ok {
		d, ok := parseSize(v)
		if !ok {
			return nil, p.err("bad_size", quote(v))
		}
		c.StorageGB = &d
	}
	if v, ok := p.kv["traffic"]; ok {
		d, ok := parseSize(v)
		if !ok {
			return nil, p.err("bad_size", quote(v))
		}
		c.TrafficGB = d
	}
	if priceSrc != "" {
		ps, ok := parseComputePrice(priceSrc)
		if !ok {
			return nil, p.err("bad_price", quote(priceSrc))
		}
		if ps.Amount.Sign() < 0 {
			return nil, p.err("price_negative", quote(priceSrc))
		}
		c.Price = &ps
	}
	if platSrc != "" {
		if c.Platform, err = p.platform(platSrc); err != nil {
			return nil, err
		}
	}
	if modeSrc != "" {
		m, ok := parseMode(modeSrc)
		if !ok {
			return nil, p.err("unexpected", quote(modeSrc), string(p.kind))
		}
		c.Mode = m.mode
		if m.pkg != "" && c.Price != nil && c.Price.Unit != m.pkg {
			return nil, p.err("package_unit", quote(modeSrc), noun(string(m.pkg)), noun(string(c.Price.Unit)))
		}
	}
	if c.Mode != "" && c.Price == nil {
		// How a price is billed says nothing without the price.
		return nil, p.err("quote_needs_price", quote(modeSrc))
	}
	return c, nil
}

// looksLikeHours reports whether w begins like HOURS, with a number
// ("10", "2.5h", "90m", "3天"), so a malformed one gets the hours' error.
func looksLikeHours(w string) bool {
	_, _, ok := cutNumber(strings.TrimPrefix(strings.ToLower(w), "-"))
	return ok
}

// quoteHours reads HOURS or stopped=: a number of hours ("10", "2.5") or
// a duration ("90m", "1d12h"), above 0 (0 allowed for stopped=) and at
// most a year.
func (p *parser) quoteHours(v string, zeroOK bool) (time.Duration, error) {
	var d time.Duration
	if x, err := ledger.ParseDecimal(v); err == nil {
		if x.Sign() < 0 || x.Cmp(ledger.DecimalFromInt(ledger.MaxQuoteHours)) > 0 {
			return 0, p.err("quote_hours_range", quote(v))
		}
		secs := x.Rat()
		secs.Mul(secs, big.NewRat(3600, 1))
		d = time.Duration(new(big.Int).Quo(secs.Num(), secs.Denom()).Int64()) * time.Second
	} else if pd, ok := parseDur(v); ok {
		d = pd
	} else if num, rest, ok := cutNumber(v); strings.HasPrefix(v, "-") || ok && rest == "" && num != "" {
		// A negative or a number too large for a decimal.
		return 0, p.err("quote_hours_range", quote(v))
	} else {
		return 0, p.err("quote_bad_hours", quote(v))
	}
	if d > quoteHoursMax || d <= 0 && !(zeroOK && d == 0) {
		return 0, p.err("quote_hours_range", quote(v))
	}
	return d, nil
}
