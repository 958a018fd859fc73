package value_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/konverge/konverge/value"
)

// stringAlphabet holds the characters that take the different paths of the
// eight-byte string scans: plain ASCII, the characters encoding escapes
// (quote, backslash, <, >, &, controls), multi-byte UTF-8, U+2028, bytes of
// invalid UTF-8, and the bytes next to them in value (!, #, ', =, ?, [, ]).
var stringAlphabet = []string{
	"a", "b", "z", "0", " ", "~", "!", "#", "%", "'", "=", "?", "[", "]",
	"\"", "\\", "<", ">", "&", "\n", "\t", "\x00", "\x1f", "\x7f",
	"é", "日本", "\u2028", "\u2029", "\U0001F600", "\xff", "\xc3", "\xed\xa0\x80",
}

func randomScanString(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if r.IntN(3) == 0 {
			b.WriteString(stringAlphabet[r.IntN(len(stringAlphabet))])
		} else {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	return b.String()
}

// TestStringScans checks Encode and Decode on strings of every length up to
// a few words and on long ones (which Encode remembers), against
// encoding/json.
func TestStringScans(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		n := i % 40
		if i%100 == 99 {
			n = 1000 + r.IntN(3000)
		}
		s := randomScanString(r, n)
		checkEncode(t, s)
		checkEncode(t, map[string]any{"a": s, "b": []any{s, s + "x", s}})
		enc, err := value.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstReference(t, enc)
		checkAgainstReference(t, []byte(`"`+s+`"`))
	}
}

// TestLongStringMemory checks that the encoding Encode remembers of a long
// string is only used for an equal string: two long strings of the same
// length, encoded in turn and together.
func TestLongStringMemory(t *testing.T) {
	a := strings.Repeat(`{"a":"<b>"}`, 200)
	b := strings.Repeat(`{"a":"<c>"}`, 200)
	for _, v := range []any{a, b, a, []any{a, b, a, b}, map[string]any{"x": a, "y": b}, b} {
		checkEncode(t, v)
	}
}
