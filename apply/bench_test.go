package apply_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/manifest"
)

// benchObjects are n small objects, half ConfigMaps and half Deployments;
// gen changes one field of every object (a ConfigMap's data, a
// Deployment's image).
func benchObjects(n, gen int) []manifest.Object {
	objs := make([]map[string]any, n)
	for i := range n {
		name := fmt.Sprintf("obj-%05d", i)
		labels := map[string]any{"app": "bench", "shard": fmt.Sprint(i % 16)}
		if i%2 == 0 {
			objs[i] = map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "labels": labels},
				"data":     map[string]any{"key": fmt.Sprintf("value-%d-%d", i, gen), "other": "static"},
			}
			continue
		}
		objs[i] = map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "labels": labels},
			"spec": map[string]any{
				"replicas": int64(2),
				"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": name}},
					"spec": map[string]any{"containers": []any{map[string]any{
						"name":  "web",
						"image": fmt.Sprintf("nginx:1.%d", gen),
						"ports": []any{map[string]any{"containerPort": int64(80)}},
						"env":   []any{map[string]any{"name": "MODE", "value": "bench"}},
					}}},
				},
			},
		}
	}
	return apply.Objects(objs...)
}

const benchN = 10000

func openBenchStore(b *testing.B) *local.Store {
	b.Helper()
	s, err := local.Open(b.TempDir(), local.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchApply(b *testing.B, s *local.Store, objs []manifest.Object, want apply.Action) {
	b.Helper()
	res, err := apply.New(s, apply.Options{}).Apply(context.Background(), objs)
	if err != nil {
		b.Fatal(err)
	}
	if len(res) != len(objs) || res[0].Action != want || res[len(res)-1].Action != want {
		b.Fatalf("%d results, first %s, want %s", len(res), res[0], want)
	}
}

func reportRate(b *testing.B, start time.Time, perOp int) {
	elapsed := time.Since(start)
	b.ReportMetric(float64(perOp*b.N)/elapsed.Seconds(), "objects/s")
}

// BenchmarkApply10k applies 10,000 objects into the embedded cluster: the
// first apply (all created), a no-op re-apply (all unchanged), and an apply
// that changes one field of every object (all configured).
func BenchmarkApply10k(b *testing.B) {
	b.Run("first", func(b *testing.B) {
		objs := benchObjects(benchN, 0)
		b.ReportAllocs()
		var elapsed time.Duration
		for range b.N {
			s := openBenchStore(b)
			start := time.Now()
			benchApply(b, s, objs, apply.Created)
			elapsed += time.Since(start)
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(benchN*b.N)/elapsed.Seconds(), "objects/s")
	})
	b.Run("noop", func(b *testing.B) {
		s := openBenchStore(b)
		defer s.Close()
		objs := benchObjects(benchN, 0)
		benchApply(b, s, objs, apply.Created)
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			benchApply(b, s, objs, apply.Unchanged)
		}
		reportRate(b, start, benchN)
	})
	b.Run("changed", func(b *testing.B) {
		s := openBenchStore(b)
		defer s.Close()
		inputs := [][]manifest.Object{benchObjects(benchN, 1), benchObjects(benchN, 2)}
		benchApply(b, s, benchObjects(benchN, 0), apply.Created)
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			benchApply(b, s, inputs[i%2], apply.Configured)
		}
		reportRate(b, start, benchN)
	})
}
