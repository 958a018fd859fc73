package quantity_test

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/konverge/konverge/quantity"
)

// quantityCorpus holds quantities, valid and not, that the differential
// tests parse with both Parse and resource.ParseQuantity.
var quantityCorpus = []string{
	// The examples of the package documentation.
	"0.5", "1000m", "1.5Gi", "1e3", "0.1", "12e-3", "1024Mi", "100Mi", "2000000000m",
	"1Gi", "1536Mi", "500m", "1", "1k", "12m", "2M",
	// Zeros and signs.
	"0", "00", "0.0", ".0", "0.", "-0", "+0", "0m", "0Ki", "0e5", "-0.0Gi", "+", "-", ".", "+.", "-.",
	"+1", "-1", "+1.5", "-1.5", "-.5", "+.5", "-0.5", "-1Ki", "-1.5Gi", "-1e3", "-1024Mi", "-1023",
	"-1024", "-1025", "-0.0000000015", "-1.5n", "--1", "+-1", "-+1", "++1",
	// Every suffix.
	"1n", "1u", "1m", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
	"1.5n", "1.5u", "1.5m", "1.5k", "1.5M", "1.5G", "1.5T", "1.5P", "1.5E",
	"1.5Ki", "1.5Mi", "1.5Ti", "1.5Pi", "1.5Ei", "0.5Ki", "0.001Ki", "1.1Ki", "1023.9Ki",
	"1024Ki", "1025Ki", "2048Ki", "8Ki", "7Ki", "1048576Ki", "1073741824", "1048576", "1024",
	"1023", "1000", "999", "100", "10", "1000000", "1000k", "1000M", "1000G", "1000T", "1000P",
	"1000E", "1000000E", "10000P", "1000000000000000000000", "12345678901234567890123",
	// Exponents.
	"1e0", "1e1", "1e2", "1e-1", "1e-2", "1e-3", "1e-9", "1e-10", "1E3", "1E-3", "1e+3",
	"15e-1", "100e-2", "1000e-3", "1.5e1", "1.5e3", "1.5e-3", "12e6", "12E6", "1e18", "1e19",
	"1e21", "1e100", "1e-100", "123e-15", "1e9", "1e-1000", "1e4294967296", "1e4294967295",
	"1e2147483647", "1e2147483648", "1e-2147483648", "1e-2147483649", "1.5e-2147483648",
	"100e2147483646", "10e2147483646", "1e9223372036854775807", "1e9223372036854775808",
	"0.000000000000000000001e21", "1234567890123456789e-5", "1234567890123456789012e3",
	// Precision and rounding.
	"0.1n", "0.0000000001", "0.00000000001", "-0.0000000001", "1.0000000001", "0.9999999999",
	"123456789012345678", "1234567890123456789", "9223372036854775807", "9223372036854775808",
	"-9223372036854775808", "-9223372036854775809", "99999999999999999999999999999",
	"0.000000001", "0.0000000015", "1.23456789012345678901234567890",
	"7.99Ei", "8Ei", "9Ei", "-8Ei", "-9Ei", "100Ei", "123456789012345678901234567890Ki",
	"8191Pi", "8192Pi", "8193Pi", "0.5Ei", "1.0Gi", "1.00Gi", "1.000Gi", "512Ki", "999999Ki",
	"0.0001m", "0.0001k", "1.5e-9", "5e-10", "0.00000000049", "10Ki", "9.5", "10.5",
	"1000000001m", "1000000000m", "2000000m", "1000u", "1000000n", "1500m", "1500", "1500k",
	// Errors.
	"", " ", " 1", "1 ", "1Q", "Q", "1Ki1", "1KI", "1ki", "1.5.5", "5.5.5", "1e", "1e-", "1e+",
	"1e-+3", "1ee3", "1eE3", "1Eie", "1i", "1e1.5", "1.5e1Ki", "1e-2Mi", "1e-9Ki", "1.e3", "1.",
	".e3", ".Ki", ".Ei", ".e-20", "e3", "Ki", "1,5", "1_000", "0x10", "∞", "1e3k", "1ke3", "1mm",
	"1Mi5", "1e99999999999999999999", "1e-99999999999999999999", "1Ei5", "1E18E",
}

