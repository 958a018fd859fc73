package job_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/job"
)

// each runs fn with the full and the incremental controller, and sync
// settling the controller.
func each(t *testing.T, fn func(t *testing.T, e *ctrltest.Env, sync func())) {
	t.Helper()
	ctrltest.Modes(t, func() controller.Controller { return job.Controller{} },
		func() controller.Controller { return job.New() },
		func(t *testing.T, e *ctrltest.Env, ctl controller.Controller) {
			fn(t, e, func() { e.Settle([]controller.Controller{ctl}) })
		})
}

// end is the test's kubelet: every pod that has not finished ends in
// phase (Succeeded or Failed).
func end(e *ctrltest.Env, phase string) {
	e.TB.Helper()
	for _, p := range e.List(kobj.PodGVK, "default") {
		if ph := kobj.Str(p, "status", "phase"); ph == "Succeeded" || ph == "Failed" || kobj.Deleting(p) {
			continue
		}
		p["status"] = map[string]any{"phase": phase}
		e.UpdateStatus(p)
	}
}

func finalized(e *ctrltest.Env) []string {
	var out []string
	for _, p := range e.List(kobj.PodGVK, "default") {
		if slices.Contains(kobj.Slice(p, "metadata", "finalizers"), any(job.TrackingFinalizer)) {
			out = append(out, kobj.Name(p))
		}
	}
	return out
}

// TestRuns: Jobs that complete or fail, with the conditions, counters and
// Events the job-* and cronjob-* scenarios of internal/workloadtest
// recorded from kube-controller-manager, and the tracking finalizer gone
// from every pod once counted.
func TestRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec map[string]any
		ends []string // what each round of pods ends as
		// conds are the Job's True conditions at the end.
		conds               []string
		succeeded, failed   int64
		events              []string // must be among the Events
		podsCreated         int
		finishedWithoutMore bool
	}{
		{
			name:        "completions one at a time",
			spec:        map[string]any{"completions": int64(2), "parallelism": int64(1)},
			ends:        []string{"Succeeded", "Succeeded"},
			conds:       []string{"SuccessCriteriaMet", "Complete"},
			succeeded:   2,
			events:      []string{"Normal Completed Job/j: Job completed"},
			podsCreated: 2,
		},
		{
			name:        "backoffLimit 0",
			spec:        map[string]any{"backoffLimit": int64(0)},
			ends:        []string{"Failed"},
			conds:       []string{"FailureTarget", "Failed"},
			failed:      1,
			events:      []string{"Warning BackoffLimitExceeded Job/j: Job has reached the specified backoff limit"},
			podsCreated: 1,
		},
		{
			name:        "parallel",
			spec:        map[string]any{"completions": int64(3), "parallelism": int64(3)},
			ends:        []string{"Succeeded"},
			conds:       []string{"SuccessCriteriaMet", "Complete"},
			succeeded:   3,
			events:      []string{"Normal Completed Job/j: Job completed"},
			podsCreated: 3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			each(t, func(t *testing.T, e *ctrltest.Env, sync func()) {
				spec := map[string]any{"template": map[string]any{"spec": map[string]any{
					"restartPolicy": "Never",
					"containers":    []any{map[string]any{"name": "c", "image": "busybox:1.36"}},
				}}}
				for k, v := range tc.spec {
					spec[k] = v
				}
				e.Create(map[string]any{"apiVersion": "batch/v1", "kind": "Job",
					"metadata": map[string]any{"name": "j", "namespace": "default"}, "spec": spec})
				sync()
				for _, phase := range tc.ends {
					end(e, phase)
					sync()
				}
				j := e.Get(kobj.JobGVK, "default", "j")
				var conds []string
				for _, c := range kobj.Slice(j, "status", "conditions") {
					if m := c.(map[string]any); m["status"] == "True" {
						conds = append(conds, kobj.Str(m, "type"))
					}
				}
				if !slices.Equal(conds, tc.conds) {
					t.Errorf("conditions %v, want %v", conds, tc.conds)
				}
				if got := kobj.IntOr(j, 0, "status", "succeeded"); got != tc.succeeded {
					t.Errorf("succeeded %d, want %d", got, tc.succeeded)
				}
				if got := kobj.IntOr(j, 0, "status", "failed"); got != tc.failed {
					t.Errorf("failed %d, want %d", got, tc.failed)
				}
				evs := e.Events("default")
				for _, want := range tc.events {
					if !slices.Contains(evs, want) {
						t.Errorf("events\n%s\nwant\n%s", strings.Join(evs, "\n"), want)
					}
				}
				created := 0
				for _, ev := range e.List(kobj.EventGVK, "default") {
					if ev["reason"] == "SuccessfulCreate" {
						created += int(kobj.IntOr(ev, 1, "count"))
					}
				}
				if created != tc.podsCreated {
					t.Errorf("%d pods created, want %d", created, tc.podsCreated)
				}
				if f := finalized(e); len(f) != 0 {
					t.Errorf("pods %v keep the tracking finalizer", f)
				}
			})
		})
	}
}

// TestFinalizerSweep: the tracking finalizer goes from a pod whose Job is
// gone, and from an orphan no Job may adopt, and stays on a running Job's
// pod.
func TestFinalizerSweep(t *testing.T) {
	each(t, func(t *testing.T, e *ctrltest.Env, sync func()) {
		pod := func(name string, labels map[string]any) {
			e.Create(map[string]any{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": name, "namespace": "default", "labels": labels,
					"finalizers": []any{job.TrackingFinalizer}},
				"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}}})
		}
		pod("stray", map[string]any{"app": "none"})
		sync()
		if f := finalized(e); len(f) != 0 {
			t.Errorf("without Jobs: pods %v keep the finalizer", f)
		}

		e.Create(map[string]any{"apiVersion": "batch/v1", "kind": "Job",
			"metadata": map[string]any{"name": "j", "namespace": "default"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}})
		sync()
		running := finalized(e)
		if len(running) != 1 {
			t.Fatalf("a running Job's pods with the finalizer: %v, want one", running)
		}
		pod("late", map[string]any{"app": "none"})
		sync()
		if f := finalized(e); !slices.Equal(f, running) {
			t.Errorf("pods with the finalizer %v, want the Job's %v alone", f, running)
		}
		// The Job deleted without its pods (batch/v1 Jobs orphan them by
		// default): their finalizer goes.
		e.Delete(kobj.JobGVK, "default", "j")
		sync()
		if f := finalized(e); len(f) != 0 {
			t.Errorf("after the Job went: pods %v keep the finalizer", f)
		}
	})
}
