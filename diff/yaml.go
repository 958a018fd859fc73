package diff

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v2"
)

// YAML returns obj as kubectl diff prints it (sigs.k8s.io/yaml's Marshal:
// go-yaml v2's block style, keys sorted); nil is the empty file of an
// absent object.
//
// Rendering thousands of objects with go-yaml costs more than the rest of
// a diff, so YAML writes the layout itself (block mappings, indentless
// sequences, flow-style empty collections, literal blocks for multi-line
// values) and asks go-yaml only for the scalars that need its judgement
// (quoting), cached; anything it is not sure to write exactly as go-yaml
// (line folding past 80 columns, unusual strings and nesting) makes it hand
// the whole object to go-yaml. TestYAMLMatchesSigsYAML checks it against
// sigs.k8s.io/yaml.
func YAML(obj map[string]any) ([]byte, error) {
	if obj == nil {
		return nil, nil
	}
	w := writers.Get().(*yamlWriter)
	defer writers.Put(w)
	w.buf = w.buf[:0]
	if w.document(obj) {
		return slices.Clone(w.buf), nil
	}
	return yaml.Marshal(obj)
}

// appendYAML appends YAML(obj) to dst, with w's memory.
func (w *yamlWriter) appendYAML(dst []byte, obj map[string]any) ([]byte, error) {
	if obj == nil {
		return dst, nil
	}
	start := len(dst)
	w.buf = dst
	ok := w.document(obj)
	dst, w.buf = w.buf, nil
	if ok {
		return dst, nil
	}
	b, err := yaml.Marshal(obj)
	if err != nil {
		return dst[:start], err
	}
	return append(dst[:start], b...), nil
}

var writers = sync.Pool{New: func() any { return &yamlWriter{cache: map[string]string{}} }}

// yamlWriter writes the block YAML of go-yaml v2.
type yamlWriter struct {
	buf []byte
	// cache holds go-yaml's rendering of single-line scalars.
	cache map[string]string
	// entries is the stack of the sorted entries of the mappings being
	// written.
	entries []keyValue
}

// keyValue is a key and its value.
type keyValue struct {
	key   string
	value any
}

// bestWidth is go-yaml's preferred line width: it folds long scalars at a
// space past it.
const bestWidth = 80

func (w *yamlWriter) document(obj map[string]any) bool {
	clear(w.entries)
	w.entries = w.entries[:0]
	if len(obj) == 0 {
		w.buf = append(w.buf, "{}\n"...)
		return true
	}
	return w.mapping(obj, 0, false)
}

// mapping writes the entries of m with their keys at column indent; with
// inline, the first one goes on the current line (after "- ").
func (w *yamlWriter) mapping(m map[string]any, indent int, inline bool) bool {
	// The entries of nested mappings go on after these in w.entries
	// (which may move: entries stays valid, on the array it was taken
	// from).
	base := len(w.entries)
	ascii := true
	for k, v := range m {
		w.entries = append(w.entries, keyValue{k, v})
		ascii = ascii && isASCII(k)
	}
	entries := w.entries[base:]
	if ascii {
		// The keys of a map are distinct: none compares equal.
		slices.SortFunc(entries, func(a, b keyValue) int {
			if asciiLess(a.key, b.key) {
				return -1
			}
			return 1
		})
	} else {
		slices.SortFunc(entries, func(a, b keyValue) int { return compareKeys(a.key, b.key) })
	}
	for i, kv := range entries {
		if i > 0 || !inline {
			w.indent(indent)
		}
		ks, ok := w.scalar(kv.key, indent, true)
		if !ok {
			return false
		}
		w.buf = append(w.buf, ks...)
		w.buf = append(w.buf, ':')
		if !w.mappingValue(kv.value, indent, indent+len(ks)+1) {
			return false
		}
	}
	clear(entries)
	w.entries = w.entries[:base]
	return true
}

// mappingValue writes the value of a key at column indent, the line being
// at column col.
func (w *yamlWriter) mappingValue(v any, indent, col int) bool {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			w.buf = append(w.buf, " {}\n"...)
			return true
		}
		w.buf = append(w.buf, '\n')
		return w.mapping(x, indent+2, false)
	case []any:
		if len(x) == 0 {
			w.buf = append(w.buf, " []\n"...)
			return true
		}
		w.buf = append(w.buf, '\n')
		return w.sequence(x, indent)
	case string:
		if strings.IndexByte(x, '\n') >= 0 {
			return w.literal(x, indent+2)
		}
		s, ok := w.scalar(x, col+1, false)
		if !ok {
			return false
		}
		w.buf = append(w.buf, ' ')
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '\n')
		return true
	}
	w.buf = append(w.buf, ' ')
	if !w.other(v) {
		return false
	}
	w.buf = append(w.buf, '\n')
	return true
}

