package value

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is how deeply objects and arrays may nest in a decoded document.
// Deeper documents are rejected with a SyntaxError instead of exhausting
// memory in the recursive algorithms that walk them.
const MaxDepth = 1000

// SyntaxError is a JSON document that cannot be decoded. Offset is the byte
// offset of the problem in the input.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("value: invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// Decode parses one JSON document into map[string]any, []any, string, int64
// (integers that fit), float64 (every other number), bool or nil. Objects
// with a repeated key and documents nested deeper than MaxDepth are errors.
//
// Decoded strings share one copy of the document's text (one allocation
// instead of one per string), so any string kept keeps that copy alive.
func Decode(data []byte) (any, error) {
	d := decoderPool.Get().(*decoder)
	defer d.release()
	d.data = data
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, d.errorf("unexpected %s after the document", quoteByte(d.data[d.pos]))
	}
	return v, nil
}

// decoderPool keeps decoders with their scratch stacks, which a document
// of a few kilobytes would otherwise grow from nothing each time.
var decoderPool = sync.Pool{New: func() any {
	return &decoder{pairs: make([]kv, 0, 32), elems: make([]any, 0, 32)}
}}

// maxPooledScratch bounds the scratch a pooled decoder keeps.
const maxPooledScratch = 4096

// release returns d to the pool, dropping its references to the document
// and to the values decoded.
func (d *decoder) release() {
	if cap(d.pairs) > maxPooledScratch || cap(d.elems) > maxPooledScratch || cap(d.buf) > 64<<10 {
		return
	}
	// Clear only what this document used: the stacks of a decoder that
	// once read a long list are long.
	clear(d.pairs[:d.hiPairs])
	clear(d.elems[:d.hiElems])
	pairs, elems, buf, path := d.pairs[:0], d.elems[:0], d.buf[:0], d.path[:0]
	*d = decoder{pairs: pairs, elems: elems, buf: buf, path: path}
	decoderPool.Put(d)
}

// DecodeObject is Decode for a document that must be a JSON object.
func DecodeObject(data []byte) (map[string]any, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return asObject(v)
}

func asObject(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &SyntaxError{Offset: 0, Msg: fmt.Sprintf("expected an object, got %s", TypeName(v))}
	}
	return m, nil
}

// DecodeObjectWithout is DecodeObject leaving out the member inner of the
// document's member outer when that is an object ("metadata",
// "managedFields"): the member is passed over without being decoded, which
// costs a fraction of decoding it, and its text is only checked for
// well-formed strings and balanced nesting.
func DecodeObjectWithout(data []byte, outer, inner string) (map[string]any, error) {
	return decodeObjectWith(data, outer, inner, nil)
}

// Interner shares, between the documents it decodes, the values found at
// chosen paths that are equal (as text) to one decoded before: the pods
// of one template have the same containers, tolerations and owner
// references, which then take their memory once. Short strings are
// shared too, and the others are copied one by one, so that a decoded
// object does not keep its document's text (which holds the parts left
// out and those shared). The values it returns
// are shared: nobody may change them. It remembers at most a bounded
// number of values (then it starts again). Not safe for concurrent use.
type Interner struct {
	paths [][]string
	depth int
	max   int
	table map[string]any
	// texts and boxes share short strings, as strings and as values.
	texts map[string]string
	boxes map[string]any
	// Hits counts the values shared.
	Hits int
}

// maxSharedText is the longest string an Interner shares: member names and
// words such as "Running" or "ClusterFirst" repeat, names and uids do not.
const maxSharedText = 24

// text returns b as a string: one shared by every equal short string.
func (in *Interner) text(b []byte) string {
	if len(b) > maxSharedText {
		return string(b)
	}
	if s, ok := in.texts[string(b)]; ok {
		return s
	}
	if len(in.texts) >= in.max {
		clear(in.texts)
	}
	s := string(b)
	in.texts[s] = s
	return s
}

// boxed returns s as a value: one shared by every equal short string.
func (in *Interner) boxed(s string) any {
	if len(s) > maxSharedText || len(s) == 0 {
		return s
	}
	if v, ok := in.boxes[s]; ok {
		return v
	}
	if len(in.boxes) >= in.max {
		clear(in.boxes)
	}
	v := any(s)
	in.boxes[s] = v
	return v
}

