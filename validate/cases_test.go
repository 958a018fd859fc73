package validate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/value"
)

// A case file (testdata/validate/<kind>/<case>.yaml) holds an object as a
// client sends it (object), for updates the stored object it replaces
// (old, as sent when it was created), or a custom resource's schema
// (schema), and the exact errors kube-apiserver 1.37 reports (errors, in
// order; empty for a valid object).
type validateCase struct {
	Description string         `json:"description"`
	Object      map[string]any `json:"object"`
	Old         map[string]any `json:"old"`
	Schema      map[string]any `json:"schema"`
	Errors      []string       `json:"errors"`
	// Namespaced tells, for custom resources, whether metadata needs a
	// namespace.
	Namespaced bool `json:"namespaced"`
}

func loadCase(t testing.TB, file string) validateCase {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var c validateCase
	if err := json.Unmarshal(j, &c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c
}

func decode(t testing.TB, v map[string]any) map[string]any {
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

// testUID is the uid the test's stand-in for the store gives objects.
const testUID = "00000000-0000-0000-0000-000000000001"

var clusterScoped = map[string]bool{"Namespace": true}

// prepare does what kube-apiserver does between decoding and validation
// (defaulting, then the registry's PrepareForCreate / BeforeUpdate as far
// as validation sees it) for the kinds of the cases.
func prepare(t testing.TB, obj, stored map[string]any) map[string]any {
	t.Helper()
	if err := defaults.Apply(obj); err != nil {
		t.Fatal(err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	kind, _ := obj["kind"].(string)
	if !clusterScoped[kind] {
		if _, ok := meta["namespace"]; !ok {
			meta["namespace"] = "default"
		}
	}
	if kind == "Service" {
		// The IP allocator's normalizeClusterIPs (no allocation here).
		spec, _ := obj["spec"].(map[string]any)
		if ip, ok := spec["clusterIP"].(string); ok && ip != "" && spec["clusterIPs"] == nil {
			spec["clusterIPs"] = []any{ip}
		}
	}
	if stored != nil {
		smeta, _ := stored["metadata"].(map[string]any)
		for _, k := range []string{"uid", "creationTimestamp", "resourceVersion", "generation"} {
			if _, ok := meta[k]; !ok && smeta[k] != nil {
				meta[k] = smeta[k]
			}
		}
		return obj
	}
	meta["uid"] = testUID
	switch kind {
	case "Job":
		spec, _ := obj["spec"].(map[string]any)
		if manual, _ := spec["manualSelector"].(bool); !manual {
			tmpl, _ := spec["template"].(map[string]any)
			tmeta, _ := tmpl["metadata"].(map[string]any)
			labels, _ := tmeta["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
				tmeta["labels"] = labels
			}
			name, _ := meta["name"].(string)
			for k, v := range map[string]string{"controller-uid": testUID, "batch.kubernetes.io/controller-uid": testUID, "job-name": name, "batch.kubernetes.io/job-name": name} {
				if _, ok := labels[k]; !ok {
					labels[k] = v
				}
			}
			sel, _ := spec["selector"].(map[string]any)
			if sel == nil {
				sel = map[string]any{}
				spec["selector"] = sel
			}
			ml, _ := sel["matchLabels"].(map[string]any)
			if ml == nil {
				ml = map[string]any{}
				sel["matchLabels"] = ml
			}
			if _, ok := ml["batch.kubernetes.io/controller-uid"]; !ok {
				ml["batch.kubernetes.io/controller-uid"] = testUID
			}
		}
	case "Namespace":
		spec, _ := obj["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			obj["spec"] = spec
		}
		if _, ok := spec["finalizers"]; !ok {
			spec["finalizers"] = []any{"kubernetes"}
		}
	}
	return obj
}

func validateCaseFiles(t testing.TB) []string {
	files, err := filepath.Glob("../testdata/validate/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	return files
}

// run validates a case as konverge's store would.
func run(t testing.TB, c validateCase) []string {
	t.Helper()
	obj := decode(t, c.Object)
	var errs []Error
	switch {
	case c.Schema != nil:
		schema := decode(t, c.Schema)
		defaults.PruneUnknown(obj, schema)
		if err := defaults.ApplyCustomResource(obj, schema); err != nil {
			t.Fatal(err)
		}
		errs = append(ObjectMeta(obj["metadata"].(map[string]any), nil, c.Namespaced), CustomResource(obj, schema)...)
	case c.Old != nil:
		old := prepare(t, decode(t, c.Old), nil)
		old["metadata"].(map[string]any)["resourceVersion"] = "1"
		errs = Object(prepare(t, obj, old), old)
	default:
		errs = Object(prepare(t, obj, nil), nil)
	}
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

func TestCases(t *testing.T) {
	for _, file := range validateCaseFiles(t) {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "../testdata/validate/"), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := loadCase(t, file)
			got := run(t, c)
			if strings.Join(got, "\n") != strings.Join(c.Errors, "\n") {
				t.Errorf("errors:\n--- got ---\n%s\n--- want ---\n%s", strings.Join(got, "\n"), strings.Join(c.Errors, "\n"))
			}
		})
	}
}
