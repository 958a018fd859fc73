package replicaset_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/replicaset"
)

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

func open(t *testing.T) (*local.Store, *clock) {
	t.Helper()
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, clk
}

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

func syncUntilSettled(t *testing.T, c cluster.Interface, clk *clock) {
	t.Helper()
	for i := 0; i < 20; i++ {
		r, err := replicaset.Controller{}.Sync(context.Background(), c, clk.t)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Changed {
			return
		}
	}
	t.Fatal("replicaset controller did not settle")
}

func pods(t *testing.T, c cluster.Interface) []map[string]any {
	t.Helper()
	l, err := c.List(context.Background(), kobj.PodGVK, cluster.InNamespace("default"))
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func makeReady(t *testing.T, c cluster.Interface, pod map[string]any, at time.Time) {
	t.Helper()
	p := kobj.Copy(pod)
	p["status"] = map[string]any{
		"phase": "Running",
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "lastTransitionTime": kobj.FormatTime(at),
		}},
	}
	if _, err := c.UpdateStatus(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, c cluster.Interface, name string) map[string]any {
	t.Helper()
	o, err := c.Get(context.Background(), kobj.ReplicaSetGVK, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestCreateScaleAndStatus(t *testing.T) {
	ctx := context.Background()
	s, clk := open(t)
	if _, err := s.Create(ctx, newRS("web", 3)); err != nil {
		t.Fatal(err)
	}
	syncUntilSettled(t, s, clk)
	ps := pods(t, s)
	if len(ps) != 3 {
		t.Fatalf("got %d pods, want 3", len(ps))
	}
	rs := get(t, s, "web")
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
	evs, err := s.List(ctx, kobj.EventGVK, cluster.InNamespace("default"))
	if err != nil {
		t.Fatal(err)
	}
	created := 0
	for _, e := range evs.Items {
		if e["reason"] == "SuccessfulCreate" && strings.HasPrefix(kobj.Str(e, "message"), "Created pod: web-") &&
			kobj.Str(e, "source", "component") == "replicaset-controller" {
			created++
		}
	}
	if created != 3 {
		t.Errorf("%d SuccessfulCreate events, want 3", created)
	}

	// Ready pods, minReadySeconds: available only after it, with a requeue.
	rs = get(t, s, "web")
	rs["spec"].(map[string]any)["minReadySeconds"] = int64(10)
	if _, err := s.Update(ctx, rs); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods(t, s) {
		makeReady(t, s, p, clk.t)
	}
	r, err := replicaset.Controller{}.Sync(ctx, s, clk.t)
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.t.Add(10 * time.Second); !r.RequeueAt.Equal(want) {
		t.Errorf("RequeueAt %v, want %v", r.RequeueAt, want)
	}
	rs = get(t, s, "web")
	if n, _ := kobj.Int(rs, "status", "readyReplicas"); n != 3 {
		t.Errorf("readyReplicas %d", n)
	}
	if n, _ := kobj.Int(rs, "status", "availableReplicas"); n != 0 {
		t.Errorf("availableReplicas %d before minReadySeconds", n)
	}
	if r, _ := (replicaset.Controller{}).Sync(ctx, s, clk.t); r.Changed {
		t.Error("a second sync with nothing new changed something")
	}
	clk.t = clk.t.Add(10 * time.Second)
	syncUntilSettled(t, s, clk)
	if n, _ := kobj.Int(get(t, s, "web"), "status", "availableReplicas"); n != 3 {
		t.Errorf("availableReplicas %d after minReadySeconds", n)
	}

	// Scale down deletes the pod that is not ready first.
	ps = pods(t, s)
	notReady := kobj.Copy(ps[1])
	notReady["status"] = map[string]any{"phase": "Running"}
	if _, err := s.UpdateStatus(ctx, notReady); err != nil {
		t.Fatal(err)
	}
	rs = get(t, s, "web")
	rs["spec"].(map[string]any)["replicas"] = int64(2)
	if _, err := s.Update(ctx, rs); err != nil {
		t.Fatal(err)
	}
	syncUntilSettled(t, s, clk)
	for _, p := range pods(t, s) {
		if kobj.Name(p) == kobj.Name(ps[1]) {
			t.Errorf("the pod that was not ready survived the scale-down")
		}
	}
	if len(pods(t, s)) != 2 {
		t.Errorf("%d pods after scale to 2", len(pods(t, s)))
	}
}

func TestAdoptAndRelease(t *testing.T) {
	ctx := context.Background()
	s, clk := open(t)
	orphan := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "stray", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
	}
	if _, err := s.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, newRS("web", 2)); err != nil {
		t.Fatal(err)
	}
	syncUntilSettled(t, s, clk)
	ps := pods(t, s)
	if len(ps) != 2 {
		t.Fatalf("%d pods, want 2 (the stray one adopted)", len(ps))
	}
	stray, err := s.Get(ctx, kobj.PodGVK, "default", "stray")
	if err != nil {
		t.Fatal(err)
	}
	if kobj.ControllerUID(stray) != kobj.UID(get(t, s, "web")) {
		t.Fatalf("stray pod not adopted: %v", stray["metadata"])
	}
	// Relabel: released, and replaced.
	stray["metadata"].(map[string]any)["labels"] = map[string]any{"app": "other"}
	if _, err := s.Update(ctx, stray); err != nil {
		t.Fatal(err)
	}
	syncUntilSettled(t, s, clk)
	stray, _ = s.Get(ctx, kobj.PodGVK, "default", "stray")
	if kobj.ControllerRef(stray) != nil {
		t.Errorf("relabeled pod still owned")
	}
	if len(pods(t, s)) != 3 {
		t.Errorf("%d pods, want 3", len(pods(t, s)))
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
