package value_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/konverge/konverge/value"
)

// encodeCorpus are values Encode must write exactly as json.Marshal does.
var encodeCorpus = []struct {
	name string
	v    any
}{
	{"nil", nil},
	{"true", true},
	{"false", false},
	{"empty string", ""},
	{"html", `<a href="x">&amp;</a>`},
	{"escapes", "\"\\/\b\f\n\r\t"},
	{"control characters", "\x00\x01\x07\x0b\x0e\x1b\x1f\x7f"},
	{"line separators", "a\u2028b\u2029c"},
	{"invalid UTF-8", "a\xffb\xc3\xed\xa0\x80\xf4\x90\x80\x80"},
	{"replacement character", "\uFFFD"},
	{"non-ASCII", "日本語 ✓ 😀 é"},
	{"BOM and noncharacters", "\uFEFF\uFFFE\uFFFF"},
	{"int64", int64(-42)},
	{"min int64", int64(math.MinInt64)},
	{"max int64", int64(math.MaxInt64)},
	{"int", 7},
	{"int32", int32(-7)},
	{"uint64", uint64(math.MaxUint64)},
	{"zero", 0.0},
	{"negative zero", math.Copysign(0, -1)},
	{"float", 3.14},
	{"one third", 1.0 / 3},
	{"123456789.0", 123456789.0},
	{"1e20", 1e20},
	{"1e21", 1e21},
	{"just below 1e21", 999999999999999900000.0},
	{"1e-6", 1e-6},
	{"1e-7", 1e-7},
	{"just below 1e-6", 9.999999999999999e-7},
	{"negative 1e-7", -1e-7},
	{"1.5e-10", 1.5e-10},
	{"1e100", 1e100},
	{"smallest denormal", 5e-324},
	{"max float64", math.MaxFloat64},
	{"2^63", float64(1 << 63)},
	{"float32", float32(0.1)},
	{"float32 large", float32(1e21)},
	{"float32 small", float32(1e-7)},
	{"float32 max", float32(math.MaxFloat32)},
	{"json.Number", json.Number("1.50e+01")},
	{"empty json.Number", json.Number("")},
	{"empty object", map[string]any{}},
	{"nil object", map[string]any(nil)},
	{"empty list", []any{}},
	{"nil list", []any(nil)},
	{"string map", map[string]string{"b": "<", "a": "1"}},
	{"nil string map", map[string]string(nil)},
	{"string list", []string{"a", "&"}},
	{"empty string list", []string{}},
	{"nil string list", []string(nil)},
	{"sorted keys", map[string]any{"b": 1, "a": 2, "": 3, "B": 4, "aa": 5, "é": 6, "\xff": 7, "<": 8}},
	{"nested", map[string]any{
		"spec": map[string]any{
			"containers": []any{
				map[string]any{"name": "nginx", "ports": []any{map[string]any{"containerPort": int64(80)}}},
				map[string]any{"name": "sidecar", "args": []any{"--a=<b>", nil, true, 1.5}},
			},
			"empty": map[string]any{"l": []any{}, "o": map[string]any{}, "n": []any(nil)},
		},
	}},
	{"deep acyclic", deepList(value.MaxDepth + 500)},
}

func deepList(n int) any {
	var v any = "leaf"
	for range n {
		v = []any{v}
	}
	return v
}

func TestEncode(t *testing.T) {
	for _, tc := range encodeCorpus {
		t.Run(tc.name, func(t *testing.T) {
			checkEncode(t, tc.v)
		})
	}
}

