package command

import (
	"strconv"
	"strings"

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

// rent reads /rent NAME PLATFORM GPU PRICE [MODE] [key=value...]: words
// are recognised by their shape in any order, then each step below checks
// and completes the command, first error wins.
func (p *parser) rent(toks []string) (Command, error) {
	allowed := []string{"name", "platform", "gpu", "count", "price", "mode", "min", "step", "floor", "currency", "for", "at", "project"}
	if err := p.split(toks, allowed, true, "for"); err != nil {
		return nil, err
	}
	b := &rentParse{p: p}
	for _, step := range []func() error{
		b.readWords, b.readKeys, b.assignFree, b.required, b.readCount,
		b.totalPerCard, b.applyMode, b.readTerms, b.settleCurrency,
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.r.At = p.at
	var err error
	if b.r.Project, err = p.projectKV(); err != nil {
		return nil, err
	}
	return b.r, nil
}

// rentParse is one /rent being read: the command so far, and what the
// message wrote for each field, so a field given twice names both.
type rentParse struct {
	p         *parser
	r         RentCmd
	gpuSrc    string
	priceSrc  string
	unitGiven bool // the price had a unit ("/h", "每小时")
	mode      modeInfo
	modeSrc   string
	free      []string // words of no recognised shape: NAME, then PLATFORM
	perCard   bool     // the price is per card: "each", "1.64/gpu/h"
}

func (b *rentParse) setGPU(v string) error {
	m, n, ok := parseGPU(v)
	if !ok {
		return b.p.err("bad_gpu", quote(v))
	}
	if n == 0 {
		return b.p.err("bad_count", append([]string{quote(v)}, countBoundsArgs()...)...)
	}
	if b.gpuSrc != "" {
		return b.p.err("twice", noun("GPU"), quote(b.gpuSrc), quote(v))
	}
	b.r.GPU, b.r.GPUCount, b.gpuSrc = m, n, v
	return nil
}

func (b *rentParse) setPrice(v string) error {
	pv, each := cutPerCardPrice(v)
	ps, ok := parseComputePrice(pv)
	if !ok {
		return b.p.err("bad_price", quote(v))
	}
	if ps.Amount.Sign() < 0 {
		return b.p.err("price_negative", quote(v))
	}
	if b.priceSrc != "" {
		return b.p.err("twice", noun("price"), quote(b.priceSrc), quote(v))
	}
	b.r.Price, b.priceSrc = &ps, v
	b.unitGiven = strings.Contains(pv, "/") || strings.Contains(pv, "每")
	b.perCard = b.perCard || each
	return nil
}

func (b *rentParse) setMode(v string) error {
	m, ok := parseMode(v)
	if !ok {
		return b.p.err("unexpected", quote(v), string(b.p.kind))
	}
	if b.modeSrc != "" {
		return b.p.err("twice", noun("mode"), quote(b.modeSrc), quote(v))
	}
	b.mode, b.modeSrc = m, v
	return nil
}

// readWords sorts the positional words by shape: per-card words, a mode,
// a GPU, a price, a known platform; the rest must be valid names. The first
// word is the name, whatever its shape, when the message gives its field
// again (see nameFirst).
func (b *rentParse) readWords() error {
	p := b.p
	for i, w := range p.words {
		if i == 0 && b.nameFirst() {
			b.free = append(b.free, w)
			continue
		}
		if perCardWord(w) {
			b.perCard = true
			continue
		}
		if _, ok := parseMode(w); ok {
			if err := b.setMode(w); err != nil {
				return err
			}
			continue
		}
		if _, _, ok := parseGPU(w); ok {
			if err := b.setGPU(w); err != nil {
				return err
			}
			continue
		}
		if _, ok := parseComputePrice(w); ok || looksLikePrice(w) || strings.Contains(w, "/") {
			if err := b.setPrice(w); err != nil {
				return err
			}
			continue
		}
		if k, ok := knownPlatform(w); ok && b.r.Platform == "" {
			b.r.Platform = k
			continue
		}
		if looksLikeTime(w) {
			return p.err("bad_time", quote(w))
		}
		if ledger.ValidateName(w) != nil {
			return p.err("bad_name", quote(w))
		}
		b.free = append(b.free, w)
	}
	return nil
}

// nameFirst reports whether the first word is the rental's name although
// it is shaped like a GPU, a platform or a mode: the help says /rent NAME
// PLATFORM GPU PRICE, and a box called t4, a10 or lambda is refused as a
// field given twice otherwise. It is the name only when a later word or a
// key gives that same field and it is a valid name; a word shaped like a
// price stays a price, since a number for a name reads as a count or a
// price as easily.
func (b *rentParse) nameFirst() bool {
	p := b.p
	if len(p.words) < 2 || ledger.ValidateName(p.words[0]) != nil {
		return false
	}
	if _, ok := p.kv["name"]; ok {
		return false
	}
	field := rentWordField(p.words[0])
	switch field {
	case "gpu", "platform", "mode":
	default:
		return false
	}
	if _, ok := p.kv[field]; ok {
		return true
	}
	for _, w := range p.words[1:] {
		if rentWordField(w) == field {
			return true
		}
	}
	return false
}

// rentWordField names the field a positional word of /rent fills by its
// shape, in readWords' order: "percard", "mode", "gpu", "price",
// "platform", or "" for a free word.
func rentWordField(w string) string {
	if perCardWord(w) {
		return "percard"
	}
	if _, ok := parseMode(w); ok {
		return "mode"
	}
	if _, _, ok := parseGPU(w); ok {
		return "gpu"
	}
	if _, ok := parseComputePrice(w); ok || looksLikePrice(w) || strings.Contains(w, "/") {
		return "price"
	}
	if _, ok := knownPlatform(w); ok {
		return "platform"
	}
	return ""
}

// readKeys takes gpu=, price= and mode=, which conflict with the same
// field given by a word.
func (b *rentParse) readKeys() error {
	for _, k := range []string{"gpu", "price", "mode"} {
		v, ok := b.p.kv[k]
		if !ok {
			continue
		}
		var err error
		switch k {
		case "gpu":
			err = b.setGPU(v)
		case "price":
			err = b.setPrice(v)
		case "mode":
			err = b.setMode(v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// assignFree gives the free words their meaning: NAME (or name=), then
// PLATFORM when no known platform was seen (or platform=).
func (b *rentParse) assignFree() error {
	p, r := b.p, &b.r
	if v, ok := p.kv["name"]; ok {
		b.free = append([]string{v}, b.free...)
	}
	if v, ok := p.kv["platform"]; ok {
		if r.Platform != "" {
			return p.err("twice", noun("platform"), quote(r.Platform), quote(v))
		}
		pl, err := p.platform(v)
		if err != nil {
			return err
		}
		r.Platform = pl
	}
	if len(b.free) > 0 {
		n, err := p.name(b.free[0])
		if err != nil {
			return err
		}
		r.Name = n
		b.free = b.free[1:]
	}
	if len(b.free) > 0 && r.Platform == "" {
		pl, err := p.platform(b.free[0])
		if err != nil {
			return err
		}
		r.Platform = pl
		b.free = b.free[1:]
	}
	if len(b.free) > 0 {
		return p.err("unexpected", quote(b.free[0]), string(p.kind))
	}
	return nil
}

// required names the first of NAME, PLATFORM and GPU that is missing.
func (b *rentParse) required() error {
	switch {
	case b.r.Name == "":
		return b.p.err("missing_name", string(b.p.kind))
	case b.r.Platform == "":
		return b.p.err("missing_platform", string(b.p.kind))
	case b.r.GPU == "":
		return b.p.err("missing_gpu", string(b.p.kind))
	}
	return nil
}

// readCount takes count=, which must agree with a count in the GPU word
// ("2x4090").
func (b *rentParse) readCount() error {
	v, ok := b.p.kv["count"]
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < ledger.MinGPUCount || n > ledger.MaxGPUCount {
		return b.p.err("bad_count", append([]string{quote(v)}, countBoundsArgs()...)...)
	}
	if b.r.GPUCount != 1 && b.r.GPUCount != n {
		return b.p.err("twice", noun("count"), quote(b.gpuSrc), quote(v))
	}
	b.r.GPUCount = n
	return nil
}

// totalPerCard multiplies a per-card price by the count: the ledger bills
// one price for the whole rental.
func (b *rentParse) totalPerCard() error {
	if !b.perCard {
		return nil
	}
	if b.r.Price == nil {
		return b.p.err("missing_price", string(b.p.kind))
	}
	total, ok := mulCount(b.r.Price.Amount, b.r.GPUCount)
	if !ok {
		return b.p.err("bad_price", quote(b.priceSrc))
	}
	b.r.Price.Amount = total
	return nil
}

// applyMode sets the billing mode; a package ("包月") gives the price its
// unit when none was written, and must agree with one that was.
func (b *rentParse) applyMode() error {
	r := &b.r
	r.Mode = b.mode.mode
	if b.mode.pkg != "" && r.Price != nil {
		switch {
		case !b.unitGiven:
			r.Price.Unit = b.mode.pkg
		case r.Price.Unit != b.mode.pkg:
			return b.p.err("package_unit", quote(b.modeSrc), noun(string(b.mode.pkg)), noun(string(r.Price.Unit)))
		}
	}
	return nil
}

// readTerms takes min=, step=, for= and floor=.
func (b *rentParse) readTerms() error {
	p, r := b.p, &b.r
	var err error
	terms := durBoundsText(ledger.MinBillingTerm, ledger.MaxBillingTerm)
	if r.Min, err = p.durKV("min", ledger.MinBillingTerm, ledger.MaxBillingTerm, terms); err != nil {
		return err
	}
	if r.Step, err = p.durKV("step", ledger.MinBillingTerm, ledger.MaxBillingTerm, terms); err != nil {
		return err
	}
	if r.Lease, err = p.durKV("for", ledger.MinLease, ledger.MaxLease, durBoundsText(ledger.MinLease, ledger.MaxLease)); err != nil {
		return err
	}
	if v, ok := p.kv["floor"]; ok {
		a, ok := parseAmount(v)
		if !ok {
			return p.err("bad_amount", quote(v))
		}
		if a.Value.Sign() < 0 {
			return p.err("amount_positive", quote(v))
		}
		r.Floor = &a.Value
		if err := p.mergeCurrency(&r.Currency, a.Currency, v); err != nil {
			return err
		}
	}
	return nil
}

// settleCurrency merges the currencies of the floor, the price and
// currency=, which must agree.
func (b *rentParse) settleCurrency() error {
	p, r := b.p, &b.r
	if r.Price != nil {
		if err := p.mergeCurrency(&r.Currency, r.Price.Currency, b.priceSrc); err != nil {
			return err
		}
	}
	if v, ok := p.kv["currency"]; ok {
		c, err := ledger.ParseCurrency(v)
		if err != nil {
			return p.err("bad_currency", quote(v))
		}
		if err := p.mergeCurrency(&r.Currency, c, v); err != nil {
			return err
		}
	}
	return nil
}