// NewInterner returns an Interner of the values at paths: dotted member
// names, "[]" standing for every element of an array
// ("spec.volumes.[].projected"); it remembers at most limit values.
func NewInterner(limit int, paths ...string) *Interner {
	in := &Interner{max: limit, table: map[string]any{}, texts: map[string]string{}, boxes: map[string]any{}}
	for _, p := range paths {
		parts := strings.Split(p, ".")
		in.paths = append(in.paths, parts)
		in.depth = max(in.depth, len(parts))
	}
	return in
}

// match reports whether path is one of the interner's paths.
func (in *Interner) match(path []string) bool {
	for _, p := range in.paths {
		if len(p) == len(path) && slices.Equal(p, path) {
			return true
		}
	}
	return false
}

// Share returns obj with the values at the interner's paths replaced by
// equal ones it holds (and those it did not hold remembered): an object
// not decoded by the interner (one a write returned) shares them too. obj
// is not changed: the maps and lists on the way to a replaced value are
// copied. Values that do not encode are left as they are.
func (in *Interner) Share(obj map[string]any) map[string]any {
	out := obj
	for _, p := range in.paths {
		if v, ok := in.share(out, p); ok {
			out = v.(map[string]any)
		}
	}
	return out
}

// share returns v with the values at path (relative to v) shared, and
// whether anything changed (v itself is never changed).
func (in *Interner) share(v any, path []string) (any, bool) {
	if len(path) == 0 {
		enc, err := Encode(v)
		if err != nil {
			return v, false
		}
		if s, ok := in.table[string(enc)]; ok {
			in.Hits++
			return s, true
		}
		if len(in.table) >= in.max {
			clear(in.table)
		}
		in.table[string(enc)] = v
		return v, false
	}
	if path[0] == "[]" {
		l, ok := v.([]any)
		if !ok {
			return v, false
		}
		var out []any
		for i, e := range l {
			if s, changed := in.share(e, path[1:]); changed {
				if out == nil {
					out = slices.Clone(l)
				}
				out[i] = s
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v, false
	}
	e, ok := m[path[0]]
	if !ok {
		return v, false
	}
	s, changed := in.share(e, path[1:])
	if !changed {
		return v, false
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	out[path[0]] = s
	return out, true
}

// DecodeObjectWithout is DecodeObjectWithout sharing the values at the
// interner's paths.
func (in *Interner) DecodeObjectWithout(data []byte, outer, inner string) (map[string]any, error) {
	return decodeObjectWith(data, outer, inner, in)
}

func decodeObjectWith(data []byte, outer, inner string, in *Interner) (map[string]any, error) {
	d := decoderPool.Get().(*decoder)
	defer d.release()
	d.data = data
	d.skipOuter, d.skipInner = outer, inner
	d.in = in
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, d.errorf("unexpected %s after the document", quoteByte(d.data[d.pos]))
	}
	return asObject(v)
}

type kv struct {
	k string
	v any
}

type decoder struct {
	data []byte
	// src is data as one string, made on the first string decoded: strings
	// without escapes are slices of it, so a document costs one string
	// allocation instead of one per string. Decoded strings keep the whole
	// document's text alive.
	src   string
	pos   int
	pairs []kv   // scratch stack of object members being decoded
	elems []any  // scratch stack of array elements being decoded
	buf   []byte // scratch for strings with escapes

	// The lengths the stacks reached, up to which release clears them.
	hiPairs, hiElems int

	// skipOuter and skipInner name the member left out (see
	// DecodeObjectWithout); inOuter is set while the document's member
	// skipOuter is decoded.
	skipOuter, skipInner string
	inOuter              bool
	// in, when set, shares the values at its paths; path is the member
	// names (and "[]") down to the value being decoded, while no deeper
	// than in's paths.
	in   *Interner
	path []string

	// boxes caches the string values boxed into an any, so that a string
	// repeated in the document ("TCP", a volume name) is boxed, an
	// allocation, once.
	boxes [boxCacheSize]struct {
		s string
		v any
	}
}

const (
	boxCacheSize = 64 // a power of two
	maxBoxCached = 64 // longer strings are rarely repeated
)

// box returns s as an any, sharing the box of an equal string decoded
// before when the cache has it.
func (d *decoder) box(s string) any {
	n := len(s)
	if n == 0 || n > maxBoxCached {
		return s
	}
	h := (uint(n)*131 + uint(s[0])*31 + uint(s[n/2])*7 + uint(s[n-1])) & (boxCacheSize - 1)
	e := &d.boxes[h]
	if e.s == s {
		return e.v
	}
	v := any(s)
	e.s, e.v = s, v
	return v
}

func (d *decoder) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
}

// quoteByte names an input byte in an error message: 'x' for ASCII, byte
// 0xff otherwise (a byte of a multi-byte character is not a character).
func quoteByte(c byte) string {
	if c < utf8.RuneSelf {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of input")
	}
	switch c := d.data[d.pos]; c {
	case '{':
		if depth >= MaxDepth {
			return nil, d.errorf("document nested deeper than %d levels", MaxDepth)
		}
		return d.object(depth + 1)
	case '[':
		if depth >= MaxDepth {
			return nil, d.errorf("document nested deeper than %d levels", MaxDepth)
		}
		return d.array(depth + 1)
	case '"':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		if d.in != nil {
			return d.in.boxed(s), nil
		}
		return d.box(s), nil
	case 't':
		return d.literal("true", true)
	case 'f':
		return d.literal("false", false)
	case 'n':
		return d.literal("null", nil)
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return d.number()
		}
		return nil, d.errorf("unexpected %s", quoteByte(c))
	}
}

