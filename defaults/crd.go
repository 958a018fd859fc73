package defaults

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/konverge/konverge/value"
)

// Custom resources are decoded by kube-apiserver in three steps, all driven
// by the structural schema (openAPIV3Schema) of their version:
//
//  1. unknown fields are pruned (PruneUnknown), except under
//     x-kubernetes-preserve-unknown-fields: true, and except apiVersion,
//     kind and metadata at the root and in x-kubernetes-embedded-resource
//     objects;
//  2. nulls of non-nullable fields without a default are removed;
//  3. defaults are applied (ApplyCustomResource).
//
// Steps 2 and 3 are ApplyCustomResource; call PruneUnknown first.

// structural is a view of a structural schema given as decoded JSON.
type structural map[string]any

func asStructural(v any) structural {
	m, _ := v.(map[string]any)
	return structural(m)
}

func (s structural) property(name string) (structural, bool) {
	if s == nil {
		return nil, false
	}
	props, _ := s["properties"].(map[string]any)
	p, ok := props[name].(map[string]any)
	return structural(p), ok
}

// additional returns the schema of additionalProperties when it is a
// schema (structural schemas do not allow additionalProperties: false
// next to properties; true means "any").
func (s structural) additional() (structural, bool) {
	if s == nil {
		return nil, false
	}
	switch a := s["additionalProperties"].(type) {
	case map[string]any:
		return structural(a), true
	case bool:
		if a {
			return structural(map[string]any{}), true
		}
	}
	return nil, false
}

// fieldSchema is the schema of the field name of an object of schema s.
func (s structural) fieldSchema(name string) (structural, bool) {
	if p, ok := s.property(name); ok {
		return p, true
	}
	return s.additional()
}

func (s structural) items() structural {
	if s == nil {
		return nil
	}
	it, _ := s["items"].(map[string]any)
	return structural(it)
}

func (s structural) flag(name string) bool {
	b, _ := s[name].(bool)
	return b
}

func (s structural) nullable() bool { return s.flag("nullable") }

func (s structural) defaultValue() (any, bool) {
	if s == nil {
		return nil, false
	}
	d, ok := s["default"]
	if !ok || d == nil {
		return nil, false
	}
	return d, true
}

// ApplyCustomResource applies the defaults of openAPIV3Schema to obj, in
// place, as kube-apiserver does for custom resources: a field with a
// default is set when it is absent, or null and not nullable, inside every
// object that exists (recursively, through properties, additionalProperties
// and items); a null of a non-nullable field without a default is removed
// first. Defaults are deep-copied. Fields the schema does not describe
// (kept by x-kubernetes-preserve-unknown-fields) are not descended into.
func ApplyCustomResource(obj map[string]any, openAPIV3Schema map[string]any) error {
	if openAPIV3Schema == nil {
		return nil
	}
	s := structural(openAPIV3Schema)
	if t, ok := s["type"]; ok && t != "object" {
		return fmt.Errorf("defaults: openAPIV3Schema: type must be object, not %v", t)
	}
	pruneNonNullableNulls(obj, s)
	applyDefaults(obj, s)
	return nil
}

// pruneNonNullableNulls is PruneNonNullableNullsWithoutDefaults.
func pruneNonNullableNulls(x any, s structural) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			fs, ok := s.fieldSchema(k)
			if v == nil && ok && !fs.nullable() {
				if _, hasDefault := fs.defaultValue(); !hasDefault {
					delete(x, k)
					continue
				}
			}
			if ok {
				pruneNonNullableNulls(v, fs)
			} else {
				pruneNonNullableNulls(v, nil)
			}
		}
	case []any:
		for _, v := range x {
			pruneNonNullableNulls(v, s.items())
		}
	}
}

// applyDefaults is the structural defaulting algorithm (Default).
func applyDefaults(x any, s structural) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			prop := asStructural(props[k])
			d, ok := prop.defaultValue()
			if !ok {
				continue
			}
			if v, found := x[k]; !found || (v == nil && !prop.nullable()) {
				x[k] = value.DeepCopy(d)
			}
		}
		for k, v := range x {
			if prop, ok := s.property(k); ok {
				applyDefaults(v, prop)
			} else if ap, ok := s.additional(); ok {
				if v == nil && !ap.nullable() {
					if d, ok := ap.defaultValue(); ok {
						x[k] = value.DeepCopy(d)
					}
				}
				applyDefaults(x[k], ap)
			}
		}
	case []any:
		it := s.items()
		for i := range x {
			if x[i] == nil && it != nil && !it.nullable() {
				if d, ok := it.defaultValue(); ok {
					x[i] = value.DeepCopy(d)
				}
			}
			applyDefaults(x[i], it)
		}
	}
}

var metaFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// PruneUnknown removes from obj the fields that openAPIV3Schema does not
// specify, as kube-apiserver does for custom resources whose CRD does not
// set preserveUnknownFields (the only choice in apiextensions.k8s.io/v1):
// every field not in properties (or covered by additionalProperties) is
// dropped, except under x-kubernetes-preserve-unknown-fields: true (where
// only the known properties are descended into) and except apiVersion, kind
// and metadata at the root and in x-kubernetes-embedded-resource objects.
// It returns the paths of the pruned fields, sorted ("spec.foo",
// "spec.items[0].bar"); with fieldValidation=Strict kube-apiserver rejects
// the request naming them (`unknown field "spec.foo"`), with Warn it warns.
func PruneUnknown(obj map[string]any, openAPIV3Schema map[string]any) []string {
	s := structural(openAPIV3Schema)
	root := map[string]any{}
	for k, v := range s {
		root[k] = v
	}
	root["x-kubernetes-embedded-resource"] = true
	p := &pruner{}
	p.prune(obj, structural(root), "")
	sort.Strings(p.unknown)
	return p.unknown
}

type pruner struct{ unknown []string }

func joinKey(parent, k string) string {
	if parent == "" {
		return k
	}
	return parent + "." + k
}

func (p *pruner) prune(x any, s structural, path string) {
	if s != nil && s.flag("x-kubernetes-preserve-unknown-fields") {
		p.skipPrune(x, s, path)
		return
	}
	switch x := x.(type) {
	case map[string]any:
		if s == nil {
			for k := range x {
				p.unknown = append(p.unknown, joinKey(path, k))
				delete(x, k)
			}
			return
		}
		for k, v := range x {
			if s.flag("x-kubernetes-embedded-resource") && metaFields[k] {
				continue
			}
			if prop, ok := s.property(k); ok {
				p.prune(v, prop, joinKey(path, k))
			} else if ap, ok := s.additional(); ok {
				p.prune(v, ap, joinKey(path, k))
			} else {
				if !metaFields[k] || path != "" {
					p.unknown = append(p.unknown, joinKey(path, k))
				}
				delete(x, k)
			}
		}
	case []any:
		var it structural
		if s != nil {
			it = s.items()
		}
		for i, v := range x {
			p.prune(v, it, path+"["+strconv.Itoa(i)+"]")
		}
	}
}

func (p *pruner) skipPrune(x any, s structural, path string) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if s.flag("x-kubernetes-embedded-resource") && metaFields[k] {
				continue
			}
			if prop, ok := s.property(k); ok {
				p.prune(v, prop, joinKey(path, k))
			} else if ap, ok := s.additional(); ok {
				p.prune(v, ap, joinKey(path, k))
			}
		}
	case []any:
		for i, v := range x {
			p.skipPrune(v, s.items(), path+"["+strconv.Itoa(i)+"]")
		}
	}
}
