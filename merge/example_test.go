package merge_test

import (
	"fmt"

	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

func mustDecode(s string) map[string]any {
	m, err := value.DecodeObject([]byte(s))
	if err != nil {
		panic(err)
	}
	return m
}

func print(v any) {
	b, err := value.Encode(v)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

// The seed's update: replicas written by kubectl scale survive,
// minReadySeconds dropped from the config is cleared, the image changes.
func ExampleThreeWay() {
	deployment := schema.Builtin().Lookup(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})

	lastApplied := mustDecode(`{"spec":{"minReadySeconds":5,
		"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.14.2"}]}}}}`)
	config := mustDecode(`{"spec":{
		"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.16.1"}]}}}}`)
	live := mustDecode(`{"spec":{"replicas":2,"minReadySeconds":5,
		"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.14.2","imagePullPolicy":"IfNotPresent"}]}}}}`)

	patch, err := merge.ThreeWay(lastApplied, config, live, deployment, merge.Options{})
	if err != nil {
		panic(err)
	}
	print(patch)

	result, err := merge.Apply(live, patch, deployment)
	if err != nil {
		panic(err)
	}
	print(result)
	// Output:
	// {"spec":{"minReadySeconds":null,"template":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],"containers":[{"image":"nginx:1.16.1","name":"nginx"}]}}}}
	// {"spec":{"replicas":2,"template":{"spec":{"containers":[{"image":"nginx:1.16.1","imagePullPolicy":"IfNotPresent","name":"nginx"}]}}}}
}

// Applying a patch as an API server does: $retainKeys clears the fields of
// spec.strategy that the patch does not keep.
func ExampleApply() {
	deployment := schema.Builtin().Lookup(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})
	live := mustDecode(`{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}}`)
	patch := mustDecode(`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`)

	result, err := merge.Apply(live, patch, deployment)
	if err != nil {
		panic(err)
	}
	print(result)
	// Output:
	// {"spec":{"strategy":{"type":"Recreate"}}}
}

// Bad input is an error that names the field path.
func ExampleValidate() {
	pod := schema.Builtin().Lookup(schema.GVK{Version: "v1", Kind: "Pod"})
	config := mustDecode(`{"spec":{"containers":[{"name":"app","image":"a"},{"name":"app","image":"b"}]}}`)
	fmt.Println(merge.Validate(config, pod))
	// Output:
	// merge: spec.containers[name="app"]: duplicate entry (element 1 repeats an earlier key)
}

// Custom resources have no strategic merge schema: kubectl sends a JSON
// merge patch, in which lists are replaced whole.
func ExampleThreeWayJSONMerge() {
	last := mustDecode(`{"spec":{"size":1,"colors":["red"]}}`)
	config := mustDecode(`{"spec":{"colors":["red","blue"]}}`)
	live := mustDecode(`{"spec":{"size":1,"colors":["red"],"owner":"controller"}}`)

	patch, err := merge.ThreeWayJSONMerge(last, config, live)
	if err != nil {
		panic(err)
	}
	print(patch)
	print(merge.MergePatch(live, patch))
	// Output:
	// {"spec":{"colors":["red","blue"],"size":null}}
	// {"spec":{"colors":["red","blue"],"owner":"controller"}}
}

// The same merge on JSON documents, as they come from files and from the
// API server: the patch and the object it leaves, as JSON.
func ExampleThreeWayJSON() {
	deployment := schema.Builtin().Lookup(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})

	lastApplied := []byte(`{"spec":{"minReadySeconds":5,"template":{"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx"}]}}}}`)
	config := []byte(`{"spec":{"template":{"spec":{"containers":[{"image":"nginx:1.16.1","name":"nginx"}]}}}}`)
	live := []byte(`{"spec":{"minReadySeconds":5,"replicas":2,"template":{"spec":{"containers":[{"image":"nginx:1.14.2","imagePullPolicy":"IfNotPresent","name":"nginx"}]}}}}`)

	patch, result, err := merge.ThreeWayJSON(lastApplied, config, live, deployment, merge.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(patch))
	fmt.Println(string(result))
	// Output:
	// {"spec":{"minReadySeconds":null,"template":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],"containers":[{"image":"nginx:1.16.1","name":"nginx"}]}}}}
	// {"spec":{"replicas":2,"template":{"spec":{"containers":[{"image":"nginx:1.16.1","imagePullPolicy":"IfNotPresent","name":"nginx"}]}}}}
}
