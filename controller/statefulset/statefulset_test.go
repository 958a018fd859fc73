package statefulset_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/statefulset"
)

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// TestParallelBurst: a Parallel StatefulSet of 1,001 replicas gets at
// most 500 pods per second of cluster time, and asks for the next sync a
// second later while pods are missing; nothing more at the same time.
// Scaled down, it deletes at most 500 pods per sync.
func TestParallelBurst(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	set := map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "wide", "namespace": "default"},
		"spec": map[string]any{
			"replicas":            int64(1001),
			"podManagementPolicy": "Parallel",
			"serviceName":         "wide",
			"selector":            map[string]any{"matchLabels": map[string]any{"app": "wide"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "wide"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
	}
	if _, err := st.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		l, err := st.List(ctx, kobj.PodGVK, cluster.InNamespace("default"))
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	for i, want := range []int{500, 1000, 1001} {
		var last time.Time
		for range 10 {
			res, err := statefulset.Controller{}.Sync(ctx, st, clk.t)
			if err != nil {
				t.Fatal(err)
			}
			last = res.RequeueAt
			if !res.Changed {
				break
			}
		}
		if got := count(); got != want {
			t.Fatalf("after second %d: %d pods, want %d", i, got, want)
		}
		if want < 1001 && !last.Equal(clk.t.Add(time.Second)) {
			t.Fatalf("after second %d: requeue at %v, want a second later", i, last)
		}
		clk.t = clk.t.Add(time.Second)
	}

	// Scaled to 0: at most 500 deletions per sync.
	cur, err := st.Get(ctx, kobj.StatefulSetGVK, "default", "wide")
	if err != nil {
		t.Fatal(err)
	}
	cur["spec"].(map[string]any)["replicas"] = int64(0)
	if _, err := st.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{501, 1, 0} {
		res, err := statefulset.Controller{}.Sync(ctx, st, clk.t)
		if err != nil {
			t.Fatal(err)
		}
		if got := count(); got != want {
			t.Fatalf("scale down: %d pods left after a sync, want %d", got, want)
		}
		if want > 0 && !res.RequeueAt.Equal(clk.t.Add(time.Second)) {
			t.Fatalf("scale down: requeue at %v, want a second later", res.RequeueAt)
		}
	}
}
