package quantity

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
)

// Format is the notation of a quantity, which String keeps.
type Format string

// The formats of resource.Quantity.
const (
	// DecimalExponent is a number with an e or E exponent ("12e6").
	DecimalExponent Format = "DecimalExponent"
	// BinarySI is a number with a power-of-1024 suffix ("12Mi").
	BinarySI Format = "BinarySI"
	// DecimalSI is a number with a power-of-1000 suffix or none ("12M",
	// "500m", "3").
	DecimalSI Format = "DecimalSI"
)

const splitREString = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

// The errors of Parse, with apimachinery's messages. An *Error wraps one
// of them.
var (
	ErrFormatWrong = errors.New("quantities must match the regular expression '" + splitREString + "'")
	ErrNumeric     = errors.New("unable to parse numeric part of quantity")
	ErrSuffix      = errors.New("unable to parse quantity's suffix")
)

// Error is an input that is not a quantity.
type Error struct {
	// Input is the string, or the JSON value, that failed.
	Input string
	// Err is ErrFormatWrong, ErrNumeric, ErrSuffix or, for Normalize, a
	// description of a value that is neither a string nor a number.
	Err error
}

func (e *Error) Error() string { return "quantity: " + strconv.Quote(e.Input) + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Quantity is a parsed quantity. The zero Quantity is 0.
//
// A Quantity is immutable; compare quantities with Cmp, not ==.
type Quantity struct {
	// s is the string form; "" for the zero Quantity.
	s      string
	format Format
	// The value is i × 10^scale when dec is nil (apimachinery's
	// int64Amount), else dec (its inf.Dec).
	i     int64
	scale int32
	dec   *decimal
}

// decimal is a value held as apimachinery holds it in an inf.Dec: an
// unscaled integer and a scale, value = unscaled × 10^-scale. The unscaled
// integer is coef × 10^k, kept apart so that values with huge exponents are
// never written out in full.
type decimal struct {
	coef  *big.Int
	k     int64
	scale int64
}

// exp returns the value as coef × 10^exp.
func (d *decimal) exp() int64 { return d.k - d.scale }

// Parse parses a quantity as resource.ParseQuantity does. The string must
// be the quantity alone: no spaces (Normalize trims them, as the API server
// does when it decodes JSON).
func Parse(s string) (Quantity, error) {
	q, err := parse(s)
	if err != nil {
		return Quantity{}, &Error{Input: s, Err: err}
	}
	return q, nil
}

// Canonical returns the string the API server stores for the quantity s:
// Parse(s).String().
func Canonical(s string) (string, error) {
	q, err := Parse(s)
	if err != nil {
		return "", err
	}
	return q.String(), nil
}

// String returns the quantity as the API server stores and returns it; see
// the package documentation. The zero Quantity prints "0".
func (q Quantity) String() string {
	if q.s == "" {
		return "0"
	}
	return q.s
}

// Format returns the notation the quantity was written in. BinarySI
// quantities below 1 (as "0.5Ki" is not: it is 512) are DecimalSI, as
// apimachinery decides. The zero Quantity is DecimalSI.
func (q Quantity) Format() Format {
	if q.format == "" {
		return DecimalSI
	}
	return q.format
}

// IsZero reports whether the quantity is 0.
func (q Quantity) IsZero() bool { return q.Sign() == 0 }

// Sign returns -1, 0 or 1.
func (q Quantity) Sign() int {
	if q.dec != nil {
		return q.dec.coef.Sign()
	}
	switch {
	case q.i > 0:
		return 1
	case q.i < 0:
		return -1
	}
	return 0
}

// Cmp returns -1, 0 or 1 as q is less than, equal to or greater than y.
// It compares the values as parsed, that is rounded up to nano precision.
func (q Quantity) Cmp(y Quantity) int {
	qc, qe := q.coefExp()
	yc, ye := y.coefExp()
	return cmpScaled(qc, qe, yc, ye)
}

// coefExp returns the value as coef × 10^exp.
func (q Quantity) coefExp() (*big.Int, int64) {
	if q.dec != nil {
		return q.dec.coef, q.dec.exp()
	}
	return big.NewInt(q.i), int64(q.scale)
}

func (q Quantity) cmpInt64(n int64) int {
	c, e := q.coefExp()
	return cmpScaled(c, e, big.NewInt(n), 0)
}

// Value returns the quantity rounded up to an integer, as
// Quantity.Value does, overflow included: apimachinery returns 0 for an
// int64Amount that does not fit, wraps for others, and rounds some negative
// values toward zero and others away from it. Check the magnitude with Cmp
// first when that matters.
func (q Quantity) Value() int64 { return q.scaledValue(0) }

// MilliValue returns the quantity in thousandths rounded up, as
// Quantity.MilliValue does, with the same caveats as Value.
func (q Quantity) MilliValue() int64 { return q.scaledValue(-3) }

// scaledValue is Quantity.ScaledValue.
func (q Quantity) scaledValue(scale int32) int64 {
	if q.dec == nil {
		v, _ := asScaledInt64(q.i, q.scale, scale)
		return v
	}
	return q.dec.scaledValue(-int64(scale))
}

// parse is resource.ParseQuantity.
func parse(str string) (Quantity, error) {
	if len(str) == 0 {
		return Quantity{}, ErrFormatWrong
	}
	if str == "0" {
		return Quantity{format: DecimalSI, s: str}, nil
	}
	p, err := cut(str)
	if err != nil {
		return Quantity{}, err
	}
	base, exponent, format, ok := interpret(p.suffix)
	if !ok {
		return Quantity{}, ErrSuffix
	}
	if q, ok, err := smallQuantity(str, p, exponent, format); ok || err != nil {
		return q, err
	}

	unscaled, decScale, ok := scanDecimal(p.number)
	if !ok {
		return Quantity{}, ErrNumeric
	}
	// inf.Scale arithmetic is int32 and wraps.
	sc := decScale
	switch base {
	case 10:
		sc += -exponent
	case 2:
		unscaled.Lsh(unscaled, uint(exponent))
	}
	negative := unscaled.Sign() < 0
	unscaled.Abs(unscaled)

	d := &decimal{coef: unscaled}
	if unscaled.Sign() != 0 {
		roundToNano(d, int64(sc))
	}
	if format == BinarySI && cmpScaled(d.coef, d.exp(), maxInt64, 0) > 0 {
		d = &decimal{coef: new(big.Int).Set(maxInt64)}
	}
	if format == BinarySI && cmpScaled(d.coef, d.exp(), bigOne, 0) < 0 && d.coef.Sign() > 0 {
		format = DecimalSI
	}
	if negative {
		d.coef.Neg(d.coef)
	}
	q := Quantity{dec: d, format: format}
	q.s = q.canonicalize()
	return q, nil
}

// roundToNano sets d to u × 10^-sc (u = d.coef, positive) rounded up, away
// from zero, to nano precision, held at scale 9 as inf.Dec.Round leaves it.
func roundToNano(d *decimal, sc int64) {
	d.scale = 9
	if sc <= 9 {
		d.k = 9 - sc
		return
	}
	drop := sc - 9
	if drop > int64(digits(d.coef)) {
		d.coef.SetInt64(1)
		return
	}
	q, r := new(big.Int).QuoRem(d.coef, pow10(drop), new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, bigOne)
	}
	d.coef = q
}

