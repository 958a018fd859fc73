package value_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/konverge/konverge/value"
)

func ExampleDecode() {
	v, err := value.Decode([]byte(`{"spec":{"replicas":3,"ratio":0.5,"big":1e3,"args":["a",null]}}`))
	if err != nil {
		panic(err)
	}
	spec := v.(map[string]any)["spec"].(map[string]any)
	for _, k := range []string{"replicas", "ratio", "big", "args"} {
		fmt.Printf("%s: %T %v\n", k, spec[k], spec[k])
	}

	_, err = value.Decode([]byte(`{"name":"a","name":"b"}`))
	var se *value.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se.Offset, err)
	}
	// Output:
	// replicas: int64 3
	// ratio: float64 0.5
	// big: float64 1000
	// args: []interface {} [a <nil>]
	// 12 value: invalid JSON at offset 12: duplicate key "name"
}

func ExampleEncode() {
	b, err := value.Encode(map[string]any{
		"metadata": map[string]any{"name": "nginx", "annotations": map[string]any{"note": "<a & b>"}},
		"spec":     map[string]any{"replicas": int64(3), "ratio": 1e-7},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))

	_, err = value.Encode(map[string]any{"spec": map[string]any{"ports": []any{math.NaN()}}})
	var ue *value.UnsupportedValueError
	if errors.As(err, &ue) {
		fmt.Println(ue.Path, "|", err)
	}
	// Output:
	// {"metadata":{"annotations":{"note":"\u003ca \u0026 b\u003e"},"name":"nginx"},"spec":{"ratio":1e-7,"replicas":3}}
	// spec.ports[0] | value: cannot encode NaN at spec.ports[0]
}

func ExamplePath_String() {
	containers := value.Path{value.FieldElement("spec"), value.FieldElement("template"),
		value.FieldElement("spec"), value.FieldElement("containers")}
	nginx := containers.Child(value.KeyElement(value.KeyField{Name: "name", Value: "nginx"}))

	fmt.Println(nginx.Field("ports").Child(value.KeyElement(
		value.KeyField{Name: "containerPort", Value: int64(80)},
		value.KeyField{Name: "protocol", Value: "TCP"},
	)))
	fmt.Println(nginx.Field("args").Child(value.IndexElement(3)))
	fmt.Println(value.Path{}.Field("metadata").Field("finalizers").Child(value.ValueElement("a")))
	fmt.Println(value.Path{})
	// Output:
	// spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]
	// spec.template.spec.containers[name="nginx"].args[3]
	// metadata.finalizers[="a"]
	// .
}

// One path, spelled as konverge prints it, as server-side apply's
// conflicts and kube-apiserver's errors spell it, and as a JSON pointer.
func ExampleParsePath() {
	for _, s := range []string{
		`spec.template.spec.containers[name="web"].image`,
		`.spec.template.spec.containers[name="web"].image`,
		`spec.template.spec.containers[0].image`,
		`metadata.labels[app.kubernetes.io/name]`,
	} {
		p, err := value.ParsePath(s)
		if err != nil {
			panic(err)
		}
		ptr, ok := p.Pointer()
		fmt.Println(p, ptr, ok)
	}
	deploy := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "sidecar"}, map[string]any{"name": "web"}}}}}}
	p, _ := value.ParsePath(`spec.template.spec.containers[name="web"].image`)
	fmt.Println(p.PointerIn(deploy))
	// Output:
	// spec.template.spec.containers[name="web"].image  false
	// spec.template.spec.containers[name="web"].image  false
	// spec.template.spec.containers[0].image /spec/template/spec/containers/0/image true
	// metadata.labels[app.kubernetes.io/name] /metadata/labels/app.kubernetes.io~1name true
	// /spec/template/spec/containers/1/image true
}
