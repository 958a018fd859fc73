package kube_test

import (
	"context"
	"fmt"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/kube"
	"github.com/konverge/konverge/schema"
)

// A tool applies objects to a real API server and reads them back. Here
// the server answers as kube-apiserver v1.37.1 answered when the example
// was recorded; with a cluster of your own, take the configuration from
// kube.RESTConfig("", "") (kubectl's loading rules) instead.
func ExampleNew() {
	cfg, done := exampleServer()
	defer done()
	ctx := context.Background()

	c, err := kube.New(cfg)
	if err != nil {
		panic(err)
	}
	settings := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "example-settings", "namespace": "default"},
		"data":       map[string]any{"color": "blue"},
	}
	a := apply.New(c, apply.Options{})
	results, err := a.Apply(ctx, apply.Objects(settings))
	if err != nil {
		panic(err)
	}
	fmt.Println(results[0])

	plan, err := a.Plan(ctx, apply.Objects(settings))
	if err != nil {
		panic(err)
	}
	fmt.Println(plan.Changes[0], "drift:", plan.HasDrift())

	gvk := schema.GVK{Version: "v1", Kind: "ConfigMap"}
	live, err := c.Get(ctx, gvk, "default", "example-settings")
	if err != nil {
		panic(err)
	}
	fmt.Println(live["data"])

	_, err = c.Get(ctx, gvk, "default", "missing")
	fmt.Println(err, cluster.IsNotFound(err))

	if err := c.Delete(ctx, gvk, "default", "example-settings"); err != nil {
		panic(err)
	}
	// Output:
	// configmap/example-settings created
	// configmap/example-settings unchanged drift: false
	// map[color:blue]
	// configmaps "missing" not found true
}
