package schema

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// widgetDoc exercises every rule of ParseOpenAPIV3 on a small document.
const widgetDoc = `{
  "openapi": "3.0.0",
  "components": {"schemas": {
    "example.v1.Widget": {
      "type": "object",
      "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}],
      "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "spec": {"allOf": [{"$ref": "#/components/schemas/example.v1.WidgetSpec"}], "default": {}},
        "direct": {"$ref": "#/components/schemas/example.v1.WidgetSpec"}
      }
    },
    "example.v1.WidgetSpec": {
      "type": "object",
      "properties": {
        "strategy": {"allOf": [{"$ref": "#/components/schemas/example.v1.Strategy"}], "x-kubernetes-patch-strategy": "retainKeys"},
        "selector": {"allOf": [{"$ref": "#/components/schemas/example.v1.Strategy"}], "x-kubernetes-patch-strategy": "replace"},
        "ports": {"type": "array", "items": {"$ref": "#/components/schemas/example.v1.Port"},
          "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "port",
          "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"]},
        "volumes": {"type": "array", "items": {"$ref": "#/components/schemas/example.v1.Port"},
          "x-kubernetes-patch-strategy": "merge,retainKeys", "x-kubernetes-patch-merge-key": "name"},
        "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"},
        "keyless": {"type": "array", "items": {"$ref": "#/components/schemas/example.v1.Port"}, "x-kubernetes-patch-strategy": "merge"},
        "mapOnly": {"type": "array", "items": {"$ref": "#/components/schemas/example.v1.Port"},
          "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
        "args": {"type": "array", "items": {"type": "string"}},
        "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}},
        "atomicLabels": {"type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "atomic"},
        "limits": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}},
        "maxSurge": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
        "created": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
        "raw": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.runtime.RawExtension"},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "replicas": {"type": "integer", "default": 1},
        "ratio": {"type": "number", "default": 0.5},
        "big": {"type": "number", "default": 1e300},
        "enabled": {"type": "boolean", "default": true},
        "tags": {"type": "array", "items": {"type": "string"}, "default": ["a", 2]},
        "props": {"$ref": "#/components/schemas/example.v1.Props"}
      }
    },
    "example.v1.Strategy": {"type": "object", "properties": {"type": {"type": "string"}, "rollingUpdate": {"type": "object", "properties": {"max": {"type": "integer"}}}}},
    "example.v1.Port": {"type": "object", "properties": {
      "port": {"type": "integer", "default": 0},
      "protocol": {"type": "string", "default": "TCP"},
      "name": {"type": "string"}
    }},
    "example.v1.Props": {"type": "object", "properties": {
      "properties": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/example.v1.Props"}},
      "items": {"$ref": "#/components/schemas/example.v1.PropsOrArray"},
      "not": {"$ref": "#/components/schemas/example.v1.Props"}
    }},
    "example.v1.PropsOrArray": {},
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"oneOf": [{"type": "string"}, {"type": "number"}]},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object"}
  }}
}`

var widget = GVK{Group: "example.com", Version: "v1", Kind: "Widget"}

