package job_test

import (
	"testing"
	"time"

	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/job"
)

// TestCreationBurst: a Job of parallelism 1,001 gets at most 500 pods per
// second of cluster time, however many syncs run at that time, and asks
// for the next sync a second later while pods are missing.
func TestCreationBurst(t *testing.T) {
	e := ctrltest.New(t)
	e.Create(map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": "wide", "namespace": "default"},
		"spec": map[string]any{
			"parallelism": int64(1001),
			"completions": int64(2000),
			"template": map[string]any{
				"spec": map[string]any{
					"restartPolicy": "Never",
					"containers":    []any{map[string]any{"name": "c", "image": "busybox"}},
				},
			},
		},
	})
	for i, want := range []int{500, 1000, 1001} {
		var last time.Time
		for range 10 {
			res := e.Sync(job.Controller{})
			last = res.RequeueAt
			if !res.Changed {
				break
			}
		}
		if got := len(e.List(kobj.PodGVK, "default")); got != want {
			t.Fatalf("after second %d: %d pods, want %d", i, got, want)
		}
		if want < 1001 && !last.Equal(e.Now().Add(time.Second)) {
			t.Fatalf("after second %d: requeue at %v, want a second later", i, last)
		}
		e.Advance(time.Second)
	}
}
