package quantity

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

const (
	mostPositive = 1<<63 - 1
	mostNegative = -(mostPositive + 1)
)

// int64Multiply, int64MultiplyScale, positiveScaleInt64 and
// negativeScaleInt64 are apimachinery's (resource/math.go), int32 scales
// and their wrapping included.

func int64Multiply(a, b int64) (int64, bool) {
	if a == 0 || b == 0 || a == 1 || b == 1 {
		return a * b, true
	}
	if a == mostNegative || b == mostNegative {
		return 0, false
	}
	c := a * b
	return c, c/b == a
}

func int64MultiplyScale(a, b int64) (int64, bool) {
	if a == 0 || a == 1 {
		return a * b, true
	}
	if a == mostNegative && b != 1 {
		return 0, false
	}
	c := a * b
	return c, c/b == a
}

func positiveScaleInt64(base int64, scale int32) (int64, bool) {
	switch scale {
	case 0:
		return base, true
	case 1:
		return int64MultiplyScale(base, 10)
	case 2:
		return int64MultiplyScale(base, 100)
	case 3:
		return int64MultiplyScale(base, 1000)
	case 6:
		return int64MultiplyScale(base, 1000000)
	case 9:
		return int64MultiplyScale(base, 1000000000)
	}
	if base == 0 {
		// apimachinery multiplies 0 by 10 scale times; the result is 0.
		return 0, true
	}
	value := base
	var ok bool
	for i := int32(0); i < scale; i++ {
		if value, ok = int64MultiplyScale(value, 10); !ok {
			return 0, false
		}
	}
	return value, true
}

func negativeScaleInt64(base int64, scale int32) (int64, bool) {
	if scale == 0 {
		return base, true
	}
	value := base
	var fraction bool
	for i := int32(0); i < scale; i++ {
		if !fraction && value%10 != 0 {
			fraction = true
		}
		value /= 10
		if value == 0 {
			if fraction {
				if base > 0 {
					return 1, false
				}
				return -1, false
			}
			return 0, true
		}
	}
	if fraction {
		if base > 0 {
			value++
		} else {
			value--
		}
	}
	return value, !fraction
}

// asScaledInt64 is int64Amount.AsScaledInt64.
func asScaledInt64(value int64, scale, to int32) (int64, bool) {
	if scale < to {
		v, _ := negativeScaleInt64(value, to-scale)
		return v, true
	}
	return positiveScaleInt64(value, scale-to)
}

func removeInt64Factors(value, base int64) (int64, int32) {
	times := int32(0)
	result := value
	negative := result < 0
	if negative {
		result = -result
	}
	for result >= base && result%base == 0 {
		times++
		result /= base
	}
	if negative {
		result = -result
	}
	return result, times
}

// canonicalize is Quantity.CanonicalizeBytes: the number and suffix String
// prints when the input is not kept as written.
func (q Quantity) canonicalize() string {
	if q.IsZero() {
		return "0"
	}
	format := q.format
	switch format {
	case DecimalExponent, DecimalSI:
	case BinarySI:
		if q.cmpInt64(-1024) > 0 && q.cmpInt64(1024) < 0 {
			format = DecimalSI
		} else if !q.wholeNumber() {
			format = DecimalSI
		}
	default:
		format = DecimalExponent
	}
	if format == BinarySI {
		number, exponent := q.base1024()
		return number + binarySuffix(exponent*10)
	}
	number, exponent := q.base10()
	return number + decimalSuffix(exponent, format)
}

// wholeNumber reports whether rounding to an integer (AsScale(0)) is
// exact.
func (q Quantity) wholeNumber() bool {
	if q.dec == nil {
		if q.scale >= 0 {
			return true
		}
		_, exact := negativeScaleInt64(q.i, -q.scale)
		return exact
	}
	c, e := q.coefExp()
	if e >= 0 {
		return true
	}
	_, r := new(big.Int).QuoRem(c, pow10(-e), new(big.Int))
	return r.Sign() == 0
}