// sequence writes the items of l with their dashes at column indent.
func (w *yamlWriter) sequence(l []any, indent int) bool {
	for _, v := range l {
		w.indent(indent)
		w.buf = append(w.buf, "- "...)
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				w.buf = append(w.buf, "{}\n"...)
				continue
			}
			if !w.mapping(x, indent+2, true) {
				return false
			}
		case []any:
			if len(x) == 0 {
				w.buf = append(w.buf, "[]\n"...)
				continue
			}
			return false // nested sequences: go-yaml's
		case string:
			if strings.IndexByte(x, '\n') >= 0 {
				return false
			}
			s, ok := w.scalar(x, indent+2, false)
			if !ok {
				return false
			}
			w.buf = append(w.buf, s...)
			w.buf = append(w.buf, '\n')
		default:
			if !w.other(v) {
				return false
			}
			w.buf = append(w.buf, '\n')
		}
	}
	return true
}

func (w *yamlWriter) indent(n int) {
	for n > len(spaces) {
		w.buf = append(w.buf, spaces...)
		n -= len(spaces)
	}
	w.buf = append(w.buf, spaces[:n]...)
}

const spaces = "                                "

// other writes a scalar that is not a string.
func (w *yamlWriter) other(v any) bool {
	switch x := v.(type) {
	case nil:
		w.buf = append(w.buf, "null"...)
	case bool:
		w.buf = strconv.AppendBool(w.buf, x)
	case int64:
		w.buf = strconv.AppendInt(w.buf, x, 10)
	case int:
		w.buf = strconv.AppendInt(w.buf, int64(x), 10)
	case float64:
		switch {
		case math.IsInf(x, 1):
			w.buf = append(w.buf, ".inf"...)
		case math.IsInf(x, -1):
			w.buf = append(w.buf, "-.inf"...)
		case math.IsNaN(x):
			w.buf = append(w.buf, ".nan"...)
		default:
			w.buf = strconv.AppendFloat(w.buf, x, 'g', -1, 64)
		}
	default:
		return false
	}
	return true
}

// scalar renders a single-line string starting at column col, as a key or
// a value; ok is false when only go-yaml can tell.
func (w *yamlWriter) scalar(s string, col int, key bool) (string, bool) {
	if len(s) > 128 && key {
		return "", false // not a simple key: go-yaml writes "? key"
	}
	if safePlain(s) || isUUID(s) {
		return s, true
	}
	if spacedPlain(s) {
		// Values fold at a space past the line width; keys never do.
		if !key && col+len(s) > bestWidth {
			return "", false
		}
		return s, true
	}
	if isDigits(s) {
		// A number to YAML 1.1 (an integer, an octal one, or a float
		// when too large): go-yaml double-quotes it. resourceVersions.
		return `"` + s + `"`, true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return "", false // breaks, tabs, control and non-ASCII characters
		}
	}
	r, ok := w.cache[s]
	if !ok {
		b, err := yaml.Marshal(s)
		if err != nil || len(b) == 0 || strings.IndexByte(string(b[:len(b)-1]), '\n') >= 0 {
			return "", false
		}
		r = string(b[:len(b)-1])
		if len(w.cache) > 1<<16 {
			clear(w.cache)
		}
		w.cache[s] = r
	}
	// Values fold at a space past the line width; keys never do.
	if !key && col+len(r) > bestWidth && strings.IndexByte(s, ' ') >= 0 {
		return "", false
	}
	return r, true
}

// safePlain reports a string that go-yaml writes as it is: it starts with
// a letter or "/", holds only characters that are no indicator in the
// middle of a plain scalar (no space: nothing to fold), does not end with
// ":", and is no keyword of YAML 1.1 (true, yes, on, null, ...).
func safePlain(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == '/', c == '-', c == '@', c == '%', c == '+', c == '=', c == '~', c == '$', c == '(', c == ')', c == ';':
		case c == ':':
			if i == len(s)-1 {
				return false
			}
		default:
			return false
		}
	}
	if len(s) <= 5 {
		switch strings.ToLower(s) {
		case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
			return false
		}
	}
	return true
}

