package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/internal/printer"
)

// PrintFlags are kubectl's output flags: -o/--output, --template and
// --allow-missing-template-keys.
type PrintFlags struct {
	Output           string
	Template         string
	AllowMissingKeys bool
	// ShowManagedFields is --show-managed-fields: without it, managed
	// fields are left out of json and yaml output, as kubectl does.
	ShowManagedFields bool
}

// AddFlags registers the flags; usage is the help of -o.
func (p *PrintFlags) AddFlags(cmd *cobra.Command, usage string) {
	f := cmd.Flags()
	f.StringVarP(&p.Output, "output", "o", "", usage)
	f.StringVar(&p.Template, "template", "", "Template string or path to template file to use when -o=go-template, -o=go-template-file. The template format is golang templates [http://golang.org/pkg/text/template/#pkg-overview].")
	f.BoolVar(&p.AllowMissingKeys, "allow-missing-template-keys", true, "For go-template and jsonpath output, print nothing for a missing field instead of failing.")
	f.BoolVar(&p.ShowManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
}

// ToPrinter returns the printer of -o among allowed formats; operation
// is what -o name appends ("created"), noHeaders is for custom columns.
func (p *PrintFlags) ToPrinter(allowed []string, noHeaders bool, operation string) (printer.ObjectPrinter, error) {
	op, err := printer.NewObjectPrinter(printer.OutputOptions{
		Output: p.Output, Template: p.Template, AllowMissingKeys: p.AllowMissingKeys,
		NoHeaders: noHeaders, Operation: operation,
	}, allowed)
	if err != nil {
		return nil, err
	}
	// kubectl leaves managedFields out of JSON, YAML and KYAML only; jsonpath and
	// templates see them.
	if p.ShowManagedFields || (p.Output != "json" && p.Output != "yaml" && p.Output != "kyaml") {
		return op, nil
	}
	return managedFieldsStripper{op}, nil
}

// managedFieldsStripper leaves metadata.managedFields out of what it
// prints, as kubectl does unless --show-managed-fields.
type managedFieldsStripper struct{ printer.ObjectPrinter }

func (m managedFieldsStripper) PrintObject(w io.Writer, obj any) error {
	return m.ObjectPrinter.PrintObject(w, stripManagedFields(obj))
}

// stripManagedFields returns obj (or a list's items) without
// metadata.managedFields, copying only what changes.
func stripManagedFields(obj any) any {
	m, ok := obj.(map[string]any)
	if !ok {
		return obj
	}
	if items, ok := m["items"].([]any); ok {
		out := make([]any, len(items))
		changed := false
		for i, it := range items {
			out[i] = stripManagedFields(it)
			if !changed {
				if a, ok := it.(map[string]any); ok && hasManagedFields(a) {
					changed = true
				}
			}
		}
		if !changed {
			return obj
		}
		cp := make(map[string]any, len(m))
		for k, v := range m {
			cp[k] = v
		}
		cp["items"] = out
		return cp
	}
	if !hasManagedFields(m) {
		return obj
	}
	md := m["metadata"].(map[string]any)
	cpMD := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			cpMD[k] = v
		}
	}
	cp := make(map[string]any, len(m))
	for k, v := range m {
		cp[k] = v
	}
	cp["metadata"] = cpMD
	return cp
}

func hasManagedFields(m map[string]any) bool {
	md, ok := m["metadata"].(map[string]any)
	if !ok {
		return false
	}
	_, ok = md["managedFields"]
	return ok
}
