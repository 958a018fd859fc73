package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
	"sigs.k8s.io/yaml/kyaml"

	"github.com/konverge/konverge/value"
)

// An ObjectPrinter prints objects in one of kubectl's -o formats other
// than its tables: json, yaml, kyaml, name, jsonpath, go-template and
// custom-columns. An object is a JSON value as decoded by package value
// (map[string]any), or a Raw document, whose keys print in its order (as
// kubectl prints the typed objects of its generators); a list is an object
// of kind "List" with "items".
type ObjectPrinter interface {
	PrintObject(w io.Writer, obj any) error
}

// Raw is an object as a JSON document whose key order is kept when it
// prints as JSON (kubectl prints typed objects in their fields' order and
// decoded ones with sorted keys).
type Raw []byte

// OutputOptions are the flags that choose and tune an ObjectPrinter.
type OutputOptions struct {
	// Output is -o: "json", "yaml", "jsonpath=TEMPLATE", ...
	Output string
	// Template is --template, the template of -o jsonpath, go-template
	// and their -file forms when the -o value carries none.
	Template string
	// AllowMissingKeys is --allow-missing-template-keys (kubectl's default
	// is true).
	AllowMissingKeys bool
	// NoHeaders is --no-headers, for custom-columns.
	NoHeaders bool
	// Operation is what the name printer appends ("created"), "" for
	// none.
	Operation string
}

// TableFormats are the -o values that print kubectl's tables, which
// NewObjectPrinter does not handle.
func IsTable(output string) bool { return output == "" || output == "wide" }

// allowedFormats is kubectl get's list in its error message.
var allowedFormats = []string{"custom-columns", "custom-columns-file", "go-template", "go-template-file",
	"json", "jsonpath", "jsonpath-as-json", "jsonpath-file", "kyaml", "name", "template", "templatefile", "wide", "yaml"}

// NoPrinterError is kubectl's error for an -o value it has no printer for.
type NoPrinterError struct {
	Output  string
	Allowed []string
}

func (e *NoPrinterError) Error() string {
	return fmt.Sprintf("unable to match a printer suitable for the output format %q, allowed formats are: %s", e.Output, strings.Join(e.Allowed, ","))
}

// GetFormats are the -o values of kubectl get.
func GetFormats() []string { return append([]string(nil), allowedFormats...) }

// ObjectFormats are the -o values of the commands that print the objects
// they write (create, set, label, ...): get's without wide.
func ObjectFormats() []string {
	var out []string
	for _, f := range allowedFormats {
		if f != "wide" {
			out = append(out, f)
		}
	}
	return out
}

// NewObjectPrinter returns the printer of o.Output, which must be one of
// allowed (kubectl's error otherwise); table formats are not handled here.
func NewObjectPrinter(o OutputOptions, allowed []string) (ObjectPrinter, error) {
	name, arg, hasArg := strings.Cut(o.Output, "=")
	if !hasArg {
		arg = o.Template
	}
	ok := false
	for _, a := range allowed {
		if a == name {
			ok = true
		}
	}
	if !ok {
		return nil, &NoPrinterError{Output: o.Output, Allowed: allowed}
	}
	switch name {
	case "json":
		return jsonPrinter{}, nil
	case "yaml":
		return yamlPrinter{}, nil
	case "kyaml":
		return kyamlPrinter{}, nil
	case "name":
		return namePrinter{operation: o.Operation}, nil
	case "jsonpath", "jsonpath-file", "jsonpath-as-json":
		if arg == "" {
			return nil, fmt.Errorf("template format specified but no template given")
		}
		if name == "jsonpath-file" {
			data, err := os.ReadFile(arg)
			if err != nil {
				return nil, fmt.Errorf("error reading --template %s, %v", arg, err)
			}
			arg = string(data)
		}
		return newJSONPathPrinter(arg, o.AllowMissingKeys, name == "jsonpath-as-json")
	case "go-template", "go-template-file", "template", "templatefile":
		if arg == "" {
			return nil, fmt.Errorf("template format specified but no template given")
		}
		if name == "go-template-file" || name == "templatefile" {
			data, err := os.ReadFile(arg)
			if err != nil {
				return nil, fmt.Errorf("error reading --template %s, %v", arg, err)
			}
			arg = string(data)
		}
		return newTemplatePrinter(arg, o.AllowMissingKeys)
	case "custom-columns":
		return NewCustomColumnsFromSpec(arg, o.NoHeaders)
	case "custom-columns-file":
		f, err := os.Open(arg)
		if err != nil {
			//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
			return nil, fmt.Errorf("error reading template %s, %v\n", arg, err)
		}
		defer f.Close()
		return NewCustomColumnsFromTemplate(f)
	}
	return nil, &NoPrinterError{Output: o.Output, Allowed: allowed}
}

// plain returns obj as a decoded JSON value (Raw documents decoded).
func plain(obj any) (any, error) {
	if r, ok := obj.(Raw); ok {
		v, err := value.Decode(r)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	return obj, nil
}

// encode returns obj as JSON: a Raw document as it is, a value with
// sorted keys.
func encode(obj any) ([]byte, error) {
	if r, ok := obj.(Raw); ok {
		return r, nil
	}
	return value.Encode(obj)
}

type jsonPrinter struct{}

// PrintObject writes obj as kubectl's -o json: indented by four spaces.
func (jsonPrinter) PrintObject(w io.Writer, obj any) error {
	b, err := encode(obj)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "    "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

type yamlPrinter struct{}

// PrintObject writes obj as kubectl's -o yaml.
func (yamlPrinter) PrintObject(w io.Writer, obj any) error {
	b, err := encode(obj)
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}

type kyamlPrinter struct{}

// PrintObject writes obj as kubectl's -o kyaml.
func (kyamlPrinter) PrintObject(w io.Writer, obj any) error {
	b, err := encode(obj)
	if err != nil {
		return err
	}
	var enc kyaml.Encoder
	return enc.FromYAML(bytes.NewReader(b), w)
}

type namePrinter struct{ operation string }

// PrintObject writes "kind.group/name" for obj, or for every item of a
// list.
func (p namePrinter) PrintObject(w io.Writer, obj any) error {
	v, err := plain(obj)
	if err != nil {
		return err
	}
	m, _ := v.(map[string]any)
	if items, ok := m["items"].([]any); ok && Str(m, "kind") == "List" {
		for _, it := range items {
			if err := p.PrintObject(w, it); err != nil {
				return err
			}
		}
		return nil
	}
	kind := Str(m, "kind")
	if kind == "" {
		return fmt.Errorf("missing apiVersion or kind; try GetObjectKind().SetGroupVersionKind() if you know the type")
	}
	name := Str(m, "metadata", "name")
	if name == "" {
		name = "<unknown>"
	}
	op := ""
	if p.operation != "" {
		op = " " + p.operation
	}
	_, err = fmt.Fprintf(w, "%s/%s%s\n", GroupKind(Str(m, "apiVersion"), kind), name, op)
	return err
}

// GroupKind prints a kind as kubectl names it in "kind/name": the
// lowercase kind, qualified by its group ("deployment.apps", "pod").
func GroupKind(apiVersion, kind string) string {
	k := strings.ToLower(kind)
	if g, _, ok := strings.Cut(apiVersion, "/"); ok && g != "" {
		k += "." + g
	}
	return k
}

// ListOf wraps items in kubectl's List, as get prints several objects.
func ListOf(items []any) map[string]any {
	if items == nil {
		items = []any{}
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": items,
		"metadata": map[string]any{"resourceVersion": ""}}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