const (
	maxInt64Factors = 18
	nano            = -9
)

var (
	bigOne   = big.NewInt(1)
	bigTen   = big.NewInt(10)
	big1024  = big.NewInt(1024)
	maxInt64 = big.NewInt(1<<63 - 1)
)

// pieces are the parts of a quantity's text as apimachinery reads them.
type pieces struct {
	negative bool
	// number is the text that holds the value: the sign, the digits and
	// the point as written ("0" for a text of zeros, whose sign goes).
	number string
	// whole are the digits before the point without leading zeros ("0"
	// when none are left), frac those after it.
	whole, frac string
	suffix      string
}

// cut splits a non-empty text into its pieces. Past the number, the
// suffix is a run of SI letters and exponent markers, then an optional
// sign and digits to the end; anything else there is ErrFormatWrong.
func cut(s string) (pieces, error) {
	var p pieces
	i := 0
	if s[0] == '+' || s[0] == '-' {
		p.negative = s[0] == '-'
		i++
	}
	for i < len(s) && s[i] == '0' {
		i++
	}
	if i == len(s) {
		p.number, p.whole = "0", "0"
		return p, nil
	}
	end := skipDigits(s, i)
	p.whole, p.number = s[i:end], s
	if end == len(s) {
		return p, nil
	}
	if p.whole == "" {
		p.whole = "0"
	}
	if s[end] == '.' {
		fracEnd := skipDigits(s, end+1)
		p.frac = s[end+1 : fracEnd]
		if fracEnd == len(s) {
			return p, nil
		}
		end = fracEnd
	}
	p.number = s[:end]
	i = end
	for i < len(s) && strings.IndexByte("eEinumkKMGTP", s[i]) >= 0 {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if skipDigits(s, i) != len(s) {
		return pieces{}, ErrFormatWrong
	}
	p.suffix = s[end:]
	return p, nil
}

// skipDigits returns the index of the first byte of s from i on that is
// not a decimal digit (len(s) if none).
func skipDigits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// The suffixes: the SI ones for the powers of ten 10^-9, 10^-6 ... 10^18
// (none for 10^0), the binary ones for 2^10, 2^20 ... 2^60.
var (
	decimalSuffixes = [...]string{"n", "u", "m", "", "k", "M", "G", "T", "P", "E"}
	binarySuffixes  = [...]string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
)

// interpret returns what a suffix means: the base (10 or 2), the
// exponent of that base and the format it gives the quantity. "E" alone
// is exa; "e" or "E" followed by an integer is a decimal exponent, which
// apimachinery keeps in 32 bits.
func interpret(s string) (base, exponent int32, format Format, ok bool) {
	for n, x := range decimalSuffixes {
		if s == x {
			return 10, int32(3*n - 9), DecimalSI, true
		}
	}
	for n, x := range binarySuffixes {
		if s == x {
			return 2, int32(10 * (n + 1)), BinarySI, true
		}
	}
	if len(s) > 1 && (s[0] == 'e' || s[0] == 'E') {
		if e, err := strconv.ParseInt(s[1:], 10, 64); err == nil {
			return 10, int32(e), DecimalExponent, true
		}
	}
	return 0, 0, DecimalExponent, false
}

// smallQuantity is apimachinery's fast path: when the digits of the
// number and the suffix's multiplier leave room in an int64 and the value
// is a whole number of nano units, the quantity is held as an int64 and a
// scale. The text is kept as written when it is already canonical by
// apimachinery's quick test (for a binary suffix, a number not divisible
// by 8; for a decimal one, a scale that is a multiple of 3 and a number
// that neither starts with 0 nor ends in 000). ok is false when the path
// does not apply.
func smallQuantity(str string, p pieces, exponent int32, format Format) (q Quantity, ok bool, err error) {
	scale, multiplier := int32(0), int64(1)
	if format == BinarySI {
		// About 0.3 decimal digits per bit of the multiplier, from 14.
		if p.frac != "" || exponent < 0 || int32(len(p.whole))+int32(float32(exponent)*3/10) > 14 {
			return Quantity{}, false, nil
		}
		multiplier <<= uint(exponent)
	} else {
		if len(p.whole)+len(p.frac) > maxInt64Factors {
			return Quantity{}, false, nil
		}
		scale = exponent - int32(len(p.frac))
	}
	if scale < nano {
		return Quantity{}, false, nil
	}
	digits := p.whole + p.frac
	n, perr := strconv.ParseInt(digits, 10, 64)
	if perr != nil {
		return Quantity{}, false, ErrNumeric
	}
	v, fits := mulInt64(n, multiplier)
	if !fits {
		return Quantity{}, false, nil
	}
	if p.negative {
		v = -v
	}
	q = Quantity{i: v, scale: scale, format: format}
	var canonical bool
	if format == BinarySI {
		canonical = n%8 != 0
	} else {
		canonical = scale%3 == 0 && digits[0] != '0' && !strings.HasSuffix(digits, "000")
	}
	if canonical {
		q.s = str
	} else {
		q.s = q.canonicalize()
	}
	return q, true, nil
}

// scanDecimal is inf.Dec.SetString on the number part of a quantity: an
// optional sign, digits and at most one '.'. It returns the digits as an
// integer and the number of digits after the point.
func scanDecimal(s string) (*big.Int, int32, bool) {
	digits := make([]byte, 0, len(s))
	dp, dg := -1, -1
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '+' || ch == '-':
			if len(digits) > 0 || dp >= 0 {
				return nil, 0, false
			}
			digits = append(digits, ch)
		case ch == '.':
			if dp >= 0 {
				return nil, 0, false
			}
			dp = len(digits)
		case '0' <= ch && ch <= '9':
			if dg == -1 {
				dg = len(digits)
			}
			digits = append(digits, ch)
		default:
			return nil, 0, false
		}
	}
	if dg == -1 {
		return nil, 0, false
	}
	scale := int32(0)
	if dp >= 0 {
		scale = int32(len(digits) - dp)
	}
	u, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		return nil, 0, false
	}
	return u, scale, true
}