func (d *decoder) literal(word string, v any) (any, error) {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return nil, d.errorf("invalid literal, expected %s", word)
	}
	d.pos += len(word)
	return v, nil
}

// smallObject is how many members an object may have before decode checks
// for duplicate keys with a map instead of a linear scan, which would make
// an object of n members cost n² comparisons.
const smallObject = 16

func (d *decoder) object(depth int) (any, error) {
	d.pos++ // {
	base := len(d.pairs)
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return map[string]any{}, nil
	}
	var m map[string]any // the members, once there are more than smallObject
	for {
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("expected a string key")
		}
		start := d.pos
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		dup := false
		if m != nil {
			_, dup = m[k]
		} else {
			for i := base; i < len(d.pairs); i++ {
				if d.pairs[i].k == k {
					dup = true
					break
				}
			}
		}
		if dup {
			d.pos = start
			return nil, d.errorf("duplicate key %q", k)
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("expected ':' after object key")
		}
		d.pos++
		d.skipSpace()
		skip := false
		var v any
		if d.in != nil && depth <= d.in.depth {
			d.path = append(d.path[:depth-1], k)
		}
		switch {
		case d.in != nil && depth <= d.in.depth && d.in.match(d.path):
			v, err = d.intern(depth)
		case d.skipInner == "":
			v, err = d.value(depth)
		case depth == 1 && k == d.skipOuter:
			d.inOuter = true
			v, err = d.value(depth)
			d.inOuter = false
		case depth == 2 && d.inOuter && k == d.skipInner:
			skip = true
			err = d.skipValue(depth)
		default:
			v, err = d.value(depth)
		}
		if err != nil {
			return nil, err
		}
		if skip {
			// Left out.
		} else if m != nil {
			m[k] = v
		} else {
			d.pairs = append(d.pairs, kv{k, v})
			d.hiPairs = max(d.hiPairs, len(d.pairs))
			if len(d.pairs)-base > smallObject {
				m = d.popPairs(base, 2*smallObject)
			}
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of input in object")
		}
		if d.data[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.data[d.pos] == '}' {
			d.pos++
			break
		}
		return nil, d.errorf("expected ',' or '}' in object")
	}
	if m == nil {
		m = d.popPairs(base, 0)
	}
	return m, nil
}

// intern decodes the value at the position, or returns the interner's
// value of the same text.
func (d *decoder) intern(depth int) (any, error) {
	start := d.pos
	if err := d.skipValue(depth); err != nil {
		return nil, err
	}
	if v, ok := d.in.table[string(d.data[start:d.pos])]; ok {
		d.in.Hits++
		return v, nil
	}
	end := d.pos
	d.pos = start
	// The value's own path is below the current one: its members must
	// not see it as theirs.
	path := d.path
	v, err := d.value(depth)
	d.path = path[:min(len(path), depth)]
	if err != nil {
		return nil, err
	}
	if d.pos != end {
		return nil, d.errorf("malformed value")
	}
	if len(d.in.table) >= d.in.max {
		clear(d.in.table)
	}
	d.in.table[string(d.data[start:end])] = v
	return v, nil
}

