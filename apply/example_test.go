package apply_test

import (
	"context"
	"fmt"
	"os"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
)

// A GitOps tool applies objects it built itself to the embedded cluster,
// as kubectl apply would, and prints kubectl's lines.
func ExampleApplier_Apply() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	config := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "settings"},
		"data":       map[string]any{"color": "blue"},
	}
	a := apply.New(c, apply.Options{})
	for _, color := range []string{"blue", "blue", "green"} {
		config["data"] = map[string]any{"color": color}
		results, err := a.Apply(context.Background(), apply.Objects(config))
		if err != nil {
			panic(err)
		}
		for _, r := range results {
			fmt.Println(r)
		}
	}
	// Output:
	// configmap/settings created
	// configmap/settings unchanged
	// configmap/settings configured
}

// Errors name the input, the object and the field, and nothing is written.
func ExampleErrors() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	good := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "good"}}
	bad := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "bad"},
		"data": map[string]any{"key": int64(1)}}
	_, err = apply.New(c, apply.Options{}).Apply(context.Background(), apply.Objects(good, bad))
	fmt.Println(err)
	// Output:
	// apply: input#2 configmap/bad: data.key: expected string, got number
}