// checkEncode fails t unless Encode(v) is json.Marshal(v), and unless the
// encoding decodes to a value Equal to v (as Decode sees it), which encodes
// to a value Equal to it again.
func checkEncode(t *testing.T, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v", v, err)
	}
	got, err := value.Encode(v)
	if err != nil {
		t.Fatalf("Encode(%#v): %v", v, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode(%#v)\n got %s\nwant %s", v, got, want)
	}
	prefix := []byte("prefix:")
	appended, err := value.AppendEncode(prefix, v)
	if err != nil || !bytes.Equal(appended, append(prefix, want...)) {
		t.Fatalf("AppendEncode = %s, %v", appended, err)
	}
	d, err := value.Decode(got)
	if err != nil {
		if strings.Contains(err.Error(), "nested deeper") {
			return
		}
		t.Fatalf("Decode(Encode(%#v)): %v", v, err)
	}
	if !value.Equal(d, asDecoded(v)) {
		t.Fatalf("Decode(Encode(%#v)) = %#v", v, d)
	}
	again, err := value.Encode(d)
	if err != nil {
		t.Fatalf("Encode(Decode(%s)): %v", got, err)
	}
	d2, err := value.Decode(again)
	if err != nil || !value.Equal(d, d2) {
		t.Fatalf("Decode(Encode(Decode(%s))) = %#v, %v; want %#v", got, d2, err, d)
	}
}

func TestEncodeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20_000 {
		v := randomValue(r, 4)
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("#%d: json.Marshal(%#v): %v", i, v, err)
		}
		got, err := value.Encode(v)
		if err != nil {
			t.Fatalf("#%d: Encode(%#v): %v", i, v, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("#%d: Encode(%#v)\n got %s\nwant %s", i, v, got, want)
		}
		if !value.Equal(v, value.DeepCopy(v)) {
			t.Fatalf("#%d: %#v does not equal its copy", i, v)
		}
		d, err := value.Decode(got)
		if hasCollidingKeys(v) {
			// Keys differing only in invalid UTF-8 are the same key once
			// encoded, as they are with json.Marshal.
			if err == nil || !strings.Contains(err.Error(), "duplicate key") {
				t.Fatalf("#%d: Decode(%s) = %v, want a duplicate key error", i, got, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("#%d: Decode(%s): %v", i, got, err)
		}
		if !value.Equal(d, asDecoded(v)) {
			t.Fatalf("#%d: Decode(Encode(%#v)) = %#v", i, v, d)
		}
	}
}

// asDecoded is v as Decode reads it back from Encode: each byte of a string
// that is not part of valid UTF-8 replaced by U+FFFD, and numbers as
// reference reads what json.Marshal writes for them (so a float64 like
// 1e20 comes back as an int64 if its digits fit one, and a uint64 beyond
// int64 as a float64).
func asDecoded(v any) any {
	switch x := v.(type) {
	case int, int32, int64, uint64, float32, float64, json.Number:
		b, err := json.Marshal(x)
		if err != nil {
			return v
		}
		n, err := refNumber(string(b))
		if err != nil {
			return v
		}
		return n
	case string:
		return string([]rune(x))
	case map[string]any:
		if x == nil {
			return x
		}
		m := make(map[string]any, len(x))
		for k, el := range x {
			m[string([]rune(k))] = asDecoded(el)
		}
		return m
	case []any:
		if x == nil {
			return x
		}
		l := make([]any, len(x))
		for i, el := range x {
			l[i] = asDecoded(el)
		}
		return l
	case map[string]string:
		if x == nil {
			return x
		}
		m := make(map[string]any, len(x))
		for k, el := range x {
			m[string([]rune(k))] = string([]rune(el))
		}
		return m
	case []string:
		if x == nil {
			return x
		}
		l := make([]any, len(x))
		for i, el := range x {
			l[i] = string([]rune(el))
		}
		return l
	}
	return v
}

// hasCollidingKeys reports whether an object in v has two keys that differ
// only in bytes that are not valid UTF-8.
func hasCollidingKeys(v any) bool {
	var keys []string
	switch x := v.(type) {
	case map[string]any:
		for k, el := range x {
			if hasCollidingKeys(el) {
				return true
			}
			keys = append(keys, k)
		}
	case map[string]string:
		for k := range x {
			keys = append(keys, k)
		}
	case []any:
		for _, el := range x {
			if hasCollidingKeys(el) {
				return true
			}
		}
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[string([]rune(k))] {
			return true
		}
		seen[string([]rune(k))] = true
	}
	return false
}

// stringPieces are what random strings are made of: HTML characters,
// control characters, quotes, invalid UTF-8, line separators.
var stringPieces = []string{
	"a", "Z", "0", " ", "name", "nginx", "<", ">", "&", "\"", "\\", "/",
	"\x00", "\x01", "\b", "\f", "\n", "\r", "\t", "\x1f", "\x7f",
	"\x80", "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe6\x97",
	"é", "日", "😀", "\u2028", "\u2029", "\uFFFD", "\uFEFF", "\u0085",
}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(stringPieces[r.IntN(len(stringPieces))])
	}
	return b.String()
}

// specialFloats are floats at the edges of encoding/json's formats.
var specialFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, 1.0 / 3, 123456789.0, 1e20, 1e21,
	-1e21, 999999999999999900000, 1e-6, -1e-6, 1e-7, 9.999999999999999e-7,
	1.5e-10, 5e-324, math.SmallestNonzeroFloat64, 2.2250738585072014e-308,
	math.MaxFloat64, -math.MaxFloat64, 1 << 53, 1<<53 + 1, 1 << 63, 1 << 64,
	1e15, 1e16, 1e17, 0.000001234, 12345678901234567890,
}

