package printer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// field returns the value at path in obj, nil when any step is missing.
func field(obj any, path ...string) any {
	cur := obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// Str returns the string at path in obj, "" when absent or not a string.
func Str(obj any, path ...string) string {
	s, _ := field(obj, path...).(string)
	return s
}

// Int returns the integer at path in obj, 0 when absent.
func Int(obj any, path ...string) int64 {
	switch n := field(obj, path...).(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

// IntOr returns the integer at path in obj, def when absent.
func IntOr(obj any, def int64, path ...string) int64 {
	if field(obj, path...) == nil {
		return def
	}
	return Int(obj, path...)
}

// Bool returns the boolean at path in obj.
func Bool(obj any, path ...string) bool {
	b, _ := field(obj, path...).(bool)
	return b
}

// Map returns the object at path in obj, nil when absent.
func Map(obj any, path ...string) map[string]any {
	m, _ := field(obj, path...).(map[string]any)
	return m
}

// List returns the list at path in obj, nil when absent.
func List(obj any, path ...string) []any {
	l, _ := field(obj, path...).([]any)
	return l
}

// Has reports whether path is present (and not null) in obj.
func Has(obj any, path ...string) bool { return field(obj, path...) != nil }

// StringMap returns the string-valued map at path (labels, selectors).
func StringMap(obj any, path ...string) map[string]string {
	m := Map(obj, path...)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = Scalar(v)
	}
	return out
}

// Scalar prints a JSON scalar as kubectl prints it with %v.
func Scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// Time parses the RFC 3339 timestamp at path; the zero time when absent
// or malformed.
func Time(obj any, path ...string) time.Time {
	s := Str(obj, path...)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// FormatLabels prints labels as labels.FormatLabels: sorted k=v joined by
// commas, "<none>" when empty.
func FormatLabels(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
	}
	return b.String()
}

// FormatLabelSelector prints a metav1.LabelSelector as
// metav1.FormatLabelSelector: "<none>" for an empty one, matchLabels and
// matchExpressions in selector syntax.
func FormatLabelSelector(sel map[string]any) string {
	if sel == nil {
		return "<none>"
	}
	s := selectorString(sel)
	if s == "" {
		return "<none>"
	}
	return s
}

// SelectorString prints a LabelSelector as labels.Selector.String() after
// metav1.LabelSelectorAsSelector: requirements sorted by key.
func SelectorString(sel map[string]any) string {
	return selectorString(sel)
}

func selectorString(sel map[string]any) string {
	type req struct{ key, text string }
	var reqs []req
	for k, v := range Map(sel, "matchLabels") {
		reqs = append(reqs, req{k, k + "=" + Scalar(v)})
	}
	for _, e := range List(sel, "matchExpressions") {
		key := Str(e, "key")
		var vals []string
		for _, v := range List(e, "values") {
			vals = append(vals, Scalar(v))
		}
		sort.Strings(vals)
		switch Str(e, "operator") {
		case "In":
			reqs = append(reqs, req{key, key + " in (" + strings.Join(vals, ",") + ")"})
		case "NotIn":
			reqs = append(reqs, req{key, key + " notin (" + strings.Join(vals, ",") + ")"})
		case "Exists":
			reqs = append(reqs, req{key, key})
		case "DoesNotExist":
			reqs = append(reqs, req{key, "!" + key})
		}
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].key < reqs[j].key })
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.text
	}
	return strings.Join(out, ",")
}
