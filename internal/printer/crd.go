package printer

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"k8s.io/client-go/util/jsonpath"
)

// PrinterColumn is one of a CustomResourceDefinition version's
// additionalPrinterColumns.
type PrinterColumn struct {
	Name     string
	Type     string
	Format   string
	JSONPath string
	Priority int64
}

// PrinterColumns reads the printer columns of version of a
// CustomResourceDefinition; the API server's default, the age, when the
// version has none.
func PrinterColumns(crd map[string]any, version string) []PrinterColumn {
	for _, v := range List(crd, "spec", "versions") {
		if Str(v, "name") != version {
			continue
		}
		cols := List(v, "additionalPrinterColumns")
		if cols == nil {
			break
		}
		out := make([]PrinterColumn, 0, len(cols))
		for _, c := range cols {
			out = append(out, PrinterColumn{Name: Str(c, "name"), Type: Str(c, "type"), Format: Str(c, "format"),
				JSONPath: Str(c, "jsonPath"), Priority: Int(c, "priority")})
		}
		return out
	}
	return []PrinterColumn{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
}

// customTable is the table of a custom resource from its CRD's columns,
// computed as kube-apiextensions-server's table convertor does.
func customTable(cols []PrinterColumn) kindTable {
	columns := []Column{colName}
	paths := make([]*jsonpath.JSONPath, len(cols))
	for i, c := range cols {
		columns = append(columns, Column{Name: c.Name, Wide: c.Priority != 0})
		p := jsonpath.New(c.Name)
		if err := p.Parse("{" + c.JSONPath + "}"); err != nil {
			p = nil
		} else {
			p.AllowMissingKeys(true)
		}
		paths[i] = p
	}
	row := func(o map[string]any, now time.Time, wide bool) []string {
		cells := []string{name(o)}
		var buf bytes.Buffer
		for i, c := range cols {
			cells = append(cells, customCell(paths[i], c.Type, o, now, &buf))
		}
		return cells
	}
	return kindTable{columns: columns, row: row}
}

func customCell(p *jsonpath.JSONPath, typ string, o map[string]any, now time.Time, buf *bytes.Buffer) string {
	if p == nil {
		return ""
	}
	results, err := p.FindResults(o)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return ""
	}
	v := results[0][0].Interface()
	if typ == "string" {
		buf.Reset()
		if err := p.PrintResults(buf, []reflect.Value{reflect.ValueOf(v)}); err != nil {
			return ""
		}
		return buf.String()
	}
	if v == nil {
		return ""
	}
	switch typ {
	case "integer":
		switch n := v.(type) {
		case int64:
			return strconv.FormatInt(n, 10)
		case float64:
			return strconv.FormatInt(int64(n), 10)
		}
	case "number":
		switch n := v.(type) {
		case int64:
			return fmt.Sprint(float64(n))
		case float64:
			return fmt.Sprint(n)
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b)
		}
	case "date":
		if s, ok := v.(string); ok {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return "<invalid>"
			}
			return Since(t, now)
		}
	}
	return ""
}