// base10 is AsCanonicalBytes: the number with trailing zeros moved into an
// exponent that is a multiple of 3.
func (q Quantity) base10() (string, int64) {
	if q.dec == nil {
		amount, times := removeInt64Factors(q.i, 10)
		exponent := q.scale + times // int32, wraps as apimachinery's
		var ok bool
		switch exponent % 3 {
		case 1, -2:
			if amount, ok = int64MultiplyScale(amount, 10); ok {
				return strconv.FormatInt(amount, 10), int64(exponent - 1)
			}
		case 2, -1:
			if amount, ok = int64MultiplyScale(amount, 100); ok {
				return strconv.FormatInt(amount, 10), int64(exponent - 2)
			}
		default:
			return strconv.FormatInt(amount, 10), int64(exponent)
		}
		// The multiplication overflows: apimachinery continues with an
		// inf.Dec of the same value.
		a, t := removeBigFactors(big.NewInt(q.i), bigTen)
		exponent = q.scale + int32(t)
		for exponent%3 != 0 {
			a.Mul(a, bigTen)
			exponent--
		}
		return a.String(), int64(exponent)
	}
	d := q.dec
	a, times := removeBigFactors(d.coef, bigTen)
	exponent := times + d.k - d.scale
	switch exponent % 3 {
	case 1, -2:
		a.Mul(a, bigTen)
		exponent--
	case 2, -1:
		a.Mul(a, big.NewInt(100))
		exponent -= 2
	}
	return a.String(), exponent
}

// base1024 is AsCanonicalBase1024Bytes of the quantity rounded up to an
// integer.
func (q Quantity) base1024() (string, int32) {
	if q.dec == nil {
		if v, ok := asScaledInt64(q.i, q.scale, 0); ok {
			amount, exponent := removeInt64Factors(v, 1024)
			return strconv.FormatInt(amount, 10), exponent
		}
	}
	c, e := q.coefExp()
	var v *big.Int
	if e >= 0 {
		v = new(big.Int).Mul(c, pow10(e))
	} else {
		var r big.Int
		v, _ = new(big.Int).QuoRem(c, pow10(-e), &r)
		if r.Sign() != 0 {
			v.Add(v, big.NewInt(int64(c.Sign())))
		}
	}
	a, times := removeBigFactors(v, big1024)
	return a.String(), int32(times)
}

func decimalSuffix(exponent int64, format Format) string {
	if format == DecimalExponent {
		if exponent == 0 {
			return ""
		}
		return "e" + strconv.FormatInt(exponent, 10)
	}
	switch exponent {
	case -9:
		return "n"
	case -6:
		return "u"
	case -3:
		return "m"
	case 3:
		return "k"
	case 6:
		return "M"
	case 9:
		return "G"
	case 12:
		return "T"
	case 15:
		return "P"
	case 18:
		return "E"
	}
	// 0, and exponents without a suffix: apimachinery prints none.
	return ""
}

func binarySuffix(exponent int32) string {
	switch exponent {
	case 10:
		return "Ki"
	case 20:
		return "Mi"
	case 30:
		return "Gi"
	case 40:
		return "Ti"
	case 50:
		return "Pi"
	case 60:
		return "Ei"
	}
	return ""
}

