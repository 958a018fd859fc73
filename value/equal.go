package value

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// Equal reports whether a and b are the same JSON value. Numbers compare by
// value whatever their Go type (int64(1) equals float64(1)); objects compare
// key by key; lists element by element in order. A nil []any or nil
// map[string]any is JSON null, as Encode writes it, and equals nil. A
// map[string]string or []string equals the object or list of the same
// strings.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return isNull(b)
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

// num is a number in a canonical form that == compares by value: integers
// that fit in an int64 (including integral floats) are int, integers in
// [2⁶³, 2⁶⁴) are uint, and all other numbers are float.
type num struct {
	kind  numKind
	int   int64
	uint  uint64
	float float64
}

type numKind uint8

const (
	intNum numKind = iota
	uintNum
	floatNum
)

// number returns v in canonical form; ok is false when v is not a number.
func number(v any) (n num, ok bool) {
	switch x := v.(type) {
	case int64:
		return num{kind: intNum, int: x}, true
	case int:
		return num{kind: intNum, int: int64(x)}, true
	case int32:
		return num{kind: intNum, int: int64(x)}, true
	case uint64:
		if x > math.MaxInt64 {
			return num{kind: uintNum, uint: x}, true
		}
		return num{kind: intNum, int: int64(x)}, true
	case float64:
		return floatNumber(x), true
	case float32:
		return floatNumber(float64(x)), true
	case json.Number:
		if x == "" { // Encode writes it as 0, like encoding/json
			return num{kind: intNum}, true
		}
		if !isValidNumber(string(x)) {
			return num{}, false
		}
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return num{kind: intNum, int: i}, true
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return num{kind: uintNum, uint: u}, true
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return num{}, false
		}
		return floatNumber(f), true
	}
	return num{}, false
}

func floatNumber(f float64) num {
	if f == math.Trunc(f) {
		switch {
		case f >= -(1<<63) && f < 1<<63:
			return num{kind: intNum, int: int64(f)}
		case f >= 1<<63 && f < 1<<64:
			return num{kind: uintNum, uint: uint64(f)}
		}
	}
	return num{kind: floatNum, float: f}
}

// IsNumber reports whether v is a number of any of the Go types Equal
// accepts.
func IsNumber(v any) bool {
	_, ok := number(v)
	return ok
}

// IsInteger reports whether v is a number with an integral value that fits
// in an int64 or a uint64.
func IsInteger(v any) bool {
	n, ok := number(v)
	return ok && n.kind != floatNum
}

// Key returns a comparable form of the scalar v for use as a Go map key,
// such that Key(a) == Key(b) exactly when Equal(a, b): integral numbers that
// fit become int64, larger integral numbers up to 2⁶⁴ uint64, other numbers
// float64; strings and booleans are themselves, and null (nil, or a nil
// []any or map[string]any) is nil. Objects and lists are not comparable and
// give ok=false.
func Key(v any) (k any, ok bool) {
	switch x := v.(type) {
	case string, bool, nil:
		return v, true
	case int64:
		return x, true
	}
	if isNull(v) {
		return nil, true
	}
	if n, ok := number(v); ok {
		switch n.kind {
		case intNum:
			return n.int, true
		case uintNum:
			return n.uint, true
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