func refQuantityError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, resource.ErrFormatWrong):
		return quantity.ErrFormatWrong
	case errors.Is(err, resource.ErrNumeric):
		return quantity.ErrNumeric
	case errors.Is(err, resource.ErrSuffix):
		return quantity.ErrSuffix
	}
	return err
}

// referenceTooSlow reports inputs whose parse takes apimachinery's inf.Dec
// path with an exponent so large that its arithmetic does not finish
// (10^exponent written out in full): numbers of more than 18 digits, binary
// suffixes with fractions, or negative exponents beyond nano.
func referenceTooSlow(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 || i+1 >= len(s) || s[i+1] == 'i' {
		return false
	}
	e, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return false
	}
	e32 := int64(int32(e))
	if e32 > -2000 && e32 < 2000 {
		return false
	}
	// The digits as apimachinery counts them: leading zeros of the
	// integer part dropped, "0" when none is left.
	mantissa := strings.TrimLeft(s[:i], "+-")
	whole, frac, _ := strings.Cut(mantissa, ".")
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	digits := len(whole) + len(frac)
	nonZero := strings.ContainsAny(whole+frac, "123456789")
	// Value and MilliValue of a zero with a large exponent multiply 0 by
	// 10 that many times.
	return digits > 18 || e32 < 0 || !nonZero && e32 > 100000
}

// compareQuantity checks Parse against resource.ParseQuantity on one input.
func compareQuantity(t *testing.T, s string) (quantity.Quantity, resource.Quantity, bool) {
	t.Helper()
	got, err := quantity.Parse(s)
	want, wantErr := resource.ParseQuantity(s)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("Parse(%q) error = %v, resource.ParseQuantity error = %v", s, err, wantErr)
	}
	if err != nil {
		refErr := refQuantityError(wantErr)
		if !errors.Is(err, refErr) || !strings.HasSuffix(err.Error(), wantErr.Error()) {
			t.Fatalf("Parse(%q) error = %v, want %v", s, err, wantErr)
		}
		return got, want, false
	}
	if g, w := got.String(), want.String(); g != w {
		t.Fatalf("Parse(%q).String() = %q, want %q", s, g, w)
	}
	if g, w := got.Format(), quantity.Format(want.Format); g != w {
		t.Fatalf("Parse(%q).Format() = %q, want %q", s, g, w)
	}
	if g, w := got.Value(), want.Value(); g != w {
		t.Fatalf("Parse(%q).Value() = %d, want %d", s, g, w)
	}
	if g, w := got.MilliValue(), want.MilliValue(); g != w {
		t.Fatalf("Parse(%q).MilliValue() = %d, want %d", s, g, w)
	}
	if g, w := got.IsZero(), want.IsZero(); g != w {
		t.Fatalf("Parse(%q).IsZero() = %v, want %v", s, g, w)
	}
	if g, w := got.Sign(), want.Sign(); g != w {
		t.Fatalf("Parse(%q).Sign() = %d, want %d", s, g, w)
	}
	// What the API server stores parses back to the same value, when it
	// does for apimachinery (DecimalSI values from 10^21 up lose their
	// suffix).
	if hugeExponent(s) || hugeExponent(want.String()) {
		return got, want, true
	}
	if refAgain, err := resource.ParseQuantity(want.String()); err == nil && refAgain.Cmp(want) == 0 {
		again, err := quantity.Parse(got.String())
		if err != nil || again.Cmp(got) != 0 {
			t.Fatalf("Parse(%q).String() = %q does not parse back to the same value: %v", s, got.String(), err)
		}
	}
	return got, want, true
}

func TestParseDifferential(t *testing.T) {
	type parsed struct {
		s    string
		got  quantity.Quantity
		want resource.Quantity
	}
	var ok []parsed
	for _, s := range quantityCorpus {
		t.Run(s, func(t *testing.T) {
			if referenceTooSlow(s) {
				t.Skip("apimachinery's arithmetic does not finish on this input")
			}
			got, want, valid := compareQuantity(t, s)
			if valid && !hugeExponent(s) {
				ok = append(ok, parsed{s, got, want})
			}
		})
	}
	t.Run("Cmp", func(t *testing.T) {
		for _, a := range ok {
			for _, b := range ok {
				if g, w := a.got.Cmp(b.got), a.want.Cmp(b.want); g != w {
					t.Errorf("Parse(%q).Cmp(%q) = %d, want %d", a.s, b.s, g, w)
				}
			}
		}
	})
}

