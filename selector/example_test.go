package selector_test

import (
	"fmt"

	"github.com/konverge/konverge/selector"
)

func ExampleParseLabels() {
	sel, err := selector.ParseLabels("tier in (frontend, backend), app = web, !canary")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel)
	fmt.Println(sel.Matches(map[string]string{"app": "web", "tier": "frontend"}))
	fmt.Println(sel.Matches(map[string]string{"app": "web", "tier": "frontend", "canary": "true"}))

	_, err = selector.ParseLabels("app in (web")
	fmt.Println(err)
	// Output:
	// app=web,!canary,tier in (backend,frontend)
	// true
	// false
	// selector: label selector "app in (web": unable to parse requirement: found '', expected: ',' or ')'
}

func ExampleFromLabelSelector() {
	// spec.selector of a Deployment, decoded from JSON.
	spec := map[string]any{
		"matchLabels": map[string]any{"app": "nginx"},
		"matchExpressions": []any{
			map[string]any{"key": "env", "operator": "In", "values": []any{"prod", "staging"}},
		},
	}
	sel, err := selector.FromLabelSelector(spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel, sel.Matches(map[string]string{"app": "nginx", "env": "prod"}))

	empty, _ := selector.FromLabelSelector(map[string]any{})
	none, _ := selector.FromLabelSelector(nil)
	fmt.Println(empty.Matches(nil), none.Matches(nil))
	// Output:
	// app=nginx,env in (prod,staging) true
	// true false
}

func ExampleParseFields() {
	sel, err := selector.ParseFields("status.phase=Running,metadata.namespace!=kube-system")
	if err != nil {
		fmt.Println(err)
		return
	}
	pod := map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"status":   map[string]any{"phase": "Running"},
	}
	fmt.Println(sel)
	fmt.Println(sel.Matches(pod))
	// Output:
	// metadata.namespace!=kube-system,status.phase=Running
	// true
}

func ExampleLabels_Empty() {
	all, _ := selector.ParseLabels("")
	fmt.Println(all.Empty(), all.Matches(map[string]string{"any": "thing"}))
	// Output: true true
}

func ExampleFields_String() {
	sel, _ := selector.ParseFields(`metadata.name==a\,b`)
	fmt.Println(sel.String(), sel.Empty())
	// Output: metadata.name=a\,b false
}

func ExampleEverything() {
	fmt.Println(selector.Everything().Matches(nil), selector.Nothing().Matches(nil))
	// Output: true false
}
