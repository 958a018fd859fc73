package diff_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/diff"
	"github.com/konverge/konverge/manifest"
)

// benchObjects are n small objects, half ConfigMaps and half Deployments;
// gen changes one field of every object. (The same as apply's benchmark.)
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

// BenchmarkDiff10k diffs 10,000 objects against the embedded cluster
// holding them: unchanged, and with one field changed in every object,
// the unified diff rendered.
func BenchmarkDiff10k(b *testing.B) {
	const n = 10000
	s, err := local.Open(b.TempDir(), local.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := apply.New(s, apply.Options{}).Apply(context.Background(), benchObjects(n, 0)); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		gen  int
		want int
	}{{"noop", 0, 0}, {"changed", 1, 1}} {
		b.Run(bc.name, func(b *testing.B) {
			objs := benchObjects(n, bc.gen)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				r, err := diff.New(s, diff.Options{}).Run(context.Background(), objs)
				if code := diff.ExitCode(r, err); code != bc.want {
					b.Fatalf("exit %d: %v", code, err)
				}
				if err := r.WriteUnified(io.Discard, diff.RenderOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "objects/s")
		})
	}
}
