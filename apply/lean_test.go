package apply_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/value"
)

// TestLiveWithoutManagedFields applies the same change to two copies of
// one state, with and without LiveWithoutManagedFields: the actions,
// patches and stored objects are the same; the live objects lack their
// managedFields only with the option, and keep them when an ignore rule
// names managers or the apply is server-side.
func TestLiveWithoutManagedFields(t *testing.T) {
	ctx := context.Background()
	var v1, v2 strings.Builder
	for i := range 150 {
		fmt.Fprintf(&v1, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {v: \"1\"}\n---\n", i)
		fmt.Fprintf(&v2, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {v: \"%d\"}\n---\n", i, 1+i%2)
	}
	type outcome struct {
		results []apply.Result
		stored  []any
	}
	run := func(opts apply.Options) outcome {
		s := openStore(t)
		if _, err := apply.New(s, apply.Options{}).Apply(ctx, parse(t, v1.String())); err != nil {
			t.Fatal(err)
		}
		res, err := apply.New(s, opts).Apply(ctx, parse(t, v2.String()))
		if err != nil {
			t.Fatal(err)
		}
		var out outcome
		out.results = res
		for i := range 150 {
			obj := mustGet(t, s, gvkConfigMap, "default", fmt.Sprintf("cm-%d", i))
			delete(metadataOf(obj), "uid") // each state makes its own
			out.stored = append(out.stored, obj)
		}
		return out
	}
	full := run(apply.Options{})
	lean := run(apply.Options{LiveWithoutManagedFields: true})
	for i := range full.results {
		f, l := full.results[i], lean.results[i]
		if f.Action != l.Action || !value.Equal(f.Patch, l.Patch) {
			t.Errorf("%s: %v %v with the option, %v %v without", f.Ref.Name, l.Action, l.Patch, f.Action, f.Patch)
		}
		if !value.Equal(full.stored[i], lean.stored[i]) {
			t.Errorf("%s: stored %v with the option, %v without", f.Ref.Name, lean.stored[i], full.stored[i])
		}
		if _, ok := metadataOf(f.Live)["managedFields"]; !ok {
			t.Errorf("%s: live without managedFields without the option", f.Ref.Name)
		}
		if _, ok := metadataOf(l.Live)["managedFields"]; ok {
			t.Errorf("%s: live with managedFields with the option", f.Ref.Name)
		}
	}
	for name, opts := range map[string]apply.Options{
		"ignore by manager": {LiveWithoutManagedFields: true, Ignore: []apply.IgnoreRule{{Kind: "Secret", Managers: []string{"someone"}}}},
		"server-side":       {LiveWithoutManagedFields: true, ServerSide: true, ForceConflicts: true, FieldManager: "test"},
	} {
		for _, r := range run(opts).results {
			if _, ok := metadataOf(r.Live)["managedFields"]; !ok {
				t.Errorf("%s: %s: live without managedFields", name, r.Ref.Name)
				break
			}
		}
	}
}

func metadataOf(obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	return md
}
