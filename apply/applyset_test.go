package apply_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/internal/golden"
	"github.com/konverge/konverge/prune"
	"github.com/konverge/konverge/schema"
)

const setID = "applyset-51uXdjs_k8zt9KVdAtPaWnW_O9B-EVzd2Bkztfa9DSA-v1" // myset.default.Secret.

// TestApplySetPrune: an ApplySet prunes exactly its members that left the
// input, and leaves everything else alone.
func TestApplySetPrune(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := openStore(t)
			c := b.wrap(s)
			ctx := context.Background()
			// Not members: applied without the set, and created by hand
			// with the set's label but never applied with it... and a
			// member of another set.
			mustApply(t, c, apply.Options{}, parse(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: applied-alone}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other-set, labels: {applyset.kubernetes.io/part-of: applyset-other-v1}}
`))
			if _, err := s.Create(ctx, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: imperative}}`)); err != nil {
				t.Fatal(err)
			}

			opts := apply.Options{Namespace: "default", EnforceNamespace: true, Prune: true, ApplySet: "myset", ToolingVersion: "v0.1.0"}
			v1 := `
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`
			var out strings.Builder
			res := mustApply(t, c, opts, parse(t, v1))
			out.WriteString(lines(res))
			if got, want := lines(res), "configmap/a created\nconfigmap/b created\ndeployment.apps/web created\n"; got != want {
				t.Fatalf("results:\n%s\nwant\n%s", got, want)
			}
			for _, r := range res {
				if got := field(r.Object, "metadata.labels").(map[string]any)[prune.PartOfLabel]; got != setID {
					t.Errorf("%s: part-of label %v", r.Ref, got)
				}
			}
			parent := mustGet(t, s, gvkSecret, "default", "myset")
			out.WriteString("--- parent after v1\n" + toYAML(t, parentMetadata(parent)))

			// v2 drops b and the deployment.
			res = mustApply(t, c, opts, parse(t, strings.SplitN(v1, "---", 2)[0]))
			out.WriteString(lines(res))
			if got, want := lines(res), "configmap/a unchanged\nconfigmap/b pruned\ndeployment.apps/web pruned\n"; got != want {
				t.Fatalf("results:\n%s\nwant\n%s", got, want)
			}
			for _, name := range []string{"applied-alone", "other-set", "imperative", "a"} {
				if !exists(t, s, gvkConfigMap, "default", name) {
					t.Errorf("configmap %s was pruned", name)
				}
			}
			parent = mustGet(t, s, gvkSecret, "default", "myset")
			out.WriteString("--- parent after v2\n" + toYAML(t, parentMetadata(parent)))
			golden.Assert(t, filepath.Join(testdata, "golden", "applyset.txt"), []byte(out.String()))
		})
	}
}

// parentMetadata keeps what the ApplySet writes on its parent.
func parentMetadata(obj map[string]any) map[string]any {
	md := obj["metadata"].(map[string]any)
	return map[string]any{"name": md["name"], "namespace": md["namespace"], "labels": md["labels"], "annotations": md["annotations"]}
}

// TestApplySetParentOfKubectl: a parent kubectl made is used, keeps its
// tooling, and its recorded members are pruned; another tool's parent is
// refused.
func TestApplySetParentOfKubectl(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	for _, doc := range []string{`
apiVersion: v1
kind: Secret
metadata:
  name: kset
  labels: {applyset.kubernetes.io/id: applyset-GjgIXczw14vNr48YfmbBYd6MxZmk2FHdIUuEQkPpkWk-v1}
  annotations:
    applyset.kubernetes.io/tooling: kubectl/v1.37.1
    applyset.kubernetes.io/contains-group-resources: configmaps
`, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: old-member
  labels: {applyset.kubernetes.io/part-of: applyset-GjgIXczw14vNr48YfmbBYd6MxZmk2FHdIUuEQkPpkWk-v1}
`, `
apiVersion: v1
kind: Secret
metadata:
  name: helmset
  labels: {applyset.kubernetes.io/id: x}
  annotations: {applyset.kubernetes.io/tooling: helm/v3}
`} {
		if _, err := s.Create(ctx, obj(t, doc)); err != nil {
			t.Fatal(err)
		}
	}
	opts := apply.Options{Namespace: "default", EnforceNamespace: true, Prune: true, ApplySet: "secrets/kset"}
	res := mustApply(t, s, opts, parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: new-member}}`))
	if got, want := lines(res), "configmap/new-member created\nconfigmap/old-member pruned\n"; got != want {
		t.Fatalf("results:\n%s\nwant\n%s", got, want)
	}
	ann := field(mustGet(t, s, gvkSecret, "default", "kset"), "metadata.annotations").(map[string]any)
	want := map[string]any{
		prune.ToolingAnnotation:              "kubectl/v1.37.1",
		prune.GroupKindsAnnotation:           "ConfigMap",
		prune.AdditionalNamespacesAnnotation: "",
	}
	if len(ann) != len(want) {
		t.Errorf("annotations %v, want %v", ann, want)
	}
	for k, v := range want {
		if ann[k] != v {
			t.Errorf("annotation %s = %v, want %v", k, ann[k], v)
		}
	}

	opts.ApplySet = "helmset"
	_, err := apply.New(s, opts).Apply(ctx, parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`))
	const wantErr = `apply: ApplySet parent object "secrets./helmset" already exists and is managed by tooling "helm" instead of "konverge"`
	if err == nil || err.Error() != wantErr {
		t.Errorf("error:\n%v\nwant\n%s", err, wantErr)
	}
}

// TestApplySetInNewNamespace: in one transaction, an ApplySet whose parent
// lives in a namespace the same input creates is written after that
// namespace, and a later apply prunes by it.
func TestApplySetInNewNamespace(t *testing.T) {
	s := openStore(t)
	opts := apply.Options{Namespace: "shop", EnforceNamespace: true, Prune: true, ApplySet: "shop-set"}
	in := `
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
`
	if got, want := lines(mustApply(t, s, opts, parse(t, in))), "namespace/shop created\nconfigmap/a created\nconfigmap/b created\n"; got != want {
		t.Fatalf("first apply:\n%s\nwant:\n%s", got, want)
	}
	parent := mustGet(t, s, schema.GVK{Version: "v1", Kind: "Secret"}, "shop", "shop-set")
	if parentMetadata(parent) == nil {
		t.Fatal("parent has no metadata")
	}
	in = strings.TrimSuffix(in, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
	if got, want := lines(mustApply(t, s, opts, parse(t, in))), "namespace/shop unchanged\nconfigmap/a unchanged\nconfigmap/b pruned\n"; got != want {
		t.Fatalf("second apply:\n%s\nwant:\n%s", got, want)
	}
}
