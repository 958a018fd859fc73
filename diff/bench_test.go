package diff_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
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
// the unified diff rendered, by Run's report (WriteUnified) and by
// RunUnified side by side. peak-live-MB is the largest heap the garbage
// collector found live during the iterations (what peak RSS follows).
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
	render := map[string]func(objs []manifest.Object) (int, error){
		"report": func(objs []manifest.Object) (int, error) {
			r, err := diff.New(s, diff.Options{}).Run(context.Background(), objs)
			if err != nil {
				return 0, err
			}
			return diff.ExitCode(r, nil), r.WriteUnified(io.Discard, diff.RenderOptions{})
		},
		"unified": func(objs []manifest.Object) (int, error) {
			u, err := diff.New(s, diff.Options{}).RunUnified(context.Background(), objs, diff.RenderOptions{})
			if err != nil {
				return 0, err
			}
			_, err = u.WriteTo(io.Discard)
			return u.ExitCode(), err
		},
	}
	for _, bc := range []struct {
		name string
		gen  int
		want int
	}{{"noop", 0, 0}, {"changed", 1, 1}} {
		for _, how := range []string{"report", "unified"} {
			b.Run(bc.name+"/"+how, func(b *testing.B) {
				objs := benchObjects(n, bc.gen)
				runtime.GC()
				peak := watchLiveHeap()
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				for range b.N {
					if code, err := render[how](objs); code != bc.want || err != nil {
						b.Fatalf("exit %d: %v", code, err)
					}
				}
				b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "objects/s")
				b.ReportMetric(float64(peak())/(1<<20), "peak-live-MB")
			})
		}
	}
}

// watchLiveHeap samples the live heap of the last garbage collection
// until the returned function is called, which returns the largest.
func watchLiveHeap() func() uint64 {
	done := make(chan struct{})
	result := make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-result
	}
}
