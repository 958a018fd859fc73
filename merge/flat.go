package merge

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// A flat JSON document for ThreeWayJSON: the nodes of the parse tree in one
// slice, in document order, each naming its bytes in the source. Parsing
// one allocates nothing once the slice has grown to fit; strings are not
// unescaped (compared escape-aware when their bytes differ) and values are
// copied to the output from their source bytes.
//
// The parser accepts only what the merge fast path can take over from the
// general one without changing a result: objects whose keys are strictly
// ascending with no escapes and no "$" directives, no null, integers that
// fit an int64 (no fractions or exponents), valid UTF-8. Anything else
// makes it report !ok, and ThreeWayJSON decodes the documents instead,
// where the general path gives the answer (or the error).

// Node kinds.
const (
	kObject = iota + 1
	kArray
	kString
	kNumber
	kTrue
	kFalse
)

type flatNode struct {
	kind uint8
	esc  bool  // a string with escapes
	n    int32 // members of an object, elements of an array
	// For a string its content between the quotes; for other scalars their
	// text; for an object or array its whole text with the brackets.
	start, end int32
	// next is the index of the node after this one's subtree.
	next int32
}

type flatDoc struct {
	src   []byte
	nodes []flatNode
}

// parse reads src into d.nodes; ok is false when src is not JSON or holds
// something the fast path does not take.
func (d *flatDoc) parse(src []byte) (ok bool) {
	d.src = src
	d.nodes = d.nodes[:0]
	p := flatParser{d: d, src: src}
	i := p.skipWS(0)
	i, ok = p.value(i, 0)
	if !ok {
		return false
	}
	return p.skipWS(i) == len(src)
}

type flatParser struct {
	d   *flatDoc
	src []byte
}

