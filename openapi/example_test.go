package openapi_test

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/konverge/konverge/openapi"
	"github.com/konverge/konverge/schema"
)

// The definition of a kind, and of one of its fields, with their
// descriptions (what explain prints).
func ExampleLookupKind() {
	_, def, ok, err := openapi.LookupKind(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})
	if err != nil || !ok {
		fmt.Println(ok, err)
		return
	}
	fmt.Println(strings.SplitN(def.Description, ".", 2)[0])
	spec := def.Properties["spec"]
	name, specDef, err := openapi.Resolve(&spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(name, specDef.Required)
	fmt.Println(specDef.Properties["replicas"].Type, specDef.Properties["replicas"].Format)
	// Output:
	// Deployment enables declarative updates for Pods and ReplicaSets
	// io.k8s.api.apps.v1.DeploymentSpec [selector template]
	// [integer] int32
}

// The fields of an object as server-side apply sees them: containers are
// merged by name, ports by containerPort and protocol.
func ExampleTypeConverter() {
	tc, err := openapi.TypeConverter()
	if err != nil {
		fmt.Println(err)
		return
	}
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": "web"},
		"spec": map[string]any{"containers": []any{map[string]any{
			"name":  "nginx",
			"image": "nginx",
			"ports": []any{map[string]any{"containerPort": int64(80)}},
		}}},
	}}
	tv, err := tc.ObjectToTyped(pod)
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.Leaves())
	// Output:
	// .apiVersion
	// .kind
	// .metadata.name
	// .spec.containers[name="nginx"].image
	// .spec.containers[name="nginx"].name
	// .spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].containerPort
}