// hugeExponent reports inputs whose values apimachinery cannot compare in
// reasonable time (it writes 10^exponent out).
func hugeExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 || i+1 >= len(s) || s[i+1] == 'i' {
		return false
	}
	e, err := strconv.ParseInt(s[i+1:], 10, 64)
	return err == nil && (int32(e) > 300 || int32(e) < -300)
}

var suffixes = []string{"", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}

// randomQuantity builds a quantity from random pieces: sign, digits with a
// point somewhere, a suffix or an exponent, and now and then a stray
// character.
func randomQuantity(r *rand.Rand) string {
	var b strings.Builder
	switch r.IntN(6) {
	case 0:
		b.WriteByte('-')
	case 1:
		b.WriteByte('+')
	}
	n := r.IntN(24)
	if r.IntN(4) == 0 {
		n = r.IntN(4)
	}
	point := -1
	if r.IntN(2) == 0 {
		point = r.IntN(n + 1)
	}
	for i := 0; i < n; i++ {
		if i == point {
			b.WriteByte('.')
		}
		if i == 0 && r.IntN(5) == 0 {
			b.WriteByte('0')
			continue
		}
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	if point == n {
		b.WriteByte('.')
	}
	switch r.IntN(3) {
	case 0:
		b.WriteString(suffixes[r.IntN(len(suffixes))])
	case 1:
		b.WriteByte("eE"[r.IntN(2)])
		switch r.IntN(3) {
		case 0:
			b.WriteByte('-')
		case 1:
			b.WriteByte('+')
		}
		switch r.IntN(10) {
		case 0:
			b.WriteString(strconv.FormatInt(r.Int64(), 10))
		case 1:
			b.WriteString(strconv.Itoa(r.IntN(100000)))
		default:
			b.WriteString(strconv.Itoa(r.IntN(40)))
		}
	}
	if r.IntN(40) == 0 {
		s := []byte(b.String())
		junk := "eEi.+-KQ 0"
		s = append(s, junk[r.IntN(len(junk))])
		return string(s)
	}
	return b.String()
}

func TestParseDifferentialRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const n = 50000
	valid := 0
	var prev []quantity.Quantity
	var prevRef []resource.Quantity
	var prevS []string
	for range n {
		s := randomQuantity(r)
		if referenceTooSlow(s) {
			continue
		}
		got, want, ok := compareQuantity(t, s)
		if t.Failed() {
			return
		}
		if !ok {
			continue
		}
		valid++
		if hugeExponent(s) {
			continue
		}
		// Compare with a few earlier quantities.
		for j := max(0, len(prev)-3); j < len(prev); j++ {
			if g, w := got.Cmp(prev[j]), want.Cmp(prevRef[j]); g != w {
				t.Fatalf("Parse(%q).Cmp(%q) = %d, want %d", s, prevS[j], g, w)
			}
		}
		prev, prevRef, prevS = append(prev, got), append(prevRef, want), append(prevS, s)
	}
	t.Logf("%d random quantities, %d valid", n, valid)
}

func FuzzCanonical(f *testing.F) {
	for _, s := range quantityCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if referenceTooSlow(s) || len(s) > 1000 {
			t.Skip()
		}
		compareQuantity(t, s)
	})
}

// RoundUp(-3), what the API server does to every resource list, gives
// what Quantity.RoundUp gives, on the corpus and random quantities.
func TestRoundUpDifferential(t *testing.T) {
	inputs := append([]string{}, quantityCorpus...)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		inputs = append(inputs, randomQuantity(rng))
	}
	for _, s := range inputs {
		if referenceTooSlow(s) || hugeExponent(s) {
			continue
		}
		ref, rerr := resource.ParseQuantity(s)
		q, err := quantity.Parse(s)
		if rerr != nil || err != nil {
			continue
		}
		for _, scale := range []int32{-3, 0, -9, 3} {
			r := ref.DeepCopy()
			r.RoundUp(resource.Scale(scale))
			if got, want := q.RoundUp(scale).String(), r.String(); got != want {
				t.Errorf("RoundUp(%q, %d) = %q, want %q", s, scale, got, want)
			}
		}
	}
}
