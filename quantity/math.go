package quantity

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// powersOfTen are the powers of ten an int64 holds, 10^0 to 10^18.
var powersOfTen = func() (p [19]int64) {
	p[0] = 1
	for n := 1; n < len(p); n++ {
		p[n] = p[n-1] * 10
	}
	return p
}()

// mulInt64 returns a × b and whether the product fits in an int64; when
// it does not, the product returned is meaningless.
func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	// -1 × MinInt64 wraps to MinInt64 and passes the division check.
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return p, false
	}
	return p, p/b == a
}

// positiveScaleInt64 returns base × 10^scale and whether it fits in an
// int64 (a scale of 0 or less leaves base as it is). What an overflow
// returns is apimachinery's: it multiplies at once by 10, 100, 1000, 10^6
// and 10^9, whose overflow comes back wrapped, and by ten at a time for
// other scales, whose overflow comes back as 0; MinInt64 always gives 0.
func positiveScaleInt64(base int64, scale int32) (int64, bool) {
	if scale <= 0 || base == 0 {
		return base, true
	}
	if base == math.MinInt64 || int(scale) >= len(powersOfTen) {
		return 0, false
	}
	v, ok := mulInt64(base, powersOfTen[scale])
	if !ok {
		switch scale {
		case 1, 2, 3, 6, 9:
		default:
			v = 0
		}
	}
	return v, ok
}

// negativeScaleInt64 returns base ÷ 10^scale rounded away from zero, and
// whether the division was exact (a scale of 0 or less leaves base as it
// is).
func negativeScaleInt64(base int64, scale int32) (int64, bool) {
	if scale <= 0 || base == 0 {
		return base, true
	}
	if int(scale) >= len(powersOfTen) {
		// |base| < 10^19: nothing is left but the rounding.
		if base > 0 {
			return 1, false
		}
		return -1, false
	}
	d := powersOfTen[scale]
	q := base / d
	if base%d == 0 {
		return q, true
	}
	if base > 0 {
		return q + 1, false
	}
	return q - 1, false
}

// asScaledInt64 is int64Amount.AsScaledInt64.
func asScaledInt64(value int64, scale, to int32) (int64, bool) {
	if scale < to {
		v, _ := negativeScaleInt64(value, to-scale)
		return v, true
	}
	return positiveScaleInt64(value, scale-to)
}

// removeInt64Factors divides value by base for as long as its magnitude
// is a multiple of base no smaller than base, and says how many times.
func removeInt64Factors(value, base int64) (int64, int32) {
	sign := int64(1)
	if value < 0 {
		sign, value = -1, -value
	}
	var times int32
	for ; value >= base && value%base == 0; times++ {
		value /= base
	}
	return sign * value, times
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
			if amount, ok = mulInt64(amount, 10); ok {
				return strconv.FormatInt(amount, 10), int64(exponent - 1)
			}
		case 2, -1:
			if amount, ok = mulInt64(amount, 100); ok {
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

// decimalSuffix writes a power of ten in the format: an "e" exponent
// (none for 0), or the SI suffix of the power (none when it has none).
func decimalSuffix(exponent int64, format Format) string {
	if format == DecimalExponent {
		if exponent == 0 {
			return ""
		}
		return "e" + strconv.FormatInt(exponent, 10)
	}
	if exponent%3 != 0 || exponent < -9 || exponent > 18 {
		return ""
	}
	return decimalSuffixes[(exponent+9)/3]
}

// binarySuffix writes a power of two as its binary suffix ("" for 2^0 and
// powers without one).
func binarySuffix(exponent int32) string {
	if exponent%10 != 0 || exponent < 10 || exponent > 60 {
		return ""
	}
	return binarySuffixes[exponent/10-1]
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
