package normalize_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/normalize"
)

// A manifest and the object the API server stored from it compare equal
// once both are normalized: the quantities, the Secret-like canonical
// forms and the defaults are the server's, and the fields only the server
// writes are left out.
func ExampleEqual() {
	manifest := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "web", "image": "nginx:1.27",
			"resources": map[string]any{"requests": map[string]any{"cpu": "0.5", "memory": "1024Mi"}},
		}}},
	}
	stored, _ := normalize.Server(manifest)
	stored["metadata"].(map[string]any)["uid"] = "6b0c1b5e-0000-4000-8000-000000000001"
	stored["metadata"].(map[string]any)["resourceVersion"] = "42"
	stored["status"] = map[string]any{"phase": "Pending"}

	c := stored["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	fmt.Println(c["resources"], c["imagePullPolicy"])

	plain, _ := normalize.Equal(manifest, stored, normalize.Options{})
	same, _ := normalize.Equal(manifest, stored, normalize.Options{Defaults: true})
	fmt.Println(plain, same)
	// Output:
	// map[requests:map[cpu:500m memory:1Gi]] IfNotPresent
	// false true
}

// The label and annotation that apply adds can be left out too.
func ExampleObject() {
	live := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name":            "settings",
			"resourceVersion": "7",
			"labels":          map[string]any{"applyset.kubernetes.io/part-of": "applyset-abc-v1"},
			"annotations":     map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}"},
		},
		"data": map[string]any{"color": "blue"},
	}
	out, _ := normalize.Object(live, normalize.Options{DropLastApplied: true, DropApplySet: true})
	fmt.Println(out)
	// Output:
	// map[apiVersion:v1 data:map[color:blue] kind:ConfigMap metadata:map[name:settings]]
}

// A CustomResourceDefinition as written and as the embedded cluster stored
// it compare equal: Server gives it the defaults the store gives it
// (spec.conversion, names.singular, names.listKind), with the same code.
func ExampleServer_customResourceDefinition() {
	dir, err := os.MkdirTemp("", "konverge")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}},
		},
	}
	stored, err := c.Create(context.Background(), crd)
	if err != nil {
		log.Fatal(err)
	}
	spec := stored["spec"].(map[string]any)
	fmt.Println(spec["conversion"], spec["names"])
	plain, _ := normalize.Equal(crd, stored, normalize.Options{})
	same, _ := normalize.Equal(crd, stored, normalize.Options{Defaults: true})
	fmt.Println(plain, same)
	// Output:
	// map[strategy:None] map[kind:Widget listKind:WidgetList plural:widgets singular:widget]
	// false true
}
