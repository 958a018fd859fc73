package diff

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/schema"
)

// renderObjects are n objects as bench/cli writes them, kinds rotating
// (Deployment, Service, ConfigMap); version changes one field in each (an
// image tag, a port's target, a data value).
func renderObjects(tb testing.TB, n int, version string) []manifest.Object {
	tb.Helper()
	var b strings.Builder
	for i := range n {
		name := fmt.Sprintf("app-%05d", i)
		b.WriteString("---\n")
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, labels: {app: %[1]s, tier: bench}}
spec:
  replicas: 2
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers:
      - name: web
        image: nginx:1.16.%[2]s
        ports: [{containerPort: 80}]
        env: [{name: MODE, value: production}]
        resources: {requests: {cpu: 100m, memory: 128Mi}}
`, name, version)
		case 1:
			fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata: {name: %[1]s, labels: {app: %[1]s, tier: bench}}
spec:
  selector: {app: %[1]s}
  ports: [{name: http, port: 80, targetPort: 808%[2]s}]
`, name, version)
		default:
			fmt.Fprintf(&b, `apiVersion: v1
kind: ConfigMap
metadata: {name: %[1]s, labels: {app: %[1]s, tier: bench}}
data:
  version: "%[2]s"
  settings.conf: |
    listen 80
    workers 4
`, name, version)
		}
	}
	objs, err := manifest.Parse(context.Background(), "bench.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return objs
}

// BenchmarkRender is the rendering RunUnified does on its goroutines for
// each result of the dry run (Differ.entry, then Entry.unified), on the
// results of a diff of 300 objects as bench/cli writes them (Deployments,
// Services and ConfigMaps) each of which changes in one field: "entry"
// alone, and "entry+unified". ns/op is per object.
func BenchmarkRender(b *testing.B) {
	const n = 300
	s, err := local.Open(b.TempDir(), local.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := apply.New(s, apply.Options{}).Apply(ctx, renderObjects(b, n, "1")); err != nil {
		b.Fatal(err)
	}
	// The controllers' status, which the diff shows on both sides.
	for i := 0; i < n; i += 3 {
		obj, err := s.Get(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, "default", fmt.Sprintf("app-%05d", i))
		if err != nil {
			b.Fatal(err)
		}
		obj["status"] = map[string]any{
			"availableReplicas": int64(2), "observedGeneration": int64(1), "readyReplicas": int64(2),
			"replicas": int64(2), "terminatingReplicas": int64(0), "updatedReplicas": int64(2),
			"conditions": []any{map[string]any{
				"lastTransitionTime": "2026-01-01T00:00:05Z", "lastUpdateTime": "2026-01-01T00:00:05Z",
				"message": "Deployment has minimum availability.", "reason": "MinimumReplicasAvailable",
				"status": "True", "type": "Available",
			}, map[string]any{
				"lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:05Z",
				"message": fmt.Sprintf("ReplicaSet \"app-%05d-5bd649d78b\" has successfully progressed.", i), "reason": "NewReplicaSetAvailable",
				"status": "True", "type": "Progressing",
			}},
		}
		if _, err := s.UpdateStatus(ctx, obj); err != nil {
			b.Fatal(err)
		}
	}
	d := New(s, Options{})
	aopts, _ := d.dryRunOptions()
	var results []apply.Result
	aopts.OnResult = func(res apply.Result) { results = append(results, res) }
	if _, err := apply.New(s, aopts).Apply(ctx, renderObjects(b, n, "2")); err != nil {
		b.Fatal(err)
	}
	if len(results) != n {
		b.Fatalf("%d results, want %d", len(results), n)
	}
	b.Run("entry", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			if e := d.entry(results[i%n]); e.Action != Update {
				b.Fatalf("%s: %s", e.Ref, e.Action)
			}
		}
	})
	b.Run("entry+unified", func(b *testing.B) {
		b.ReportAllocs()
		bytes := 0
		for i := range b.N {
			text, err := d.entry(results[i%n]).unified(RenderOptions{})
			if err != nil || len(text) == 0 {
				b.Fatalf("%d bytes: %v", len(text), err)
			}
			bytes += len(text)
		}
		b.ReportMetric(float64(bytes)/float64(b.N), "bytes/object")
	})
}
