package ledger

import (
	"math"
	"math/big"
	"math/bits"
)

// The compute meter sums seconds × rate for a handful of distinct rates per
// rental. Doing that with big.Rat would allocate on every evaluation, so
// the engine uses an exact fixed-denominator form instead: every rate
// amount/unit is an integer weight over the common denominator
// rateDen = 10^9 × lcm(unit seconds), a charge is Σ weight × seconds held
// in 128 bits, and rounding is one 128-by-64-bit division. Any overflow
// (only possible for rates far beyond what Rental.Validate accepts) falls
// back to big.Rat, so results are exact either way.

const (
	// lcmUnitSeconds is the least common multiple of the lengths of all
	// price units (1 s, 1 min, 1 h, 1 day, 7 days, 30 days).
	lcmUnitSeconds = 18_144_000
	// rateDen is the common denominator of all rate weights.
	rateDen = 1_000_000_000 * lcmUnitSeconds
)

// u128 is an unsigned 128-bit integer.
type u128 struct{ hi, lo uint64 }

func mul64(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

// add returns a+b and false on overflow.
func (a u128) add(b u128) (u128, bool) {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, c2 := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}, c2 == 0
}

// mul returns a×b and false on overflow.
func (a u128) mul(b uint64) (u128, bool) {
	h1, l1 := bits.Mul64(a.lo, b)
	h2, l2 := bits.Mul64(a.hi, b)
	if h2 != 0 {
		return u128{}, false
	}
	hi, c := bits.Add64(h1, l2, 0)
	return u128{hi, l1}, c == 0
}

func (a u128) cmp(b u128) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

// roundDen rounds n/rateDen half away from zero to c's minor unit, and
// returns false if the result does not fit.
func roundDen(n u128, c Currency) (Money, bool) {
	digits := c.MinorDigits()
	if digits > 9 {
		return Money{}, false
	}
	scaled, ok := n.mul(uint64(pow10[digits]))
	if !ok {
		return Money{}, false
	}
	const d = uint64(rateDen)
	if scaled.hi >= d {
		return Money{}, false
	}
	q, rem := bits.Div64(scaled.hi, scaled.lo, d)
	if rem >= d-rem { // 2·rem ≥ d
		q++
	}
	if q > math.MaxInt64 {
		return Money{}, false
	}
	return Money{Currency: c, Minor: int64(q)}, true
}

// rate is one distinct compute price of a rental with its fast weight.
type rate struct {
	price Price
	w     uint64 // amount × 10^9 × lcmUnitSeconds / unit seconds
	wok   bool   // false: the weight overflows; use big.Rat
}

func newRate(p Price) rate {
	r := rate{price: p}
	u := p.Unit.Seconds()
	c := p.Amount.coef
	if u == 0 || c < 0 {
		return r
	}
	hi, lo := bits.Mul64(uint64(c), uint64(pow10[MaxDecimalScale-int(p.Amount.scale)]))
	if hi != 0 {
		return r
	}
	hi, lo = bits.Mul64(lo, uint64(lcmUnitSeconds/u))
	if hi != 0 {
		return r
	}
	r.w, r.wok = lo, true
	return r
}

// perSecond returns the exact rate per second.
func (r rate) perSecond() *big.Rat {
	x := r.price.Amount.Rat()
	return x.Quo(x, new(big.Rat).SetInt64(r.price.Unit.Seconds()))
}

// decimalDen returns d over rateDen as a 128-bit numerator, false if d is
// negative or does not fit.
func decimalDen(d Decimal) (u128, bool) {
	if d.coef < 0 {
		return u128{}, false
	}
	n := mul64(uint64(d.coef), uint64(pow10[MaxDecimalScale-int(d.scale)]))
	return n.mul(lcmUnitSeconds)
}

// rateMoney returns the rounded amount of Σ rates[i] × secs[i], raised to
// floor when useFloor is set.
func rateMoney(rates []rate, secs []int64, floor Decimal, useFloor bool, c Currency) Money {
	var n u128
	ok := true
	for i, s := range secs {
		if s == 0 {
			continue
		}
		if !rates[i].wok || s < 0 {
			ok = false
			break
		}
		var add bool
		n, add = n.add(mul64(rates[i].w, uint64(s)))
		if !add {
			ok = false
			break
		}
	}
	if ok && useFloor && floor.Sign() > 0 {
		f, fok := decimalDen(floor)
		if !fok {
			ok = false
		} else if n.cmp(f) < 0 {
			n = f
		}
	}
	if ok {
		if m, ok := roundDen(n, c); ok {
			return m
		}
	}
	return Round(rateRat(rates, secs, floor, useFloor), c)
}

// rateRat is the exact big.Rat form of rateMoney's sum: the reference the
// fast path must agree with.
func rateRat(rates []rate, secs []int64, floor Decimal, useFloor bool) *big.Rat {
	sum := new(big.Rat)
	for i, s := range secs {
		if s == 0 {
			continue
		}
		x := rates[i].perSecond()
		x.Mul(x, new(big.Rat).SetInt64(s))
		sum.Add(sum, x)
	}
	if useFloor {
		if f := floor.Rat(); sum.Cmp(f) < 0 {
			sum = f
		}
	}
	return sum
}
