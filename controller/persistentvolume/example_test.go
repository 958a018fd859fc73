package persistentvolume_test

import (
	"context"
	"fmt"
	"os"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller/persistentvolume"
)

// A claim binds to the volume that fits it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "binder")
	defer os.RemoveAll(dir)
	clk := clock.New(clock.Manual, clock.Epoch)
	s, err := local.Open(dir, local.Options{Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, obj := range []map[string]any{
		{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": map[string]any{"name": "disk"},
			"spec": map[string]any{"capacity": map[string]any{"storage": "5Gi"}, "accessModes": []any{"ReadWriteOnce"},
				"hostPath": map[string]any{"path": "/data"}}},
		{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "data", "namespace": "default"},
			"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"}, "storageClassName": "",
				"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}},
	} {
		if _, err := s.Create(ctx, obj); err != nil {
			fmt.Println(err)
			return
		}
	}
	for {
		res, err := persistentvolume.Controller{}.Sync(ctx, s, clk.Now())
		if err != nil {
			fmt.Println(err)
			return
		}
		if !res.Changed {
			break
		}
	}
	pvc, _ := s.Get(ctx, pvcGVK, "default", "data")
	fmt.Println(str(pvc, "status", "phase"), str(pvc, "spec", "volumeName"), str(pvc, "status", "capacity", "storage"))
	// Output: Bound disk 5Gi
}
