package kobj

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GoSelector prints a selector as the real controllers' %+v of a
// *metav1.LabelSelector, which their messages quote.
func TestGoSelectorIsMetav1String(t *testing.T) {
	for _, sel := range []*metav1.LabelSelector{
		nil,
		{},
		{MatchLabels: map[string]string{"q": "a"}},
		{MatchLabels: map[string]string{"b": "2", "a": "1"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "dev"}}}},
		{MatchLabels: map[string]string{"x": "y"}, MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpExists},
			{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"a"}},
		}},
	} {
		want := fmt.Sprintf("%+v", sel)
		if sel == nil {
			want = "nil"
		}
		var m map[string]any
		if sel != nil {
			m = map[string]any{}
			if sel.MatchLabels != nil {
				ml := map[string]any{}
				for k, v := range sel.MatchLabels {
					ml[k] = v
				}
				m["matchLabels"] = ml
			}
			var exprs []any
			for _, e := range sel.MatchExpressions {
				var vals []any
				for _, v := range e.Values {
					vals = append(vals, v)
				}
				em := map[string]any{"key": e.Key, "operator": string(e.Operator)}
				if vals != nil {
					em["values"] = vals
				}
				exprs = append(exprs, em)
			}
			if exprs != nil {
				m["matchExpressions"] = exprs
			}
		}
		if got := GoSelector(m); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
