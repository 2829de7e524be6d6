package bot

import (
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// --- /rent -------------------------------------------------------------------

// knownPlatform returns the profile key of a platform the ledger knows,
// by any of the names in its profile table.
func knownPlatform(s string) (string, bool) {
	return ledger.CanonicalPlatform(s)
}

// platform normalises a platform name: a known alias, or the user's own
// name in lower case (which must be a valid name).
func (p *parser) platform(v string) (string, error) {
	if k, ok := knownPlatform(v); ok {
		return k, nil
	}
	if ledger.ValidateName(v) != nil {
		return "", p.err("bad_platform", quote(v))
	}
	return strings.ToLower(v), nil
}

func (p *parser) rent(toks []string) (Command, error) {
	allowed := []string{"name", "platform", "gpu", "count", "price", "mode", "min", "step", "floor", "currency", "for", "at"}
	if err := p.split(toks, allowed, true, "for"); err != nil {
		return nil, err
	}
	var (
		r         Rent
		gpuSrc    string
		priceSrc  string
		unitGiven bool
		mode      modeInfo
		modeSrc   string
		free      []string
		perCard   bool // the price is per card: "each", "1.64/gpu/h"
	)
	setGPU := func(v string) error {
		m, n, ok := parseGPU(v)
		if !ok {
			return p.err("bad_gpu", quote(v))
		}
		if n == 0 {
			return p.err("bad_count", quote(v))
		}
		if gpuSrc != "" {
			return p.err("twice", noun("GPU"), quote(gpuSrc), quote(v))
		}
		r.GPU, r.GPUCount, gpuSrc = m, n, v
		return nil
	}
	setPrice := func(v string) error {
		pv, each := cutPerCardPrice(v)
		ps, ok := parseComputePrice(pv)
		if !ok {
			return p.err("bad_price", quote(v))
		}
		if ps.Amount.Sign() < 0 {
			return p.err("price_negative", quote(v))
		}
		if priceSrc != "" {
			return p.err("twice", noun("price"), quote(priceSrc), quote(v))
		}
		r.Price, priceSrc = &ps, v
		unitGiven = strings.Contains(pv, "/") || strings.Contains(pv, "每")
		perCard = perCard || each
		return nil
	}
	setMode := func(v string) error {
		m, ok := parseMode(v)
		if !ok {
			return p.err("unexpected", quote(v), string(p.kind))
		}
		if modeSrc != "" {
			return p.err("twice", noun("mode"), quote(modeSrc), quote(v))
		}
		mode, modeSrc = m, v
		return nil
	}
	for _, w := range p.words {
		if perCardWord(w) {
			perCard = true
			continue
		}
		if _, ok := parseMode(w); ok {
			if err := setMode(w); err != nil {
				return nil, err
			}
			continue
		}
		if _, _, ok := parseGPU(w); ok {
			if err := setGPU(w); err != nil {
				return nil, err
			}
			continue
		}
		if _, ok := parseComputePrice(w); ok || looksLikePrice(w) || strings.Contains(w, "/") {
			if err := setPrice(w); err != nil {
				return nil, err
			}
			continue
		}
		if k, ok := knownPlatform(w); ok && r.Platform == "" {
			r.Platform = k
			continue
		}
		if looksLikeTime(w) {
			return nil, p.err("bad_time", quote(w))
		}
		if ledger.ValidateName(w) != nil {
			return nil, p.err("bad_name", quote(w))
		}
		free = append(free, w)
	}
	for _, k := range []string{"gpu", "price", "mode"} {
		v, ok := p.kv[k]
		if !ok {
			continue
		}
		var err error
		switch k {
		case "gpu":
			err = setGPU(v)
		case "price":
			err = setPrice(v)
		case "mode":
			err = setMode(v)
		}
		if err != nil {
			return nil, err
		}
	}
	// Free words: NAME, then PLATFORM when no known platform was seen.
	if v, ok := p.kv["name"]; ok {
		free = append([]string{v}, free...)
	}
	if v, ok := p.kv["platform"]; ok {
		if r.Platform != "" {
			return nil, p.err("twice", noun("platform"), quote(r.Platform), quote(v))
		}
		pl, err := p.platform(v)
		if err != nil {
			return nil, err
		}
		r.Platform = pl
	}
	if len(free) > 0 {
		n, err := p.name(free[0])
		if err != nil {
			return nil, err
		}
		r.Name = n
		free = free[1:]
	}
	if len(free) > 0 && r.Platform == "" {
		pl, err := p.platform(free[0])
		if err != nil {
			return nil, err
		}
		r.Platform = pl
		free = free[1:]
	}
	if len(free) > 0 {
		return nil, p.err("unexpected", quote(free[0]), string(p.kind))
	}
	switch {
	case r.Name == "":
		return nil, p.err("missing_name", string(p.kind))
	case r.Platform == "":
		return nil, p.err("missing_platform", string(p.kind))
	case r.GPU == "":
		return nil, p.err("missing_gpu", string(p.kind))
	}
	if v, ok := p.kv["count"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			return nil, p.err("bad_count", quote(v))
		}
		if r.GPUCount != 1 && r.GPUCount != n {
			return nil, p.err("twice", noun("count"), quote(gpuSrc), quote(v))
		}
		r.GPUCount = n
	}
	if perCard {
		// The ledger bills one price for the whole rental.
		if r.Price == nil {
			return nil, p.err("missing_price", string(p.kind))
		}
		total, ok := mulCount(r.Price.Amount, r.GPUCount)
		if !ok {
			return nil, p.err("bad_price", quote(priceSrc))
		}
		r.Price.Amount = total
	}
	r.Mode = mode.mode
	if mode.pkg != "" && r.Price != nil {
		switch {
		case !unitGiven:
			r.Price.Unit = mode.pkg
		case r.Price.Unit != mode.pkg:
			return nil, p.err("package_unit", quote(modeSrc), noun(string(mode.pkg)), noun(string(r.Price.Unit)))
		}
	}
	var err error
	if r.Min, err = p.durKV("min", time.Second, 31*24*time.Hour, "1s..31d"); err != nil {
		return nil, err
	}
	if r.Step, err = p.durKV("step", time.Second, 31*24*time.Hour, "1s..31d"); err != nil {
		return nil, err
	}
	if r.Lease, err = p.durKV("for", time.Minute, 366*24*time.Hour, "1m..366d"); err != nil {
		return nil, err
	}
	if v, ok := p.kv["floor"]; ok {
		a, ok := parseAmount(v)
		if !ok {
			return nil, p.err("bad_amount", quote(v))
		}
		if a.Value.Sign() < 0 {
			return nil, p.err("amount_positive", quote(v))
		}
		r.Floor = &a.Value
		if err := p.mergeCurrency(&r.Currency, a.Currency, v); err != nil {
			return nil, err
		}
	}
	if r.Price != nil {
		if err := p.mergeCurrency(&r.Currency, r.Price.Currency, priceSrc); err != nil {
			return nil, err
		}
	}
	if v, ok := p.kv["currency"]; ok {
		c, err := ledger.ParseCurrency(v)
		if err != nil {
			return nil, p.err("bad_currency", quote(v))
		}
		if err := p.mergeCurrency(&r.Currency, c, v); err != nil {
			return nil, err
		}
	}
	r.At = p.at
	return r, nil
}
