package apply

import (
	"context"
	"fmt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/schema"
)

// BuiltinMapper returns the kinds a default kube-apiserver v1.37 serves,
// with their merge schemas, and the custom resources that crds
// (CustomResourceDefinition objects) define: the served versions, with
// the schemas of their openAPIV3Schema. It is the Mapper of a Planner that
// plans against objects without a cluster.
func BuiltinMapper(crds ...map[string]any) (cluster.Mapper, error) {
	if len(crds) == 0 {
		return kinds.NewMapper(kinds.Builtin(), schema.Builtin()), nil
	}
	reg := schema.Builtin().Clone()
	resources := kinds.Builtin()
	for _, crd := range crds {
		versions, err := schema.FromCRD(crd)
		if err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
		status := statusSubresources(crd)
		for _, v := range versions {
			if !v.Served {
				continue
			}
			reg.Add(v.GVK, v.Type)
			resources = append(resources, cluster.Resource{
				GVK:        v.GVK,
				Plural:     v.Plural,
				Singular:   v.Singular,
				ShortNames: v.ShortNames,
				Namespaced: v.Scope != "Cluster",
				Status:     status[v.GVK.Version],
			})
		}
	}
	return kinds.NewMapper(resources, reg), nil
}

// statusSubresources returns the versions of a CRD with a status
// subresource.
func statusSubresources(crd map[string]any) map[string]bool {
	out := map[string]bool{}
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		sub, _ := vm["subresources"].(map[string]any)
		if _, ok := sub["status"]; ok {
			out[name] = true
		}
	}
	return out
}

// sourceMapper is the Mapper of a Planner made without one: the built-in
// kinds and the custom resources of the CRDs src holds.
func sourceMapper(ctx context.Context, src LiveSource) (cluster.Mapper, error) {
	l, err := src.List(ctx, crdGVK)
	if err != nil && !cluster.IsNotFound(err) {
		return nil, fmt.Errorf("apply: listing CustomResourceDefinitions: %w", err)
	}
	var crds []map[string]any
	if l != nil {
		crds = l.Items
	}
	return BuiltinMapper(crds...)
}