// skipValue moves past one value without decoding it: scalars are read as
// usual, objects and arrays are scanned for their end (strings skipped as
// strings, nesting counted).
func (d *decoder) skipValue(depth int) error {
	if d.pos >= len(d.data) {
		return d.errorf("unexpected end of input")
	}
	if c := d.data[d.pos]; c != '{' && c != '[' {
		_, err := d.value(depth)
		return err
	}
	nest := 0
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case '"':
			if err := d.skipString(); err != nil {
				return err
			}
			continue
		case '{', '[':
			nest++
			if depth+nest > MaxDepth {
				return d.errorf("document nested deeper than %d levels", MaxDepth)
			}
		case '}', ']':
			nest--
			if nest == 0 {
				d.pos++
				return nil
			}
		}
		d.pos++
	}
	return d.errorf("unexpected end of input")
}

// skipString moves past the string starting at the opening quote.
func (d *decoder) skipString() error {
	d.pos++ // "
	for {
		d.pos = plainRun(d.data, d.pos)
		if d.pos >= len(d.data) {
			return d.errorf("unterminated string")
		}
		switch c := d.data[d.pos]; {
		case c == '"':
			d.pos++
			return nil
		case c == '\\':
			d.pos += 2
		case c < 0x20:
			return d.errorf("control character in string")
		default:
			d.pos++
		}
	}
}

// popPairs moves the members from base up into a new map.
func (d *decoder) popPairs(base, size int) map[string]any {
	m := make(map[string]any, max(size, len(d.pairs)-base))
	for _, p := range d.pairs[base:] {
		m[p.k] = p.v
	}
	d.pairs = d.pairs[:base] // release clears what the stack held
	return m
}

func (d *decoder) array(depth int) (any, error) {
	d.pos++ // [
	base := len(d.elems)
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return []any{}, nil
	}
	interned := false
	if d.in != nil && depth <= d.in.depth {
		d.path = append(d.path[:depth-1], "[]")
		interned = d.in.match(d.path)
	}
	for {
		d.skipSpace()
		var v any
		var err error
		if interned {
			v, err = d.intern(depth)
		} else {
			v, err = d.value(depth)
		}
		if err != nil {
			return nil, err
		}
		d.elems = append(d.elems, v)
		d.hiElems = max(d.hiElems, len(d.elems))
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of input in array")
		}
		if d.data[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.data[d.pos] == ']' {
			d.pos++
			break
		}
		return nil, d.errorf("expected ',' or ']' in array")
	}
	l := make([]any, len(d.elems)-base)
	copy(l, d.elems[base:])
	d.elems = d.elems[:base]
	return l, nil
}