func (p *flatParser) skipWS(i int) int {
	for i < len(p.src) {
		switch p.src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

const flatMaxDepth = 1000

func (p *flatParser) value(i, depth int) (int, bool) {
	if i >= len(p.src) || depth > flatMaxDepth {
		return i, false
	}
	switch c := p.src[i]; {
	case c == '{':
		return p.object(i, depth)
	case c == '[':
		return p.array(i, depth)
	case c == '"':
		return p.str(i)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(i)
	case c == 't':
		if bytes.HasPrefix(p.src[i:], []byte("true")) {
			p.d.nodes = append(p.d.nodes, flatNode{kind: kTrue, start: int32(i), end: int32(i + 4), next: int32(len(p.d.nodes) + 1)})
			return i + 4, true
		}
	case c == 'f':
		if bytes.HasPrefix(p.src[i:], []byte("false")) {
			p.d.nodes = append(p.d.nodes, flatNode{kind: kFalse, start: int32(i), end: int32(i + 5), next: int32(len(p.d.nodes) + 1)})
			return i + 5, true
		}
	}
	return i, false
}

func (p *flatParser) object(i, depth int) (int, bool) {
	at := len(p.d.nodes)
	p.d.nodes = append(p.d.nodes, flatNode{kind: kObject, start: int32(i)})
	i = p.skipWS(i + 1)
	var n int32
	prevKey := -1
	if i < len(p.src) && p.src[i] == '}' {
		i++
	} else {
		for {
			if i >= len(p.src) || p.src[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = p.str(i); !ok {
				return i, false
			}
			k := &p.d.nodes[len(p.d.nodes)-1]
			key := p.src[k.start:k.end]
			if k.esc || len(key) == 0 || key[0] <= '$' {
				return i, false
			}
			if prevKey >= 0 {
				pk := &p.d.nodes[prevKey]
				if bytes.Compare(p.src[pk.start:pk.end], key) >= 0 {
					return i, false // unsorted or repeated keys
				}
			}
			prevKey = len(p.d.nodes) - 1
			i = p.skipWS(i)
			if i >= len(p.src) || p.src[i] != ':' {
				return i, false
			}
			if i, ok = p.value(p.skipWS(i+1), depth+1); !ok {
				return i, false
			}
			n++
			i = p.skipWS(i)
			if i >= len(p.src) {
				return i, false
			}
			if p.src[i] == '}' {
				i++
				break
			}
			if p.src[i] != ',' {
				return i, false
			}
			i = p.skipWS(i + 1)
		}
	}
	nd := &p.d.nodes[at]
	nd.n, nd.end, nd.next = n, int32(i), int32(len(p.d.nodes))
	return i, true
}

func (p *flatParser) array(i, depth int) (int, bool) {
	at := len(p.d.nodes)
	p.d.nodes = append(p.d.nodes, flatNode{kind: kArray, start: int32(i)})
	i = p.skipWS(i + 1)
	var n int32
	if i < len(p.src) && p.src[i] == ']' {
		i++
	} else {
		for {
			var ok bool
			if i, ok = p.value(i, depth+1); !ok {
				return i, false
			}
			n++
			i = p.skipWS(i)
			if i >= len(p.src) {
				return i, false
			}
			if p.src[i] == ']' {
				i++
				break
			}
			if p.src[i] != ',' {
				return i, false
			}
			i = p.skipWS(i + 1)
		}
	}
	nd := &p.d.nodes[at]
	nd.n, nd.end, nd.next = n, int32(i), int32(len(p.d.nodes))
	return i, true
}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// str reads the string at src[i] == '"', eight bytes at a time while they
// hold no quote, backslash, control character or non-ASCII byte.
func (p *flatParser) str(i int) (int, bool) {
	src := p.src
	start := i + 1
	j := start
	esc, high := false, false
	for {
		for j+8 <= len(src) {
			w := binary.LittleEndian.Uint64(src[j:])
			q := w ^ (lo8 * '"')
			b := w ^ (lo8 * '\\')
			// A byte is special when it is '"', '\\', < 0x20 or >= 0x80.
			special := ((q - lo8) &^ q) | ((b - lo8) &^ b) | (w - lo8*0x20) | w
			special &= hi8
			if special == 0 {
				j += 8
				continue
			}
			j += bits.TrailingZeros64(special) / 8
			break
		}
		if j >= len(src) {
			return j, false
		}
		switch c := src[j]; {
		case c == '"':
			if high && !utf8.Valid(src[start:j]) {
				return j, false
			}
			p.d.nodes = append(p.d.nodes, flatNode{kind: kString, esc: esc, start: int32(start), end: int32(j), next: int32(len(p.d.nodes) + 1)})
			return j + 1, true
		case c == '\\':
			esc = true
			if j+1 >= len(src) {
				return j, false
			}
			switch src[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(src) || !isHex4(src[j+2:j+6]) {
					return j, false
				}
				j += 6
			default:
				return j, false
			}
		case c < 0x20:
			return j, false
		case c >= 0x80:
			high = true
			j++
		default:
			// The word test flags a byte after a special one as special
			// too (borrows); step over it.
			j++
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads an integer that fits an int64 with room to spare; anything
// with a fraction or an exponent is not taken.
func (p *flatParser) number(i int) (int, bool) {
	src := p.src
	j := i
	if src[j] == '-' {
		j++
	}
	d := j
	for j < len(src) && src[j] >= '0' && src[j] <= '9' {
		j++
	}
	nd := j - d
	if nd == 0 || nd > 18 || (nd > 1 && src[d] == '0') {
		return j, false
	}
	if j < len(src) && (src[j] == '.' || src[j] == 'e' || src[j] == 'E') {
		return j, false
	}
	if src[i] == '-' && nd == 1 && src[d] == '0' {
		return j, false // -0
	}
	p.d.nodes = append(p.d.nodes, flatNode{kind: kNumber, start: int32(i), end: int32(j), next: int32(len(p.d.nodes) + 1)})
	return j, true
}

// bytesOf returns the text of node i (a string's content without quotes).
func (d *flatDoc) bytesOf(i int32) []byte {
	n := &d.nodes[i]
	return d.src[n.start:n.end]
}

// raw returns the JSON text of node i, with a string's quotes.
func (d *flatDoc) raw(i int32) []byte {
	n := &d.nodes[i]
	if n.kind == kString {
		return d.src[n.start-1 : n.end+1]
	}
	return d.src[n.start:n.end]
}

// flatEqual reports whether node i of a and node j of b hold equal values,
// as value.Equal compares their decoded forms.
func flatEqual(a *flatDoc, i int32, b *flatDoc, j int32) bool {
	x, y := &a.nodes[i], &b.nodes[j]
	if x.kind != y.kind || x.n != y.n {
		return false
	}
	switch x.kind {
	case kTrue, kFalse:
		return true
	case kNumber:
		// Integers without leading zeros or -0: equal values, equal text.
		return bytes.Equal(a.bytesOf(i), b.bytesOf(j))
	case kString:
		return stringsEqual(a.bytesOf(i), x.esc, b.bytesOf(j), y.esc)
	case kArray:
		ci, cj := i+1, j+1
		for k := int32(0); k < x.n; k++ {
			if !flatEqual(a, ci, b, cj) {
				return false
			}
			ci, cj = a.nodes[ci].next, b.nodes[cj].next
		}
		return true
	case kObject:
		// Keys are strictly ascending in both: equal objects have the
		// same keys in the same order.
		ci, cj := i+1, j+1
		for k := int32(0); k < x.n; k++ {
			if !bytes.Equal(a.bytesOf(ci), b.bytesOf(cj)) {
				return false
			}
			if !flatEqual(a, ci+1, b, cj+1) {
				return false
			}
			ci, cj = a.nodes[ci+1].next, b.nodes[cj+1].next
		}
		return true
	}
	return false
}

// stringsEqual compares two string contents as they decode.
func stringsEqual(a []byte, aEsc bool, b []byte, bEsc bool) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if !aEsc && !bEsc {
		return false
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] == b[j] && a[i] != '\\' && a[i] < utf8.RuneSelf {
			i++
			j++
			continue
		}
		ra, na := decodeRune(a[i:])
		rb, nb := decodeRune(b[j:])
		if ra != rb {
			return false
		}
		i += na
		j += nb
	}
	return i == len(a) && j == len(b)
}

// decodeRune decodes the first character of valid string content, an
// escape sequence or UTF-8, as a JSON decoder reads it (a lone surrogate
// becomes U+FFFD).
func decodeRune(s []byte) (rune, int) {
	if s[0] != '\\' {
		return utf8.DecodeRune(s)
	}
	switch s[1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r := hex4(s[2:6])
		if r >= 0xD800 && r < 0xDC00 {
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if r2 := hex4(s[8:12]); r2 >= 0xDC00 && r2 < 0xE000 {
					return (r-0xD800)<<10 + (r2 - 0xDC00) + 0x10000, 12
				}
			}
			return utf8.RuneError, 6
		}
		if r >= 0xDC00 && r < 0xE000 {
			return utf8.RuneError, 6
		}
		return r, 6
	}
	return rune(s[1]), 2
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
