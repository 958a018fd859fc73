package printer

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// CustomColumns is kubectl's -o custom-columns: a header and a JSONPath
// per column, one row per object.
type CustomColumns struct {
	Columns   []CustomColumn
	NoHeaders bool
}

// CustomColumn is one column of -o custom-columns.
type CustomColumn struct {
	Header string
	// FieldSpec is the column's JSONPath, in braces ("{.metadata.name}").
	FieldSpec string
}

var relaxedJSONPath = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

// RelaxedJSONPath turns kubectl's relaxed field paths ("metadata.name",
// ".metadata.name", "{metadata.name}") into a JSONPath template.
func RelaxedJSONPath(expr string) (string, error) {
	if expr == "" {
		return expr, nil
	}
	m := relaxedJSONPath.FindStringSubmatch(expr)
	if m == nil {
		return "", fmt.Errorf("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'")
	}
	spec := m[1]
	if spec == "" {
		spec = m[2]
	}
	return "{." + spec + "}", nil
}

// NewCustomColumnsFromSpec reads "HEADER:PATH,HEADER:PATH".
func NewCustomColumnsFromSpec(spec string, noHeaders bool) (*CustomColumns, error) {
	if spec == "" {
		return nil, fmt.Errorf("custom-columns format specified but no custom columns given")
	}
	parts := strings.Split(spec, ",")
	cols := make([]CustomColumn, len(parts))
	for i, p := range parts {
		h, path, ok := strings.Cut(p, ":")
		if !ok {
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", p)
		}
		fs, err := RelaxedJSONPath(path)
		if err != nil {
			return nil, err
		}
		cols[i] = CustomColumn{Header: h, FieldSpec: fs}
	}
	return &CustomColumns{Columns: cols, NoHeaders: noHeaders}, nil
}

// NewCustomColumnsFromTemplate reads a -o custom-columns-file: a line of
// headers and a line of paths, separated by white space.
func NewCustomColumnsFromTemplate(r io.Reader) (*CustomColumns, error) {
	s := bufio.NewScanner(r)
	if !s.Scan() {
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return nil, fmt.Errorf("invalid template, missing header line. Expected format is one line of space separated headers, one line of space separated column specs.")
	}
	headers := strings.Fields(s.Text())
	if !s.Scan() {
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		return nil, fmt.Errorf("invalid template, missing spec line. Expected format is one line of space separated headers, one line of space separated column specs.")
	}
	specs := strings.Fields(s.Text())
	if len(headers) != len(specs) {
		return nil, fmt.Errorf("number of headers (%d) and field specifications (%d) don't match", len(headers), len(specs))
	}
	cols := make([]CustomColumn, len(headers))
	for i := range headers {
		fs, err := RelaxedJSONPath(specs[i])
		if err != nil {
			return nil, err
		}
		cols[i] = CustomColumn{Header: headers[i], FieldSpec: fs}
	}
	return &CustomColumns{Columns: cols}, nil
}

// PrintObject writes the header and a row for obj, or for every item of
// a list, through a tab writer of its own.
func (c *CustomColumns) PrintObject(w io.Writer, obj any) error {
	tw := NewTabWriter(w)
	defer tw.Flush()
	if !c.NoHeaders {
		h := make([]string, len(c.Columns))
		for i, col := range c.Columns {
			h[i] = col.Header
		}
		fmt.Fprintln(tw, strings.Join(h, "\t"))
	}
	return c.WriteRows(tw, obj)
}

// WriteRows writes the rows of obj (an object or a list) without a
// header.
func (c *CustomColumns) WriteRows(w io.Writer, obj any) error {
	v, err := plain(obj)
	if err != nil {
		return err
	}
	parsers := make([]*jsonpath.JSONPath, len(c.Columns))
	for i, col := range c.Columns {
		parsers[i] = jsonpath.New(fmt.Sprintf("column%d", i)).AllowMissingKeys(true)
		if err := parsers[i].Parse(col.FieldSpec); err != nil {
			return err
		}
	}
	m, _ := v.(map[string]any)
	if items, ok := m["items"].([]any); ok && strings.HasSuffix(Str(m, "kind"), "List") {
		for _, it := range items {
			if err := c.row(w, parsers, it); err != nil {
				return err
			}
		}
		return nil
	}
	return c.row(w, parsers, v)
}

func (c *CustomColumns) row(w io.Writer, parsers []*jsonpath.JSONPath, obj any) error {
	cells := make([]string, len(parsers))
	for i, p := range parsers {
		values, err := p.FindResults(obj)
		if err != nil {
			return err
		}
		var vs []string
		if len(values) == 0 || len(values[0]) == 0 {
			vs = append(vs, "<none>")
		}
		for _, arr := range values {
			for _, v := range arr {
				vs = append(vs, EscapeTerminal(fmt.Sprint(v.Interface())))
			}
		}
		cells[i] = strings.Join(vs, ",")
	}
	_, err := fmt.Fprintln(w, strings.Join(cells, "\t"))
	return err
}

// terminalEscaper is kubectl's printers.EscapeTerminal: ESC and carriage
// returns made visible.
var terminalEscaper = strings.NewReplacer("\x1b", "^[", "\r", "\\r")

// EscapeTerminal makes the characters a terminal would act on visible,
// as kubectl's printers.EscapeTerminal does.
func EscapeTerminal(s string) string { return terminalEscaper.Replace(s) }