// RoundUp returns the quantity rounded up, away from zero, to a multiple of
// 10^scale, as Quantity.RoundUp does: what kube-apiserver's defaulting does
// to every resource list with scale -3 ("0.1n" is stored "1m"). A quantity
// already that coarse is returned as it is, written as it was, but one
// apimachinery holds as an inf.Dec (more than 18 digits, or an exponent)
// is written again in canonical form, as Quantity.RoundUp clears it.
func (q Quantity) RoundUp(scale int32) Quantity {
	if q.dec == nil {
		if q.scale >= scale {
			return q
		}
		v, _ := negativeScaleInt64(q.i, scale-q.scale)
		r := Quantity{i: v, scale: scale, format: q.format}
		r.s = r.canonicalize()
		return r
	}
	c, e := q.coefExp()
	coef := new(big.Int).Set(c)
	if e < int64(scale) && coef.Sign() != 0 {
		// Round away from zero at 10^scale: the value's digits below it
		// go, and a non-zero remainder adds one.
		drop := int64(scale) - e
		neg := coef.Sign() < 0
		coef.Abs(coef)
		if drop > int64(digits(coef)) {
			coef.SetInt64(1)
		} else {
			var rem big.Int
			coef.QuoRem(coef, pow10(drop), &rem)
			if rem.Sign() != 0 {
				coef.Add(coef, bigOne)
			}
		}
		if neg {
			coef.Neg(coef)
		}
		e = int64(scale)
	}
	r := Quantity{dec: &decimal{coef: coef, k: e}, format: q.format}
	r.s = r.canonicalize()
	return r
}
