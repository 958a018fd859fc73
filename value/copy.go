package value

import (
	"maps"
	"slices"
)

// DeepCopy returns a copy of v that shares no maps or lists with it.
// Scalars are returned as they are.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return DeepCopyObject(x)
	case []any:
		if x == nil {
			return x
		}
		l := make([]any, len(x))
		for i, el := range x {
			l[i] = DeepCopy(el)
		}
		return l
	case map[string]string:
		return maps.Clone(x)
	case []string:
		return slices.Clone(x)
	}
	return v
}

// DeepCopyObject is DeepCopy for an object.
func DeepCopyObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, el := range m {
		c[k] = DeepCopy(el)
	}
	return c
}
