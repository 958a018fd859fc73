package endpoint_test

import (
	"fmt"
	"testing"

	"github.com/konverge/konverge/controller/endpoint"
	"github.com/konverge/konverge/controller/endpointslice"
)

// BenchmarkManyPorts is one sync of each controller for a Service of 100
// ports over 3,000 ready pods, after one pod changed.
func BenchmarkManyPorts(b *testing.B) {
	e := newEnv(b)
	for i := 0; i < 3000; i++ {
		e.pod(fmt.Sprintf("p%d", i), fmt.Sprintf("10.1.%d.%d", i/250, i%250+1), true, "Running")
	}
	var ports []any
	for i := 0; i < 100; i++ {
		ports = append(ports, map[string]any{"name": fmt.Sprintf("p%d", i), "port": int64(1000 + i), "targetPort": int64(2000 + i)})
	}
	e.create(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{"ports": ports, "selector": map[string]any{"app": "web"}}})
	b.Run("endpoints", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := (endpoint.Controller{}).Sync(e.Ctx, e.Store, e.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("slices", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := (endpointslice.Controller{}).Sync(e.Ctx, e.Store, e.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
