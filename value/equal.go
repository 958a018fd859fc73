package value

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// Equal reports whether a and b are the same JSON value. Numbers compare by
// value whatever their Go type (int64(1) equals float64(1)), each as the
// number it settles on through Encode and Decode, so that
// Equal(v, Decode(Encode(v))) holds for every number v: -0.0 equals 0,
// float32(0.1) equals 0.1 (both are written 0.1), a uint64 beyond int64
// equals the nearest float64, and an integral float64 beyond 2⁵³ equals the
// int64 of the digits Encode writes for it, not its exact value (float64
// 20000000000000128 is written 20000000000000130). Objects compare key by
// key; lists element by element in order. A nil []any or nil map[string]any
// is JSON null, as Encode writes it, and equals nil. A map[string]string or
// []string equals the object or list of the same strings.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return isNull(b)
	case int64:
		if y, ok := b.(int64); ok {
			return x == y
		}
	case float64:
		if y, ok := b.(float64); ok {
			return x == y // distinct floats encode differently, except ±0
		}
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case map[string]any:
		if x == nil {
			return isNull(b)
		}
		y, ok := b.(map[string]any)
		if !ok || y == nil || len(x) != len(y) {
			if _, strings := b.(map[string]string); strings {
				return Equal(b, a)
			}
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		if x == nil {
			return isNull(b)
		}
		y, ok := b.([]any)
		if !ok || y == nil || len(x) != len(y) {
			if _, strings := b.([]string); strings {
				return Equal(b, a)
			}
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]string:
		if x == nil {
			return isNull(b)
		}
		switch y := b.(type) {
		case map[string]string:
			if y == nil || len(x) != len(y) {
				return false
			}
			for k, xv := range x {
				if yv, ok := y[k]; !ok || xv != yv {
					return false
				}
			}
			return true
		case map[string]any:
			if y == nil || len(x) != len(y) {
				return false
			}
			for k, xv := range x {
				if yv, ok := y[k].(string); !ok || xv != yv {
					return false
				}
			}
			return true
		}
		return false
	case []string:
		if x == nil {
			return isNull(b)
		}
		switch y := b.(type) {
		case []string:
			return y != nil && slices.Equal(x, y)
		case []any:
			if y == nil || len(x) != len(y) {
				return false
			}
			for i, xv := range x {
				if yv, ok := y[i].(string); !ok || xv != yv {
					return false
				}
			}
			return true
		}
		return false
	}
	na, ok := number(a)
	if !ok {
		return false
	}
	nb, ok := number(b)
	return ok && na == nb
}

func isNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return x == nil
	case map[string]any:
		return x == nil
	case []string:
		return x == nil
	case map[string]string:
		return x == nil
	}
	return false
}

// num is a number in the form Decode reads back from its encoding: an
// int64 (isInt) or a float64, so that == compares numbers as Equal does.
type num struct {
	isInt bool
	int   int64
	float float64
}

// number returns v as the number Decode would read back from Encode(v),
// with integral floats that Encode writes as an integer literal that fits
// in an int64 (0, 80, but not 1e21) made int64 too; ok is false when v is
// not a number.
func number(v any) (n num, ok bool) {
	switch x := v.(type) {
	case int64:
		return num{isInt: true, int: x}, true
	case float64:
		return floatNumber(x), true
	case int:
		return num{isInt: true, int: int64(x)}, true
	case int32:
		return num{isInt: true, int: int64(x)}, true
	case uint64:
		if x > math.MaxInt64 {
			// Decode reads the digits as the nearest float64.
			return floatNumber(float64(x)), true
		}
		return num{isInt: true, int: int64(x)}, true
	case float32:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return num{float: f}, true
		}
		// Encode writes the shortest decimal that identifies the float32;
		// Decode reads that as a float64 (or an int64).
		var buf [32]byte
		lit, _ := appendFloat(buf[:0], f, 32, nil)
		return literalNumber(lit)
	case json.Number:
		if x == "" { // Encode writes it as 0, like encoding/json
			return num{isInt: true}, true
		}
		if !isValidNumber(string(x)) {
			return num{}, false
		}
		return literalNumber([]byte(x))
	}
	return num{}, false
}

// literalNumber is the number Decode reads from the JSON number literal lit.
func literalNumber(lit []byte) (num, bool) {
	if !bytes.ContainsAny(lit, ".eE") {
		if i, ok := parseInt(lit); ok {
			return num{isInt: true, int: i}, true
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return num{}, false // out of range: Decode rejects it
	}
	return floatNumber(f), true
}

// floatNumber is f as Decode reads back its encoding. Encode writes a float
// whose magnitude is below 1e21 with no exponent, so an integral one comes
// back as the int64 of its digits when they fit. Up to 2⁵³ those digits are
// f exactly; above, they are the shortest decimal that identifies f
// (20000000000000130 for the float64 20000000000000128).
func floatNumber(f float64) num {
	if f != math.Trunc(f) || math.Abs(f) >= 1e21 { // also NaN and ±Inf
		return num{float: f}
	}
	if math.Abs(f) <= 1<<53 {
		return num{isInt: true, int: int64(f)}
	}
	var buf [32]byte
	if i, ok := parseInt(strconv.AppendFloat(buf[:0], f, 'f', -1, 64)); ok {
		return num{isInt: true, int: i}
	}
	return num{float: f}
}

// IsNumber reports whether v is a number of any of the Go types Equal
// accepts.
func IsNumber(v any) bool {
	_, ok := number(v)
	return ok
}

// IsInteger reports whether v is a number with an integral value that
// Decode reads back from Encode(v) as an int64.
func IsInteger(v any) bool {
	n, ok := number(v)
	return ok && n.isInt
}

// Key returns a comparable form of the scalar v for use as a Go map key,
// with Key(a) == Key(b) exactly when Equal(a, b): numbers become the int64
// or float64 that Decode reads back from their encoding (so int64(80),
// float64(80) and json.Number("80") all become int64(80)); strings and
// booleans are themselves, and null (nil, or a nil []any or map[string]any)
// is nil. Objects and lists are not comparable and give ok=false.
func Key(v any) (k any, ok bool) {
	switch v.(type) {
	case string, bool, nil, int64:
		return v, true // v itself: re-boxing an int64 would allocate
	}
	if isNull(v) {
		return nil, true
	}
	if n, ok := number(v); ok {
		if n.isInt {
			return n.int, true
		}
		return n.float, true
	}
	return nil, false
}

// TypeName names the JSON type of v: "object", "list", "string", "number",
// "boolean" or "null"; for a Go type outside the JSON-like set it returns
// "unsupported type".
func TypeName(v any) string {
	if isNull(v) {
		return "null"
	}
	switch v.(type) {
	case map[string]any, map[string]string:
		return "object"
	case []any, []string:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	if IsNumber(v) {
		return "number"
	}
	return "unsupported type"
}