func randomFloat(r *rand.Rand) float64 {
	switch r.IntN(4) {
	case 0:
		return specialFloats[r.IntN(len(specialFloats))]
	case 1: // any bit pattern but NaN and infinities
		for {
			f := math.Float64frombits(r.Uint64())
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f
			}
		}
	case 2: // a few digits at every decimal magnitude
		return float64(r.IntN(100000)-50000) * math.Pow10(r.IntN(60)-30)
	}
	return r.NormFloat64() * math.Pow(10, float64(r.IntN(50)-25))
}

func randomScalar(r *rand.Rand) any {
	switch r.IntN(14) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2, 3, 4:
		return randomString(r)
	case 5:
		return int64(r.Uint64())
	case 6:
		return int64(r.IntN(2000) - 1000)
	case 7:
		return r.Int()
	case 8:
		return int32(r.Uint32())
	case 9:
		return r.Uint64()
	case 10:
		f := float32(randomFloat(r))
		if math.IsInf(float64(f), 0) {
			return float32(math.MaxFloat32)
		}
		return f
	case 11:
		return []json.Number{"0", "-0", "1.5", "1e300", "-12.5E-3", "123456789012345678901234567890"}[r.IntN(6)]
	}
	return randomFloat(r)
}

func randomValue(r *rand.Rand, depth int) any {
	if depth == 0 {
		return randomScalar(r)
	}
	switch r.IntN(8) {
	case 0, 1:
		if r.IntN(10) == 0 {
			return map[string]any(nil)
		}
		m := map[string]any{}
		for range r.IntN(6) {
			m[randomString(r)] = randomValue(r, depth-1)
		}
		return m
	case 2, 3:
		if r.IntN(10) == 0 {
			return []any(nil)
		}
		l := []any{}
		for range r.IntN(6) {
			l = append(l, randomValue(r, depth-1))
		}
		return l
	case 4:
		if r.IntN(10) == 0 {
			return map[string]string(nil)
		}
		m := map[string]string{}
		for range r.IntN(4) {
			m[randomString(r)] = randomString(r)
		}
		return m
	case 5:
		if r.IntN(10) == 0 {
			return []string(nil)
		}
		l := []string{}
		for range r.IntN(4) {
			l = append(l, randomString(r))
		}
		return l
	}
	return randomScalar(r)
}

func TestEncodeUnsupported(t *testing.T) {
	cyclicMap := map[string]any{"a": 1}
	cyclicMap["self"] = cyclicMap
	cyclicList := []any{1, nil}
	cyclicList[1] = cyclicList
	deepCycle := map[string]any{}
	inner := deepCycle
	for range 10 {
		next := map[string]any{}
		inner["x"] = []any{next}
		inner = next
	}
	inner["back"] = deepCycle

	for _, tc := range []struct {
		name  string
		v     any
		path  string
		err   string
		cycle bool
	}{
		{"NaN", math.NaN(), ".", "value: cannot encode NaN at .", false},
		{"+Inf in list", []any{1, math.Inf(1)}, "[1]", "value: cannot encode +Inf at [1]", false},
		{"-Inf deep", map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": math.Inf(-1)}}}}, "spec.ports[0].port", "value: cannot encode -Inf at spec.ports[0].port", false},
		{"float32 NaN", map[string]any{"a": float32(math.NaN())}, "a", "value: cannot encode NaN at a", false},
		{"float32 Inf", []any{float32(math.Inf(1))}, "[0]", "value: cannot encode +Inf at [0]", false},
		{"int8", map[string]any{"replicas": int8(3)}, "replicas", "value: cannot encode a value of type int8 at replicas", false},
		{"uint", []any{uint(1)}, "[0]", "value: cannot encode a value of type uint at [0]", false},
		{"struct", map[string]any{"a": struct{}{}}, "a", "value: cannot encode a value of type struct {} at a", false},
		{"int map", map[string]any{"m": map[string]int{"a": 1}}, "m", "value: cannot encode a value of type map[string]int at m", false},
		{"int slice", []int{1}, ".", "value: cannot encode a value of type []int at .", false},
		{"pointer", map[string]any{"p": new(int64)}, "p", "value: cannot encode a value of type *int64 at p", false},
		{"func", func() {}, ".", "value: cannot encode a value of type func() at .", false},
		{"bad json.Number", map[string]any{"n": json.Number("12abc")}, "n", `value: cannot encode invalid number literal "12abc" at n`, false},
		{"json.Number NaN", json.Number("NaN"), ".", `value: cannot encode invalid number literal "NaN" at .`, false},
		{"map cycle", cyclicMap, "", "", true},
		{"list cycle", cyclicList, "", "", true},
		{"long cycle", deepCycle, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := json.Marshal(tc.v); err == nil && !strings.Contains(tc.err, "of type") {
				t.Errorf("json.Marshal accepts %#v", tc.v)
			}
			prefix := []byte("keep")
			got, err := value.AppendEncode(prefix, tc.v)
			var ue *value.UnsupportedValueError
			if !errors.As(err, &ue) {
				t.Fatalf("AppendEncode = %q, %v; want an *UnsupportedValueError", got, err)
			}
			if string(got) != "keep" {
				t.Errorf("AppendEncode returned %q with its error, want the dst it was given", got)
			}
			if tc.cycle {
				if ue.Reason != "encountered a cycle" {
					t.Errorf("Reason = %q, want a cycle", ue.Reason)
				}
				// The path leads, past MaxDepth, to the value that
				// contains itself.
				if len(ue.Path) <= value.MaxDepth {
					t.Errorf("cycle found after %d steps", len(ue.Path))
				}
				at, ok := walk(tc.v, ue.Path)
				if !ok || !sameContainer(at, ue.Value) {
					t.Errorf("Path %.40s... does not lead to the Value", ue.Path)
				}
				if !strings.HasSuffix(err.Error(), ": encountered a cycle") {
					t.Errorf("Error() = %.100q...", err)
				}
				return
			}
			if ue.Path.String() != tc.path {
				t.Errorf("Path = %s, want %s", ue.Path, tc.path)
			}
			if err.Error() != tc.err {
				t.Errorf("Error() = %q, want %q", err, tc.err)
			}
			if _, err := value.Encode(tc.v); err == nil {
				t.Errorf("Encode accepts what AppendEncode rejects")
			}
		})
	}
}

