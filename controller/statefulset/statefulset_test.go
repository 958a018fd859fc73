package statefulset_test

import (
	"testing"
	"time"

	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/statefulset"
)

// TestParallelBurst: a Parallel StatefulSet of 1,001 replicas gets at
// most 500 pods per second of cluster time, and asks for the next sync a
// second later while pods are missing; nothing more at the same time.
// Scaled down, it deletes at most 500 pods per sync.
func TestParallelBurst(t *testing.T) {
	e := ctrltest.New(t)
	e.Create(map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "wide", "namespace": "default"},
		"spec": map[string]any{
			"replicas":            int64(1001),
			"podManagementPolicy": "Parallel",
			"serviceName":         "wide",
			"selector":            map[string]any{"matchLabels": map[string]any{"app": "wide"}},
			"template":            ctrltest.PodTemplate("nginx", map[string]any{"app": "wide"}),
		},
	})
	count := func() int { return len(e.List(kobj.PodGVK, "default")) }
	for i, want := range []int{500, 1000, 1001} {
		var last time.Time
		for range 10 {
			res := e.Sync(statefulset.Controller{})
			last = res.RequeueAt
			if !res.Changed {
				break
			}
		}
		if got := count(); got != want {
			t.Fatalf("after second %d: %d pods, want %d", i, got, want)
		}
		if want < 1001 && !last.Equal(e.Now().Add(time.Second)) {
			t.Fatalf("after second %d: requeue at %v, want a second later", i, last)
		}
		e.Advance(time.Second)
	}

	// Scaled to 0: at most 500 deletions per sync.
	e.Modify(kobj.StatefulSetGVK, "default", "wide", func(set map[string]any) {
		set["spec"].(map[string]any)["replicas"] = int64(0)
	})
	for _, want := range []int{501, 1, 0} {
		res := e.Sync(statefulset.Controller{})
		if got := count(); got != want {
			t.Fatalf("scale down: %d pods left after a sync, want %d", got, want)
		}
		if want > 0 && !res.RequeueAt.Equal(e.Now().Add(time.Second)) {
			t.Fatalf("scale down: requeue at %v, want a second later", res.RequeueAt)
		}
	}
}
