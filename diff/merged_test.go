package diff

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// TestKubectlMergedAgrees checks kubectlMerged against the steps it
// replaces (clean, keepLastApplied, then the generation made live's when
// that makes the two equal) on random pairs of objects, and that when it
// tells whether the result equals live, value.Equal agrees.
func TestKubectlMergedAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pick := func(vs ...any) any { return vs[rng.IntN(len(vs))] }
	absent := struct{}{}
	object := func() map[string]any {
		md := map[string]any{"name": "web"}
		set := func(k string, v any) {
			if v != absent {
				md[k] = v
			}
		}
		set("generation", pick(absent, nil, int64(1), int64(2), float64(2), "2"))
		set("managedFields", pick(absent, []any{map[string]any{"manager": "kubectl"}}))
		anns := map[string]any{}
		if v := pick(absent, "{}\n", `{"a":1}`+"\n", int64(1)); v != absent {
			anns[lastapplied.Annotation] = v
		}
		if rng.IntN(2) == 0 {
			anns["other"] = pick("x", "y")
		}
		if len(anns) > 0 || rng.IntN(3) == 0 {
			md["annotations"] = anns
		}
		obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": pick("a", "b")}}
		switch rng.IntN(8) {
		case 0: // no metadata
		case 1:
			obj["metadata"] = "not a map"
		default:
			obj["metadata"] = md
		}
		return obj
	}
	for round := range 20000 {
		d := &Differ{opts: Options{ShowManagedFields: rng.IntN(4) == 0}}
		merged := object()
		var live map[string]any
		if rng.IntN(6) != 0 {
			live = d.clean(object())
			if rng.IntN(3) == 0 {
				// Equal but for the generation and the annotation, often.
				live = d.clean(merged)
				live = objref.WithMetadata(live, "generation", pick(nil, int64(1), int64(3)))
			}
		}
		before := value.DeepCopyObject(merged)
		want := keepLastApplied(d.clean(merged), live)
		if live != nil {
			gen := objref.Metadata(live)["generation"]
			if g := objref.WithMetadata(want, "generation", gen); value.Equal(g, live) {
				want = g
			}
		}
		got, known, equal := d.kubectlMerged(merged, live)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: kubectlMerged(%v, %v) = %v, want %v", round, merged, live, got, want)
		}
		if !reflect.DeepEqual(merged, before) {
			t.Fatalf("round %d: merged modified", round)
		}
		if known && equal != value.Equal(live, got) {
			t.Fatalf("round %d: equal %v, value.Equal %v: live %v, merged %v", round, equal, !equal, live, got)
		}
	}
}