// TestEncodeSharedNotCyclic checks that a value appearing twice, but not
// inside itself, is no cycle, however deep.
func TestEncodeSharedNotCyclic(t *testing.T) {
	leaf := map[string]any{"a": []any{1}}
	shared := deepList(value.MaxDepth + 10)
	v := map[string]any{"x": leaf, "y": leaf, "deep1": shared, "deep2": shared, "l": []any{shared, shared}}
	checkEncode(t, v)
}

// walk follows the field and index steps of p from v.
func walk(v any, p value.Path) (any, bool) {
	for _, e := range p {
		switch e.Kind {
		case value.FieldKind:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			v, ok = m[e.Field]
			if !ok {
				return nil, false
			}
		case value.IndexKind:
			l, ok := v.([]any)
			if !ok || e.Index >= len(l) {
				return nil, false
			}
			v = l[e.Index]
		default:
			return nil, false
		}
	}
	return v, true
}

// sameContainer reports whether a and b are the same map or the same list.
func sameContainer(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		x["\x00probe"] = true
		_, same := y["\x00probe"]
		delete(x, "\x00probe")
		return same
	case []any:
		y, ok := b.([]any)
		return ok && len(x) > 0 && len(x) == len(y) && &x[0] == &y[0]
	}
	return false
}

// TestAppendEncodeExact checks AppendEncodeExact against AppendEncode
// and a walk of its own that tells the values Decode makes (maps, lists,
// strings and keys of valid UTF-8, int64, float64 that are not
// integral, booleans, null) from the others, on random values and the
// corpus; the encoder is pooled, so an inexact value must not leak into
// the next answer.
func TestAppendEncodeExact(t *testing.T) {
	var decodable func(v any) bool
	decodable = func(v any) bool {
		switch x := v.(type) {
		case nil, bool, int64:
			return true
		case string:
			return utf8.ValidString(x)
		case float64:
			return x != math.Trunc(x)
		case map[string]any:
			for k, e := range x {
				if !utf8.ValidString(k) || !decodable(e) {
					return false
				}
			}
			return true
		case []any:
			for _, e := range x {
				if !decodable(e) {
					return false
				}
			}
			return true
		}
		return false
	}
	check := func(name string, v any) {
		t.Helper()
		want, werr := value.AppendEncode([]byte("x"), v)
		got, exact, err := value.AppendEncodeExact([]byte("x"), v)
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%s: AppendEncodeExact(%#v) = %s, %v; AppendEncode %s, %v", name, v, got, err, want, werr)
		}
		if err == nil && exact != decodable(v) {
			t.Fatalf("%s: AppendEncodeExact(%#v) exact = %v, want %v", name, v, exact, !exact)
		}
	}
	for _, tc := range encodeCorpus {
		check(tc.name, tc.v)
	}
	long := strings.Repeat("é", 1024)
	for _, v := range []any{
		int64(1), 1.0, 1.5, "\xff", map[string]any{"\xff": int64(1)}, []any{int32(1)},
		// A long string's encoding is remembered across uses, its
		// validity with it.
		long + "\xff", long + "\xff", long, long,
	} {
		check(fmt.Sprintf("%#v", v), v)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		check(fmt.Sprint("#", i), randomValue(r, 4))
	}
}
