package gc_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller/gc"
	"github.com/konverge/konverge/controller/internal/kobj"
)

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

func pod(name string, refs ...any) map[string]any {
	md := map[string]any{"name": name, "namespace": "default"}
	if len(refs) > 0 {
		md["ownerReferences"] = refs
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": md,
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
	}
}

func ref(kind, name, uid string) map[string]any {
	return map[string]any{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid, "controller": true}
}

func TestOrphansCollected(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.Create(ctx, map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": "live", "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "x"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []map[string]any{
		pod("orphan", ref("ReplicaSet", "gone", "00000000-dead")),
		pod("owned", ref("ReplicaSet", "live", kobj.UID(rs))),
		pod("half", ref("ReplicaSet", "live", kobj.UID(rs)), map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "gone", "uid": "00000000-beef"}),
		pod("free"),
	} {
		if _, err := s.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	r, err := gc.Controller{}.Sync(ctx, s, clk.t)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed {
		t.Error("Changed false after collecting")
	}
	if _, err := s.Get(ctx, kobj.PodGVK, "default", "orphan"); !cluster.IsNotFound(err) {
		t.Errorf("orphan pod not collected: %v", err)
	}
	for _, n := range []string{"owned", "half", "free"} {
		if _, err := s.Get(ctx, kobj.PodGVK, "default", n); err != nil {
			t.Errorf("pod %s: %v", n, err)
		}
	}
	half, _ := s.Get(ctx, kobj.PodGVK, "default", "half")
	if refs := kobj.Slice(half, "metadata", "ownerReferences"); len(refs) != 1 {
		t.Errorf("half pod keeps %d ownerReferences, want 1", len(refs))
	}
	if r, err := (gc.Controller{}).Sync(ctx, s, clk.t); err != nil || r.Changed {
		t.Errorf("second sync: changed=%v err=%v", r.Changed, err)
	}
}
