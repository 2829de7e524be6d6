package ledger

import (
	"fmt"
	"math/big"
	"strings"
)

// Money is kept exactly. Inputs (prices, sizes, amounts) are Decimals: an
// int64 coefficient and a base-10 scale, parsed from text without ever
// passing through a float. Charges are computed as exact rationals
// (math/big.Rat: a per-hour price times seconds divided by 3600 is not a
// finite decimal, so a fixed-precision decimal library would have to round
// in the middle) and rounded once, half away from zero, to the currency's
// minor unit, giving a Money. The standard library is enough for this, so
// the ledger takes no decimal dependency.

// Limits on what ParseDecimal accepts. They bound every product the cost
// engine forms and reject absurd input early.
const (
	MaxDecimalScale = 9             // at most 9 digits after the point
	maxDecimalCoef  = 1_000_000_000 // integer part below 1e9
)

var pow10 = [...]int64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000}

// Decimal is an exact decimal number: coef × 10^-scale. The zero value is 0.
// Decimals are values; they are safe to copy and compare with Cmp (not ==,
// since 1.5 and 1.50 differ in scale until normalised; all constructors
// normalise, so == also works on Decimals made by this package).
type Decimal struct {
	coef  int64
	scale int8
}

// NewDecimal returns coef × 10^-scale, normalised. It panics if scale is
// outside 0..MaxDecimalScale; it is meant for constants.
func NewDecimal(coef int64, scale int) Decimal {
	if scale < 0 || scale > MaxDecimalScale {
		panic(fmt.Sprintf("ledger: NewDecimal scale %d out of range", scale))
	}
	return Decimal{coef: coef, scale: int8(scale)}.norm()
}

// DecimalFromInt returns the integer n as a Decimal.
func DecimalFromInt(n int64) Decimal { return Decimal{coef: n} }

func (d Decimal) norm() Decimal {
	for d.scale > 0 && d.coef%10 == 0 {
		d.coef /= 10
		d.scale--
	}
	if d.coef == 0 {
		d.scale = 0
	}
	return d
}

// ParseDecimal parses a plain decimal such as "1.88", "-3", "+0.0066" or
// ".5". Exponents, separators, NaN and infinities are rejected, as are more
// than MaxDecimalScale fraction digits and magnitudes of 1e9 or more. The
// error is an *Error with code EINVALID.
func ParseDecimal(s string) (Decimal, error) {
	orig := s
	bad := func(why string) (Decimal, error) {
		if len(orig) > 40 {
			orig = orig[:40] + "…"
		}
		return Decimal{}, Errorc(EINVALID, "not_number", orig, why)
	}
	if s == "" {
		return bad("empty")
	}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	intPart, frac, hasPoint := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return bad("no digits")
	}
	if hasPoint && frac == "" && intPart == "" {
		return bad("no digits")
	}
	if len(frac) > MaxDecimalScale {
		return bad(fmt.Sprintf("more than %d digits after the point", MaxDecimalScale))
	}
	var coef int64
	for _, c := range intPart {
		if c < '0' || c > '9' {
			return bad("unexpected character")
		}
		coef = coef*10 + int64(c-'0')
		if coef >= maxDecimalCoef {
			return bad("too large")
		}
	}
	for _, c := range frac {
		if c < '0' || c > '9' {
			return bad("unexpected character")
		}
		coef = coef*10 + int64(c-'0')
	}
	if neg {
		coef = -coef
	}
	return Decimal{coef: coef, scale: int8(len(frac))}.norm(), nil
}

