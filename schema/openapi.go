package schema

import (
	"encoding/json"
	"fmt"
	"slices"
)

// document is the part of an OpenAPI v3 document that konverge reads.
type document struct {
	Components struct {
		Schemas map[string]*node `json:"schemas"`
	} `json:"components"`
}

// ParseOpenAPIV3 reads one Kubernetes OpenAPI v3 document (what a
// kube-apiserver serves at /openapi/v3/apis/apps/v1) and returns a Registry
// holding every kind it defines: every definition in components.schemas
// with x-kubernetes-group-version-kind.
//
// The merge strategies are those strategicpatch derives from the Go struct
// tags patchStrategy and patchMergeKey, which the document carries as
// x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key on
// properties:
//
//   - a list with the strategy merge is merged by its patch merge key
//     (MergeByKey) when its items are objects and merged as a set when they
//     are scalars; every other list is Atomic, whatever its
//     x-kubernetes-list-type says, as for strategicpatch;
//   - retainKeys and replace apply to the position that carries them;
//   - x-kubernetes-list-map-keys become the Keys of a MergeByKey list;
//   - x-kubernetes-map-type is not read (strategicpatch ignores it);
//   - a property's default becomes the Default of its position, including
//     the zero values that kube-openapi writes for fields without omitempty
//     (a container's name defaults to "", a port's containerPort to 0).
//
// Descriptions and validations are dropped. Definitions shared by several
// kinds (PodSpec) become one Type whose Fields map is shared by every
// position that references it.
func ParseOpenAPIV3(doc []byte) (*Registry, error) {
	return ParseOpenAPIV3Documents(doc)
}

// ParseOpenAPIV3Documents is ParseOpenAPIV3 for several documents of one API
// server (one per group version, as /openapi/v3 lists them), parsed into one
// graph: a definition that several documents hold (ObjectMeta) becomes one
// Type. Where documents list different kinds for one definition
// (DeleteOptions), the kinds are joined.
func ParseOpenAPIV3Documents(docs ...[]byte) (*Registry, error) {
	defs := make(map[string]*node)
	for i, data := range docs {
		var d document
		if err := json.Unmarshal(data, &d); err != nil {
			if len(docs) == 1 {
				return nil, fmt.Errorf("schema: openapi v3 document: %w", err)
			}
			return nil, fmt.Errorf("schema: openapi v3 document %d: %w", i, err)
		}
		for name, n := range d.Components.Schemas {
			if n == nil {
				continue
			}
			prev, ok := defs[name]
			if !ok {
				defs[name] = n
				continue
			}
			for _, gvk := range n.GVKs {
				if !slices.Contains(prev.GVKs, gvk) {
					prev.GVKs = append(prev.GVKs, gvk)
				}
			}
		}
	}

	c := newConverter(false, defs)
	var roots []string
	for _, name := range sortedKeys(defs) {
		if len(defs[name].GVKs) == 0 {
			continue
		}
		roots = append(roots, name)
		c.source = definitionSource(name)
		if _, err := c.definition(name); err != nil {
			return nil, &Error{Source: c.source, Err: err}
		}
	}
	if err := c.run(); err != nil {
		return nil, err
	}
	r := NewRegistry()
	for _, name := range roots {
		t := c.defTypes[name]
		for _, gvk := range defs[name].GVKs {
			r.Add(gvk, t)
		}
	}
	return r, nil
}
