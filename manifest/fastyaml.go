package manifest

import (
	"bytes"
	"strings"
)

// fastYAML decodes the plain block YAML that manifests are mostly written
// in, without go-yaml's node tree: block mappings and sequences indented
// with spaces, plain and quoted scalars on one line, literal block scalars
// ("|", "|-", "|+") as mapping values, flow collections on one line
// ("[a, b]", "{k: v}") of plain and quoted scalars, and comments. ok is
// false for anything else (anchors, aliases, tags, flow collections,
// folded or multi-line scalars, escapes, tabs, non-ASCII text, a List
// document, anything malformed, a duplicate key): the caller then decodes
// the document with go-yaml (decodeYAML), which also finds the errors and
// their lines. Where ok is true the value is the one decodeYAML gives;
// TestFastYAMLMatchesDecode and FuzzFastYAML hold it to that.
func fastYAML(data []byte) (v any, ok bool) {
	for _, c := range data {
		if c >= 0x7f || c < 0x20 && c != '\n' {
			return nil, false
		}
	}
	p := fastParser{endsNL: len(data) > 0 && data[len(data)-1] == '\n'}
	if p.endsNL {
		data = data[:len(data)-1]
	}
	raw := bytes.Split(data, []byte{'\n'})
	p.lines = make([]fastLine, len(raw))
	for i, l := range raw {
		if bytes.HasPrefix(l, []byte("...")) || bytes.HasPrefix(l, []byte("%")) || bytes.HasPrefix(l, []byte("---")) {
			return nil, false
		}
		c := bytes.TrimLeft(l, " ")
		p.lines[i] = fastLine{raw: l, indent: len(l) - len(c), content: c}
	}
	defer func() {
		if r := recover(); r != nil {
			if r != errFastBail {
				panic(r)
			}
			v, ok = nil, false
		}
	}()
	if !p.skip() {
		return nil, false
	}
	l := p.lines[p.i]
	if isSeqItem(l.content) {
		return nil, false // a document must be a mapping: go-yaml's path says so
	}
	m := p.mapping(l.indent, 0)
	if p.skip() {
		p.bail()
	}
	if _, has := m["items"]; has {
		return nil, false // a List: decodeYAML knows its items' lines
	}
	return m, true
}

// fastMaxDepth bounds the nesting fastYAML takes on; deeper documents go
// to decodeYAML, which enforces value.MaxDepth.
const fastMaxDepth = 100

type fastLine struct {
	raw     []byte // the whole line
	indent  int    // leading spaces
	content []byte // the line after them
}

type fastParser struct {
	lines  []fastLine
	i      int  // the line being read
	endsNL bool // the document ends with a line break
}

type fastBail struct{}

var errFastBail any = fastBail{}

// bail gives the document up to decodeYAML.
func (p *fastParser) bail() { panic(errFastBail) }

// skip moves past blank and comment lines; false at the end.
func (p *fastParser) skip() bool {
	for ; p.i < len(p.lines); p.i++ {
		c := p.lines[p.i].content
		if len(c) > 0 && c[0] != '#' {
			return true
		}
	}
	return false
}

func isSeqItem(c []byte) bool {
	return len(c) > 0 && c[0] == '-' && (len(c) == 1 || c[1] == ' ')
}

// node reads the block node that starts at the current line.
func (p *fastParser) node(depth int) any {
	l := p.lines[p.i]
	if isSeqItem(l.content) {
		return p.sequence(l.indent, depth)
	}
	return p.mapping(l.indent, depth)
}

