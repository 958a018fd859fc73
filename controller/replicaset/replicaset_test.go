package replicaset_test

import (
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/replicaset"
)

func newRS(name string, replicas int64) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "ReplicaSet",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
	}
}

func settle(e *ctrltest.Env) {
	e.TB.Helper()
	e.Settle([]controller.Controller{replicaset.Controller{}})
}

func pods(e *ctrltest.Env) []map[string]any { return e.List(kobj.PodGVK, "default") }

func makeReady(e *ctrltest.Env, pod map[string]any) {
	e.TB.Helper()
	p := kobj.Copy(pod)
	p["status"] = map[string]any{
		"phase": "Running",
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "lastTransitionTime": kobj.FormatTime(e.Now()),
		}},
	}
	e.UpdateStatus(p)
}

func get(e *ctrltest.Env, name string) map[string]any {
	return e.Get(kobj.ReplicaSetGVK, "default", name)
}

func TestCreateScaleAndStatus(t *testing.T) {
	e := ctrltest.New(t)
	e.Clock.Set(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	e.Create(newRS("web", 3))
	settle(e)
	ps := pods(e)
	if len(ps) != 3 {
		t.Fatalf("got %d pods, want 3", len(ps))
	}
	rs := get(e, "web")
	for _, p := range ps {
		if !strings.HasPrefix(kobj.Name(p), "web-") || len(kobj.Name(p)) != len("web-")+5 {
			t.Errorf("pod name %q", kobj.Name(p))
		}
		ref := kobj.ControllerRef(p)
		if ref == nil || ref["uid"] != kobj.UID(rs) || ref["blockOwnerDeletion"] != true || ref["kind"] != "ReplicaSet" {
			t.Errorf("pod %s ownerReferences %v", kobj.Name(p), ref)
		}
		if kobj.Labels(p)["app"] != "web" {
			t.Errorf("pod %s labels %v", kobj.Name(p), kobj.Labels(p))
		}
	}
	if n, _ := kobj.Int(rs, "status", "replicas"); n != 3 {
		t.Errorf("status.replicas %d", n)
	}
	if n, _ := kobj.Int(rs, "status", "readyReplicas"); n != 0 {
		t.Errorf("status.readyReplicas %d", n)
	}
	// Deterministic names: the same state gives the same names.
	want := map[string]bool{}
	for n := 0; n < 3; n++ {
		want[replicaset.PodName("web", n)] = true
	}
	for _, p := range ps {
		if !want[kobj.Name(p)] {
			t.Errorf("pod %s not among the first candidate names", kobj.Name(p))
		}
	}
	created := 0
	for _, ev := range e.List(kobj.EventGVK, "default") {
		if ev["reason"] == "SuccessfulCreate" && strings.HasPrefix(kobj.Str(ev, "message"), "Created pod: web-") &&
			kobj.Str(ev, "source", "component") == "replicaset-controller" {
			created++
		}
	}
	if created != 3 {
		t.Errorf("%d SuccessfulCreate events, want 3", created)
	}

	// Ready pods, minReadySeconds: available only after it, with a requeue.
	rs = get(e, "web")
	rs["spec"].(map[string]any)["minReadySeconds"] = int64(10)
	e.Update(rs)
	for _, p := range pods(e) {
		makeReady(e, p)
	}
	r := e.Sync(replicaset.Controller{})
	if want := e.Now().Add(10 * time.Second); !r.RequeueAt.Equal(want) {
		t.Errorf("RequeueAt %v, want %v", r.RequeueAt, want)
	}
	rs = get(e, "web")
	if n, _ := kobj.Int(rs, "status", "readyReplicas"); n != 3 {
		t.Errorf("readyReplicas %d", n)
	}
	if n, _ := kobj.Int(rs, "status", "availableReplicas"); n != 0 {
		t.Errorf("availableReplicas %d before minReadySeconds", n)
	}
	if r := e.Sync(replicaset.Controller{}); r.Changed {
		t.Error("a second sync with nothing new changed something")
	}
	e.Advance(10 * time.Second)
	settle(e)
	if n, _ := kobj.Int(get(e, "web"), "status", "availableReplicas"); n != 3 {
		t.Errorf("availableReplicas %d after minReadySeconds", n)
	}

	// Scale down deletes the pod that is not ready first.
	ps = pods(e)
	notReady := kobj.Copy(ps[1])
	notReady["status"] = map[string]any{"phase": "Running"}
	e.UpdateStatus(notReady)
	rs = get(e, "web")
	rs["spec"].(map[string]any)["replicas"] = int64(2)
	e.Update(rs)
	settle(e)
	for _, p := range pods(e) {
		if kobj.Name(p) == kobj.Name(ps[1]) {
			t.Errorf("the pod that was not ready survived the scale-down")
		}
	}
	if len(pods(e)) != 2 {
		t.Errorf("%d pods after scale to 2", len(pods(e)))
	}
}

func TestAdoptAndRelease(t *testing.T) {
	e := ctrltest.New(t)
	orphan := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "stray", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
	}
	e.Create(orphan)
	e.Create(newRS("web", 2))
	settle(e)
	ps := pods(e)
	if len(ps) != 2 {
		t.Fatalf("%d pods, want 2 (the stray one adopted)", len(ps))
	}
	stray := e.Get(kobj.PodGVK, "default", "stray")
	if kobj.ControllerUID(stray) != kobj.UID(get(e, "web")) {
		t.Fatalf("stray pod not adopted: %v", stray["metadata"])
	}
	// Relabel: released, and replaced.
	stray["metadata"].(map[string]any)["labels"] = map[string]any{"app": "other"}
	e.Update(stray)
	settle(e)
	stray = e.Get(kobj.PodGVK, "default", "stray")
	if kobj.ControllerRef(stray) != nil {
		t.Errorf("relabeled pod still owned")
	}
	if len(pods(e)) != 3 {
		t.Errorf("%d pods, want 3", len(pods(e)))
	}
}

func TestSortForDeletion(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(name, node, phase string, ready bool, readyAgo time.Duration, restarts int64, createdAgo time.Duration) map[string]any {
		p := map[string]any{
			"metadata": map[string]any{"name": name, "creationTimestamp": kobj.FormatTime(now.Add(-createdAgo))},
			"spec":     map[string]any{"nodeName": node},
			"status": map[string]any{"phase": phase,
				"containerStatuses": []any{map[string]any{"restartCount": restarts}}},
		}
		if ready {
			p["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Ready", "status": "True",
				"lastTransitionTime": kobj.FormatTime(now.Add(-readyAgo))}}
		}
		return p
	}
	ps := []map[string]any{
		pod("old-ready", "n", "Running", true, time.Hour, 0, 2*time.Hour),
		pod("new-ready", "n", "Running", true, time.Minute, 0, 2*time.Hour),
		pod("restarty", "n", "Running", true, time.Hour, 5, 2*time.Hour),
		pod("notready", "n", "Running", false, 0, 0, time.Hour),
		pod("pending", "n", "Pending", false, 0, 0, time.Hour),
		pod("unknown", "n", "Unknown", false, 0, 0, time.Hour),
		pod("unassigned", "", "Pending", false, 0, 0, time.Hour),
		pod("older-notready", "n", "Running", false, 0, 0, 3*time.Hour),
	}
	replicaset.SortForDeletion(ps, now)
	var got []string
	for _, p := range ps {
		got = append(got, kobj.Name(p))
	}
	want := "unassigned pending unknown notready older-notready new-ready restarty old-ready"
	if strings.Join(got, " ") != want {
		t.Errorf("order %v\nwant  %s", got, want)
	}
}
