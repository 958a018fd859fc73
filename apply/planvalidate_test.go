package apply_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/manifest"
)

// uids are the uids in messages: the server's are random, a plan's a
// stand-in.
var uids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// TestPlanValidatesAsApply: Plan reports what Apply refuses, in the same
// words and types, on every case of the validation corpus
// (testdata/validate, recorded from kube-apiserver) and of the bad inputs:
// for each, an embedded cluster holds the case's old object, and the plan
// of the new one fails exactly when applying it does, with the same
// errors.
func TestPlanValidatesAsApply(t *testing.T) {
	files, err := filepath.Glob("../testdata/validate/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := filepath.Glob("../testdata/apply/invalid/*.yaml")
	files = append(files, bad...)
	ctx := context.Background()
	refused := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tc struct {
			Old        map[string]any `json:"old"`
			Object     map[string]any `json:"object"`
			Schema     map[string]any `json:"schema"`
			Namespaced bool           `json:"namespaced"`
		}
		var objs []manifest.Object
		if filepath.Base(filepath.Dir(f)) == "invalid" {
			if objs, err = manifest.Parse(ctx, filepath.Base(f), data); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		} else {
			if err := yaml.Unmarshal(data, &tc); err != nil || tc.Object == nil {
				continue // not a case
			}
			objs = apply.Objects(tc.Object)
		}
		t.Run(f, func(t *testing.T) {
			c, err := local.Open(t.TempDir(), local.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			a := apply.New(c, apply.Options{})
			if tc.Schema != nil {
				if _, err := a.Apply(ctx, apply.Objects(crdOf(tc.Object, tc.Schema, tc.Namespaced))); err != nil {
					t.Fatalf("the CRD: %v", err)
				}
			}
			if tc.Old != nil {
				if _, err := a.Apply(ctx, apply.Objects(tc.Old)); err != nil {
					t.Skipf("the old object is refused: %v", err)
				}
			}
			_, planErr := a.Plan(ctx, objs)
			_, applyErr := a.Apply(ctx, objs)
			switch {
			case applyErr == nil && planErr != nil:
				t.Errorf("Plan refuses what Apply accepts:\n%v", planErr)
			case applyErr != nil && planErr == nil:
				t.Errorf("Plan accepts what Apply refuses:\n%v", applyErr)
			case applyErr != nil && uids.ReplaceAllString(planErr.Error(), "UID") != uids.ReplaceAllString(applyErr.Error(), "UID"):
				t.Errorf("Plan and Apply differ:\nplan:  %v\napply: %v", planErr, applyErr)
			case applyErr != nil:
				refused++
			}
		})
	}
	if refused < 50 {
		t.Errorf("only %d cases refused: the corpus is not read", refused)
	}
}

// crdOf returns a CustomResourceDefinition of obj's kind whose one version
// has the schema.
func crdOf(obj, openAPIV3Schema map[string]any, namespaced bool) map[string]any {
	api, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group, version, _ := strings.Cut(api, "/")
	plural := strings.ToLower(kind) + "s"
	scope := "Cluster"
	if namespaced {
		scope = "Namespaced"
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": scope,
			"names": map[string]any{"kind": kind, "plural": plural},
			"versions": []any{map[string]any{"name": version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": openAPIV3Schema}}},
		},
	}
}

// TestPlanValidatesCustomResources: a custom resource is checked against
// its CRD's schema whether the CRD is in the input, served by the
// cluster, or held in a snapshot, with the error Apply returns.
func TestPlanValidatesCustomResources(t *testing.T) {
	ctx := context.Background()
	widget := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default"},
		"spec":     map[string]any{"replicas": int64(5)}}
	crd := crdOf(widget, map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{
			"replicas": map[string]any{"type": "integer", "maximum": int64(3)}}}}}, true)
	c, err := local.Open(t.TempDir(), local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := apply.New(c, apply.Options{})
	_, inInput := a.Plan(ctx, apply.Objects(crd, widget))
	_, applied := a.Apply(ctx, apply.Objects(crd, widget))
	if _, err := a.Apply(ctx, apply.Objects(crd)); err != nil {
		t.Fatal(err)
	}
	_, served := a.Plan(ctx, apply.Objects(widget))
	_, snapshot := apply.NewPlanner(apply.NewSnapshot(crd), nil, apply.Options{}).Plan(ctx, apply.Objects(widget))
	want := `Widget.example.com "w" is invalid: spec.replicas: Invalid value: 5: spec.replicas in body should be less than or equal to 3`
	for name, err := range map[string]error{"apply": applied, "plan, CRD in the input": inInput, "plan, CRD served": served, "plan, snapshot": snapshot} {
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %v, want ...%s", name, err, want)
		}
	}
}
