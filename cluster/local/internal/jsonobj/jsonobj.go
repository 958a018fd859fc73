// Package jsonobj holds the accessors the embedded API server's units
// share for objects held as decoded JSON (map[string]any): the store, the
// registry strategies and the admission plugins all read and write objects
// through them.
//
// The accessors that take a map and a field and return a map (Metadata,
// Child) add what is missing; Peek and the readers write nothing.
package jsonobj

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
)

// GroupKind names a kind independently of its version.
type GroupKind struct{ Group, Kind string }

// Metadata returns obj's metadata, adding an empty one if it has none.
func Metadata(obj map[string]any) map[string]any {
	return Child(obj, "metadata")
}

// Str is the string at m[field], "" when it is not one.
func Str(m map[string]any, field string) string {
	s, _ := m[field].(string)
	return s
}

// MetaString is the string at metadata[field].
func MetaString(obj map[string]any, field string) string {
	return Str(Peek(obj, "metadata"), field)
}

// SetString sets a field, or removes it when s is empty.
func SetString(m map[string]any, field, s string) {
	if s == "" {
		delete(m, field)
		return
	}
	m[field] = s
}

// Child returns m[field], adding an empty object when it is not one.
func Child(m map[string]any, field string) map[string]any {
	if c, ok := m[field].(map[string]any); ok {
		return c
	}
	c := map[string]any{}
	m[field] = c
	return c
}

// Peek returns the map at field of m, nil when there is none; unlike
// Child it writes nothing into m.
func Peek(m map[string]any, field string) map[string]any {
	c, _ := m[field].(map[string]any)
	return c
}

// ObjectList returns the objects of a JSON list, skipping other values.
func ObjectList(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Finalizers returns metadata.finalizers.
func Finalizers(obj map[string]any) []string {
	list, _ := Peek(obj, "metadata")["finalizers"].([]any)
	out := make([]string, 0, len(list))
	for _, f := range list {
		if s, ok := f.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// SetFinalizers sets metadata.finalizers, removing the field when empty.
func SetFinalizers(obj map[string]any, fs []string) {
	md := Metadata(obj)
	if len(fs) == 0 {
		delete(md, "finalizers")
		return
	}
	list := make([]any, len(fs))
	for i, f := range fs {
		list[i] = f
	}
	md["finalizers"] = list
}

// AddFinalizer appends f to metadata.finalizers unless it is there.
func AddFinalizer(obj map[string]any, f string) {
	if fs := Finalizers(obj); !slices.Contains(fs, f) {
		SetFinalizers(obj, append(fs, f))
	}
}

// SortedKeys returns the keys of m in order.
func SortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// Quantity parses a stored quantity; the store holds only valid ones, and
// anything else reads as zero.
func Quantity(v any) resource.Quantity {
	s, _ := v.(string)
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}
	}
	return q
}

// Quantities parses a resource list (requests, limits, hard).
func Quantities(m map[string]any) map[string]resource.Quantity {
	out := make(map[string]resource.Quantity, len(m))
	for k, v := range m {
		out[k] = Quantity(v)
	}
	return out
}
