package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/value"
)

// readObjectFile reads one Kubernetes object from a YAML or JSON file ("-"
// for standard input).
func readObjectFile(path string, stdin io.Reader) (map[string]any, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	return decodeObject(data, path)
}

// decodeObject decodes one object from YAML or JSON.
func decodeObject(data []byte, name string) (map[string]any, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] != '{' {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid YAML: %w", name, err)
		}
		data = j
	}
	m, err := value.DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// ManagedFieldsFlags is kubectl's --show-managed-fields, for the commands
// that print objects as JSON or YAML.
type ManagedFieldsFlags struct {
	ShowManagedFields bool
}

// AddFlags adds --show-managed-fields.
func (f *ManagedFieldsFlags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.ShowManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
}

// printValue writes v as YAML or as JSON indented like kubectl's -o json,
// without the managedFields of the objects it holds, as kubectl prints
// objects unless --show-managed-fields.
func printValue(w io.Writer, v any, format string) error {
	return printObjects(w, v, format, false)
}

// printObjects writes v as printValue does, with the objects'
// managedFields when showManaged is set.
func printObjects(w io.Writer, v any, format string, showManaged bool) error {
	if !showManaged {
		v = withoutManagedFields(v)
	}
	b, err := value.Encode(v)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", "    "); err != nil {
			return err
		}
		buf.WriteByte('\n')
		_, err = w.Write(buf.Bytes())
		return err
	case "yaml", "":
		y, err := yaml.JSONToYAML(b)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	return fmt.Errorf("unknown output format %q (want json or yaml)", format)
}

// withoutManagedFields returns v, an object or a list of objects, without
// metadata.managedFields; v itself is not modified.
func withoutManagedFields(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := obj
	if md, ok := obj["metadata"].(map[string]any); ok {
		if _, has := md["managedFields"]; has {
			out = maps.Clone(obj)
			mdc := maps.Clone(md)
			delete(mdc, "managedFields")
			out["metadata"] = mdc
		}
	}
	if items, ok := obj["items"].([]any); ok {
		c := make([]any, len(items))
		for i, it := range items {
			c[i] = withoutManagedFields(it)
		}
		out = maps.Clone(out)
		out["items"] = c
	}
	return out
}
