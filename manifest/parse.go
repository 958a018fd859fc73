package manifest

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/konverge/konverge/value"
)

// unit is a part of a file parsed on its own: one YAML document (the lines
// between two "---" lines), or a whole JSON stream.
type unit struct {
	data []byte
	line int // line of data[0] in the file
	json bool
	err  error // an invalid "---" line

	docs []docResult // the result
}

// decodeText returns the file's text as UTF-8 without a byte order mark.
// Like kubectl, it honours a UTF-16 byte order mark.
func decodeText(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return utf16Text(data[2:], func(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 })
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return utf16Text(data[2:], func(b []byte) uint16 { return uint16(b[1]) | uint16(b[0])<<8 })
	}
	return data
}

func utf16Text(data []byte, word func([]byte) uint16) []byte {
	u := make([]uint16, len(data)/2)
	for i := range u {
		u[i] = word(data[2*i:])
	}
	out := make([]byte, 0, len(data))
	for _, r := range utf16.Decode(u) {
		out = utf8.AppendRune(out, r)
	}
	return out
}

// split cuts a file's text into units, deciding between JSON and YAML as
// kubectl does: a stream whose first character other than white space is
// "{" is JSON.
func split(data []byte) []unit {
	data = decodeText(data)
	i := skipSpace(data, 0)
	if i < len(data) && data[i] == '{' {
		return []unit{{data: data, line: 1, json: true}}
	}
	return splitYAML(data, 1)
}

// splitYAML cuts a YAML stream at its "---" lines, exactly as kubectl's
// YAMLReader does: a line that starts with "---" separates documents when
// nothing but white space or a comment follows on it, and is an error
// otherwise. line is the line of data[0] in the file.
func splitYAML(data []byte, line int) []unit {
	var units []unit
	start, startLine := 0, line
	for pos := 0; pos < len(data); line++ {
		next := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		if bytes.HasPrefix(data[pos:next], []byte("---")) {
			if pos > start {
				units = append(units, unit{data: data[start:pos], line: startLine})
			}
			if rest := bytes.TrimSpace(data[pos+3 : next]); len(rest) > 0 && rest[0] != '#' {
				units = append(units, unit{line: line, err: &SyntaxError{Line: line, Msg: "invalid document separator: only a comment may follow --- on its line"}})
			}
			start, startLine = next, line+1
		}
		pos = next
	}
	if start < len(data) {
		units = append(units, unit{data: data[start:], line: startLine})
	}
	return units
}

// firstContentLine returns the line of the first line of data that is not
// blank or a comment, and false when there is none (an empty document).
func firstContentLine(data []byte, line int) (int, bool) {
	for pos := 0; pos < len(data); line++ {
		next := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		l := bytes.TrimLeft(data[pos:next], " \t\r\n")
		if len(l) > 0 && l[0] != '#' {
			return line, true
		}
		pos = next
	}
	return 0, false
}

// parse fills u.docs.
func (u *unit) parse() {
	switch {
	case u.err != nil:
		r := docResult{line: u.line}
		r.fail(Source{Line: u.line}, "", "", u.err)
		u.docs = []docResult{r}
	case u.json:
		u.docs = parseJSON(u.data, u.line)
	default:
		if r, ok := parseYAML(u.data, u.line); ok {
			u.docs = []docResult{r}
		}
	}
}

// parseYAML parses one YAML document; ok is false for an empty one.
func parseYAML(data []byte, line int) (r docResult, ok bool) {
	docLine, ok := firstContentLine(data, line)
	if !ok {
		return docResult{}, false
	}
	if v, ok := fastYAML(data); ok {
		return document(v, docLine, nil, data), true
	}
	v, root, err := decodeYAML(data, line-1)
	if err != nil {
		r := docResult{line: docLine}
		path := ""
		if len(err.path) > 0 {
			path = err.path.String()
		}
		r.fail(Source{Line: docLine}, kindAndName(root), path, &SyntaxError{Line: err.line, Msg: err.msg})
		return r, true
	}
	if v == nil {
		return docResult{}, false
	}
	return document(v, docLine, itemLines(root, line-1), data), true
}

// itemLines returns the lines of the items of a List document.
func itemLines(root *yaml.Node, lineBase int) []int {
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "items" {
			continue
		}
		items := root.Content[i+1]
		if items.Kind == yaml.AliasNode {
			items = items.Alias
		}
		if items.Kind != yaml.SequenceNode {
			return nil
		}
		lines := make([]int, len(items.Content))
		for j, it := range items.Content {
			lines[j] = it.Line + lineBase
		}
		return lines
	}
	return nil
}

