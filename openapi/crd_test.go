package openapi

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
              args:
                type: array
                items: {type: string}
              selector:
                type: object
                x-kubernetes-map-type: atomic
                additionalProperties: {type: string}
              free:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              size:
                x-kubernetes-int-or-string: true
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v2
    served: true
    storage: false
`

func TestCustomResourceTypeConverter(t *testing.T) {
	var crd map[string]any
	if err := yaml.Unmarshal([]byte(widgetCRD), &crd); err != nil {
		t.Fatal(err)
	}
	tc, err := CustomResourceTypeConverter(crd)
	if err != nil {
		t.Fatal(err)
	}
	obj := mustObject(t, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, labels: {a: b}}
spec:
  ports: [{name: http, port: 80}]
  tags: [x, z]
  args: [a, b]
  selector: {app: w}
  free: {any: {deep: 1}}
  size: 50%
  template:
    apiVersion: v1
    kind: Pod
    metadata: {name: p, labels: {c: d}}
    spec: {containers: []}
`)
	tv, err := tc.ObjectToTyped(obj)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	got := set.String() + "\n"
	for _, want := range []string{
		`.spec.ports[name="http"].port`,
		`.spec.tags[="x"]`,
		`.spec.args`,
		`.spec.selector`,
		`.spec.free.any.deep`,
		`.spec.size`,
		`.spec.template.metadata.labels.c`,
		`.metadata.labels.a`,
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("field set lacks %s:\n%s", want, got)
		}
	}
	for _, not := range []string{`.spec.args[`, `.spec.selector.app`} {
		if strings.Contains(got, not) {
			t.Errorf("field set has %s (atomic):\n%s", not, got)
		}
	}

	// A field the schema does not know is refused; v2, which has no
	// schema, knows only its root.
	if _, err := tc.ObjectToTyped(mustObject(t, "apiVersion: example.com/v1\nkind: Widget\nspec: {nope: 1}\n")); err == nil || !strings.Contains(err.Error(), ".spec.nope: field not declared in schema") {
		t.Errorf("unknown field: %v", err)
	}
	tv, err = tc.ObjectToTyped(mustObject(t, "apiVersion: example.com/v2\nkind: Widget\nmetadata: {name: w}\nspec: {list: [1, 2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	set, _ = tv.ToFieldSet()
	if got := set.String() + "\n"; !strings.Contains(got, ".spec.list\n") || strings.Contains(got, ".spec.list[") {
		t.Errorf("v2 without a schema: field set\n%s", got)
	}
}

func TestCustomResourceTypeConverterErrors(t *testing.T) {
	if _, err := CustomResourceTypeConverter(map[string]any{"spec": map[string]any{}}); err == nil {
		t.Error("no error for an empty CRD")
	}
}
