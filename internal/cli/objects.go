package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

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

// printValue writes v as YAML or as JSON indented like kubectl's -o json.
func printValue(w io.Writer, v any, format string) error {
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
