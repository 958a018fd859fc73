package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

// TestOrphansCollected: a ReplicaSet whose owner never existed is deleted
// by the runner's garbage collector, and its pods with it.
func TestOrphansCollected(t *testing.T) {
	ctx := context.Background()
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "ReplicaSet",
		"metadata": map[string]any{
			"name": "orphan", "namespace": "default",
			"ownerReferences": []any{map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment", "name": "gone",
				"uid": "00000000-0000-0000-0000-000000000001", "controller": true,
			}},
		},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "orphan"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "orphan"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "c", "image": "nginx:1.16.1"},
				}},
			},
		},
	}
	if _, err := st.Create(ctx, rs); err != nil {
		t.Fatal(err)
	}
	r := sim.New(st, clk, sim.Controllers(nil)...)
	if err := r.Advance(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	rsGVK := schema.GVK{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	if _, err := st.Get(ctx, rsGVK, "default", "orphan"); !cluster.IsNotFound(err) {
		t.Fatalf("orphaned ReplicaSet still there: %v", err)
	}
	pods, err := st.List(ctx, schema.GVK{Version: "v1", Kind: "Pod"}, cluster.InNamespace("default"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Fatalf("%d pods left", len(pods.Items))
	}
}
