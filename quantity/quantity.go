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
	positive, value, num, denom, suf, err := parseQuantityString(str)
	if err != nil {
		return Quantity{}, err
	}
	base, exponent, format, ok := interpret(suf)
	if !ok {
		return Quantity{}, ErrSuffix
	}

	precision := int32(0)
	scale := int32(0)
	mantissa := int64(1)
	switch format {
	case DecimalExponent, DecimalSI:
		scale = exponent
		precision = maxInt64Factors - int32(len(num)+len(denom))
	case BinarySI:
		scale = 0
		switch {
		case exponent >= 0 && len(denom) == 0:
			mantissa <<= uint64(exponent)
			precision = 15 - int32(len(num)) - int32(float32(exponent)*3/10) - 1
		default:
			precision = -1
		}
	}

	if precision >= 0 {
		scale -= int32(len(denom))
		if scale >= nano {
			shifted := num + denom
			v, err := strconv.ParseInt(shifted, 10, 64)
			if err != nil {
				return Quantity{}, ErrNumeric
			}
			if result, ok := int64Multiply(v, mantissa); ok {
				if !positive {
					result = -result
				}
				q := Quantity{i: result, scale: scale, format: format}
				keep := false
				switch format {
				case BinarySI:
					keep = exponent%10 == 0 && v&0x07 != 0
				default:
					keep = scale%3 == 0 && !strings.HasSuffix(shifted, "000") && shifted[0] != '0'
				}
				if keep {
					q.s = str
				} else {
					q.s = q.canonicalize()
				}
				return q, nil
			}
		}
	}

	unscaled, decScale, ok := scanDecimal(value)
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

// parseQuantityString is apimachinery's, which splits a quantity into
// sign, number (value), integer and fraction digits and suffix.
func parseQuantityString(str string) (positive bool, value, num, denom, suffix string, err error) {
	positive = true
	pos := 0
	end := len(str)

	if pos < end {
		switch str[0] {
		case '-':
			positive = false
			pos++
		case '+':
			pos++
		}
	}

	// strip leading zeros
Zeroes:
	for i := pos; ; i++ {
		if i >= end {
			num = "0"
			value = num
			return
		}
		switch str[i] {
		case '0':
			pos++
		default:
			break Zeroes
		}
	}

	// extract the numerator
Num:
	for i := pos; ; i++ {
		if i >= end {
			num = str[pos:end]
			value = str[0:end]
			return
		}
		switch str[i] {
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			num = str[pos:i]
			pos = i
			break Num
		}
	}

	// if we stripped all numerator positions, always return 0
	if len(num) == 0 {
		num = "0"
	}

	// handle a denominator
	if pos < end && str[pos] == '.' {
		pos++
	Denom:
		for i := pos; ; i++ {
			if i >= end {
				denom = str[pos:end]
				value = str[0:end]
				return
			}
			switch str[i] {
			case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			default:
				denom = str[pos:i]
				pos = i
				break Denom
			}
		}
	}
	value = str[0:pos]

	// grab the elements of the suffix
	suffixStart := pos
	for i := pos; ; i++ {
		if i >= end {
			suffix = str[suffixStart:end]
			return
		}
		if !strings.ContainsAny(str[i:i+1], "eEinumkKMGTP") {
			pos = i
			break
		}
	}
	if pos < end {
		switch str[pos] {
		case '-', '+':
			pos++
		}
	}
Suffix:
	for i := pos; ; i++ {
		if i >= end {
			suffix = str[suffixStart:end]
			return
		}
		switch str[i] {
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			break Suffix
		}
	}
	// we encountered a non decimal in the Suffix loop, but the last character
	// was not a valid exponent
	err = ErrFormatWrong
	return
}

// interpret is the suffixer of apimachinery: the base (10 or 2), the
// exponent and the format of a suffix.
func interpret(s string) (base, exponent int32, format Format, ok bool) {
	switch s {
	case "":
		return 10, 0, DecimalSI, true
	case "n":
		return 10, -9, DecimalSI, true
	case "u":
		return 10, -6, DecimalSI, true
	case "m":
		return 10, -3, DecimalSI, true
	case "k":
		return 10, 3, DecimalSI, true
	case "M":
		return 10, 6, DecimalSI, true
	case "G":
		return 10, 9, DecimalSI, true
	case "T":
		return 10, 12, DecimalSI, true
	case "P":
		return 10, 15, DecimalSI, true
	case "E":
		return 10, 18, DecimalSI, true
	case "Ki":
		return 2, 10, BinarySI, true
	case "Mi":
		return 2, 20, BinarySI, true
	case "Gi":
		return 2, 30, BinarySI, true
	case "Ti":
		return 2, 40, BinarySI, true
	case "Pi":
		return 2, 50, BinarySI, true
	case "Ei":
		return 2, 60, BinarySI, true
	}
	if len(s) > 1 && (s[0] == 'E' || s[0] == 'e') {
		parsed, err := strconv.ParseInt(s[1:], 10, 64)
		if err != nil {
			return 0, 0, DecimalExponent, false
		}
		return 10, int32(parsed), DecimalExponent, true
	}
	return 0, 0, DecimalExponent, false
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
