package manifest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchDeployment is a Deployment of about 1 KB, as found in real
// manifest directories.
const benchDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-%d
  namespace: prod
  labels:
    app.kubernetes.io/name: web
    app.kubernetes.io/part-of: shop
  annotations:
    example.com/owner: team-a
spec:
  replicas: 3
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
    spec:
      containers:
      - name: web
        image: registry.example.com/shop/web:1.27.3
        args: ["--port=8080", "--log-level=info"]
        ports:
        - name: http
          containerPort: 8080
          protocol: TCP
        env:
        - name: MODE
          value: production
        - name: WORKERS
          value: "4"
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: 500m, memory: 256Mi}
        readinessProbe:
          httpGet: {path: /healthz, port: http}
          initialDelaySeconds: 5
          periodSeconds: 10
`

// benchDeploymentJSON is the same object as JSON.
const benchDeploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web-%d","namespace":"prod","labels":{"app.kubernetes.io/name":"web","app.kubernetes.io/part-of":"shop"},"annotations":{"example.com/owner":"team-a"}},"spec":{"replicas":3,"revisionHistoryLimit":5,"selector":{"matchLabels":{"app.kubernetes.io/name":"web"}},"template":{"metadata":{"labels":{"app.kubernetes.io/name":"web"}},"spec":{"containers":[{"name":"web","image":"registry.example.com/shop/web:1.27.3","args":["--port=8080","--log-level=info"],"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],"env":[{"name":"MODE","value":"production"},{"name":"WORKERS","value":"4"}],"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":"500m","memory":"256Mi"}},"readinessProbe":{"httpGet":{"path":"/healthz","port":"http"},"initialDelaySeconds":5,"periodSeconds":10}}]}}}}
`

// writeBenchDir writes files files of perFile objects each under a new
// directory.
func writeBenchDir(b *testing.B, files, perFile int, tmpl, ext string) string {
	b.Helper()
	dir := b.TempDir()
	n := 0
	for f := range files {
		var buf bytes.Buffer
		for range perFile {
			if buf.Len() > 0 && ext == ".yaml" {
				buf.WriteString("---\n")
			}
			fmt.Fprintf(&buf, tmpl, n)
			n++
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%05d%s", f, ext)), buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// reportObjects reports objects read per second of wall time, and the CPU
// time per run (all goroutines, GC included): on a shared machine the wall
// time depends on the other processes, the CPU time much less; on an idle
// 2-core machine the wall time approaches half the CPU time.
func reportObjects(b *testing.B, n int, cpu0 time.Duration) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkRead reads 10,000 objects of about 1 KB from a directory, in the
// shapes manifests come in, and from one stream as kustomize build | apply
// -f - gives them.
func BenchmarkRead(b *testing.B) {
	const n = 10_000
	for _, c := range []struct {
		name           string
		files, perFile int
		tmpl, ext      string
	}{
		{"yaml/10000x1", n, 1, benchDeployment, ".yaml"},
		{"yaml/100x100", 100, 100, benchDeployment, ".yaml"},
		{"json/10000x1", n, 1, benchDeploymentJSON, ".json"},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := writeBenchDir(b, c.files, c.perFile, c.tmpl, c.ext)
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				objs, err := Read(context.Background(), []string{dir}, Options{})
				if err != nil || len(objs) != n {
					b.Fatalf("%d objects, %v", len(objs), err)
				}
			}
			reportObjects(b, n, cpu0)
		})
	}
	// The directory read again with a Cache, as a sync loop reads it
	// every round: nothing changed since the last Read.
	b.Run("yaml/10000x1-cached", func(b *testing.B) {
		dir := writeBenchDir(b, n, 1, benchDeployment, ".yaml")
		var cache Cache
		if _, err := Read(context.Background(), []string{dir}, Options{Cache: &cache}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			objs, err := Read(context.Background(), []string{dir}, Options{Cache: &cache})
			if err != nil || len(objs) != n {
				b.Fatalf("%d objects, %v", len(objs), err)
			}
		}
		reportObjects(b, n, cpu0)
	})
	b.Run("yaml/stdin-1x10000", func(b *testing.B) {
		var buf strings.Builder
		for i := range n {
			buf.WriteString("---\n")
			fmt.Fprintf(&buf, benchDeployment, i)
		}
		in := buf.String()
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			objs, err := Read(context.Background(), []string{"-"}, Options{Stdin: strings.NewReader(in)})
			if err != nil || len(objs) != n {
				b.Fatalf("%d objects, %v", len(objs), err)
			}
		}
		reportObjects(b, n, cpu0)
	})
}

// BenchmarkDocument compares decoding one Deployment with kubectl's
// pipeline (sigs.k8s.io/yaml, go-yaml v2, JSON, unstructured), on one core.
func BenchmarkDocument(b *testing.B) {
	data := []byte(fmt.Sprintf(benchDeployment, 1))
	b.Run("manifest", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if r, ok := parseYAML(data, 1); !ok || len(r.objs) != 1 {
				b.Fatal(r.errs)
			}
		}
	})
	// The same document through go-yaml's node tree, the path of the
	// documents fastYAML does not take.
	b.Run("manifest-nodes", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if v, _, err := decodeYAML(data, 0); err != nil || v == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kubectl", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if objs, err := kubectlRead(data); err != nil || len(objs) != 1 {
				b.Fatal(err)
			}
		}
	})
}
