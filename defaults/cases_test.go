package defaults

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/internal/golden"
	"github.com/konverge/konverge/value"
)

// A case file (testdata/defaults/<kind>/<case>.yaml) holds a description,
// the object as a client sends it (in) and what kube-apiserver 1.37 makes of
// it before the registry strategy runs (want), or the error Apply returns
// (error), and optionally the unknown fields dropped (unknown). want is the
// last key of the file so that -update can rewrite it.
type defaultsCase struct {
	Description string         `json:"description"`
	In          map[string]any `json:"in"`
	Want        map[string]any `json:"want"`
	Error       string         `json:"error"`
	Unknown     []string       `json:"unknown"`
	// Custom resources: the version's openAPIV3Schema, and the fields
	// PruneUnknown removes.
	Schema map[string]any `json:"schema"`
	Pruned []string       `json:"pruned"`
}

func loadYAML(t testing.TB, path string, into any) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := json.Unmarshal(j, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// decodeValue turns a document into konverge's representation.
func decodeValue(t testing.TB, v any) map[string]any {
	t.Helper()
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	m, err := value.DecodeObject(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func toYAML(t testing.TB, v any) string {
	t.Helper()
	b, err := value.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(y)
}

func caseFiles(t testing.TB) []string {
	files, err := filepath.Glob("../testdata/defaults/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	return files
}

func TestCases(t *testing.T) {
	for _, file := range caseFiles(t) {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "../testdata/defaults/"), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var c defaultsCase
			raw := loadYAML(t, file, &c)
			obj := decodeValue(t, c.In)
			var err error
			if c.Schema != nil {
				schema := decodeValue(t, c.Schema)
				if pruned := PruneUnknown(obj, schema); !reflect.DeepEqual(pruned, c.Pruned) && (len(pruned) > 0 || len(c.Pruned) > 0) {
					t.Errorf("PruneUnknown = %q, want %q", pruned, c.Pruned)
				}
				err = ApplyCustomResource(obj, schema)
			} else {
				err = Apply(obj)
			}
			if c.Error != "" {
				var de *DecodeError
				if !errors.As(err, &de) || de.Msg != c.Error {
					t.Fatalf("error = %v, want %s", err, c.Error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if golden.Updating() {
				i := bytes.LastIndex(raw, []byte("\nwant:"))
				if i < 0 {
					t.Fatal("want must be the last key")
				}
				out := string(raw[:i+1]) + "want:\n" + indent(toYAML(t, obj))
				if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := decodeValue(t, c.Want)
			if !value.Equal(obj, want) {
				t.Errorf("Apply:\n--- got ---\n%s--- want ---\n%s", toYAML(t, obj), toYAML(t, want))
			}
			if c.Schema != nil {
				return
			}
			if got := UnknownFields(decodeValue(t, c.In)); !reflect.DeepEqual(got, c.Unknown) && (len(got) > 0 || len(c.Unknown) > 0) {
				t.Errorf("UnknownFields = %q, want %q", got, c.Unknown)
			}
			// Defaulting is idempotent: a stored object read back is unchanged.
			again := value.DeepCopyObject(want)
			if err := Apply(again); err != nil {
				t.Fatal(err)
			}
			if !value.Equal(again, want) {
				t.Errorf("Apply(want) changes it:\n%s", toYAML(t, again))
			}
		})
	}
}

func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l == "" {
			continue
		}
		b.WriteString("  " + l)
	}
	return b.String()
}
