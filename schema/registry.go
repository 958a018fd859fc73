package schema

import (
	"cmp"
	"slices"
	"strings"
)

// GVK names a kind of object: its API group, version and kind. The core
// group is the empty string.
type GVK struct {
	Group, Version, Kind string
}

// ParseGVK returns the GVK of an object from its apiVersion and kind fields:
// "apps/v1" is the group apps at version v1, "v1" the core group at v1.
func ParseGVK(apiVersion, kind string) GVK {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return GVK{Version: apiVersion, Kind: kind}
	}
	return GVK{Group: group, Version: version, Kind: kind}
}

// APIVersion returns the apiVersion field of objects of this kind: "apps/v1",
// or "v1" for the core group.
func (g GVK) APIVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

// String returns the GVK in the form apimachinery prints a
// GroupVersionKind, with the apiVersion first: "apps/v1, Kind=Deployment",
// "v1, Kind=Pod" for the core group.
func (g GVK) String() string {
	return g.APIVersion() + ", Kind=" + g.Kind
}

func compareGVK(a, b GVK) int {
	return cmp.Or(
		strings.Compare(a.Group, b.Group),
		strings.Compare(a.Version, b.Version),
		strings.Compare(a.Kind, b.Kind),
	)
}

// Registry maps kinds to the Type of their objects.
//
// A Registry is built before use: Add and Merge must not run concurrently
// with any other method, while Lookup and Kinds may run concurrently with each
// other. The Types it holds are immutable and shared.
//
// The zero Registry is empty and ready to use.
type Registry struct {
	// base holds kinds shared with other registries (the built-in kinds);
	// it is never modified. Kinds in own hide the same kinds of base.
	base *Registry
	own  map[GVK]*Type
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{} }

// Add registers t as the type of objects of kind gvk, replacing the type
// registered before, if any. A nil t registers the kind as Untyped.
func (r *Registry) Add(gvk GVK, t *Type) {
	if t == nil {
		t = untyped
	}
	if r.own == nil {
		r.own = make(map[GVK]*Type)
	}
	r.own[gvk] = t
}

// Merge adds every kind of other to r. Where both hold a kind, other's type
// wins. other is not modified.
func (r *Registry) Merge(other *Registry) {
	if other == nil {
		return
	}
	if r.own == nil && r.base == nil && other.own == nil {
		// Adding a registry to an empty one: share its base, copy nothing.
		r.base = other.base
		return
	}
	if other.base != nil {
		for gvk, t := range other.base.own {
			if _, hidden := other.own[gvk]; !hidden {
				r.Add(gvk, t)
			}
		}
	}
	for gvk, t := range other.own {
		r.Add(gvk, t)
	}
}

// Clone returns a Registry with the same kinds as r that can be changed
// without changing r. It copies no types.
func (r *Registry) Clone() *Registry {
	c := &Registry{}
	if r != nil {
		c.Merge(r)
	}
	return c
}

// Lookup returns the type of objects of kind gvk, or nil when the kind is
// unknown. A nil *Type is valid and Untyped: objects of unknown kinds merge
// with the JSON merge patch rules, as kubectl merges them.
func (r *Registry) Lookup(gvk GVK) *Type {
	if r == nil {
		return nil
	}
	if t, ok := r.own[gvk]; ok {
		return t
	}
	if r.base != nil {
		return r.base.own[gvk]
	}
	return nil
}

// Len returns the number of kinds in r.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	n := len(r.own)
	if r.base != nil {
		for gvk := range r.base.own {
			if _, hidden := r.own[gvk]; !hidden {
				n++
			}
		}
	}
	return n
}

// Kinds returns every kind of r, sorted by group, version and kind.
func (r *Registry) Kinds() []GVK {
	if r == nil {
		return nil
	}
	kinds := make([]GVK, 0, r.Len())
	for gvk := range r.own {
		kinds = append(kinds, gvk)
	}
	if r.base != nil {
		for gvk := range r.base.own {
			if _, hidden := r.own[gvk]; !hidden {
				kinds = append(kinds, gvk)
			}
		}
	}
	slices.SortFunc(kinds, compareGVK)
	return kinds
}

// layered returns an empty Registry on top of the frozen registry base, so
// that callers may Add to it without copying or changing base.
func layered(base *Registry) *Registry {
	return &Registry{base: base}
}
