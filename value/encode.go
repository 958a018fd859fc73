package value

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	e := encoderPool.Get().(*encoder)
	defer e.release()
	buf, err := e.append(e.buf[:0], v)
	e.buf = buf
	if err != nil {
		return nil, err
	}
	if len(buf) >= 64<<10 {
		// A large encoding is returned as it is rather than copied; the
		// pooled encoder starts over with a new buffer.
		e.buf = nil
		return buf, nil
	}
	// One allocation of the exact size instead of a buffer grown by
	// doubling.
	return append(make([]byte, 0, len(buf)), buf...), nil
}

// AppendEncode appends the encoding of v to dst.
func AppendEncode(dst []byte, v any) ([]byte, error) {
	e := encoderPool.Get().(*encoder)
	defer e.release()
	out, err := e.append(dst, v)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// AppendEncodeExact is AppendEncode that also reports whether v holds
// only the values Decode makes (maps, lists, strings and keys of valid
// UTF-8, int64, float64 that are not integral, booleans and null), so
// that decoding what it appended gives v again. A caller that needs both
// the encoding and that answer walks v once instead of twice.
func AppendEncodeExact(dst []byte, v any) ([]byte, bool, error) {
	e := encoderPool.Get().(*encoder)
	defer e.release()
	out, err := e.append(dst, v)
	if err != nil {
		return dst, false, err
	}
	return out, !e.inexact, nil
}

// encoderPool keeps encoders with their scratch.
var encoderPool = sync.Pool{New: func() any {
	return &encoder{pairs: make([]kv, 0, 32), buf: make([]byte, 0, 1024)}
}}

// release returns e to the pool without references to what it encoded.
func (e *encoder) release() {
	if cap(e.pairs) > maxPooledScratch || cap(e.buf) > 64<<10 {
		return
	}
	// e.pairs holds nothing: appendObject clears what it used.
	pairs, buf := e.pairs[:0], e.buf[:0]
	*e = encoder{pairs: pairs, buf: buf, lastStr: e.lastStr, lastEnc: e.lastEnc, lastValid: e.lastValid}
	encoderPool.Put(e)
}

// The lengths of the strings whose encoding the encoder remembers.
const (
	minCachedString = 1 << 10
	maxCachedString = 64 << 10
)

// appendLongString is appendString for a string of a kilobyte or more,
// reusing the encoding of the last such string when it is the same (the
// comparison is immediate when both share their bytes).
func (e *encoder) appendLongString(dst []byte, s string) []byte {
	if s == e.lastStr {
		e.inexact = e.inexact || !e.lastValid
		return append(dst, e.lastEnc...)
	}
	start := len(dst)
	dst, valid := appendStringValid(dst, s)
	e.inexact = e.inexact || !valid
	e.lastStr, e.lastValid = s, valid
	e.lastEnc = append(e.lastEnc[:0], dst[start:]...)
	return dst
}

// appendString is appendString (the package function) that notes a
// string of invalid UTF-8 in e.inexact.
func (e *encoder) appendString(dst []byte, s string) []byte {
	dst, valid := appendStringValid(dst, s)
	if !valid {
		e.inexact = true
	}
	return dst
}

type encoder struct {
	pairs []kv   // scratch for sorting object members
	buf   []byte // output buffer of Encode

	// The last long string written and its encoding, kept across uses of
	// the pooled encoder: kubectl apply's patch and result carry the same
	// last-applied annotation, kilobytes of JSON text to escape.
	lastStr   string
	lastEnc   []byte
	lastValid bool // lastStr is valid UTF-8

	// inexact notes a value Decode would not give back: a Go type it
	// does not make, an integral float64, or invalid UTF-8
	// (AppendEncodeExact).
	inexact bool

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
		if len(x) >= minCachedString && len(x) <= maxCachedString {
			return e.appendLongString(dst, x), nil
		}
		return e.appendString(dst, x), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int:
		e.inexact = true
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		e.inexact = true
		return strconv.AppendInt(dst, int64(x), 10), nil
	case uint64:
		e.inexact = true
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		if x == math.Trunc(x) {
			e.inexact = true // Decode makes an int64 of it
		}
		return appendFloat(dst, x, 64, v)
	case float32:
		e.inexact = true
		return appendFloat(dst, float64(x), 32, v)
	case json.Number:
		e.inexact = true
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
		var err error
		if len(x) <= smallObject {
			dst, err = e.appendSmallObject(dst, x)
		} else {
			dst, err = e.appendObject(dst, x)
		}
		e.leave(id)
		return dst, err
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
		e.inexact = true
		if x == nil {
			return append(dst, "null"...), nil
		}
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return e.append(dst, m)
	case []string:
		e.inexact = true
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

// appendSmallObject writes an object of at most smallObject members,
// sorting them in an array on the stack (which, unlike the heap, costs no
// write barriers while the garbage collector runs).
func (e *encoder) appendSmallObject(dst []byte, x map[string]any) ([]byte, error) {
	var local [smallObject]kv
	n := 0
	for k, v := range x {
		local[n] = kv{k, v}
		n++
	}
	return e.appendPairs(dst, local[:n])
}

// appendObject writes an object with its members sorted in e.pairs.
func (e *encoder) appendObject(dst []byte, x map[string]any) ([]byte, error) {
	base := len(e.pairs)
	for k, v := range x {
		e.pairs = append(e.pairs, kv{k, v})
	}
	n := len(e.pairs) - base
	// Encoding the members may grow e.pairs, which then no longer holds
	// them; the slice taken here does.
	dst, err := e.appendPairs(dst, e.pairs[base:base+n:base+n])
	clear(e.pairs[base:])
	e.pairs = e.pairs[:base]
	return dst, err
}

// appendPairs sorts the members of an object by key and writes them.
func (e *encoder) appendPairs(dst []byte, pairs []kv) ([]byte, error) {
	sortPairs(pairs)
	dst = append(dst, '{')
	for i, p := range pairs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = e.appendString(dst, p.k)
		dst = append(dst, ':')
		var err error
		dst, err = e.append(dst, p.v)
		if err != nil {
			return dst, prefixEncodeError(err, FieldElement(p.k))
		}
	}
	return append(dst, '}'), nil
}

// sortPairs sorts object members by key: by insertion for the few members
// of most objects, which is faster there than a general sort.
func sortPairs(p []kv) {
	if len(p) > 12 {
		slices.SortFunc(p, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		return
	}
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && keyLess(p[j].k, p[j-1].k); j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

// keyLess is a < b, deciding by the first bytes without calling the
// runtime's string comparison when they differ, as object keys mostly do.
func keyLess(a, b string) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return a < b
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

// isValidNumber reports whether s is a JSON number literal (RFC 8259):
// an optional minus, 0 or digits not starting with 0, optionally a point
// and digits, optionally e or E, a sign and digits. encoding/json checks a
// json.Number against the same grammar.
func isValidNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i == len(s):
		return false
	case s[i] == '0':
		i++
	case '1' <= s[i] && s[i] <= '9':
		i = digitsFrom(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if i = digitsFrom(s, i+1); s[i-1] == '.' {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		if i = digitsFrom(s, i); i == start {
			return false
		}
	}
	return i == len(s)
}

// digitsFrom returns the index of the first byte from i on that is not a
// decimal digit.
func digitsFrom(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// shortEscapes are the bytes a JSON string writes as a backslash and one
// letter; other control bytes and the HTML characters are written \u00XX.
var shortEscapes = [utf8.RuneSelf]byte{'\\': '\\', '"': '"', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

const hexDigits = "0123456789abcdef"

// appendStringValid writes s as a JSON string with encoding/json's
// HTML-safe escaping and reports whether s is valid UTF-8 (an invalid byte
// is written as U+FFFD).
func appendStringValid(dst []byte, s string) ([]byte, bool) {
	valid := true
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Find the next byte to escape: eight at a time, then one by one.
		if i+8 <= len(s) {
			if m := unsafeMask(load64(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) / 8
			} else {
				i += 8
				continue
			}
		} else if safeStringByte[s[i]] {
			i++
			continue
		}
		// An ASCII byte here always needs escaping; of the longer runes,
		// invalid bytes and the two line separators JavaScript rejects.
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		var esc [6]byte
		n := 6
		switch {
		case r < utf8.RuneSelf && shortEscapes[r] != 0:
			esc[0], esc[1], n = '\\', shortEscapes[r], 2
		case r < utf8.RuneSelf:
			esc = [6]byte{'\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF]}
		case r == utf8.RuneError && size == 1:
			esc = [6]byte{'\\', 'u', 'f', 'f', 'f', 'd'}
			valid = false
		case r == '\u2028' || r == '\u2029':
			esc = [6]byte{'\\', 'u', '2', '0', '2', hexDigits[r&0xF]}
		default:
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, esc[:n]...)
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), valid
}

// load64 returns the eight bytes of s from i as a little-endian word.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// unsafeMask flags (with its high bit) each byte of x that is not a
// safeStringByte; the lowest flagged byte is always one (see plainRun).
// A byte with bit 2 set becomes 0x26 exactly when it is '"' (0x22) or '&'
// (0x26), with bit 1 set 0x3e exactly when it is '<' or '>'.
func unsafeMask(x uint64) uint64 {
	qa := (x | ones*0x04) ^ (ones * 0x26)
	lg := (x | ones*0x02) ^ (ones * 0x3e)
	bs := x ^ (ones * '\\')
	return (((qa - ones) & ^qa) | ((lg - ones) & ^lg) | ((bs - ones) & ^bs) | ((x - ones*0x20) & ^x) | x) & highs
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