// MustDecimal is ParseDecimal for constants and tests; it panics on error.
func MustDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// String formats d in plain notation with no trailing zeros: "1.88", "200".
func (d Decimal) String() string {
	d = d.norm()
	neg := d.coef < 0
	c := d.coef
	if neg {
		c = -c
	}
	s := fmt.Sprintf("%d", c)
	if d.scale > 0 {
		if len(s) <= int(d.scale) {
			s = strings.Repeat("0", int(d.scale)-len(s)+1) + s
		}
		s = s[:len(s)-int(d.scale)] + "." + s[len(s)-int(d.scale):]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Coef and Scale expose the representation: d == Coef × 10^-Scale.
func (d Decimal) Coef() int64 { return d.coef }

// Scale returns the number of digits after the decimal point.
func (d Decimal) Scale() int { return int(d.scale) }

// Rat returns d as a new exact rational.
func (d Decimal) Rat() *big.Rat {
	return new(big.Rat).SetFrac(big.NewInt(d.coef), big.NewInt(pow10[d.scale]))
}

// Sign returns -1, 0 or +1.
func (d Decimal) Sign() int {
	switch {
	case d.coef < 0:
		return -1
	case d.coef > 0:
		return 1
	}
	return 0
}

// IsZero reports whether d is 0.
func (d Decimal) IsZero() bool { return d.coef == 0 }

// Neg returns -d.
func (d Decimal) Neg() Decimal { return Decimal{coef: -d.coef, scale: d.scale} }

// Cmp compares d and e: -1 if d < e, 0 if equal, +1 if d > e.
func (d Decimal) Cmp(e Decimal) int { return d.Rat().Cmp(e.Rat()) }

// MarshalText implements encoding.TextMarshaler (the plain String form).
func (d Decimal) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseDecimal.
func (d *Decimal) UnmarshalText(b []byte) error {
	v, err := ParseDecimal(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Currency is an ISO 4217 code in upper case, e.g. "CNY", "USD".
type Currency string

// Common currencies.
const (
	CNY Currency = "CNY"
	USD Currency = "USD"
	EUR Currency = "EUR"
)

var minorDigits = map[Currency]int{
	"JPY": 0, "KRW": 0, "VND": 0, "IDR": 2, "CLP": 0, "ISK": 0, "TWD": 2,
	"KWD": 3, "BHD": 3, "OMR": 3, "JOD": 3, "TND": 3,
}

// MinorDigits returns the number of digits of c's minor unit (2 for CNY and
// USD: fen and cents; 0 for JPY).
func (c Currency) MinorDigits() int {
	if n, ok := minorDigits[c]; ok {
		return n
	}
	return 2
}

var currencySymbols = map[Currency]string{CNY: "¥", USD: "$", EUR: "€", "GBP": "£", "JPY": "JP¥", "KRW": "₩", "INR": "₹", "HKD": "HK$", "SGD": "S$"}

// Symbol returns the symbol used when showing amounts ("¥" for CNY,
// "$" for USD), or the code and a space when none is known.
func (c Currency) Symbol() string {
	if s, ok := currencySymbols[c]; ok {
		return s
	}
	return string(c) + " "
}

// ParseCurrency accepts an ISO code in any case or a common symbol or word
// ("¥", "元", "rmb", "$", "usd") and returns the code.
func ParseCurrency(s string) (Currency, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "¥", "￥", "元", "rmb", "cny", "yuan", "人民币":
		return CNY, nil
	case "$", "usd", "us$", "美元", "dollar", "dollars":
		return USD, nil
	case "€", "eur", "euro", "欧元":
		return EUR, nil
	}
	u := strings.ToUpper(strings.TrimSpace(s))
	if len(u) == 3 && u[0] >= 'A' && u[0] <= 'Z' && u[1] >= 'A' && u[1] <= 'Z' && u[2] >= 'A' && u[2] <= 'Z' {
		return Currency(u), nil
	}
	return "", Errorc(EINVALID, "bad_currency", s)
}

// Money is an amount rounded to its currency's minor unit: Minor fen,
// cents, etc. Totals are sums of Money, never re-rounded.
type Money struct {
	Currency Currency
	Minor    int64
}

// String formats m as a plain decimal in the minor unit: "3.29", "-0.05".
func (m Money) String() string {
	n := m.Currency.MinorDigits()
	if n == 0 {
		return fmt.Sprintf("%d", m.Minor)
	}
	neg := m.Minor < 0
	v := m.Minor
	if neg {
		v = -v
	}
	s := fmt.Sprintf("%0*d", n+1, v)
	s = s[:len(s)-n] + "." + s[len(s)-n:]
	if neg {
		s = "-" + s
	}
	return s
}

// Format returns m with its currency symbol: "¥3.29", "$0.70", "-¥1.00".
func (m Money) Format() string {
	s := m.String()
	if strings.HasPrefix(s, "-") {
		return "-" + m.Currency.Symbol() + s[1:]
	}
	return m.Currency.Symbol() + s
}

// Add returns m + o. Both must have the same currency; it panics otherwise,
// since adding across currencies is always a bug.
func (m Money) Add(o Money) Money {
	if m.Currency != o.Currency && m.Minor != 0 && o.Minor != 0 {
		panic(fmt.Sprintf("ledger: adding %s to %s", o.Currency, m.Currency))
	}
	c := m.Currency
	if c == "" {
		c = o.Currency
	}
	return Money{Currency: c, Minor: m.Minor + o.Minor}
}

// Decimal returns m as an exact Decimal.
func (m Money) Decimal() Decimal {
	return Decimal{coef: m.Minor, scale: int8(m.Currency.MinorDigits())}.norm()
}

// Round rounds the exact amount r to c's minor unit, half away from zero
// (0.005 → 0.01, -0.005 → -0.01): the rule applied once per line.
func Round(r *big.Rat, c Currency) Money {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.MinorDigits())), nil)
	num := new(big.Int).Mul(r.Num(), scale)
	den := r.Denom()
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	// |rem|*2 >= den → round away from zero.
	rem.Abs(rem)
	rem.Lsh(rem, 1)
	if rem.Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return Money{Currency: c, Minor: q.Int64()}
}

// MoneyFromDecimal converts an amount given by a user (a one-off charge, a
// top-up) to Money, rounding half away from zero to the minor unit.
func MoneyFromDecimal(d Decimal, c Currency) Money { return Round(d.Rat(), c) }
