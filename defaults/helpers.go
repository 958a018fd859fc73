package defaults

// Small accessors on decoded objects. Defaulting runs after the typed pass,
// so values have the types of their fields; anything else is left alone.

// child returns m[k] when it is an object, else nil.
func child(m map[string]any, k string) map[string]any {
	if m == nil {
		return nil
	}
	c, _ := m[k].(map[string]any)
	return c
}

// ensure returns the object m[k], creating it when absent or null.
func ensure(m map[string]any, k string) map[string]any {
	if c, ok := m[k].(map[string]any); ok {
		return c
	}
	c := map[string]any{}
	m[k] = c
	return c
}

// objects returns the elements of the list m[k] that are objects.
func objects(m map[string]any, k string) []map[string]any {
	if m == nil {
		return nil
	}
	l, _ := m[k].([]any)
	out := make([]map[string]any, 0, len(l))
	for _, e := range l {
		if o, ok := e.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

// unsetPtr reports a pointer field that is absent or null.
func unsetPtr(m map[string]any, k string) bool {
	v, ok := m[k]
	return !ok || v == nil
}

// unsetString reports a string field that is absent, null or "".
func unsetString(m map[string]any, k string) bool {
	v, ok := m[k]
	return !ok || v == nil || v == ""
}

// str returns the string m[k], or "".
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// defaultString sets the string field m[k] to v when it is empty.
func defaultString(m map[string]any, k, v string) {
	if unsetString(m, k) {
		m[k] = v
	}
}

// defaultPtr sets the pointer field m[k] to v when it is nil.
func defaultPtr(m map[string]any, k string, v any) {
	if unsetPtr(m, k) {
		m[k] = v
	}
}

// isZeroInt reports an int field that is absent, null or 0.
func isZeroInt(m map[string]any, k string) bool {
	switch x := m[k].(type) {
	case nil:
		return true
	case int64:
		return x == 0
	case float64:
		return x == 0
	}
	return false
}

// mapLen is the number of entries of the object m[k].
func mapLen(m map[string]any, k string) int {
	c, _ := m[k].(map[string]any)
	return len(c)
}

// copyStringMap copies a map of strings.
func copyStringMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
