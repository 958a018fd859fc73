package selector

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"
)

// Fields is a field selector: conditions on fields of an object, all of
// which must hold. The zero Fields has no condition and matches every
// object.
//
// A Fields is immutable and safe for concurrent use.
type Fields struct {
	sel   fields.Selector
	terms []fieldTerm
}

// fieldTerm is one "path=value" or "path!=value" condition.
type fieldTerm struct {
	// path is the field split at dots.
	path  []string
	value string
	not   bool
}

// ParseFields parses a field selector with apimachinery's
// fields.ParseSelector, the parser of `kubectl --field-selector`: terms
// separated by commas, each "path=value", "path==value" or "path!=value",
// where a value escapes ',', '=' and '\' with a backslash. The empty
// string selects everything. Errors are *Error with apimachinery's
// message.
func ParseFields(s string) (Fields, error) {
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return Fields{}, &Error{Syntax: syntaxFields, Input: s, Reason: err.Error()}
	}
	reqs := sel.Requirements()
	terms := make([]fieldTerm, 0, len(reqs))
	for _, r := range reqs {
		terms = append(terms, fieldTerm{path: strings.Split(r.Field, "."), value: r.Value, not: r.Operator == selection.NotEquals})
	}
	return Fields{sel: sel, terms: terms}, nil
}

// Empty reports whether the selector has no condition.
func (s Fields) Empty() bool { return len(s.terms) == 0 }

// String returns the selector as apimachinery prints it: terms in sorted
// order, "==" written "=", values escaped.
func (s Fields) String() string {
	if s.sel == nil {
		return ""
	}
	return s.sel.String()
}

// Matches reports whether an object, decoded from JSON, satisfies every
// condition. A field path is a dotted path of object fields
// ("metadata.name", "spec.nodeName"). An absent field, or a null, reads as
// ""; a string as itself; a boolean as "true" or "false"; a number as its
// JSON text ("3", "0.5"). An object or a list equals no value, so "=" is
// false and "!=" true on it. Matches does not allocate.
func (s Fields) Matches(obj map[string]any) bool {
	for i := range s.terms {
		t := &s.terms[i]
		if equals(lookup(obj, t.path), t.value) == t.not {
			return false
		}
	}
	return true
}

// lookup returns the value at path, or nil when a field on the way is
// absent or not an object.
func lookup(obj map[string]any, path []string) any {
	var v any = obj
	for _, name := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}

// equals reports whether the string form of a JSON value is s.
func equals(v any, s string) bool {
	var buf [32]byte
	switch x := v.(type) {
	case nil:
		return s == ""
	case string:
		return x == s
	case bool:
		if x {
			return s == "true"
		}
		return s == "false"
	case json.Number:
		return string(x) == s
	case int64:
		return string(strconv.AppendInt(buf[:0], x, 10)) == s
	case int:
		return string(strconv.AppendInt(buf[:0], int64(x), 10)) == s
	case int32:
		return string(strconv.AppendInt(buf[:0], int64(x), 10)) == s
	case uint64:
		return string(strconv.AppendUint(buf[:0], x, 10)) == s
	case float64:
		return string(appendJSONFloat(buf[:0], x, 64)) == s
	case float32:
		return string(appendJSONFloat(buf[:0], float64(x), 32)) == s
	}
	return false
}

// appendJSONFloat appends f as encoding/json writes it.
func appendJSONFloat(b []byte, f float64, bits int) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b
	}
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
