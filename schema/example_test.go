package schema_test

import (
	"fmt"

	"github.com/konverge/konverge/schema"
)

func ExampleBuiltin() {
	reg := schema.Builtin()
	deployment := reg.Lookup(schema.ParseGVK("apps/v1", "Deployment"))
	containers := deployment.Field("spec").Field("template").Field("spec").Field("containers")
	ports := containers.Element().Field("ports")

	fmt.Println("containers:", containers.Strategy(), containers.MergeKey)
	fmt.Println("ports:", ports.MergeKey, ports.Keys, ports.Element().Field("protocol").Default)
	fmt.Println("strategy:", deployment.Field("spec").Field("strategy").Strategy())
	fmt.Println("args:", containers.Element().Field("args").ListType)
	// Output:
	// containers: merge name
	// ports: containerPort [containerPort protocol] TCP
	// strategy: retainKeys
	// args: atomic
}

func ExampleFromCRD() {
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com",
			"scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{
							"type": "object",
							"properties": map[string]any{
								"ports": map[string]any{
									"type":                       "array",
									"x-kubernetes-list-type":     "map",
									"x-kubernetes-list-map-keys": []any{"port", "protocol"},
									"items": map[string]any{"type": "object", "properties": map[string]any{
										"port":     map[string]any{"type": "integer"},
										"protocol": map[string]any{"type": "string"},
									}},
								},
							},
						},
					},
				}},
			}},
		},
	}
	versions, err := schema.FromCRD(crd)
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := schema.Builtin()
	for _, v := range versions {
		reg.Add(v.GVK, v.Type)
	}
	widget := reg.Lookup(schema.ParseGVK("example.com/v1", "Widget"))
	ports := widget.Field("spec").Field("ports")
	fmt.Println(ports.ListType, ports.MergeKey, ports.Keys)
	fmt.Println(widget.Field("metadata").Field("finalizers").ListType)
	// Output:
	// map port [port protocol]
	// set
}

func ExampleRegistry_Lookup() {
	reg := schema.Builtin()
	// Kinds without a schema are Untyped: JSON merge patch semantics.
	unknown := reg.Lookup(schema.ParseGVK("example.com/v1", "Gizmo"))
	fmt.Println(unknown == nil, unknown.KindOf(), unknown.Field("spec").Field("items").KindOf())
	// Output:
	// true untyped untyped
}

func ExampleParseOpenAPIV3() {
	doc := []byte(`{"components": {"schemas": {
		"example.v1.Gizmo": {
			"type": "object",
			"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Gizmo"}],
			"properties": {
				"parts": {
					"type": "array",
					"items": {"type": "object", "properties": {"id": {"type": "string"}}},
					"x-kubernetes-patch-strategy": "merge",
					"x-kubernetes-patch-merge-key": "id"
				}
			}
		}
	}}}`)
	reg, err := schema.ParseOpenAPIV3(doc)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, gvk := range reg.Kinds() {
		parts := reg.Lookup(gvk).Field("parts")
		fmt.Println(gvk, parts.ListType, parts.MergeKey)
	}
	// Output:
	// example.com/v1, Kind=Gizmo map id
}