// removeBigFactors divides a copy of d by factor while it divides evenly,
// returning the quotient and how many times it divided.
func removeBigFactors(d, factor *big.Int) (*big.Int, int64) {
	d = new(big.Int).Set(d)
	if d.Sign() == 0 {
		return d, 0
	}
	// The factors of ten and 1024 at once, from the digits and the bits:
	// dividing one at a time is quadratic in the length of the number.
	switch {
	case factor.Cmp(bigTen) == 0:
		s := d.Text(10)
		t := strings.TrimRight(s, "0")
		if times := len(s) - len(t); times > 0 {
			d.SetString(t, 10)
			return d, int64(times)
		}
		return d, 0
	case factor.Cmp(big1024) == 0:
		times := new(big.Int).Abs(d).TrailingZeroBits() / 10
		neg := d.Sign() < 0
		d.Abs(d).Rsh(d, times*10)
		if neg {
			d.Neg(d)
		}
		return d, int64(times)
	}
	var times int64
	q, m := new(big.Int), new(big.Int)
	for {
		q.QuoRem(d, factor, m)
		if m.Sign() != 0 {
			return d, times
		}
		times++
		d, q = q, d
	}
}

// digits returns the number of decimal digits of |x|, 0 for 0.
func digits(x *big.Int) int {
	if x.Sign() == 0 {
		return 0
	}
	s := x.Text(10)
	if s[0] == '-' {
		return len(s) - 1
	}
	return len(s)
}

func pow10(n int64) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(n), nil)
}

// cmpScaled compares a × 10^ea with b × 10^eb without writing out large
// powers of ten.
func cmpScaled(a *big.Int, ea int64, b *big.Int, eb int64) int {
	sa, sb := a.Sign(), b.Sign()
	if sa != sb || sa == 0 {
		switch {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return 0
	}
	// Same sign, both nonzero: compare magnitudes by their number of
	// digits first.
	la, lb := int64(digits(a))+ea, int64(digits(b))+eb
	if la != lb {
		if (la > lb) == (sa > 0) {
			return 1
		}
		return -1
	}
	// Equal lengths: the exponents differ by less than the digits.
	if ea > eb {
		return new(big.Int).Mul(a, pow10(ea-eb)).Cmp(b)
	}
	return a.Cmp(new(big.Int).Mul(b, pow10(eb-ea)))
}

// low64 returns the low 64 bits of |coef × 10^k|, what big.Int.Int64 keeps
// of the magnitude.
func low64(coef *big.Int, k int64) uint64 {
	var m big.Int
	m.Abs(coef)
	lo := uint64(0)
	if words := m.Bits(); len(words) > 0 {
		lo = uint64(words[0])
		if strconv.IntSize == 32 && len(words) > 1 {
			lo |= uint64(words[1]) << 32
		}
	}
	p, base := uint64(1), uint64(10)
	for k > 0 {
		if k&1 == 1 {
			p *= base
		}
		base *= base
		k >>= 1
	}
	return lo * p
}

// int64Of is big.Int.Int64 of coef × 10^k.
func int64Of(coef *big.Int, k int64) int64 {
	v := int64(low64(coef, k))
	if coef.Sign() < 0 {
		v = -v
	}
	return v
}

// scaledValue is apimachinery's scaledValue(unscaled, scale, newScale) for
// the value of d, newScale being the inf scale (0 for Value, 3 for
// MilliValue).
func (d *decimal) scaledValue(newScale int64) int64 {
	dif := d.scale - newScale
	if dif == 0 {
		return int64Of(d.coef, d.k)
	}
	if dif < 0 {
		return int64Of(d.coef, d.k) * int64(math.Pow10(int(-dif)))
	}
	const log10MaxInt64 = 19
	if cmpScaled(d.coef, d.k, maxInt64, 0) < 0 && dif < log10MaxInt64 {
		u := int64Of(d.coef, d.k)
		divide := int64(math.Pow10(int(dif)))
		if u%divide != 0 {
			return u/divide + 1
		}
		return u / divide
	}
	// unscaled >= MaxInt64 > 0: big.Int.DivMod, that is floor and a
	// non-negative remainder.
	if d.k >= dif {
		return int64Of(d.coef, d.k-dif)
	}
	q, r := new(big.Int).DivMod(d.coef, pow10(dif-d.k), new(big.Int))
	if r.Sign() != 0 {
		return q.Int64() + 1
	}
	return q.Int64()
}
