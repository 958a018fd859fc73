package local

import (
	"context"
	"fmt"
	"testing"

	"github.com/konverge/konverge/cluster"
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
