package value_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/konverge/konverge/value"
)

var negZero = math.Copysign(0, -1)

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b any
		want bool
	}{
		{"nil", nil, nil, true},
		{"nil and nil list", nil, []any(nil), true},
		{"nil and nil object", nil, map[string]any(nil), true},
		{"nil list and nil object", []any(nil), map[string]any(nil), true},
		{"nil and nil string list", nil, []string(nil), true},
		{"nil and nil string map", map[string]string(nil), nil, true},
		{"nil and empty list", nil, []any{}, false},
		{"nil list and empty list", []any(nil), []any{}, false},
		{"nil object and empty object", map[string]any(nil), map[string]any{}, false},
		{"nil and false", nil, false, false},
		{"nil and zero", nil, int64(0), false},
		{"nil and empty string", nil, "", false},
		{"strings", "a", "a", true},
		{"different strings", "a", "A", false},
		{"string and number", "1", int64(1), false},
		{"bools", true, true, true},
		{"different bools", true, false, false},
		{"bool and number", true, int64(1), false},
		{"int64", int64(80), int64(80), true},
		{"different int64", int64(80), int64(81), false},
		{"int64 and float64", int64(1), 1.0, true},
		{"float64 and int64", 2.0, int64(2), true},
		{"int64 and fraction", int64(1), 1.5, false},
		{"int and int64", 3, int64(3), true},
		{"int32 and float32", int32(3), float32(3), true},
		{"uint64 and int64", uint64(5), int64(5), true},
		{"json.Number and int64", json.Number("80"), int64(80), true},
		{"json.Number and float64", json.Number("1.5e0"), 1.5, true},
		{"json.Number exponent and int64", json.Number("1e2"), int64(100), true},
		{"empty json.Number is 0", json.Number(""), int64(0), true},
		{"invalid json.Number", json.Number("abc"), json.Number("abc"), false},
		{"json.Number NaN", json.Number("NaN"), math.NaN(), false},
		{"zero and negative zero", int64(0), negZero, true},
		{"negative zero floats", negZero, 0.0, true},
		{"NaN", math.NaN(), math.NaN(), false},
		{"infinities", math.Inf(1), math.Inf(1), true},
		{"opposite infinities", math.Inf(1), math.Inf(-1), false},
		// Numbers compare as what they become through Encode and Decode.
		{"float32 and float64 of 0.1", float32(0.1), 0.1, true},
		{"float32 and its float64", float32(0.1), float64(float32(0.1)), false},
		{"max int64 and 2^63", int64(math.MaxInt64), float64(1 << 63), false},
		{"min int64 and -2^63", int64(math.MinInt64), float64(-(1 << 63)), false}, // written -9223372036854776000
		{"2^53 and 2^53", int64(1 << 53), float64(1 << 53), true},
		{"2^53+1 and 2^53", int64(1<<53 + 1), float64(1 << 53), false},
		{"float beyond 2^53 and its digits", int64(20000000000000130), 20000000000000128.0, true},
		{"float beyond 2^53 and its value", int64(20000000000000128), 20000000000000128.0, false},
		{"float beyond 2^53 and json.Number", json.Number("20000000000000127.0"), int64(20000000000000130), true},
		{"uint64 2^63 and float 2^63", uint64(1 << 63), float64(1 << 63), true},
		{"uint64 2^63+1 and float 2^63", uint64(1<<63 + 1), float64(1 << 63), true},
		{"uint64 2^63+1 and 2^63+2", uint64(1<<63 + 1), uint64(1<<63 + 2), true},
		{"uint64 2^63 and 2^63+4096", uint64(1 << 63), uint64(1<<63 + 4096), false},
		{"max uint64 json.Number", json.Number("18446744073709551615"), uint64(math.MaxUint64), true},
		{"max uint64 and 2^64", uint64(math.MaxUint64), float64(1 << 64), true},
		{"big int json.Number and float", json.Number("100000000000000000000"), 1e20, true},
		{"1e21", 1e21, json.Number("1000000000000000000000"), true},
		{"unsupported", int8(1), int8(1), false},
		{"unsupported and int64", int8(1), int64(1), false},
		{"empty objects", map[string]any{}, map[string]any{}, true},
		{"objects", map[string]any{"a": int64(1), "b": "x"}, map[string]any{"b": "x", "a": 1.0}, true},
		{"object missing key", map[string]any{"a": nil}, map[string]any{"b": nil}, false},
		{"object extra key", map[string]any{"a": nil}, map[string]any{"a": nil, "b": nil}, false},
		{"object null member and absent", map[string]any{"a": nil}, map[string]any{}, false},
		{"object and list", map[string]any{}, []any{}, false},
		{"lists", []any{int64(1), "a", nil}, []any{1.0, "a", nil}, true},
		{"list order", []any{int64(1), int64(2)}, []any{int64(2), int64(1)}, false},
		{"list length", []any{int64(1)}, []any{int64(1), int64(1)}, false},
		{"nested", map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}, []any(nil)}}},
			map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": 80.0}, nil}}}, true},
		{"nested differ", map[string]any{"spec": []any{map[string]any{"a": []any{int64(1)}}}},
			map[string]any{"spec": []any{map[string]any{"a": []any{int64(2)}}}}, false},
		{"string map and object", map[string]string{"a": "x"}, map[string]any{"a": "x"}, true},
		{"object and string map", map[string]any{"a": "x"}, map[string]string{"a": "x"}, true},
		{"object with number and string map", map[string]any{"a": int64(1)}, map[string]string{"a": "1"}, false},
		{"string maps", map[string]string{"a": "x"}, map[string]string{"a": "y"}, false},
		{"string list and list", []string{"a", "b"}, []any{"a", "b"}, true},
		{"list and string list", []any{"a"}, []string{"a"}, true},
		{"string lists", []string{"a"}, []string{"a"}, true},
		{"empty string list and nil list", []string{}, []any(nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := value.Equal(tc.a, tc.b); got != tc.want {
				t.Errorf("Equal(%#v, %#v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if got := value.Equal(tc.b, tc.a); got != tc.want {
				t.Errorf("Equal(%#v, %#v) = %v, want %v", tc.b, tc.a, got, tc.want)
			}
			// Key agrees with Equal on scalars.
			ka, aok := value.Key(tc.a)
			kb, bok := value.Key(tc.b)
			if aok && bok && (ka == kb) != tc.want {
				t.Errorf("Key(%#v) = %#v, Key(%#v) = %#v; Equal is %v", tc.a, ka, tc.b, kb, tc.want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want any
		ok   bool
	}{
		{"nil", nil, nil, true},
		{"nil list is null", []any(nil), nil, true},
		{"nil object is null", map[string]any(nil), nil, true},
		{"string", "nginx", "nginx", true},
		{"bool", false, false, true},
		{"int64", int64(80), int64(80), true},
		{"int", 80, int64(80), true},
		{"int32", int32(-1), int64(-1), true},
		{"integral float", 80.0, int64(80), true},
		{"negative zero", negZero, int64(0), true},
		{"fraction", 0.5, 0.5, true},
		{"float32", float32(0.5), 0.5, true},
		{"float32 0.1", float32(0.1), 0.1, true},
		{"float32 integral", float32(16777216), int64(16777216), true},
		{"2^63 float", float64(1 << 63), float64(1 << 63), true},
		{"float beyond 2^53", 20000000000000128.0, int64(20000000000000130), true},
		{"uint64 small", uint64(7), int64(7), true},
		{"uint64 big", uint64(math.MaxUint64), float64(1 << 64), true},
		{"1e20", 1e20, 1e20, true},
		{"json.Number", json.Number("8080"), int64(8080), true},
		{"json.Number float", json.Number("0.25"), 0.25, true},
		{"object", map[string]any{}, nil, false},
		{"list", []any{}, nil, false},
		{"string list", []string{"a"}, nil, false},
		{"unsupported", int8(1), nil, false},
		{"invalid json.Number", json.Number("x"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := value.Key(tc.v)
			if ok != tc.ok || got != tc.want {
				t.Errorf("Key(%#v) = %#v, %v; want %#v, %v", tc.v, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestTypeName(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{[]any(nil), "null"},
		{map[string]any(nil), "null"},
		{map[string]any{}, "object"},
		{map[string]string{}, "object"},
		{[]any{}, "list"},
		{[]string{}, "list"},
		{"", "string"},
		{true, "boolean"},
		{int64(1), "number"},
		{1.5, "number"},
		{7, "number"},
		{int32(7), "number"},
		{uint64(7), "number"},
		{float32(7), "number"},
		{math.NaN(), "number"},
		{json.Number("1"), "number"},
		{json.Number("x"), "unsupported type"},
		{int8(1), "unsupported type"},
		{struct{}{}, "unsupported type"},
	} {
		if got := value.TypeName(tc.v); got != tc.want {
			t.Errorf("TypeName(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestIsNumber(t *testing.T) {
	for _, tc := range []struct {
		v                 any
		number, isInteger bool
	}{
		{int64(1), true, true},
		{1.0, true, true},
		{1.5, true, false},
		{1e300, true, false},
		{float64(1 << 63), true, false},
		{float64(1 << 62), true, true},
		{uint64(math.MaxUint64), true, false},
		{json.Number("1e3"), true, true},
		{json.Number("--1"), false, false},
		{"1", false, false},
		{nil, false, false},
	} {
		if got := value.IsNumber(tc.v); got != tc.number {
			t.Errorf("IsNumber(%#v) = %v", tc.v, got)
		}
		if got := value.IsInteger(tc.v); got != tc.isInteger {
			t.Errorf("IsInteger(%#v) = %v", tc.v, got)
		}
	}
}

func TestDeepCopy(t *testing.T) {
	orig := func() map[string]any {
		return map[string]any{
			"metadata": map[string]any{
				"labels":     map[string]any{"app": "nginx"},
				"finalizers": []any{"a", "b"},
				"nilList":    []any(nil),
			},
			"spec": map[string]any{
				"containers": []any{
					map[string]any{"name": "nginx", "ports": []any{map[string]any{"containerPort": int64(80)}}},
				},
			},
			"strings": map[string]string{"k": "v"},
			"list":    []string{"x"},
		}
	}
	o := orig()
	c := value.DeepCopy(o).(map[string]any)
	if !value.Equal(o, c) {
		t.Fatalf("DeepCopy(%v) = %v", o, c)
	}

	// Mutate every map and list of the copy.
	c["new"] = true
	md := c["metadata"].(map[string]any)
	md["labels"].(map[string]any)["app"] = "changed"
	md["finalizers"].([]any)[0] = "changed"
	ctr := c["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	ctr["name"] = "changed"
	ctr["ports"].([]any)[0].(map[string]any)["containerPort"] = int64(81)
	c["strings"].(map[string]string)["k"] = "changed"
	c["list"].([]string)[0] = "changed"

	if !value.Equal(o, orig()) {
		t.Errorf("mutating the copy changed the original: %v", o)
	}
	if md["nilList"].([]any) != nil {
		t.Errorf("a nil list copies as %#v", md["nilList"])
	}

	for _, v := range []any{nil, "s", int64(1), 1.5, true, []any(nil), map[string]any(nil), []string(nil), map[string]string(nil), []any{}, map[string]any{}} {
		c := value.DeepCopy(v)
		if !value.Equal(v, c) || value.TypeName(v) != value.TypeName(c) {
			t.Errorf("DeepCopy(%#v) = %#v", v, c)
		}
	}
	if value.DeepCopyObject(nil) != nil {
		t.Errorf("DeepCopyObject(nil) is not nil")
	}
}
