package lastapplied_test

import (
	"fmt"

	"github.com/konverge/konverge/lastapplied"
)

// Set returns the config with the annotation kubectl apply writes into it;
// Get reads it back from the live object.
func ExampleSet() {
	config := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "settings", "namespace": "default"},
		"data":       map[string]any{"color": "blue"},
	}
	live, err := lastapplied.Set(config)
	if err != nil {
		panic(err)
	}
	fmt.Print(live["metadata"].(map[string]any)["annotations"].(map[string]any)["kubectl.kubernetes.io/last-applied-configuration"])

	last, err := lastapplied.Get(live)
	if err != nil {
		panic(err)
	}
	fmt.Println(last["data"])
	// Output:
	// {"apiVersion":"v1","data":{"color":"blue"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"settings","namespace":"default"}}
	// map[color:blue]
}
