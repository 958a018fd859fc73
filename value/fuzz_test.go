package value_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/konverge/konverge/value"
)

// FuzzDecode checks that Decode never panics, that it agrees with
// encoding/json (see reference) on what it accepts and what it decodes, and
// that what it decodes encodes to JSON that decodes to an Equal value.
func FuzzDecode(f *testing.F) {
	for _, tc := range decodeValid {
		f.Add([]byte(tc.in))
	}
	for _, tc := range decodeInvalid {
		f.Add([]byte(tc.in))
	}
	for _, in := range differentialCorpus {
		f.Add([]byte(in))
	}
	if deployment, err := os.ReadFile("testdata/deployment.json"); err == nil {
		f.Add(deployment)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkAgainstReference(t, in)
		v, err := value.Decode(in)
		if err != nil {
			return
		}
		enc, err := value.Encode(v)
		if err != nil {
			t.Fatalf("Encode(Decode(%q)): %v", in, err)
		}
		if want, err := json.Marshal(v); err != nil || !bytes.Equal(enc, want) {
			t.Fatalf("Encode(Decode(%q)) = %s; json.Marshal: %s, %v", in, enc, want, err)
		}
		v2, err := value.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(%q))) = %v; encoding %s", in, err, enc)
		}
		if !value.Equal(v, v2) {
			t.Fatalf("Decode(Encode(Decode(%q))) = %#v, want %#v", in, v2, v)
		}
		// Encoding is stable once the value has been through JSON (the
		// first trip may change it: -0.0 encodes as -0, which decodes as
		// int64(0)).
		enc2, err := value.Encode(v2)
		if err != nil {
			t.Fatal(err)
		}
		v3, err := value.Decode(enc2)
		if err != nil {
			t.Fatal(err)
		}
		if enc3, err := value.Encode(v3); err != nil || !bytes.Equal(enc2, enc3) {
			t.Fatalf("encodings differ: %s then %s (%v)", enc2, enc3, err)
		}
		if c := value.DeepCopy(v); !value.Equal(v, c) {
			t.Fatalf("DeepCopy(%#v) = %#v", v, c)
		}
		if _, err := value.DecodeObject(in); (err == nil) != (value.TypeName(v) == "object") {
			t.Fatalf("DecodeObject(%q): %v, but Decode gives a %s", in, err, value.TypeName(v))
		}
	})
}

// FuzzRoundTrip checks Encode on strings and numbers that Decode cannot
// produce (invalid UTF-8, any float64 bits, any int64), against
// json.Marshal, and that what it writes decodes to the same JSON value.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range stringPieces {
		f.Add(s, 0.0, int64(0))
	}
	for _, tc := range encodeCorpus {
		if s, ok := tc.v.(string); ok {
			f.Add(s, 1.5, int64(-1))
		}
	}
	for i, x := range specialFloats {
		f.Add("k", x, int64(i))
	}
	f.Add("<nginx>", math.Copysign(0, -1), int64(math.MinInt64))
	f.Add("a\u2028", math.NaN(), int64(math.MaxInt64))
	f.Add("\xff", math.Inf(-1), int64(1))
	f.Fuzz(func(t *testing.T, s string, x float64, i int64) {
		v := map[string]any{
			"name": s,
			s:      []any{x, i, s, nil, map[string]any{"s": s}},
		}
		enc, err := value.Encode(v)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			var ue *value.UnsupportedValueError
			if !errors.As(err, &ue) {
				t.Fatalf("Encode with %v: %v, want an UnsupportedValueError", x, err)
			}
			if want := (value.Path{value.FieldElement(s), value.IndexElement(0)}); ue.Path.String() != want.String() {
				t.Fatalf("Path = %s, want %s", ue.Path, want)
			}
			return
		}
		if err != nil {
			t.Fatalf("Encode(%#v): %v", v, err)
		}
		want, err := json.Marshal(v)
		if err != nil || !bytes.Equal(enc, want) {
			t.Fatalf("Encode(%#v) = %s; json.Marshal: %s, %v", v, enc, want, err)
		}
		if !utf8.Valid(enc) {
			t.Fatalf("Encode(%#v) = %q is not UTF-8", v, enc)
		}

		d, err := value.DecodeObject(enc)
		if err != nil {
			t.Fatalf("Decode(%s): %v", enc, err)
		}
		if !value.Equal(d, asDecoded(v)) {
			t.Fatalf("Decode(Encode(%#v)) = %#v", v, d)
		}
		// Numbers are Equal to themselves after the trip when their
		// encoding is exact for the type Decode picks.
		l := d[string([]rune(s))].([]any)
		if !value.Equal(l[1], i) {
			t.Fatalf("int64 %d came back as %#v", i, l[1])
		}
		if back, ok := l[0].(float64); ok && back != x {
			t.Fatalf("float64 %v came back as %v", x, back)
		}
		if k1, _ := value.Key(l[0]); value.Equal(l[0], x) != (k1 == mustKey(t, x)) {
			t.Fatalf("Key and Equal disagree on %v and %#v", x, l[0])
		}

		// A Path prints a key value as its JSON encoding.
		p := value.Path{value.FieldElement("containers"), value.KeyElement(value.KeyField{Name: "name", Value: s})}
		sEnc, _ := value.Encode(s)
		if got := p.String(); got != `containers[name=`+string(sEnc)+`]` {
			t.Fatalf("Path = %s", got)
		}
	})
}

func mustKey(t *testing.T, v any) any {
	t.Helper()
	k, ok := value.Key(v)
	if !ok {
		t.Fatalf("Key(%#v) is not ok", v)
	}
	return k
}
