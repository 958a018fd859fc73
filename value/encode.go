package value

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// UnsupportedValueError is a value Encode cannot write: a Go type outside the
// JSON-like set, a NaN or infinite number, a json.Number that is not a JSON
// number, or an object or list that contains itself.
type UnsupportedValueError struct {
	Path  Path // where Value is, from the root of the encoded value
	Value any
	// Reason is "encountered a cycle" when Value contains itself, and
	// empty otherwise.
	Reason string
}

func (e *UnsupportedValueError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("value: cannot encode %s at %s: %s", describe(e.Value), e.Path, e.Reason)
	}
	return fmt.Sprintf("value: cannot encode %s at %s", describe(e.Value), e.Path)
}

func describe(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case json.Number:
		return fmt.Sprintf("invalid number literal %q", string(x))
	}
	return fmt.Sprintf("a value of type %T", v)
}

// Encode writes v as compact JSON exactly as encoding/json.Marshal would:
// object keys sorted, '<', '>', '&', U+2028 and U+2029 escaped, invalid
// UTF-8 replaced by U+FFFD, floats in the shortest form that round-trips.
// kubectl's last-applied-configuration annotation is these bytes followed by
// a newline.
func Encode(v any) ([]byte, error) {
	return AppendEncode(make([]byte, 0, 256), v)
}

// AppendEncode appends the encoding of v to dst.
func AppendEncode(dst []byte, v any) ([]byte, error) {
	e := encoder{}
	out, err := e.append(dst, v)
	if err != nil {
		return dst, err
	}
	return out, nil
}

type encoder struct {
	keys []string // scratch for sorting object keys

	// Past MaxDepth nested objects and lists, the encoder remembers the
	// ones it is inside, so that a value containing itself is an error as
	// in encoding/json rather than a fatal stack overflow.
	depth int
	seen  map[any]struct{}
}

// enter notes that the encoder goes into the object or list x, whose
// identity id computes; it reports false when x contains itself. The
// identity is only computed past MaxDepth.
func (e *encoder) enter(idf func() any) bool {
	e.depth++
	if e.depth <= MaxDepth {
		return true
	}
	id := idf()
	if _, ok := e.seen[id]; ok {
		e.depth--
		return false
	}
	if e.seen == nil {
		e.seen = make(map[any]struct{})
	}
	e.seen[id] = struct{}{}
	return true
}

func (e *encoder) leave(idf func() any) {
	if e.depth > MaxDepth {
		delete(e.seen, idf())
	}
	e.depth--
}

// sliceID identifies a list the way encoding/json does: two lists are the
// same when they start at the same element and have the same length.
type sliceID struct {
	ptr *any
	len int
}

func (e *encoder) append(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, x), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		return appendFloat(dst, x, 64, v)
	case float32:
		return appendFloat(dst, float64(x), 32, v)
	case json.Number:
		if x == "" {
			return append(dst, '0'), nil
		}
		if !isValidNumber(string(x)) {
			return dst, &UnsupportedValueError{Value: v}
		}
		return append(dst, x...), nil
	case map[string]any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		if len(x) == 0 {
			return append(dst, "{}"...), nil
		}
		id := func() any { return reflect.ValueOf(x).UnsafePointer() }
		if !e.enter(id) {
			return dst, &UnsupportedValueError{Value: v, Reason: "encountered a cycle"}
		}
		base := len(e.keys)
		for k := range x {
			e.keys = append(e.keys, k)
		}
		keys := e.keys[base:]
		slices.Sort(keys)
		dst = append(dst, '{')
		for i := range keys {
			k := e.keys[base+i] // e.keys may grow while encoding children
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			var err error
			dst, err = e.append(dst, x[k])
			if err != nil {
				e.keys = e.keys[:base]
				e.leave(id)
				return dst, prefixEncodeError(err, FieldElement(k))
			}
		}
		e.keys = e.keys[:base]
		e.leave(id)
		return append(dst, '}'), nil
	case []any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		if len(x) == 0 {
			return append(dst, "[]"...), nil
		}
		id := func() any { return sliceID{unsafe.SliceData(x), len(x)} }
		if !e.enter(id) {
			return dst, &UnsupportedValueError{Value: v, Reason: "encountered a cycle"}
		}
		dst = append(dst, '[')
		for i, el := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			dst, err = e.append(dst, el)
			if err != nil {
				e.leave(id)
				return dst, prefixEncodeError(err, IndexElement(i))
			}
		}
		e.leave(id)
		return append(dst, ']'), nil
	case map[string]string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return e.append(dst, m)
	case []string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		l := make([]any, len(x))
		for i, s := range x {
			l[i] = s
		}
		return e.append(dst, l)
	}
	return dst, &UnsupportedValueError{Value: v}
}

func prefixEncodeError(err error, el Element) error {
	if ue, ok := err.(*UnsupportedValueError); ok {
		ue.Path = append(Path{el}, ue.Path...)
	}
	return err
}

func appendFloat(dst []byte, f float64, bits int, orig any) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, &UnsupportedValueError{Value: orig}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		n := len(dst)
		if n-start >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// isValidNumber reports whether s is a JSON number literal; it is
// encoding/json's check for json.Number.
func isValidNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string with encoding/json's HTML-safe
// escaping.
func appendString(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if safeStringByte[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// safeStringByte reports the bytes that encoding/json writes as they are
// inside a string: printable ASCII other than the quote, the backslash and
// the HTML characters <, > and &.
var safeStringByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
