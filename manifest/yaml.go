package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/konverge/konverge/value"
)

// Limits on alias expansion: the values that aliases add to a document may
// number at most aliasFactor times the values the document holds as
// written, but never less than minAliasValues nor more than maxAliasValues.
// go-yaml v2 (kubectl) allows up to 99% of a small document's values to come
// from aliases and stops "excessive aliasing" only by ratio; a budget
// relative to the input bounds memory as well.
const (
	aliasFactor    = 10
	minAliasValues = 10_000
	maxAliasValues = 1_000_000
)

// nodeError is a problem at a node of a YAML document. Line is the line in
// the file; path, when set, is where in the document it is.
type nodeError struct {
	line int
	path value.Path
	msg  string
}

func (e *nodeError) Error() string { return e.msg }

// pathElem is one step of the path being decoded: a key, or an index when
// key is unset and index >= 0.
type pathElem struct {
	key   string
	index int
}

// nodeDecoder turns one YAML document, parsed by go-yaml v3 into nodes,
// into a JSON value with the semantics kubectl's go-yaml v2 gives it.
type nodeDecoder struct {
	lineBase int // add to a node's line to get the line in the file
	root     *yaml.Node

	written    int // values in the document as written, counted at the first alias
	aliasLimit int
	expanded   int // values made by expanding aliases
	aliasDepth int
	expanding  []*yaml.Node // anchored nodes being expanded, to find cycles

	path []pathElem
}

// decodeYAML parses data, one document of a YAML stream starting at line
// lineBase+1 of its file, and returns its value (nil for an empty document)
// and its root node.
func decodeYAML(data []byte, lineBase int) (any, *yaml.Node, *nodeError) {
	var doc yaml.Node
	if err := decodeOne(data, lineBase, &doc); err != nil {
		return nil, nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil, nil
	}
	root := doc.Content[0]
	d := nodeDecoder{lineBase: lineBase, root: root}
	v, err := d.value(root, 0)
	if err != nil {
		return nil, root, err
	}
	return v, root, nil
}

// decodeOne parses the first document of data into doc, and fails when
// anything but comments follows it: kubectl (go-yaml v2) reads the first
// document and ignores the rest ("{a: 1}\n{b: 2}", or a document after
// "..."), which would drop objects without a word.
func decodeOne(data []byte, lineBase int, doc *yaml.Node) *nodeError {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(doc); err != nil && !errors.Is(err, io.EOF) {
		return yamlSyntaxError(err, data, lineBase)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			e := yamlSyntaxError(err, data, lineBase)
			e.msg = afterEnd + e.msg
			return e
		}
		return &nodeError{line: next.Line + lineBase, msg: "a second document without a --- line before it"}
	}
	return nil
}

const afterEnd = "after the end of the document: "

var (
	yamlErrorLine = regexp.MustCompile(`^yaml: line (\d+): `)
	unknownAnchor = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// yamlSyntaxError makes a nodeError of a go-yaml parse error in data, with
// the line counted in the file and nothing quoted from the input: the
// parser's messages are fixed texts except for anchor names, which could be
// a Secret's value mistyped after a "*", so quoted parts longer than one
// character (the parser quotes single punctuation characters, as in
// "expected ',' or ']'") are dropped.
func yamlSyntaxError(err error, data []byte, lineBase int) *nodeError {
	msg := err.Error()
	line := 0
	if m := yamlErrorLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		line += lineBase
		msg = msg[len(m[0]):]
	} else if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		// go-yaml gives no line for this one; find the alias.
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			line = bytes.Count(data[:i], []byte{'\n'}) + 1 + lineBase
		}
		msg = "an alias refers to an unknown anchor"
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return &nodeError{line: line, msg: "invalid YAML: " + redactQuoted(msg)}
}

