package quantity

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Normalize returns the value the API server stores for a quantity field
// given the JSON value v of a manifest: a string, or a number as YAML
// manifests often write them (`cpu: 0.5`, `memory: 1024`). The result is a
// canonical string ("500m", "1024"); nil (JSON null) is returned as is.
//
// It reproduces Quantity.UnmarshalJSON: spaces around a string are
// trimmed, and a number is parsed from its JSON text, which for float64 and
// float32 values is the text encoding/json writes (so 1e21 reads as
// "1e+21"). A json.Number is parsed as written. Other values (booleans,
// objects, lists) are an error.
func Normalize(v any) (any, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		s = strings.TrimSpace(x)
	case json.Number:
		s = string(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, &Error{Input: strconv.FormatFloat(x, 'g', -1, 64), Err: errors.New("not a JSON number")}
		}
		s = string(appendJSONFloat(nil, x, 64))
	case float32:
		if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
			return nil, &Error{Input: strconv.FormatFloat(float64(x), 'g', -1, 32), Err: errors.New("not a JSON number")}
		}
		s = string(appendJSONFloat(nil, float64(x), 32))
	case int:
		s = strconv.Itoa(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case int32:
		s = strconv.FormatInt(int64(x), 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case uint:
		s = strconv.FormatUint(uint64(x), 10)
	default:
		return nil, &Error{Input: fmt.Sprint(v), Err: fmt.Errorf("a quantity must be a string or a number, not %s", jsonType(v))}
	}
	c, err := Canonical(s)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("a %T", v)
}

// appendJSONFloat appends f as encoding/json writes it.
func appendJSONFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n-start >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
