package cli

import (
	"fmt"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

// resultLines hands back the results in input order whatever order the
// writes made them in, the pruned ones last, without their objects; a
// failed apply has none, unless server-side apply refused some objects.
func TestResultLines(t *testing.T) {
	src := func(doc int) manifest.Source { return manifest.Source{File: "a.yaml", Doc: doc, Line: doc * 3} }
	var objs []manifest.Object
	for i := 1; i <= 4; i++ {
		objs = append(objs, manifest.Object{Source: src(i)})
	}
	res := func(name string, doc int, action apply.Action) apply.Result {
		return apply.Result{Ref: objref.Ref{GVK: schema.GVK{Version: "v1", Kind: "ConfigMap"}, Name: name}, Source: src(doc), Action: action,
			Object: map[string]any{"kind": "ConfigMap"}, Live: map[string]any{}}
	}
	l := newResultLines(objs)
	// The writes: the namespace of document 3 first, then the others.
	for _, r := range []apply.Result{
		res("ns", 3, apply.Created), res("one", 1, apply.Configured), res("gone", 0, apply.Pruned),
		res("four", 4, apply.Unchanged), res("two", 2, apply.Created),
	} {
		l.add(r)
	}
	got := fmt.Sprint(l.results(nil, false))
	var names []string
	for _, r := range l.results(nil, false) {
		names = append(names, r.Ref.Name)
		if r.Object != nil || r.Live != nil {
			t.Fatalf("%s kept its objects", r.Ref.Name)
		}
	}
	if fmt.Sprint(names) != "[one two ns four gone]" {
		t.Fatalf("order %v, want [one two ns four gone] (%s)", names, got)
	}
	if r := l.results(fmt.Errorf("boom"), false); r != nil {
		t.Fatalf("a failed apply returned %d results", len(r))
	}
	if r := l.results(fmt.Errorf("boom"), true); r != nil {
		t.Fatalf("a failed server-side apply returned %d results", len(r))
	}
	refused := fmt.Errorf("apply: %w", apply.Errors{{Err: fmt.Errorf("refused")}})
	if r := l.results(refused, true); len(r) != 5 {
		t.Fatalf("server-side apply with refused objects: %d results, want 5", len(r))
	}
}
