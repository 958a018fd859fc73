package local_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/schema"
)

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func ExampleStore() {
	dir, err := os.MkdirTemp("", "konverge-state")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := local.Open(dir, local.Options{Clock: fixedClock{}})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()

	// Many writes, one transaction.
	err = s.Batch(ctx, func(c cluster.Interface) error {
		for _, name := range []string{"web", "db"} {
			cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"tier": name}},
				"data":     map[string]any{"color": "blue"}}
			if _, err := c.Create(ctx, cm); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	gvk := schema.GVK{Version: "v1", Kind: "ConfigMap"}
	cm, err := s.Patch(ctx, gvk, "default", "web", cluster.MergePatchType, []byte(`{"data":{"color":"green"}}`))
	if err != nil {
		log.Fatal(err)
	}
	md := cm["metadata"].(map[string]any)
	fmt.Println(md["name"], md["creationTimestamp"], cm["data"])

	list, err := s.List(ctx, gvk, cluster.InNamespace("default"), cluster.MatchingLabels("tier=db"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(list.Items), "selected")

	_, err = s.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web", "namespace": "default"}})
	fmt.Println(err, cluster.IsAlreadyExists(err))
	// Output:
	// web 2026-01-02T03:04:05Z map[color:green]
	// 1 selected
	// configmaps "web" already exists true
}

// A batch reads many objects in one call and is told the patches that
// follow, which it prepares while the caller goes on (what apply does on
// the embedded cluster, 1,024 objects at a time).
func ExampleStore_Batch_readAhead() {
	dir, err := os.MkdirTemp("", "konverge-state")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := local.Open(dir, local.Options{Clock: fixedClock{}})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	gvk := schema.GVK{Version: "v1", Kind: "ConfigMap"}

	err = s.Batch(ctx, func(c cluster.Interface) error {
		var keys []cluster.Key
		for _, name := range []string{"web", "db"} {
			cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": "default"},
				"data":     map[string]any{"color": "blue"}}
			if _, err := c.Create(ctx, cm); err != nil {
				return err
			}
			keys = append(keys, cluster.Key{GVK: gvk, Namespace: "default", Name: name})
		}
		keys = append(keys, cluster.Key{GVK: gvk, Namespace: "default", Name: "missing"})

		// Read the three, then wait for them.
		wait := c.(cluster.ManyGetter).GetMany(ctx, keys, cluster.WithoutManagedFields)
		objs, errs := wait()
		for i, obj := range objs {
			if errs[i] != nil {
				fmt.Println(keys[i].Name, cluster.IsNotFound(errs[i]))
				continue
			}
			_, hasManaged := obj["metadata"].(map[string]any)["managedFields"]
			fmt.Println(keys[i].Name, obj["data"], hasManaged)
		}

		// Tell the patch before sending it.
		patch := []byte(`{"data":{"color":"green"}}`)
		c.(cluster.Prefetcher).Prefetch(ctx, []cluster.Upcoming{{Key: keys[0], PatchType: cluster.MergePatchType, Patch: patch}})
		web, err := c.Patch(ctx, gvk, "default", "web", cluster.MergePatchType, patch)
		if err != nil {
			return err
		}
		fmt.Println(web["data"])
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// web map[color:blue] false
	// db map[color:blue] false
	// missing true
	// map[color:green]
}
