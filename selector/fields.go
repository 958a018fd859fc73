package selector

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Fields is a field selector: conditions on fields of an object, all of
// which must hold. The zero Fields has no condition and matches every
// object.
//
// A Fields is immutable and safe for concurrent use.
type Fields struct {
	terms []fieldTerm
}

// fieldTerm is one "path=value" or "path!=value" condition.
type fieldTerm struct {
	field string
	// path is field split at dots.
	path  []string
	value string
	not   bool
}

// ParseFields parses a field selector in the syntax of `kubectl
// --field-selector` and fields.ParseSelector: terms separated by commas,
// each "path=value", "path==value" or "path!=value", where a value escapes
// ',', '=' and '\' with a backslash. Terms are kept sorted as apimachinery
// sorts them; a term with neither path nor value ("=") selects everything
// and is dropped, as apimachinery drops it. The empty string selects
// everything. Errors are *Error with apimachinery's message.
func ParseFields(s string) (Fields, error) {
	parts := splitTerms(s)
	sort.Strings(parts)
	var terms []fieldTerm
	for _, part := range parts {
		if part == "" {
			continue
		}
		lhs, op, rhs, ok := splitTerm(part)
		if !ok {
			return Fields{}, &Error{Syntax: syntaxFields, Input: s,
				Reason: fmt.Sprintf("invalid selector: '%s'; can't understand '%s'", s, part)}
		}
		value, reason := unescapeValue(rhs)
		if reason != "" {
			return Fields{}, &Error{Syntax: syntaxFields, Input: s, Reason: reason}
		}
		if lhs == "" && value == "" {
			continue
		}
		terms = append(terms, fieldTerm{field: lhs, path: strings.Split(lhs, "."), value: value, not: op == "!="})
	}
	return Fields{terms: terms}, nil
}

// splitTerms splits a selector at commas that are not escaped.
func splitTerms(s string) []string {
	if s == "" {
		return nil
	}
	terms := make([]string, 0, 1)
	start := 0
	inSlash := false
	for i, c := range s {
		switch {
		case inSlash:
			inSlash = false
		case c == '\\':
			inSlash = true
		case c == ',':
			terms = append(terms, s[start:i])
			start = i + 1
		}
	}
	return append(terms, s[start:])
}

// splitTerm splits a term at its first operator, trying "!=", "==" and "="
// in that order at each position.
func splitTerm(term string) (lhs, op, rhs string, ok bool) {
	for i := range term {
		rest := term[i:]
		for _, op := range [...]string{"!=", "==", "="} {
			if strings.HasPrefix(rest, op) {
				return term[:i], op, term[i+len(op):], true
			}
		}
	}
	return "", "", "", false
}

// unescapeValue is fields.UnescapeValue; it returns apimachinery's message
// for an invalid value.
func unescapeValue(s string) (string, string) {
	if !strings.ContainsAny(s, `\,=`) {
		return s, ""
	}
	var b strings.Builder
	b.Grow(len(s))
	inSlash := false
	for _, c := range s {
		if inSlash {
			switch c {
			case '\\', ',', '=':
				b.WriteRune(c)
			default:
				return "", "invalid field selector: invalid escape sequence: " + string([]rune{'\\', c})
			}
			inSlash = false
			continue
		}
		switch c {
		case '\\':
			inSlash = true
		case ',', '=':
			return "", fmt.Sprintf("invalid field selector: unescaped character in value: %v", c)
		default:
			b.WriteRune(c)
		}
	}
	if inSlash {
		return "", "invalid field selector: invalid escape sequence: \\"
	}
	return b.String(), ""
}

var valueEscaper = strings.NewReplacer(`\`, `\\`, `,`, `\,`, `=`, `\=`)

// Empty reports whether the selector has no condition.
func (s Fields) Empty() bool { return len(s.terms) == 0 }

// String returns the selector as apimachinery prints it: terms in sorted
// order, "==" written "=", values escaped.
func (s Fields) String() string {
	var b strings.Builder
	for i, t := range s.terms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(t.field)
		if t.not {
			b.WriteString("!=")
		} else {
			b.WriteByte('=')
		}
		b.WriteString(valueEscaper.Replace(t.value))
	}
	return b.String()
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
