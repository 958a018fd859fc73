package job_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/job"
)

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// TestCreationBurst: a Job of parallelism 1,001 gets at most 500 pods per
// second of cluster time, however many syncs run at that time, and asks
// for the next sync a second later while pods are missing.
func TestCreationBurst(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	j := map[string]any{
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
	}
	if _, err := st.Create(ctx, j); err != nil {
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
			res, err := job.Controller{}.Sync(ctx, st, clk.t)
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
}
