package command

import (
	"strings"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// --- /price ------------------------------------------------------------------

func (p *parser) price(toks []string) (Command, error) {
	if err := p.split(toks, []string{"name", "price", "at"}, true); err != nil {
		return nil, err
	}
	var (
		c        PriceCmd
		priceSrc string
		names    []string
	)
	for _, w := range p.words {
		if _, ok := parseComputePrice(w); ok || looksLikePrice(w) || strings.Contains(w, "/") {
			if err := p.setOnce("price", &priceSrc, w); err != nil {
				return nil, err
			}
			continue
		}
		names = append(names, w)
	}
	if err := p.fromKV("price", &priceSrc); err != nil {
		return nil, err
	}
	p.words = names
	n, err := p.oneRental()
	if err != nil {
		return nil, err
	}
	if priceSrc == "" {
		return nil, p.err("missing_price", string(p.kind))
	}
	ps, ok := parseComputePrice(priceSrc)
	if !ok {
		return nil, p.err("bad_price", quote(priceSrc))
	}
	if ps.Amount.Sign() < 0 {
		return nil, p.err("price_negative", quote(priceSrc))
	}
	c.Name, c.Price, c.At = n, ps, p.at
	return c, nil
}

// --- money -------------------------------------------------------------------

func (p *parser) charge(toks []string) (Command, error) {
	// The note is free text: only key=value pairs, "at TIME" and the first
	// money-shaped token are taken out of it; a bare TIME without "at"
	// stays in the note.
	toks, err := p.takeAt(toks)
	if err != nil {
		return nil, err
	}
	if err := p.split(toks, []string{"name", "amount", "note", "at", "project"}, false); err != nil {
		return nil, err
	}
	var (
		c      ChargeCmd
		amtSrc string
		note   []string
	)
	target, hasTarget := p.kv["name"]
	for _, w := range p.words {
		if _, ok := parseAmount(w); ok && amtSrc == "" {
			amtSrc = w
			continue
		}
		if looksLikePrice(w) && amtSrc == "" {
			return nil, p.err("bad_amount", quote(w))
		}
		if !hasTarget {
			target, hasTarget = w, true
			continue
		}
		note = append(note, w)
	}
	if err := p.fromKV("amount", &amtSrc); err != nil {
		return nil, err
	}
	if !hasTarget {
		return nil, p.err("missing_name", string(p.kind))
	}
	if c.Target, err = p.rentalName(target); err != nil {
		return nil, err
	}
	if amtSrc == "" {
		return nil, p.err("missing_amount", string(p.kind))
	}
	a, ok := parseAmount(amtSrc)
	if !ok {
		return nil, p.err("bad_amount", quote(amtSrc))
	}
	if a.Value.IsZero() {
		return nil, p.err("amount_nonzero", quote(amtSrc))
	}
	c.Amount = a
	if v, ok := p.kv["note"]; ok {
		note = append([]string{v}, note...)
	}
	c.Note = strings.Join(note, " ")
	if utf8.RuneCountInString(c.Note) > ledger.MaxNoteRunes {
		// shortened to what the ledger keeps, the ellipsis included
		c.Note = string([]rune(c.Note)[:ledger.MaxNoteRunes-1]) + "…"
	}
	c.At = p.at
	if c.Project, err = p.projectKV(); err != nil {
		return nil, err
	}
	return c, nil
}

// takeAt takes "at TIME" (or "在 TIME") out of free-text tokens, where
// TIME is one token or two that read as one time ("10:05", "2026-11-01
// 10:05", "yesterday 23:00", "2h ago"). An "at" that is not followed by
// something shaped like a time ("data at rest") is left in place; one
// followed by a bad or future time is an error, as for other commands.
func (p *parser) takeAt(toks []string) ([]string, error) {
	out := make([]string, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		if lt := strings.ToLower(toks[i]); (lt == "at" || lt == "在") && i+1 < len(toks) {
			if v, n := timePhrase(toks[i+1:]); n > 0 {
				if err := p.setTime(v); err != nil {
					return nil, err
				}
				i += n
				continue
			}
		}
		out = append(out, toks[i])
	}
	return out, nil
}

// timePhrase returns the time that toks start with, joined the way
// parseTime reads it, and how many tokens it takes; 0 when toks do not
// start with something shaped like a time.
func timePhrase(toks []string) (string, int) {
	if len(toks) >= 2 {
		a, b := strings.ToLower(toks[0]), strings.ToLower(toks[1])
		if endsWithDay(a) && strings.Contains(b, ":") || b == "ago" || b == "前" {
			return toks[0] + " " + toks[1], 2
		}
	}
	if looksLikeTime(toks[0]) {
		return toks[0], 1
	}
	return "", 0
}

func (p *parser) topupBalance(toks []string) (Command, error) {
	if err := p.split(toks, []string{"platform", "amount", "at"}, true); err != nil {
		return nil, err
	}
	var amtSrc string
	var rest []string
	for _, w := range p.words {
		if _, ok := parseAmount(w); ok || looksLikePrice(w) {
			if err := p.setOnce("amount", &amtSrc, w); err != nil {
				return nil, err
			}
			continue
		}
		rest = append(rest, w)
	}
	if err := p.fromKV("amount", &amtSrc); err != nil {
		return nil, err
	}
	plat, hasPlat := p.kv["platform"]
	if hasPlat && len(rest) > 0 {
		return nil, p.err("twice", noun("platform"), quote(plat), quote(rest[0]))
	}
	if !hasPlat && len(rest) > 0 {
		plat, hasPlat = rest[0], true
		rest = rest[1:]
	}
	if len(rest) > 0 {
		return nil, p.err("unexpected", quote(rest[0]), string(p.kind))
	}
	if p.kind == KindBalance && !hasPlat && amtSrc == "" {
		if p.atSrc != "" {
			return nil, p.err("unexpected", quote(p.atSrc), string(p.kind))
		}
		return BalanceCmd{}, nil
	}
	if !hasPlat {
		return nil, p.err("missing_platform", string(p.kind))
	}
	pl, err := p.platform(plat)
	if err != nil {
		return nil, err
	}
	if amtSrc == "" {
		return nil, p.err("missing_amount", string(p.kind))
	}
	a, ok := parseAmount(amtSrc)
	if !ok {
		return nil, p.err("bad_amount", quote(amtSrc))
	}
	if p.kind == KindTopup {
		if a.Value.Sign() <= 0 {
			return nil, p.err("amount_positive", quote(amtSrc))
		}
		return TopupCmd{Platform: pl, Amount: a, At: p.at}, nil
	}
	return BalanceCmd{Platform: pl, Set: true, Amount: a, At: p.at}, nil
}

func (p *parser) budget(toks []string) (Command, error) {
	if err := p.split(toks, []string{"amount", "currency"}, false); err != nil {
		return nil, err
	}
	var cur ledger.Currency
	if v, ok := p.kv["currency"]; ok {
		c, err := ledger.ParseCurrency(v)
		if err != nil {
			return nil, p.err("bad_currency", quote(v))
		}
		cur = c
	}
	// The words are the amount (or "off"), and optionally the currency
	// ("/budget 0 USD", "/budget off $") or "all", in any order.
	src, fromKV := p.kv["amount"]
	allSrc := ""
	for _, w := range p.words {
		lw := strings.ToLower(w)
		if budgetAllWords[lw] {
			allSrc = w
			continue
		}
		if c, ok := currencyWord(lw); ok {
			if err := p.mergeCurrency(&cur, c, w); err != nil {
				return nil, err
			}
			continue
		}
		if src != "" {
			if fromKV {
				return nil, p.err("twice", noun("amount"), quote(src), quote(w))
			}
			return nil, p.err("unexpected", quote(w), string(p.kind))
		}
		src = w
	}
	if src == "" {
		if allSrc != "" {
			return nil, p.err("budget_all_off", quote(allSrc))
		}
		if cur != "" {
			return nil, p.err("missing_amount", string(p.kind))
		}
		return BudgetCmd{}, nil
	}
	off := false
	switch strings.ToLower(src) {
	case "off", "none", "关闭", "取消", "无":
		off = true
	}
	var amount ledger.Decimal
	if !off {
		pp, ok := splitPrice(strings.ToLower(src))
		if !ok {
			return nil, p.err("bad_amount", quote(src))
		}
		if len(pp.segs) > 1 || len(pp.segs) == 1 && timeUnits[pp.segs[0]] != ledger.UnitMonth {
			return nil, p.err("bad_budget_unit", quote(src))
		}
		if pp.amount.Sign() < 0 {
			return nil, p.err("amount_positive", quote(src))
		}
		if err := p.mergeCurrency(&cur, pp.currency, src); err != nil {
			return nil, err
		}
		amount = pp.amount
	}
	if allSrc != "" {
		switch {
		case !amount.IsZero():
			return nil, p.err("budget_all_off", quote(allSrc))
		case cur != "":
			return nil, p.err("budget_all_currency", quote(allSrc), string(cur))
		}
		return BudgetCmd{Set: true, All: true}, nil
	}
	return BudgetCmd{Set: true, Amount: Amount{Value: amount, Currency: cur}}, nil
}

// budgetAllWords remove every budget: "/budget off all".
var budgetAllWords = map[string]bool{"all": true, "全部": true, "所有": true, "都": true}

// currencyWord recognises a currency written alone: "USD", "usd", "$",
// "¥", "元", "美元", "€". Only the currencies the parser knows by name
// count, so a stray three-letter word is not taken for one.
func currencyWord(lw string) (ledger.Currency, bool) {
	if c, ok := currencyWords[lw]; ok {
		return c, true
	}
	for _, cp := range currencyPrefixes {
		if lw == cp.p {
			return cp.c, true
		}
	}
	return "", false
}
