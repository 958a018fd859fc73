package local

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/fieldmgr"
	"github.com/konverge/konverge/value"
)

// benchObject is a small ConfigMap, labelled so that a tenth of them
// match "tier=gold".
func benchObject(i int) cluster.Object {
	tier := "silver"
	if i%10 == 0 {
		tier = "gold"
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": fmt.Sprintf("cm-%05d", i), "namespace": "default",
			"labels": map[string]any{"app": "bench", "tier": tier}},
		"data": map[string]any{"key": fmt.Sprintf("value-%d", i)}}
}

func createObjects(b *testing.B, s *Store, n int) {
	b.Helper()
	err := s.Batch(context.Background(), func(c cluster.Interface) error {
		for i := range n {
			if _, err := c.Create(context.Background(), benchObject(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCreateBatch10k creates 10,000 objects in one Batch: one
// transaction, one fsync.
func BenchmarkCreateBatch10k(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s, err := Open(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		createObjects(b, s, 10000)
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkCreateDeployments1k creates 1,000 Deployments in one Batch, the
// defaulting of built-in kinds included.
func BenchmarkCreateDeployments1k(b *testing.B) {
	createDeployments1k(b)
}

// BenchmarkManagedFields compares, in the same run, the store's record of
// managedFields (trackFast) with k8s.io/apimachinery's FieldManager
// (trackLibrary) on whole writes: 1,000 Deployments created in one Batch,
// and one Update of a ConfigMap.
func BenchmarkManagedFields(b *testing.B) {
	for _, m := range []struct {
		name    string
		library bool
		byShape bool
	}{{"library", true, false}, {"fast", false, true}, {"fast-unremembered", false, false}} {
		b.Run("create-deployments-1k/"+m.name, func(b *testing.B) {
			defer func(v, w bool) { trackWithLibrary, trackCreatesByShape = v, w }(trackWithLibrary, trackCreatesByShape)
			trackWithLibrary, trackCreatesByShape = m.library, m.byShape
			createDeployments1k(b)
		})
		if m.name == "fast-unremembered" {
			continue // the same updates as "fast"
		}
		b.Run("update/"+m.name, func(b *testing.B) {
			defer func(v bool) { trackWithLibrary = v }(trackWithLibrary)
			trackWithLibrary = m.library
			BenchmarkUpdate(b)
		})
	}
}

func createDeployments1k(b *testing.B) {
	b.ReportAllocs()
	manifest := obj(b, deploymentWeb)
	for b.Loop() {
		b.StopTimer()
		s, err := Open(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		err = s.Batch(context.Background(), func(c cluster.Interface) error {
			for i := range 1000 {
				d := value.DeepCopyObject(manifest)
				metadata(d)["name"] = fmt.Sprintf("web-%04d", i)
				if _, err := c.Create(context.Background(), d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

func BenchmarkGet(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	createObjects(b, s, 10000)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Get(ctx, gvkConfigMap, "default", fmt.Sprintf("cm-%05d", i%10000)); err != nil {
			b.Fatal(err)
		}
		i += 7919
	}
}

// BenchmarkListSelector lists 10,000 objects with a label selector that
// matches 1,000 of them.
func BenchmarkListSelector(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	createObjects(b, s, 10000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		list, err := s.List(ctx, gvkConfigMap, cluster.MatchingLabels("tier=gold"))
		if err != nil {
			b.Fatal(err)
		}
		if len(list.Items) != 1000 {
			b.Fatalf("%d items", len(list.Items))
		}
	}
}

// BenchmarkUpdate is one Update, its own transaction (and fsync).
func BenchmarkUpdate(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	createObjects(b, s, 100)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		o := benchObject(i % 100)
		o["data"] = map[string]any{"key": fmt.Sprint(i)}
		if _, err := s.Update(ctx, o); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkTrackUpdate times the record of managedFields alone, the
// store's (trackFast) and k8s.io/apimachinery's FieldManager
// (trackLibrary), one after the other in every iteration so that both
// see the same load: for the create of a Deployment, and for an Update
// that changes two fields of one already written by three managers. It
// reports each one's ns/op and their ratio.
func BenchmarkTrackUpdate(b *testing.B) {
	s, _ := openStore(b)
	ctx := context.Background()
	created, err := s.Create(ctx, obj(b, deploymentWeb), cluster.FieldOwner("kubectl-create"))
	if err != nil {
		b.Fatal(err)
	}
	live := created
	for i, m := range []string{"kubectl-edit", "kube-controller-manager"} {
		o := value.DeepCopyObject(live)
		setField(o, []string{"metadata", "labels", m}, fmt.Sprint(i))
		if live, err = s.Update(ctx, o, cluster.FieldOwner(m)); err != nil {
			b.Fatal(err)
		}
	}
	res, err := s.Mapper().ResourceFor(deployGVK)
	if err != nil {
		b.Fatal(err)
	}
	newObj := value.DeepCopyObject(created)
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		delete(metadata(newObj), k)
	}
	changed := value.DeepCopyObject(live)
	setField(changed, []string{"spec", "replicas"}, int64(7))
	setField(changed, []string{"metadata", "labels", "tier"}, "gold")
	for _, c := range []struct {
		name      string
		live, obj map[string]any
	}{{"create", nil, newObj}, {"update", live, changed}} {
		b.Run(c.name, func(b *testing.B) {
			var fast, lib time.Duration
			err := s.update(ctx, func(tx *txn) error {
				tx.request = writeRequest{manager: "kubectl-edit"}
				for b.Loop() {
					for _, library := range []bool{true, false} {
						b.StopTimer()
						var l map[string]any
						if c.live != nil {
							l = value.DeepCopyObject(c.live)
						}
						o := value.DeepCopyObject(c.obj)
						b.StartTimer()
						start := time.Now()
						var err error
						if library {
							err = tx.trackLibrary(res, l, o)
							lib += time.Since(start)
						} else {
							err = tx.trackUpdate(res, l, o)
							fast += time.Since(start)
						}
						if err != nil {
							return err
						}
						if len(fieldmgr.ManagedEntries(o)) == 0 {
							return fmt.Errorf("no managedFields")
						}
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(lib.Nanoseconds())/float64(b.N), "library-ns/op")
			b.ReportMetric(float64(fast.Nanoseconds())/float64(b.N), "fast-ns/op")
			b.ReportMetric(float64(lib)/float64(fast), "library/fast")
		})
	}
}

// BenchmarkPatchDeployments1k is the store's side of an apply that
// changes every object: 1,000 Deployments, each read and then patched
// (its image and an annotation, as a client-side apply of a new
// manifest), in one Batch; with the update cache of managedFields
// (remembered) and without it (unremembered), in the same run.
func BenchmarkPatchDeployments1k(b *testing.B) {
	for _, m := range []struct {
		name     string
		remember bool
	}{{"remembered", true}, {"unremembered", false}} {
		b.Run(m.name, func(b *testing.B) {
			defer func(v bool) { trackUpdatesByShape = v }(trackUpdatesByShape)
			trackUpdatesByShape = m.remember
			s, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			manifest := obj(b, deploymentWeb)
			err = s.Batch(ctx, func(c cluster.Interface) error {
				for i := range 1000 {
					d := value.DeepCopyObject(manifest)
					metadata(d)["name"] = fmt.Sprintf("web-%04d", i)
					if _, err := c.Create(ctx, d, cluster.FieldOwner("kubectl-client-side-apply")); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			round := 0
			for b.Loop() {
				round++
				patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"revision":"%d"}},"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.%d"}]}}}}`, round, round))
				err := s.Batch(ctx, func(c cluster.Interface) error {
					for i := range 1000 {
						name := fmt.Sprintf("web-%04d", i)
						if _, err := c.Get(ctx, deployGVK, "default", name); err != nil {
							return err
						}
						if _, err := c.Patch(ctx, deployGVK, "default", name, cluster.StrategicMergePatchType, patch,
							cluster.FieldOwner("kubectl-client-side-apply")); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCopyForUpdate is the copy of a patch's result that txn.patch
// makes (copyForUpdate, which keeps the fieldsV1 trees) beside the deep
// copy it made before, of a stored Deployment with two managers' entries,
// in the same run.
func BenchmarkCopyForUpdate(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Create(ctx, obj(b, deploymentWeb), cluster.FieldOwner("kubectl-client-side-apply")); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Patch(ctx, deployGVK, "default", "web", cluster.MergePatchType, []byte(`{"status":{"replicas":1,"readyReplicas":1}}`),
		cluster.Subresource("status"), cluster.FieldOwner("kube-controller-manager")); err != nil {
		b.Fatal(err)
	}
	d, err := s.Get(ctx, deployGVK, "default", "web")
	if err != nil {
		b.Fatal(err)
	}
	if mf, _ := metadata(d)["managedFields"].([]any); len(mf) != 2 {
		b.Fatalf("managedFields %v, want two entries", mf)
	}
	b.Run("deep", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			value.DeepCopyObject(d)
		}
	})
	b.Run("forUpdate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copyForUpdate(d)
		}
	})
}
