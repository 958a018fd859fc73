package apply_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
)

// Two tools share one object by server-side apply: each owns the fields it
// sets, a conflicting value is refused with the owner named, and
// ForceConflicts takes the field over.
func ExampleConflictError() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()

	cm := func(data map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings"}, "data": data}
	}
	gitops := apply.New(c, apply.Options{ServerSide: true, FieldManager: "gitops"})
	if _, err := gitops.Apply(ctx, apply.Objects(cm(map[string]any{"color": "blue"}))); err != nil {
		panic(err)
	}
	human := apply.New(c, apply.Options{ServerSide: true, FieldManager: "human"})
	_, err = human.Apply(ctx, apply.Objects(cm(map[string]any{"color": "red", "size": "L"})))
	var conflict *apply.ConflictError
	if errors.As(err, &conflict) {
		for _, f := range conflict.Conflicts {
			fmt.Printf("%s owned by %s (%s)\n", f.Field, f.Manager, f.Operation)
		}
	}
	forced := apply.New(c, apply.Options{ServerSide: true, FieldManager: "human", ForceConflicts: true})
	results, err := forced.Apply(ctx, apply.Objects(cm(map[string]any{"color": "red", "size": "L"})))
	if err != nil {
		panic(err)
	}
	fmt.Println(results[0], results[0].Object["data"])
	// Output:
	// .data.color owned by gitops (Apply)
	// configmap/settings serverside-applied map[color:red size:L]
}
