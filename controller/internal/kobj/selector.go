package kobj

import (
	"fmt"
	"sort"
	"strings"
)

// GoSelector prints a label selector the way the real controllers'
// messages quote a *metav1.LabelSelector formatted with %v or %+v (its
// generated String method): matchLabels sorted by key, the expressions in
// their order, "nil" for no selector. Events such as the disruption
// controller's UnmanagedPods and the autoscaler's external metric errors
// carry it.
func GoSelector(sel map[string]any) string {
	if sel == nil {
		return "nil"
	}
	var b strings.Builder
	b.WriteString("&LabelSelector{MatchLabels:map[string]string{")
	labels := StringMap(sel, "matchLabels")
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s,", k, labels[k])
	}
	b.WriteString("},MatchExpressions:[]LabelSelectorRequirement{")
	for _, e := range Slice(sel, "matchExpressions") {
		expr, _ := e.(map[string]any)
		var vals []string
		for _, v := range Slice(expr, "values") {
			s, _ := v.(string)
			vals = append(vals, s)
		}
		fmt.Fprintf(&b, "LabelSelectorRequirement{Key:%s,Operator:%s,Values:[%s],},", Str(expr, "key"), Str(expr, "operator"), strings.Join(vals, " "))
	}
	b.WriteString("},}")
	return b.String()
}
