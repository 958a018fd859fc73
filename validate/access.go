package validate

import (
	"sort"

	"github.com/konverge/konverge/value"
)

// Accessors on decoded objects. Object validates objects that went
// through defaults.Apply, so values have the types of their fields; a value
// of another type reads as absent.

type obj = map[string]any

func mget(m obj, k string) obj {
	if m == nil {
		return nil
	}
	c, _ := m[k].(map[string]any)
	return c
}

func sget(m obj, k string) string {
	s, _ := m[k].(string)
	return s
}

// iget returns the integer m[k] and whether it is set.
func iget(m obj, k string) (int64, bool) {
	switch x := m[k].(type) {
	case int64:
		return x, true
	case float64:
		return int64(x), true
	}
	return 0, false
}

// ival returns the integer m[k], or 0.
func ival(m obj, k string) int64 {
	i, _ := iget(m, k)
	return i
}

func bget(m obj, k string) bool {
	b, _ := m[k].(bool)
	return b
}

func lget(m obj, k string) []any {
	if m == nil {
		return nil
	}
	l, _ := m[k].([]any)
	return l
}

func has(m obj, k string) bool {
	if m == nil {
		return false
	}
	v, ok := m[k]
	return ok && v != nil
}

// asObj returns v as an object, or an empty one.
func asObj(v any) obj {
	m, _ := v.(map[string]any)
	if m == nil {
		return obj{}
	}
	return m
}

// stringMap returns a map of strings as Go's map[string]string.
func stringMap(m obj, k string) map[string]string {
	src := mget(m, k)
	if src == nil {
		return nil
	}
	out := make(map[string]string, len(src))
	for key, v := range src {
		s, _ := v.(string)
		out[key] = s
	}
	return out
}

// sortedKeys returns the keys of m in order. kube-apiserver walks Go maps
// in random order; konverge reports map errors sorted by key.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func equal(a, b any) bool { return value.Equal(a, b) }
