package apply_test

import (
	"context"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

// TestSnapshotVersions: one object held in two versions is found in the
// version asked for, in another when only that one is held, and listed
// once.
func TestSnapshotVersions(t *testing.T) {
	ctx := context.Background()
	hpa := func(version string) map[string]any {
		return map[string]any{"apiVersion": "autoscaling/" + version, "kind": "HorizontalPodAutoscaler",
			"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web"}}}
	}
	s := apply.NewSnapshot(hpa("v2"), hpa("v1"))
	v2 := schema.GVK{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}
	v1 := schema.GVK{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"}
	for _, gvk := range []schema.GVK{v1, v2} {
		got, err := s.Get(ctx, gvk, "shop", "web")
		if err != nil || got["apiVersion"] != gvk.APIVersion() {
			t.Fatalf("Get %s: %v %v", gvk, got["apiVersion"], err)
		}
		l, err := s.List(ctx, gvk, cluster.InNamespace("shop"), cluster.MatchingLabels("app=web"))
		if err != nil || len(l.Items) != 1 || l.Items[0]["apiVersion"] != gvk.APIVersion() {
			t.Fatalf("List %s: %v %v", gvk, l, err)
		}
	}
	only := apply.NewSnapshot(hpa("v1"))
	if got, err := only.Get(ctx, v2, "shop", "web"); err != nil || got["apiVersion"] != "autoscaling/v1" {
		t.Fatalf("Get v2 of a v1 object: %v %v", got, err)
	}
	if _, err := only.Get(ctx, v2, "other", "web"); !cluster.IsNotFound(err) {
		t.Fatalf("missing object: %v", err)
	}
	if l, _ := only.List(ctx, v2, cluster.MatchingLabels("app=db")); len(l.Items) != 0 {
		t.Fatalf("selector ignored: %v", l.Items)
	}
	s.Delete(v1, "shop", "web")
	if s.Len() != 0 {
		t.Fatalf("Len after Delete = %d", s.Len())
	}
}
