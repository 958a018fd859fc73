// Command apply applies objects built in code to the embedded cluster, as
// kubectl apply does, then plans a change, shows it and applies exactly
// that plan.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
)

func main() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "konverge")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// The embedded cluster; kube.FromKubeconfig("", "") reaches a real one.
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	settings := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "settings"},
		"data":       map[string]any{"color": "blue"},
	}
	a := apply.New(c, apply.Options{Namespace: "default"})
	results, err := a.Apply(ctx, apply.Objects(settings))
	if err != nil {
		log.Fatal(err) // apply.Errors: one per bad object, with source and field path
	}
	for _, r := range results {
		fmt.Println(r)
	}

	settings["data"] = map[string]any{"color": "green"}
	plan, err := a.Plan(ctx, apply.Objects(settings))
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range plan.Changes {
		fmt.Println("plan:", ch, ch.Paths)
	}
	results, err = a.ApplyPlan(ctx, plan)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(results[0], results[0].Object["data"])
}