// mapping reads the block mapping whose keys are at column indent.
func (p *fastParser) mapping(indent, depth int) map[string]any {
	if depth >= fastMaxDepth {
		p.bail()
	}
	m := map[string]any{}
	for p.skip() {
		l := p.lines[p.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent || isSeqItem(l.content) {
			p.bail()
		}
		key, rest := splitKey(l.content)
		if key == nil {
			p.bail()
		}
		k := p.key(key)
		if _, dup := m[k]; dup {
			p.bail()
		}
		p.i++
		m[k] = p.value(rest, indent, true, depth)
	}
	return m
}

// sequence reads the block sequence whose dashes are at column indent.
func (p *fastParser) sequence(indent, depth int) []any {
	if depth >= fastMaxDepth {
		p.bail()
	}
	list := []any{}
	for p.skip() {
		l := p.lines[p.i]
		if l.indent < indent || l.indent == indent && !isSeqItem(l.content) {
			break
		}
		if l.indent > indent {
			p.bail()
		}
		rest := bytes.TrimLeft(l.content[1:], " ")
		col := indent + len(l.content) - len(rest)
		switch {
		case len(rest) == 0 || rest[0] == '#':
			p.i++
			list = append(list, p.nested(indent, false, depth))
		case isSeqItem(rest):
			p.bail()
		default:
			if key, _ := splitKey(rest); key != nil {
				// "- key: value": a mapping at the key's column.
				p.lines[p.i] = fastLine{raw: l.raw, indent: col, content: rest}
				list = append(list, p.mapping(col, depth+1))
				continue
			}
			p.i++
			list = append(list, p.value(rest, indent, false, depth))
		}
	}
	return list
}

// splitKey cuts a mapping entry's line at the ": " (or final ":") after its
// plain key; key is nil when the line is not one.
func splitKey(c []byte) (key, rest []byte) {
	if len(c) == 0 || !plainStart(c) {
		return nil, nil
	}
	for j := 0; j < len(c); j++ {
		switch c[j] {
		case '#':
			if j > 0 && c[j-1] == ' ' {
				return nil, nil
			}
		case ':':
			if j+1 == len(c) || c[j+1] == ' ' {
				if j == 0 || c[j-1] == ' ' || j > maxSimpleKey {
					return nil, nil
				}
				return c[:j], bytes.TrimLeft(c[j+1:], " ")
			}
		}
	}
	return nil, nil
}

// maxSimpleKey is below the length at which YAML stops reading an
// implicit key (1024 characters).
const maxSimpleKey = 1000

// plainStart reports whether c starts as a plain scalar fastYAML takes:
// not with an indicator.
func plainStart(c []byte) bool {
	switch c[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ':
		return false
	}
	return true
}

// key is the JSON key of a plain mapping key, as decodeYAML makes it.
func (p *fastParser) key(b []byte) string {
	s := string(b)
	if s == "<<" {
		p.bail()
	}
	_, v, err := resolveTagged("", s)
	if err != nil {
		p.bail()
	}
	k, ok := keyString(v)
	if !ok {
		p.bail()
	}
	return k
}

// value reads the value that follows a key (inMapping) or a dash on the
// line just read: rest is the text after it, indent the column of the key
// or the dash.
func (p *fastParser) value(rest []byte, indent int, inMapping bool, depth int) any {
	if len(rest) == 0 || rest[0] == '#' {
		return p.nested(indent, inMapping, depth)
	}
	switch rest[0] {
	case '"':
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 || bytes.IndexByte(rest[1:end+1], '\\') >= 0 {
			p.bail()
		}
		p.endOfLine(rest[end+2:])
		return string(rest[1 : end+1])
	case '\'':
		var b strings.Builder
		j := 1
		for {
			q := bytes.IndexByte(rest[j:], '\'')
			if q < 0 {
				p.bail()
			}
			b.Write(rest[j : j+q])
			j += q + 1
			if j < len(rest) && rest[j] == '\'' {
				b.WriteByte('\'')
				j++
				continue
			}
			break
		}
		p.endOfLine(rest[j:])
		return b.String()
	case '|':
		if !inMapping {
			p.bail()
		}
		return p.literal(rest[1:], indent)
	case '[', '{':
		v, n := p.flow(rest, depth)
		p.endOfLine(rest[n:])
		return v
	}
	if !plainStart(rest) && !(rest[0] == '-' && len(rest) > 1 && rest[1] != ' ') {
		p.bail()
	}
	s := rest
	if j := bytes.Index(s, []byte(" #")); j >= 0 {
		s = s[:j]
	}
	s = bytes.TrimRight(s, " ")
	if bytes.Contains(s, []byte(": ")) || s[len(s)-1] == ':' {
		p.bail()
	}
	_, v, err := resolveTagged("", string(s))
	if err != nil {
		p.bail()
	}
	v, err = jsonValue(v)
	if err != nil {
		p.bail()
	}
	return v
}

// endOfLine checks that only spaces or a comment follow a quoted scalar or
// an empty collection.
func (p *fastParser) endOfLine(b []byte) {
	t := bytes.TrimLeft(b, " ")
	if len(t) > 0 && (t[0] != '#' || len(t) == len(b)) {
		p.bail()
	}
}

// nested reads the node on the lines after a key or dash with nothing after
// it: more indented, or a sequence at the key's own column; null when
// neither follows.
func (p *fastParser) nested(indent int, inMapping bool, depth int) any {
	if !p.skip() {
		return nil
	}
	l := p.lines[p.i]
	switch {
	case l.indent > indent:
		return p.node(depth + 1)
	case l.indent == indent && inMapping && isSeqItem(l.content):
		return p.sequence(indent, depth+1)
	}
	return nil
}

// literal reads a literal block scalar after a key at column indent;
// header is the text after the "|".
func (p *fastParser) literal(header []byte, indent int) string {
	chomp := byte(0)
	if len(header) > 0 && (header[0] == '-' || header[0] == '+') {
		chomp = header[0]
		header = header[1:]
	}
	p.endOfLine(header)
	if len(header) > 0 && header[0] != ' ' {
		p.bail()
	}
	blockIndent := -1
	var b strings.Builder
	newlines := 0 // empty lines not yet written
	first := true
	for ; p.i < len(p.lines); p.i++ {
		l := p.lines[p.i]
		if len(l.raw) == 0 {
			newlines++
			continue
		}
		if len(l.content) == 0 {
			p.bail() // a line of spaces: its meaning depends on the indentation
		}
		if blockIndent < 0 {
			if l.indent <= indent {
				p.bail() // an empty scalar
			}
			blockIndent = l.indent
		}
		if l.indent < blockIndent {
			break
		}
		if !first {
			b.WriteByte('\n')
		}
		for range newlines {
			b.WriteByte('\n')
		}
		first, newlines = false, 0
		b.Write(l.raw[blockIndent:])
	}
	if blockIndent < 0 || p.i == len(p.lines) && !p.endsNL {
		p.bail()
	}
	switch chomp {
	case '-':
	case '+':
		b.WriteByte('\n')
		for range newlines {
			b.WriteByte('\n')
		}
	default:
		b.WriteByte('\n')
	}
	return b.String()
}

// flow reads a flow collection on one line at the start of s: its value
// and the bytes it takes.
func (p *fastParser) flow(s []byte, depth int) (any, int) {
	if depth >= fastMaxDepth {
		p.bail()
	}
	open, end := s[0], s[0]+2 // '[' and ']', '{' and '}'
	var list []any
	var m map[string]any
	if open == '[' {
		list = []any{}
	} else {
		m = map[string]any{}
	}
	i := 1
	for first := true; ; first = false {
		i = skipSpaces(s, i)
		if i < len(s) && s[i] == end && first {
			i++
			break
		}
		if m != nil {
			k, n := p.flowPlain(s[i:], true)
			key := p.key(k)
			if _, dup := m[key]; dup {
				p.bail()
			}
			i += n + 1 // the ':'
			v, n := p.flowValue(s[i:], depth)
			m[key] = v
			i += n
		} else {
			v, n := p.flowValue(s[i:], depth)
			list = append(list, v)
			i += n
		}
		i = skipSpaces(s, i)
		if i == len(s) {
			p.bail()
		}
		if s[i] == end {
			i++
			break
		}
		if s[i] != ',' {
			p.bail()
		}
		i++
		if j := skipSpaces(s, i); j < len(s) && s[j] == end {
			p.bail() // a trailing comma
		}
	}
	if list != nil {
		return list, i
	}
	return m, i
}

func skipSpaces(s []byte, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// flowValue reads a value inside a flow collection, after optional spaces.
func (p *fastParser) flowValue(s []byte, depth int) (any, int) {
	i := skipSpaces(s, 0)
	if i == len(s) {
		p.bail()
	}
	switch s[i] {
	case '[', '{':
		v, n := p.flow(s[i:], depth+1)
		return v, i + n
	case '"':
		end := bytes.IndexByte(s[i+1:], '"')
		if end < 0 || bytes.IndexByte(s[i+1:i+1+end], '\\') >= 0 {
			p.bail()
		}
		return string(s[i+1 : i+1+end]), i + end + 2
	case '\'':
		end := bytes.IndexByte(s[i+1:], '\'')
		if end < 0 || i+2+end < len(s) && s[i+2+end] == '\'' {
			p.bail() // unterminated, or an escaped quote
		}
		return string(s[i+1 : i+1+end]), i + end + 2
	}
	text, n := p.flowPlain(s[i:], false)
	_, v, err := resolveTagged("", string(text))
	if err != nil {
		p.bail()
	}
	if v, err = jsonValue(v); err != nil {
		p.bail()
	}
	return v, i + n
}

// flowPlain reads a plain scalar inside a flow collection: a key (up to
// its ": ") or a value (up to ",", "]" or "}"); n is the bytes up to where
// it ends, not counting a key's ':'.
func (p *fastParser) flowPlain(s []byte, isKey bool) (text []byte, n int) {
	i := skipSpaces(s, 0)
	if i == len(s) || !plainStart(s[i:]) {
		p.bail()
	}
	j := i
	for ; j < len(s); j++ {
		c := s[j]
		if c == ',' || c == '[' || c == ']' || c == '{' || c == '}' {
			break
		}
		if c == '#' && s[j-1] == ' ' {
			p.bail()
		}
		if c == ':' && (j+1 == len(s) || s[j+1] == ' ' || s[j+1] == ',' || s[j+1] == ']' || s[j+1] == '}') {
			if !isKey || j+1 == len(s) || s[j+1] != ' ' {
				p.bail()
			}
			break
		}
	}
	if isKey && (j == len(s) || s[j] != ':') {
		p.bail() // a key without a value
	}
	text = bytes.TrimRight(s[i:j], " ")
	if len(text) == 0 || len(text) > maxSimpleKey {
		p.bail()
	}
	return text, j
}
