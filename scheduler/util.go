package scheduler

import "sort"

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func mapAt(m map[string]any, path ...string) (map[string]any, bool) {
	cur := m
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func strAt(m map[string]any, path ...string) string {
	parent, ok := mapAt(m, path[:len(path)-1]...)
	if !ok {
		return ""
	}
	return str(parent, path[len(path)-1])
}

func boolAt(m map[string]any, path ...string) bool {
	parent, ok := mapAt(m, path[:len(path)-1]...)
	if !ok {
		return false
	}
	b, _ := parent[path[len(path)-1]].(bool)
	return b
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// list returns the maps of the list at m[key].
func list(m map[string]any, key string) []map[string]any {
	var out []map[string]any
	for _, e := range anyList(m[key]) {
		if em, ok := e.(map[string]any); ok {
			out = append(out, em)
		}
	}
	return out
}

func listAt(m map[string]any, path ...string) []map[string]any {
	parent, ok := mapAt(m, path[:len(path)-1]...)
	if !ok {
		return nil
	}
	return list(parent, path[len(path)-1])
}

func listOfStrings(m map[string]any, key string) []string {
	var out []string
	for _, e := range anyList(m[key]) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func stringMap(m map[string]any, key string) map[string]string {
	src, _ := m[key].(map[string]any)
	if len(src) == 0 {
		return nil
	}
	out := make(map[string]string, len(src))
	for k, v := range src {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
