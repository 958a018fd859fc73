package printer

import (
	"io"
	"strings"
	"time"

	"github.com/liggitt/tabwriter"

	"github.com/konverge/konverge/cluster"
)

// Column is one column of a kind's table.
type Column struct {
	// Name is the header as kubectl defines it ("Up-to-date"); it prints
	// in upper case.
	Name string
	// Wide columns print only with -o wide (kubectl's priority 1).
	Wide bool
	// IsName marks the column that holds the object's name, which -o
	// wide and kind prefixes ("deployment.apps/web") apply to.
	IsName bool
}

// Table is the rows of objects of one kind, as kubectl get prints them.
type Table struct {
	Resource cluster.Resource
	Columns  []Column
	Rows     []Row
}

// Row is one object's cells, one per column (wide ones included).
type Row struct {
	Namespace string
	Labels    map[string]string
	Cells     []string
}

// Options tune how tables are built and printed. The zero value prints
// kubectl's default table.
type Options struct {
	// Wide prints the wide columns (-o wide).
	Wide bool
	// NoHeaders leaves out the header line.
	NoHeaders bool
	// ShowLabels adds a LABELS column.
	ShowLabels bool
	// WithNamespace adds a NAMESPACE column first (--all-namespaces); it
	// is ignored for cluster-scoped kinds.
	WithNamespace bool
	// WithKind prefixes names with the kind ("deployment.apps/web"), as
	// kubectl does when several kinds are printed.
	WithKind bool
	// LabelColumns are the label keys of -L: one column each, after the
	// kind's columns, headed by the key's last segment in upper case.
	LabelColumns []string
	// FromList reports that the objects are the result of a list (some
	// kinds mark an item of a list: the default storage class).
	FromList bool
	// ServerColumns, when not nil, replace the kind's columns: the
	// printer columns of a custom resource's CRD (see PrinterColumns).
	ServerColumns []PrinterColumn
	// Now is the time ages are measured against.
	Now time.Time
}

// rowFunc computes a kind's cells for one object.
type rowFunc func(obj map[string]any, now time.Time, wide bool) []string

type kindTable struct {
	columns []Column
	row     rowFunc
}

// NewTable builds the table of objs, which are all of the kind res.
func NewTable(res cluster.Resource, objs []map[string]any, opts Options) *Table {
	kt := tableFor(res)
	if opts.ServerColumns != nil {
		kt = customTable(opts.ServerColumns)
	} else if f, ok := listTables[res.GVK.Group+"/"+res.GVK.Kind]; ok && opts.FromList {
		kt.row = f(objs)
	}
	t := &Table{Resource: res, Columns: kt.columns}
	for _, o := range objs {
		t.Rows = append(t.Rows, Row{
			Namespace: Str(o, "metadata", "namespace"),
			Labels:    StringMap(o, "metadata", "labels"),
			// The API server computes every cell; -o wide only shows
			// more columns.
			Cells: kt.row(o, opts.Now, true),
		})
	}
	return t
}

// KindPrefix returns how kubectl names a kind in "kind/name" output:
// the lowercase kind, qualified by its group ("deployment.apps", "pod").
func KindPrefix(res cluster.Resource) string {
	k := strings.ToLower(res.GVK.Kind)
	if res.GVK.Group != "" {
		k += "." + res.GVK.Group
	}
	return k
}

// NewTabWriter returns a tab writer configured as kubectl's table
// printer (github.com/liggitt/tabwriter, which kubectl uses): columns
// keep the widths they had at earlier flushes, as rows of a watch print.
func NewTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 6, 4, 3, ' ', tabwriter.RememberWidths)
}

// Write prints t to w (a writer from NewTabWriter; the caller flushes).
// An empty table prints nothing.
func (t *Table) Write(w io.Writer, opts Options) error {
	if len(t.Rows) == 0 {
		return nil
	}
	withNS := opts.WithNamespace && t.Resource.Namespaced
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(escape(c))
		}
		b.WriteByte('\n')
	}
	if !opts.NoHeaders {
		var h []string
		if withNS {
			h = append(h, "NAMESPACE")
		}
		for _, c := range t.Columns {
			if c.Wide && !opts.Wide {
				continue
			}
			h = append(h, strings.ToUpper(c.Name))
		}
		for _, l := range opts.LabelColumns {
			parts := strings.Split(l, "/")
			h = append(h, strings.ToUpper(parts[len(parts)-1]))
		}
		if opts.ShowLabels {
			h = append(h, "LABELS")
		}
		line(h)
	}
	prefix := KindPrefix(t.Resource) + "/"
	for _, r := range t.Rows {
		var cells []string
		if withNS {
			cells = append(cells, r.Namespace)
		}
		for i, c := range t.Columns {
			if c.Wide && !opts.Wide {
				continue
			}
			v := ""
			if i < len(r.Cells) {
				v = r.Cells[i]
			}
			if c.IsName && opts.WithKind {
				v = prefix + v
			}
			cells = append(cells, v)
		}
		for _, l := range opts.LabelColumns {
			cells = append(cells, r.Labels[l])
		}
		if opts.ShowLabels {
			cells = append(cells, FormatLabels(r.Labels))
		}
		line(cells)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escape keeps a cell on its line, as kubectl's table printer does: a
// cell is cut at its first line break ("..." marks the cut), and ESC and
// carriage returns are made visible.
func escape(s string) string {
	if !strings.ContainsAny(s, "\f\n\r\x1b") {
		return s
	}
	if i := strings.IndexAny(s, "\f\n\r"); i >= 0 {
		return terminalEscaper.Replace(s[:i]) + "..."
	}
	return terminalEscaper.Replace(s)
}
