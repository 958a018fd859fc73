package local

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// TestCreatedManagedMatchesLibrary creates objects of a few shapes with
// values that differ (names, labels' values, images, counts) and some
// shapes that differ only in a list's elements or a map's keys: the
// managedFields that trackUpdate records through the shape cache are
// those of k8s.io/apimachinery's FieldManager for every one, and most
// come from the cache.
func TestCreatedManagedMatchesLibrary(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	cmGVK := schema.GVK{Version: "v1", Kind: "ConfigMap"}
	r := rand.New(rand.NewSource(7))
	hits0 := createdManaged.Hits()
	const n = 300
	for i := range n {
		var obj map[string]any
		gvk := deployGVK
		if i%3 == 0 {
			gvk = cmGVK
			data := map[string]any{"version": fmt.Sprint(r.Intn(100))}
			if r.Intn(3) == 0 {
				data[fmt.Sprintf("k%d", r.Intn(3))] = "v"
			}
			obj = map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "default"}, "data": data}
		} else {
			obj = deploymentBase()
			metadata(obj)["name"] = fmt.Sprintf("web-%d", i)
			if r.Intn(2) == 0 {
				obj = mutate(r, obj)
			}
		}
		res, err := s.Mapper().ResourceFor(gvk)
		if err != nil {
			t.Fatal(err)
		}
		req := writeRequest{manager: []string{"kubectl-client-side-apply", "gitops"}[r.Intn(2)]}
		var cached, lib map[string]any
		err = s.update(ctx, func(tx *txn) error {
			tx.request = req
			cached = value.DeepCopyObject(obj)
			if err := tx.trackUpdate(res, nil, cached); err != nil {
				return err
			}
			tx.request = req
			lib = value.DeepCopyObject(obj)
			return tx.trackLibrary(res, nil, lib)
		})
		if err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		a, _ := json.Marshal(metadata(cached)["managedFields"])
		b, _ := json.Marshal(metadata(lib)["managedFields"])
		if string(a) != string(b) {
			t.Fatalf("object %d: cached\n%s\nlibrary\n%s", i, a, b)
		}
	}
	if hits := createdManaged.Hits() - hits0; hits < n/2 {
		t.Errorf("the cache answered %d of %d creates", hits, n)
	}
}
