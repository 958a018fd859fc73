package disruption_test

import (
	"testing"
	"time"

	"github.com/konverge/konverge/controller/disruption"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// readyPod creates a bare pod bound to a node, Running and Ready.
func readyPod(e *ctrltest.Env, name string) {
	e.TB.Helper()
	p := e.Create(map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"nodeName": "node-a", "containers": []any{map[string]any{"name": "c", "image": "nginx"}}}})
	p["status"] = map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	e.UpdateStatus(p)
}

func status(e *ctrltest.Env) map[string]any {
	return kobj.Map(e.Get(disruption.PDBGVK, "default", "web-pdb"), "status")
}

// TestDisruptedPods: a pod in status.disruptedPods does not count as
// healthy until DeletionTimeout has passed (the controller asks to come
// back then), nor once it is being deleted; then the entry goes.
func TestDisruptedPods(t *testing.T) {
	e := ctrltest.New(t)
	readyPod(e, "a")
	readyPod(e, "b")
	e.Create(map[string]any{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
		"metadata": map[string]any{"name": "web-pdb", "namespace": "default"},
		"spec":     map[string]any{"minAvailable": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}})
	ctl := disruption.Controller{}
	e.Sync(ctl)
	st := status(e)
	if st["currentHealthy"] != int64(2) || st["disruptionsAllowed"] != int64(1) || st["expectedPods"] != int64(2) {
		t.Fatalf("status: %v", st)
	}
	// An eviction that the pod's deletion has not followed yet.
	evictedAt := e.Now()
	pdb := e.Get(disruption.PDBGVK, "default", "web-pdb")
	kobj.Map(pdb, "status")["disruptedPods"] = map[string]any{"b": kobj.FormatTime(evictedAt)}
	kobj.Map(pdb, "status")["disruptionsAllowed"] = int64(0)
	e.UpdateStatus(pdb)
	res := e.Sync(ctl)
	st = status(e)
	if st["currentHealthy"] != int64(1) || st["disruptionsAllowed"] != int64(0) || kobj.Map(st, "disruptedPods")["b"] == nil {
		t.Fatalf("status with b disrupted: %v", st)
	}
	if want := evictedAt.Add(disruption.DeletionTimeout + time.Second); !res.RequeueAt.Equal(want) {
		t.Fatalf("RequeueAt = %v, want %v", res.RequeueAt, want)
	}
	if e.Sync(ctl).Changed {
		t.Fatal("a second sync changed something")
	}
	e.Advance(disruption.DeletionTimeout + time.Second)
	e.Sync(ctl)
	st = status(e)
	if st["currentHealthy"] != int64(2) || st["disruptedPods"] != nil {
		t.Fatalf("status after the timeout: %v", st)
	}
	// An eviction through the API: the pod is being deleted at once.
	if err := e.Store.Evict(e.Ctx, "default", "a"); err != nil {
		t.Fatal(err)
	}
	if st = status(e); kobj.Map(st, "disruptedPods")["a"] == nil {
		t.Fatalf("the eviction did not record a: %v", st)
	}
	e.Sync(ctl)
	st = status(e)
	if st["currentHealthy"] != int64(1) || st["disruptedPods"] != nil || st["disruptionsAllowed"] != int64(0) {
		t.Fatalf("status after evicting a: %v", st)
	}
	c := kobj.Condition(e.Get(disruption.PDBGVK, "default", "web-pdb"), "DisruptionAllowed")
	if c["status"] != "False" || c["reason"] != "InsufficientPods" {
		t.Fatalf("condition: %v", c)
	}
}