// str decodes a string starting at the opening quote.
//
// Keys are not interned: sharing the memory of repeated keys ("name",
// "image") cost a Deployment 36% more time and 29% more allocated bytes to
// save about 1 KB of the 39 KB it keeps (BenchmarkDecode).
func (d *decoder) str() (string, error) {
	d.pos++ // "
	start := d.pos
	for {
		d.pos = plainRun(d.data, d.pos)
		if d.pos >= len(d.data) {
			return "", d.errorf("unterminated string")
		}
		switch c := d.data[d.pos]; {
		case c == '"':
			var str string
			if d.in != nil {
				// Each string its own (or the interner's): an object kept
				// does not keep its whole document's text.
				str = d.in.text(d.data[start:d.pos])
			} else {
				if d.src == "" {
					d.src = string(d.data)
				}
				str = d.src[start:d.pos]
			}
			d.pos++
			return str, nil
		case c == '\\':
			return d.strSlow(start)
		case c < 0x20:
			return "", d.errorf("control character in string")
		default: // c >= utf8.RuneSelf
			r, size := utf8.DecodeRune(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return d.strSlow(start)
			}
			d.pos += size
		}
	}
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainRun returns the position of the first byte from pos on that does not
// stand for itself in a JSON string (see plainStringByte), or len(b). It
// tests eight bytes at a time: a byte is special when it is a quote or a
// backslash (equal to it: x^c has a zero byte), a control character (below
// 0x20) or not ASCII (its high bit set). The lowest flagged byte is always
// a special one.
func plainRun(b []byte, pos int) int {
	for pos+8 <= len(b) {
		if m := specialMask(binary.LittleEndian.Uint64(b[pos:])); m != 0 {
			return pos + bits.TrailingZeros64(m)/8
		}
		pos += 8
	}
	for pos < len(b) && plainStringByte[b[pos]] {
		pos++
	}
	return pos
}

// specialMask flags (with its high bit) the bytes of x that are not
// plainStringByte; the lowest flagged byte is always one.
func specialMask(x uint64) uint64 {
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	return (((q - ones) & ^q) | ((bs - ones) & ^bs) | ((x - ones*0x20) & ^x) | x) & highs
}

// strSlow decodes a string with escapes or invalid UTF-8 (replaced by
// U+FFFD, as encoding/json does).
func (d *decoder) strSlow(start int) (string, error) {
	buf := append(d.buf[:0], d.data[start:d.pos]...)
	buf = slices.Grow(buf, 64)
	buf, pos, msg := unescape(d.data, d.pos, buf)
	d.buf = buf[:0]
	d.pos = pos
	if msg != "" {
		return "", d.errorf("%s", msg)
	}
	return string(buf), nil
}

// unescape appends to buf the rest of the string whose byte pos of data is
// in, up to its closing quote, decoded. It returns the position after the
// quote or, with a message, the position of the problem. It works on local
// variables, which stay in registers, rather than on a decoder.
func unescape(data []byte, pos int, buf []byte) ([]byte, int, string) {
	for pos < len(data) {
		c := data[pos]
		switch {
		case c == '"':
			return buf, pos + 1, ""
		case c == '\\':
			pos++
			if pos >= len(data) {
				return buf, pos, "unterminated string"
			}
			e := data[pos]
			pos++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(data, pos)
				if !ok {
					return buf, pos, "invalid \\u escape"
				}
				pos += 4
				if utf16.IsSurrogate(r) {
					r2 := utf8.RuneError
					if pos+1 < len(data) && data[pos] == '\\' && data[pos+1] == 'u' {
						if lo, ok := hex4(data, pos+2); ok {
							r2 = utf16.DecodeRune(r, lo)
							if r2 != utf8.RuneError {
								pos += 6
							}
						}
					}
					r = r2
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return buf, pos - 1, fmt.Sprintf("invalid escape \\%c", e)
			}
		case c < 0x20:
			return buf, pos, "control character in string"
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(data[pos:])
			pos += size
			buf = utf8.AppendRune(buf, r)
		default:
			// A run of bytes that need no decoding; in the escape-dense
			// text of a last-applied annotation, usually a short one:
			// eight bytes are stored at once and the length advanced past
			// the plain ones.
			if pos+8 <= len(data) && cap(buf)-len(buf) >= 8 {
				x := binary.LittleEndian.Uint64(data[pos:])
				n := len(buf)
				binary.LittleEndian.PutUint64(buf[n:n+8], x)
				if m := specialMask(x); m != 0 {
					k := bits.TrailingZeros64(m) / 8
					buf = buf[:n+k]
					pos += k
				} else {
					buf = buf[:n+8]
					pos += 8
				}
				continue
			}
			run := pos + 1
			if run+8 <= len(data) {
				if m := specialMask(binary.LittleEndian.Uint64(data[run:])); m != 0 {
					run += bits.TrailingZeros64(m) / 8
				} else {
					run = plainRun(data, run+8)
				}
			} else {
				run = plainRun(data, run)
			}
			buf = append(buf, data[pos:run]...)
			pos = run
		}
	}
	return buf, pos, "unterminated string"
}

// plainStringByte reports the bytes that stand for themselves inside a JSON
// string: printable ASCII other than the quote and the backslash.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hex4 reads the four hex digits of a \\u escape at pos of data.
func hex4(data []byte, pos int) (rune, bool) {
	if len(data)-pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range data[pos : pos+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

func (d *decoder) number() (any, error) {
	start := d.pos
	isFloat := false
	if d.data[d.pos] == '-' {
		d.pos++
	}
	if d.pos >= len(d.data) {
		return nil, d.errorf("invalid number")
	}
	switch c := d.data[d.pos]; {
	case c == '0':
		d.pos++
	case c >= '1' && c <= '9':
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
		}
	default:
		return nil, d.errorf("invalid number")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		isFloat = true
		d.pos++
		digits := d.pos
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
		}
		if d.pos == digits {
			return nil, d.errorf("invalid number: no digits after '.'")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		isFloat = true
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		digits := d.pos
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
		}
		if d.pos == digits {
			return nil, d.errorf("invalid number: no digits in exponent")
		}
	}
	lit := d.data[start:d.pos]
	if !isFloat {
		if n, ok := parseInt(lit); ok {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsInf(f, 0) {
		d.pos = start
		return nil, d.errorf("number %s out of range", lit)
	}
	return f, nil
}

// parseInt parses a JSON integer literal into an int64 without allocating;
// ok is false when it does not fit.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) > 19 { // 19 digits cannot overflow a uint64
		return 0, false
	}
	var u uint64
	for _, c := range b {
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}
