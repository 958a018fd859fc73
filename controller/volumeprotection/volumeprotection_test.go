package volumeprotection_test

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/volumeprotection"
	"github.com/konverge/konverge/schema"
)

var (
	pvcGVK = schema.GVK{Version: "v1", Kind: "PersistentVolumeClaim"}
	podGVK = schema.GVK{Version: "v1", Kind: "Pod"}
)

// A claim being deleted stays while a scheduled pod mounts it, and goes
// once the pod is gone.
func TestClaimInUseStays(t *testing.T) {
	ctx := context.Background()
	clk := clock.New(clock.Manual, clock.Epoch)
	s := ctrltest.Open(t, clk)
	pvc := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": "data", "namespace": "default"},
		"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"},
			"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}
	created, err := s.Create(ctx, pvc)
	if err != nil {
		t.Fatal(err)
	}
	if fs, _ := created["metadata"].(map[string]any)["finalizers"].([]any); len(fs) != 1 || fs[0] != volumeprotection.PVCFinalizer {
		t.Fatalf("the API server's finalizer is missing: %v", fs)
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "default"},
		"spec": map[string]any{"nodeName": "konverge-node",
			"containers": []any{map[string]any{"name": "c", "image": "nginx"}},
			"volumes":    []any{map[string]any{"name": "d", "persistentVolumeClaim": map[string]any{"claimName": "data"}}}}}
	if _, err := s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, pvcGVK, "default", "data"); err != nil {
		t.Fatal(err)
	}
	sync := func() {
		t.Helper()
		if _, err := (volumeprotection.Controller{}).Sync(ctx, s, clk.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	sync()
	if _, err := s.Get(ctx, pvcGVK, "default", "data"); err != nil {
		t.Fatalf("claim in use went: %v", err)
	}
	if err := s.Delete(ctx, podGVK, "default", "p", cluster.GracePeriod(0)); err != nil {
		t.Fatal(err)
	}
	sync()
	if _, err := s.Get(ctx, pvcGVK, "default", "data"); !cluster.IsNotFound(err) {
		t.Fatalf("unused claim still there: %v", err)
	}
}