// redactQuoted removes the parts of a library's error message that quote
// more than one character, with the space before them.
func redactQuoted(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\'' || c == '"' || c == '`' {
			if j := strings.IndexByte(msg[i+1:], c); j > 1 {
				s := b.String()
				b.Reset()
				b.WriteString(strings.TrimRight(s, " "))
				i += j + 1
				continue
			} else if j >= 0 {
				b.WriteString(msg[i : i+j+2])
				i += j + 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (d *nodeDecoder) errorf(n *yaml.Node, withPath bool, format string, args ...any) *nodeError {
	e := &nodeError{line: n.Line + d.lineBase, msg: fmt.Sprintf(format, args...)}
	if withPath {
		e.path = d.currentPath()
	}
	return e
}

func (d *nodeDecoder) currentPath() value.Path {
	p := make(value.Path, len(d.path))
	for i, e := range d.path {
		if e.index >= 0 {
			p[i] = value.IndexElement(e.index)
		} else {
			p[i] = value.FieldElement(e.key)
		}
	}
	return p
}

// count accounts for one value made from n, and fails when aliases have
// made too many.
func (d *nodeDecoder) count(n *yaml.Node) *nodeError {
	if d.aliasDepth == 0 {
		return nil
	}
	d.expanded++
	if d.expanded > d.aliasLimit {
		return d.errorf(n, false, "aliases expand to more than %d values (the document holds %d as written)", d.aliasLimit, d.written)
	}
	return nil
}

const quotedStyles = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

func (d *nodeDecoder) value(n *yaml.Node, depth int) (any, *nodeError) {
	switch n.Kind {
	case yaml.ScalarNode:
		if err := d.count(n); err != nil {
			return nil, err
		}
		v, err := scalarValue(n)
		if err != nil {
			return nil, d.errorf(n, true, "%v", err)
		}
		return v, nil
	case yaml.MappingNode:
		if depth >= value.MaxDepth {
			return nil, d.errorf(n, false, "nested deeper than %d levels", value.MaxDepth)
		}
		if err := d.count(n); err != nil {
			return nil, err
		}
		return d.mapping(n, depth)
	case yaml.SequenceNode:
		if depth >= value.MaxDepth {
			return nil, d.errorf(n, false, "nested deeper than %d levels", value.MaxDepth)
		}
		if err := d.count(n); err != nil {
			return nil, err
		}
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			d.path = append(d.path, pathElem{index: i})
			v, err := d.value(c, depth+1)
			d.path = d.path[:len(d.path)-1]
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	case yaml.AliasNode:
		return d.alias(n, depth)
	}
	return nil, d.errorf(n, true, "unexpected YAML node")
}

func (d *nodeDecoder) alias(n *yaml.Node, depth int) (any, *nodeError) {
	for _, a := range d.expanding {
		if a == n.Alias {
			return nil, d.errorf(n, true, "an alias refers to a value that contains it")
		}
	}
	if d.aliasLimit == 0 {
		d.written = countNodes(d.root)
		d.aliasLimit = min(max(aliasFactor*d.written, minAliasValues), maxAliasValues)
	}
	d.expanding = append(d.expanding, n.Alias)
	d.aliasDepth++
	v, err := d.value(n.Alias, depth)
	d.aliasDepth--
	d.expanding = d.expanding[:len(d.expanding)-1]
	return v, err
}

// countNodes counts the values of a node tree as written (not following
// aliases).
func countNodes(n *yaml.Node) int {
	c := 1
	for _, ch := range n.Content {
		c += countNodes(ch)
	}
	return c
}

// scalarValue is the JSON value kubectl makes of a scalar node.
func scalarValue(n *yaml.Node) (any, error) {
	tag := ""
	if n.Style&yaml.TaggedStyle != 0 {
		tag = n.Tag
	} else if n.Style&quotedStyles != 0 {
		return n.Value, nil
	}
	_, v, err := resolveTagged(tag, n.Value)
	if err != nil {
		return nil, err
	}
	return jsonValue(v)
}

// isMerge reports whether n is the merge key "<<".
func isMerge(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode || n.Value != "<<" {
		return false
	}
	if n.Style&yaml.TaggedStyle != 0 {
		return n.Tag == tagMerge
	}
	return n.Style&quotedStyles == 0
}

// key returns the JSON object key kubectl makes of a mapping key node.
func (d *nodeDecoder) key(n *yaml.Node) (string, *nodeError) {
	target := n
	if n.Kind == yaml.AliasNode {
		target = n.Alias
	}
	if target.Kind != yaml.ScalarNode {
		return "", d.errorf(n, true, "a mapping key must be a string, a number or a boolean, not a %s", kindName(target.Kind))
	}
	if n.Kind == yaml.AliasNode {
		d.aliasDepth++
	}
	err := d.count(n)
	if n.Kind == yaml.AliasNode {
		d.aliasDepth--
	}
	if err != nil {
		return "", err
	}
	tag := ""
	if target.Style&yaml.TaggedStyle != 0 {
		tag = target.Tag
	} else if target.Style&quotedStyles != 0 {
		return target.Value, nil
	}
	_, v, rerr := resolveTagged(tag, target.Value)
	if rerr != nil {
		return "", d.errorf(n, true, "%v", rerr)
	}
	s, ok := keyString(v)
	if !ok {
		return "", d.errorf(n, true, "a mapping key must be a string, a number or a boolean, not %s", describeKey(v))
	}
	return s, nil
}

func describeKey(v any) string {
	if v == nil {
		return "null"
	}
	return "an integer above 9223372036854775807"
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "document"
}

func (d *nodeDecoder) mapping(n *yaml.Node, depth int) (map[string]any, *nodeError) {
	m := make(map[string]any, len(n.Content)/2)
	var explicit map[string]bool // keys written in n, once a merge key was seen
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if isMerge(kn) {
			if explicit == nil {
				explicit = make(map[string]bool, len(m))
				for k := range m {
					explicit[k] = true
				}
			}
			if err := d.merge(m, vn, depth); err != nil {
				return nil, err
			}
			continue
		}
		k, err := d.key(kn)
		if err != nil {
			return nil, err
		}
		var dup bool
		if explicit != nil {
			dup = explicit[k]
			explicit[k] = true
		} else {
			_, dup = m[k]
		}
		d.path = append(d.path, pathElem{key: k, index: -1})
		if dup {
			err = d.errorf(kn, true, "duplicate key %s (first at line %d)", strconv.Quote(k), d.firstKeyLine(n, i, k))
		} else {
			var v any
			v, err = d.value(vn, depth+1)
			m[k] = v
		}
		d.path = d.path[:len(d.path)-1]
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// firstKeyLine returns the line of the first key before n.Content[end]
// that makes the key k.
func (d *nodeDecoder) firstKeyLine(n *yaml.Node, end int, k string) int {
	for i := 0; i < end; i += 2 {
		kn := n.Content[i]
		if isMerge(kn) {
			continue
		}
		if s, err := d.key(kn); err == nil && s == k {
			return kn.Line + d.lineBase
		}
	}
	return 0
}

// merge applies the merge key "<<: v" to m, as go-yaml v2 does: v is a
// mapping, or a list of mappings of which earlier ones take precedence, and
// its keys overwrite those m already has.
func (d *nodeDecoder) merge(m map[string]any, n *yaml.Node, depth int) *nodeError {
	isMap := func(n *yaml.Node) bool {
		return n.Kind == yaml.MappingNode || n.Kind == yaml.AliasNode && n.Alias.Kind == yaml.MappingNode
	}
	var sources []*yaml.Node
	switch {
	case isMap(n):
		sources = []*yaml.Node{n}
	case n.Kind == yaml.SequenceNode:
		for i := len(n.Content) - 1; i >= 0; i-- {
			if !isMap(n.Content[i]) {
				return d.errorf(n.Content[i], true, "a merge key (<<) needs a mapping or a list of mappings")
			}
			sources = append(sources, n.Content[i])
		}
	default:
		return d.errorf(n, true, "a merge key (<<) needs a mapping or a list of mappings")
	}
	for _, s := range sources {
		v, err := d.value(s, depth)
		if err != nil {
			return err
		}
		for k, x := range v.(map[string]any) {
			m[k] = x
		}
	}
	return nil
}

// kindAndName reads the kind and metadata.name of a document that could not
// be decoded, to name it in errors; "" when they are not plain strings.
func kindAndName(root *yaml.Node) string {
	field := func(n *yaml.Node, name string) *yaml.Node {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == name {
				return n.Content[i+1]
			}
		}
		return nil
	}
	str := func(n *yaml.Node) string {
		if n == nil || n.Kind != yaml.ScalarNode || n.Style&yaml.TaggedStyle != 0 {
			return ""
		}
		if n.Style&quotedStyles == 0 {
			if tag, _ := resolvePlain("", n.Value); tag != tagStr {
				return ""
			}
		}
		return n.Value
	}
	return objectName(str(field(root, "kind")), str(field(field(root, "metadata"), "name")))
}
