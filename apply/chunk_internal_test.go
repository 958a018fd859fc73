package apply

import (
	"context"
	"fmt"
	"testing"

	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/value"
)

// TestPlanChunks: planning a batch a few objects at a time gives the
// results (and errors) of planning it whole, whatever the chunk size.
func TestPlanChunks(t *testing.T) {
	s, err := local.Open(t.TempDir(), local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	objs := func(gen int, bad bool) []manifest.Object {
		var out []map[string]any
		for i := range 9 {
			data := map[string]any{"k": fmt.Sprint(gen)}
			if i%3 == 0 {
				data["k"] = "same" // unchanged
			}
			out = append(out, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i)}, "data": data})
		}
		spec := map[string]any{"replicas": int64(gen),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}
		if bad {
			spec["replicas"] = "three"
		}
		out = append(out, map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web"}, "spec": spec})
		return Objects(out...)
	}
	if _, err := New(s, Options{}).Apply(context.Background(), objs(1, false)); err != nil {
		t.Fatal(err)
	}
	run := func(chunk int, bad bool) string {
		defer func(old int) { planChunk = old }(planChunk)
		planChunk = chunk
		results, err := New(s, Options{DryRun: DryRunServer}).Apply(context.Background(), objs(2, bad))
		out := fmt.Sprintf("error: %v\n", err)
		for _, r := range results {
			obj, _ := value.Encode(r.Object)
			patch, _ := value.Encode(r.Patch)
			out += fmt.Sprintf("%s drift=%v live=%v\n  %s\n  %s\n", r, r.Drift, r.Live != nil, obj, patch)
		}
		return out
	}
	for _, bad := range []bool{false, true} {
		want := run(1024, bad)
		for _, chunk := range []int{1, 2, 3, 7} {
			if got := run(chunk, bad); got != want {
				t.Errorf("bad %v, chunks of %d:\n%s\nwant, planned whole:\n%s", bad, chunk, got, want)
			}
		}
	}
}
