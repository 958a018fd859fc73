package defaults_test

import (
	"fmt"

	"github.com/konverge/konverge/defaults"
	"github.com/konverge/konverge/value"
)

func ExampleApply() {
	obj, _ := value.DecodeObject([]byte(`{
		"apiVersion": "v1", "kind": "Service",
		"metadata": {"name": "web"},
		"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}
	}`))
	if err := defaults.Apply(obj); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := value.Encode(obj["spec"])
	fmt.Println(string(out))
	// Output:
	// {"internalTrafficPolicy":"Cluster","ports":[{"port":80,"protocol":"TCP","targetPort":80}],"selector":{"app":"web"},"sessionAffinity":"None","type":"ClusterIP"}
}

func ExampleApplyCustomResource() {
	schema, _ := value.DecodeObject([]byte(`{"type": "object", "properties": {"spec": {"type": "object", "properties": {
		"replicas": {"type": "integer", "default": 1},
		"mode": {"type": "string", "default": "fast"}}}}}`))
	obj, _ := value.DecodeObject([]byte(`{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": {"name": "w"}, "spec": {"mode": "slow", "color": "red"}}`))
	fmt.Println(defaults.PruneUnknown(obj, schema))
	_ = defaults.ApplyCustomResource(obj, schema)
	out, _ := value.Encode(obj["spec"])
	fmt.Println(string(out))
	// Output:
	// [spec.color]
	// {"mode":"slow","replicas":1}
}
