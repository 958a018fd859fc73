// Command merge computes kubectl apply's three-way strategic merge alone,
// on objects as unstructured.Unstructured holds them: the patch, and what
// the API server makes of the live object with it.
package main

import (
	"fmt"
	"log"

	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

func main() {
	deployment := schema.Builtin().Lookup(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})
	container := func(image string) map[string]any {
		return map[string]any{"name": "web", "image": image}
	}
	spec := func(fields map[string]any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web"}, "spec": fields}
	}
	lastApplied := spec(map[string]any{"minReadySeconds": int64(5),
		"template": map[string]any{"spec": map[string]any{"containers": []any{container("nginx:1.26")}}}})
	config := spec(map[string]any{
		"template": map[string]any{"spec": map[string]any{"containers": []any{container("nginx:1.27")}}}})
	live := spec(map[string]any{"minReadySeconds": int64(5), "replicas": int64(4),
		"template": map[string]any{"spec": map[string]any{"containers": []any{
			container("nginx:1.26"), map[string]any{"name": "sidecar", "image": "envoy"}}}}})

	patch, err := merge.ThreeWay(lastApplied, config, live, deployment, merge.Options{})
	if err != nil {
		log.Fatal(err)
	}
	result, err := merge.Apply(live, patch, deployment) // what the API server stores
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range []any{patch, result["spec"]} {
		b, err := value.Encode(v)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(b))
	}
}