// spacedPlain reports a string that go-yaml writes as it is (folded past
// the line width) and safePlain does not take: one that starts as
// safePlain says, holds its characters and also spaces and quotes (at
// least one of them: no keyword of YAML 1.1 can hold one), but no space
// at its end or before another space or a '#', and no ':' at its end or
// before a space.
func spacedPlain(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/') {
		return false
	}
	spaced := false
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == '/', c == '-', c == '@', c == '%', c == '+', c == '=', c == '~', c == '$', c == '(', c == ')', c == ';':
		case c == '"', c == '\'':
			spaced = true
		case c == ' ':
			if i == len(s)-1 || s[i+1] == ' ' || s[i+1] == '#' {
				return false
			}
			spaced = true
		case c == ':':
			if i == len(s)-1 || s[i+1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	return spaced
}

// isDigits reports a string of ASCII digits only.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isUUID reports a uid as the API server writes it: lowercase hex digits
// in groups of 8, 4, 4, 4 and 12 joined by '-'. go-yaml writes it plain:
// no number, timestamp (four digits, then '-') or indicator can match it.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// literal writes a multi-line value as go-yaml's literal block, its lines
// at column indent; ok is false for what go-yaml writes otherwise (double
// quotes for special characters or a space before a break, indentation
// hints, the keep chomping of several final breaks).
func (w *yamlWriter) literal(s string, indent int) bool {
	if s[0] == ' ' || s[0] == '\n' || s[len(s)-1] == ' ' || strings.HasSuffix(s, "\n\n") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 || c > 0x7e) && c != '\n' {
			return false
		}
		if c == ' ' && i+1 < len(s) && s[i+1] == '\n' {
			return false
		}
	}
	w.buf = append(w.buf, " |"...)
	body := s
	if strings.HasSuffix(s, "\n") {
		body = s[:len(s)-1]
	} else {
		w.buf = append(w.buf, '-')
	}
	w.buf = append(w.buf, '\n')
	for line := range strings.SplitSeq(body, "\n") {
		if line != "" {
			w.indent(indent)
			w.buf = append(w.buf, line...)
		}
		w.buf = append(w.buf, '\n')
	}
	return true
}

// compareKeys orders mapping keys as go-yaml v2 does (its keyList): runs of
// digits compare as numbers, letters before other characters.
func compareKeys(a, b string) int {
	if a == b {
		return 0
	}
	if keyLess(a, b) {
		return -1
	}
	return 1
}

func keyLess(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return asciiLess(a, b)
	}
	ar, br := []rune(a), []rune(b)
	return runesLess(ar, br, len(ar), len(br), func(s []rune, i int) rune { return s[i] })
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLess is runesLess on two ASCII strings, where the letters are
// a-z and A-Z and the digits 0-9.
func asciiLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		ai, bi := a[i], b[i]
		if ai == bi {
			continue
		}
		al, bl := isLetter(ai), isLetter(bi)
		if al && bl {
			return ai < bi
		}
		if al || bl {
			return bl
		}
		var aj, bj int
		var an, bn int64
		if ai == '0' || bi == '0' {
			for j := i - 1; j >= 0 && isDigit(a[j]); j-- {
				if a[j] != '0' {
					an = 1
					bn = 1
					break
				}
			}
		}
		for aj = i; aj < len(a) && isDigit(a[aj]); aj++ {
			an = an*10 + int64(a[aj]-'0')
		}
		for bj = i; bj < len(b) && isDigit(b[bj]); bj++ {
			bn = bn*10 + int64(b[bj]-'0')
		}
		if an != bn {
			return an < bn
		}
		if aj != bj {
			return aj < bj
		}
		return ai < bi
	}
	return len(a) < len(b)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// runesLess is go-yaml v2's keyList.Less on two strings of runes.
func runesLess[S any](a, b S, na, nb int, at func(S, int) rune) bool {
	for i := 0; i < na && i < nb; i++ {
		ai, bi := at(a, i), at(b, i)
		if ai == bi {
			continue
		}
		al := unicode.IsLetter(ai)
		bl := unicode.IsLetter(bi)
		if al && bl {
			return ai < bi
		}
		if al || bl {
			return bl
		}
		var aj, bj int
		var an, bn int64
		if ai == '0' || bi == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(at(a, j)); j-- {
				if at(a, j) != '0' {
					an = 1
					bn = 1
					break
				}
			}
		}
		for aj = i; aj < na && unicode.IsDigit(at(a, aj)); aj++ {
			an = an*10 + int64(at(a, aj)-'0')
		}
		for bj = i; bj < nb && unicode.IsDigit(at(b, bj)); bj++ {
			bn = bn*10 + int64(at(b, bj)-'0')
		}
		if an != bn {
			return an < bn
		}
		if aj != bj {
			return aj < bj
		}
		return ai < bi
	}
	return na < nb
}