// parseJSON parses a stream of JSON values, as kubectl's
// YAMLOrJSONDecoder does: when one of its first two values does not parse
// as JSON, the rest of the stream is read as YAML (JSON with trailing commas
// or unquoted keys is YAML), and the JSON error is reported only if YAML
// fails too. line is the line of data[0] in the file.
func parseJSON(data []byte, line int) []docResult {
	var docs []docResult
	lines := lineCounter{data: data, line: line}
	ok := 0 // values decoded
	for pos := skipSpace(data, 0); pos < len(data); pos = skipSpace(data, pos) {
		end := -1
		if c := data[pos]; c == '{' || c == '[' {
			end = jsonEnd(data, pos)
		}
		var v any
		var err error
		if end < 0 {
			// A scalar, or brackets that do not balance: the rest of
			// the stream is one value or an error.
			if v, err = value.Decode(data[pos:]); err == nil {
				end = len(data)
			}
		} else {
			v, err = value.Decode(data[pos:end])
		}
		if err == nil {
			docs = append(docs, document(v, lines.at(pos), nil, data[pos:end]))
			ok++
			pos = end
			continue
		}
		if ok <= 1 {
			if ydocs, yok := yamlFallback(data[pos:], lines.at(pos)); yok {
				return append(docs, ydocs...)
			}
		}
		r := docResult{line: lines.at(pos)}
		r.fail(Source{Line: r.line}, "", "", jsonSyntaxError(err, pos, &lines))
		docs = append(docs, r)
		if end < 0 {
			break // no way to find where the next value starts
		}
		ok = 2 // kubectl reads no YAML after a JSON error
		pos = end
	}
	return docs
}

// yamlFallback parses data as a YAML stream; ok is false when its first
// document does not parse.
func yamlFallback(data []byte, line int) (docs []docResult, ok bool) {
	for _, u := range splitYAML(data, line) {
		u.parse()
		if len(docs) == 0 {
			for _, d := range u.docs {
				for _, e := range d.errs {
					// YAML that parses up to text after the first
					// document is YAML with an error worth reporting.
					var se *SyntaxError
					if errors.As(e.Err, &se) && !strings.HasPrefix(se.Msg, afterEnd) {
						return nil, false
					}
				}
			}
		}
		docs = append(docs, u.docs...)
	}
	return docs, true
}

// jsonSyntaxError turns an error of value.Decode on the value at pos into a
// SyntaxError with line and column, keeping nothing of the input but key
// names.
func jsonSyntaxError(err error, pos int, lines *lineCounter) *SyntaxError {
	var se *value.SyntaxError
	if !errors.As(err, &se) {
		return &SyntaxError{Msg: "invalid JSON"}
	}
	msg := se.Msg
	switch {
	case strings.HasPrefix(msg, "duplicate key "), strings.HasPrefix(msg, "document nested deeper"):
	case strings.HasPrefix(msg, "number ") && strings.HasSuffix(msg, " out of range"):
		msg = "number out of range"
	case strings.HasPrefix(msg, "invalid escape"):
		msg = "invalid escape"
	case strings.HasPrefix(msg, "unexpected ") && !strings.HasPrefix(msg, "unexpected end"):
		msg = "unexpected character"
		if strings.HasSuffix(se.Msg, " after the document") {
			msg += " after the value"
		}
	default:
		msg = redactQuoted(msg)
	}
	off := pos + se.Offset
	line, col := lines.at(off), lines.column(off)
	return &SyntaxError{Line: line, Column: col, Msg: "invalid JSON: " + msg}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// jsonEnd returns the end of the JSON object or array that starts at
// data[start], or -1 when its brackets do not balance.
func jsonEnd(data []byte, start int) int {
	depth := 0
	for i := start; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		}
	}
	return -1
}

// lineCounter converts offsets into lines, for offsets that mostly grow.
type lineCounter struct {
	data []byte
	line int // line of data[0]
	pos  int // offset whose line is known
	cur  int // the line of pos
}

func (c *lineCounter) at(off int) int {
	if c.cur == 0 || off < c.pos {
		c.pos, c.cur = 0, c.line
	}
	off = min(off, len(c.data))
	c.cur += bytes.Count(c.data[c.pos:off], []byte{'\n'})
	c.pos = off
	return c.cur
}

func (c *lineCounter) column(off int) int {
	off = min(off, len(c.data))
	return off - (bytes.LastIndexByte(c.data[:off], '\n') + 1) + 1
}
