// Command serverside applies a ConfigMap server-side as two field
// managers: the second meets a conflict on the field the first owns, reads
// who owns it from the error, then takes the field over with
// ForceConflicts, as kubectl apply --server-side --force-conflicts does.
package main

import (
	"context"
	"errors"
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
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	settings := func(data map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": "v1",
			"kind":       "ConfigMap",
			"metadata":   map[string]any{"name": "settings", "namespace": "default"},
			"data":       data,
		}
	}
	gitops := apply.Options{ServerSide: true, FieldManager: "gitops"}
	if _, err := apply.New(c, gitops).Apply(ctx, apply.Objects(settings(map[string]any{"color": "blue"}))); err != nil {
		log.Fatal(err)
	}

	human := apply.Options{ServerSide: true, FieldManager: "human"}
	_, err = apply.New(c, human).Apply(ctx, apply.Objects(settings(map[string]any{"color": "red", "size": "L"})))
	var conflict *apply.ConflictError
	if !errors.As(err, &conflict) {
		log.Fatalf("want a conflict, got %v", err)
	}
	for _, f := range conflict.Conflicts {
		fmt.Printf("conflict: %s is owned by %s (%s)\n", f.Path(), f.Manager, f.Operation)
	}

	human.ForceConflicts = true
	results, err := apply.New(c, human).Apply(ctx, apply.Objects(settings(map[string]any{"color": "red", "size": "L"})))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(results[0], results[0].Object["data"])
	// gitops owned data.color alone: with it taken over, its entry is gone.
	for _, m := range results[0].Object["metadata"].(map[string]any)["managedFields"].([]any) {
		entry := m.(map[string]any)
		fmt.Println("manager:", entry["manager"], entry["operation"])
	}
}