func TestParseOpenAPIV3(t *testing.T) {
	reg, err := ParseOpenAPIV3([]byte(widgetDoc))
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.Kinds(); !reflect.DeepEqual(got, []GVK{widget}) {
		t.Fatalf("Kinds() = %v", got)
	}
	root := reg.Lookup(widget)
	tests := []struct {
		path string
		want string
	}{
		{"apiVersion", "scalar/string"},
		{"spec", "struct default=map[]"},
		{"direct", "struct"},
		{"spec.strategy", "struct retainKeys"},
		{"spec.strategy.rollingUpdate.max", "scalar/integer"},
		{"spec.selector", "struct replace"},
		{"spec.ports", "list/map key=port keys=[port protocol] of struct"},
		{"spec.ports[].protocol", "scalar/string default=TCP"},
		{"spec.volumes", "list/map key=name keys=[name] retainKeys of struct"},
		{"spec.finalizers", "list/set of scalar/string"},
		{"spec.keyless", "list/atomic of struct"},
		{"spec.mapOnly", "list/atomic of struct"},
		{"spec.args", "list/atomic of scalar/string"},
		{"spec.matrix", "list/atomic of list"},
		{"spec.labels", "map of scalar/string"},
		{"spec.labels.*", "scalar/string default="},
		{"spec.atomicLabels", "map of scalar/string"},
		{"spec.limits", "map of scalar/scalar"},
		{"spec.maxSurge", "scalar/int-or-string"},
		{"spec.created", "scalar/string"},
		{"spec.raw", "untyped"},
		{"spec.free", "untyped"},
		{"spec.replicas", "scalar/integer default=1"},
		{"spec.ratio", "scalar/number default=0.5"},
		{"spec.enabled", "scalar/boolean default=true"},
		{"spec.tags", "list/atomic default=[a 2] of scalar/string"},
		{"spec.props.properties.*.properties.*.not", "struct"},
		{"spec.props.items", "untyped"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := describe(at(root, tt.path)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}

	t.Run("default types", func(t *testing.T) {
		spec := root.Field("spec")
		for field, want := range map[string]any{
			"replicas": int64(1),
			"ratio":    0.5,
			"big":      1e300,
			"enabled":  true,
			"tags":     []any{"a", int64(2)},
		} {
			if got := spec.Field(field).Default; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: default %#v, want %#v", field, got, want)
			}
		}
		if got := at(root, "spec.ports[].port").Default; got != int64(0) {
			t.Errorf("port default %#v, want int64(0)", got)
		}
	})

	t.Run("sharing", func(t *testing.T) {
		spec, direct := root.Field("spec"), root.Field("direct")
		if spec == direct {
			t.Fatal("a position with a default is the definition's Type")
		}
		if reflect.ValueOf(spec.Fields).UnsafePointer() != reflect.ValueOf(direct.Fields).UnsafePointer() {
			t.Error("positions of one definition do not share its Fields map")
		}
		if spec.Name != "example.v1.WidgetSpec" || direct.Name != spec.Name {
			t.Errorf("names %q, %q", spec.Name, direct.Name)
		}
		props := at(root, "spec.props")
		if at(props, "properties.*") != props || props.Field("not") != props {
			t.Error("a recursive definition is not one Type")
		}
		if root.Field("apiVersion") != root.Field("kind") {
			t.Error("plain string positions are not shared")
		}
	})
}

func TestParseOpenAPIV3Documents(t *testing.T) {
	other := `{"components": {"schemas": {
		"example.v1.Widget": {"type": "object", "properties": {"kind": {"type": "string"}},
			"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v2", "kind": "Widget"}]},
		"example.v1.Gadget": {"type": "object", "properties": {"kind": {"type": "string"}},
			"x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Gadget"}]}
	}}}`
	reg, err := ParseOpenAPIV3Documents([]byte(widgetDoc), []byte(other))
	if err != nil {
		t.Fatal(err)
	}
	v2 := GVK{Group: "example.com", Version: "v2", Kind: "Widget"}
	want := []GVK{{Group: "example.com", Version: "v1", Kind: "Gadget"}, widget, v2}
	if got := reg.Kinds(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	if reg.Lookup(widget) != reg.Lookup(v2) {
		t.Error("one definition listed with two kinds is two Types")
	}
	if reg.Lookup(v2).Field("spec").KindOf() != Struct {
		t.Error("the first document's definition did not win")
	}
}

func TestParseOpenAPIV3Errors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not json", `{"components": `, "schema: openapi v3 document: unexpected end of JSON input"},
		{"bad extension", `{"components": {"schemas": {"a": {"x-kubernetes-patch-strategy": 1}}}}`, "schema: openapi v3 document: json: cannot unmarshal number"},
		{"unresolved", `{"components": {"schemas": {"a": {"type": "object",
			"x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "A"}],
			"properties": {"spec": {"properties": {"b": {"$ref": "#/components/schemas/b"}}}}}}}}`,
			`schema: openapi definition "a": .properties.spec.properties.b: reference "#/components/schemas/b": no definition "b"`},
		{"foreign ref", `{"components": {"schemas": {"a": {"type": "object",
			"x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "A"}],
			"properties": {"b": {"$ref": "other.json#/b"}}}}}}`,
			`schema: openapi definition "a": .properties.b: unsupported reference "other.json#/b"`},
		{"alias cycle", `{"components": {"schemas": {"a": {"type": "object",
			"x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "A"}],
			"properties": {"b": {"$ref": "#/components/schemas/b"}}},
			"b": {"$ref": "#/components/schemas/c"}, "c": {"allOf": [{"$ref": "#/components/schemas/b"}]}}}}`,
			`refers to itself`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOpenAPIV3([]byte(tt.doc))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant %q", err, tt.want)
			}
			if tt.name == "unresolved" {
				var e *Error
				if !errors.As(err, &e) || e.Path != ".properties.spec.properties.b" {
					t.Errorf("error %#v is not an *Error with the path", err)
				}
			}
		})
	}
}
