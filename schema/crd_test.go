package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// decodeJSON decodes a document the way konverge's value package does:
// integers as int64, other numbers as float64.
func decodeJSON(t *testing.T, doc string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	v, err := normalize(v)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

const widgetCRD = `{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {
    "group": "example.com",
    "scope": "Namespaced",
    "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wd"], "listKind": "WidgetList"},
    "versions": [
      {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
        "type": "object",
        "properties": {
          "spec": {"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
              "items": {"type": "object", "required": ["port"], "properties": {
                "port": {"type": "integer", "format": "int32"},
                "protocol": {"type": "string", "default": "TCP"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "args": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
            "plain": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "containers": {"type": "array", "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name",
              "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "overridden": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
              "x-kubernetes-patch-strategy": "replace", "items": {"type": "object", "properties": {"id": {"type": "string"}}}},
            "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "known": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "string"}}},
            "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
              "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "replicas": {"type": "integer", "default": 1, "minimum": 0},
            "ratio": {"type": "number", "default": 0.25},
            "strategy": {"type": "object", "x-kubernetes-patch-strategy": "retainKeys", "properties": {"type": {"type": "string"}}}
          }},
          "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }}}},
      {"name": "v1beta1", "served": true, "storage": false}
    ]
  }
}`

func TestFromCRD(t *testing.T) {
	crd := decodeJSON(t, widgetCRD)
	versions, err := FromCRD(crd)
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 2 {
		t.Fatalf("%d versions, want 2", len(versions))
	}
	v1 := versions[0]
	wantV1 := CRDVersion{
		GVK:        GVK{Group: "example.com", Version: "v1", Kind: "Widget"},
		Scope:      "Namespaced",
		Plural:     "widgets",
		Singular:   "widget",
		ShortNames: []string{"wd"},
		ListKind:   "WidgetList",
		Served:     true,
		Storage:    true,
		Type:       v1.Type,
	}
	if !reflect.DeepEqual(v1, wantV1) {
		t.Errorf("got  %+v\nwant %+v", v1, wantV1)
	}
	if v := versions[1]; v.GVK.Version != "v1beta1" || !v.Served || v.Storage {
		t.Errorf("second version %+v", v)
	}

	tests := []struct {
		name, path, want string
	}{
		{"apiVersion", "apiVersion", "scalar/string"},
		{"metadata", "metadata", "struct"},
		{"metadata finalizers", "metadata.finalizers", "list/set of scalar/string"},
		{"metadata ownerReferences", "metadata.ownerReferences", "list/map key=uid keys=[uid] of struct"},
		{"list-type map", "spec.ports", "list/map key=port keys=[port protocol] of struct"},
		{"map key default", "spec.ports[].protocol", "scalar/string default=TCP"},
		{"list-type set", "spec.tags", "list/set of scalar/string"},
		{"list-type atomic", "spec.args", "list/atomic of scalar/string"},
		{"no list-type", "spec.plain", "list/atomic of struct"},
		{"patch strategy", "spec.containers", "list/map key=name keys=[name] of struct"},
		{"patch strategy overrides list-type", "spec.overridden", "list/atomic replace of struct"},
		{"preserve-unknown-fields", "spec.config", "untyped"},
		{"preserve-unknown-fields with properties", "spec.known", "struct"},
		{"preserve-unknown-fields unknown field", "spec.known.b", "untyped"},
		{"int-or-string", "spec.port", "scalar/int-or-string"},
		{"embedded resource", "spec.template", "struct"},
		{"embedded kind", "spec.template.kind", "scalar/string"},
		{"embedded metadata", "spec.template.metadata.finalizers", "list/set of scalar/string"},
		{"embedded rest", "spec.template.spec", "untyped"},
		{"map-type atomic", "spec.selector", "struct replace"},
		{"map", "spec.labels", "map of scalar/string"},
		{"integer default", "spec.replicas", "scalar/integer default=1"},
		{"retainKeys", "spec.strategy", "struct retainKeys"},
		{"status", "status", "untyped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe(at(v1.Type, tt.path)); got != tt.want {
				t.Errorf("%s:\n got %s\nwant %s", tt.path, got, tt.want)
			}
		})
	}

	t.Run("defaults", func(t *testing.T) {
		if got := at(v1.Type, "spec.replicas").Default; got != int64(1) {
			t.Errorf("replicas default %#v, want int64(1)", got)
		}
		if got := at(v1.Type, "spec.ratio").Default; got != 0.25 {
			t.Errorf("ratio default %#v, want 0.25", got)
		}
	})

	t.Run("no schema", func(t *testing.T) {
		typ := versions[1].Type
		for path, want := range map[string]string{
			"kind":                "scalar/string",
			"metadata.finalizers": "list/set of scalar/string",
			"spec":                "untyped",
		} {
			if got := describe(at(typ, path)); got != want {
				t.Errorf("%s: got %s, want %s", path, got, want)
			}
		}
	})

	t.Run("registry", func(t *testing.T) {
		reg := Builtin()
		for _, v := range versions {
			reg.Add(v.GVK, v.Type)
		}
		if reg.Lookup(ParseGVK("example.com/v1", "Widget")) != v1.Type {
			t.Error("Lookup does not find the CRD's type")
		}
		if reg.Lookup(ParseGVK("apps/v1", "Deployment")) == nil {
			t.Error("adding a CRD lost the built-in kinds")
		}
	})
}

func TestFromCRDErrors(t *testing.T) {
	const source = `schema: customresourcedefinition "widgets.example.com": `
	const root = ".spec.versions[0].schema.openAPIV3Schema"
	// edit changes the decoded widgetCRD.
	type edit func(crd map[string]any)
	spec := func(crd map[string]any) map[string]any { return crd["spec"].(map[string]any) }
	schema := func(crd map[string]any) map[string]any {
		v := spec(crd)["versions"].([]any)[0].(map[string]any)
		return v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
	}
	prop := func(crd map[string]any, name string) map[string]any {
		return schema(crd)["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)[name].(map[string]any)
	}
	tests := []struct {
		name string
		edit edit
		path string
		want string
	}{
		{"v1beta1", func(c map[string]any) { c["apiVersion"] = "apiextensions.k8s.io/v1beta1" }, ".apiVersion", "unsupported apiextensions.k8s.io/v1beta1, want apiextensions.k8s.io/v1"},
		{"no spec", func(c map[string]any) { delete(c, "spec") }, ".spec", "required"},
		{"no group", func(c map[string]any) { delete(spec(c), "group") }, ".spec.group", "required"},
		{"bad scope", func(c map[string]any) { spec(c)["scope"] = "Global" }, ".spec.scope", `got "Global", want Namespaced or Cluster`},
		{"no kind", func(c map[string]any) { delete(spec(c)["names"].(map[string]any), "kind") }, ".spec.names.kind", "required"},
		{"bad short names", func(c map[string]any) { spec(c)["names"].(map[string]any)["shortNames"] = []any{"a", int64(1)} }, ".spec.names.shortNames", "[1]: expected a string, got a number"},
		{"no versions", func(c map[string]any) { spec(c)["versions"] = []any{} }, ".spec.versions", "no versions"},
		{"bad version", func(c map[string]any) { spec(c)["versions"] = []any{"v1"} }, ".spec.versions[0]", "expected an object, got a string"},
		{"bad served", func(c map[string]any) { spec(c)["versions"].([]any)[0].(map[string]any)["served"] = "yes" }, ".spec.versions[0].served", "expected a boolean, got a string"},
		{"bad type", func(c map[string]any) { prop(c, "tags")["type"] = int64(5) }, root + ".properties.spec.properties.tags.type", "expected a string, got a number"},
		{"bad properties", func(c map[string]any) { prop(c, "known")["properties"] = []any{} }, root + ".properties.spec.properties.known.properties", "expected an object, got an array"},
		{"map without keys", func(c map[string]any) { delete(prop(c, "ports"), "x-kubernetes-list-map-keys") }, root + ".properties.spec.properties.ports", "x-kubernetes-list-type map needs x-kubernetes-list-map-keys"},
		{"map of scalars", func(c map[string]any) {
			prop(c, "tags")["x-kubernetes-list-type"] = "map"
			prop(c, "tags")["x-kubernetes-list-map-keys"] = []any{"a"}
		}, root + ".properties.spec.properties.tags", "x-kubernetes-list-type map needs object items, not scalar"},
		{"unknown list type", func(c map[string]any) { prop(c, "tags")["x-kubernetes-list-type"] = "bag" }, root + ".properties.spec.properties.tags", `unknown x-kubernetes-list-type "bag"`},
		{"unknown map type", func(c map[string]any) { prop(c, "labels")["x-kubernetes-map-type"] = "weird" }, root + ".properties.spec.properties.labels", `unknown x-kubernetes-map-type "weird"`},
		{"ref", func(c map[string]any) { prop(c, "labels")["$ref"] = "#/definitions/x" }, root + ".properties.spec.properties.labels", "$ref is not allowed"},
		{"tuple items", func(c map[string]any) { prop(c, "args")["items"] = []any{} }, root + ".properties.spec.properties.args.items", "items as an array of schemas is not supported"},
		{"bad keys", func(c map[string]any) { prop(c, "ports")["x-kubernetes-list-map-keys"] = "port" }, root + ".properties.spec.properties.ports.x-kubernetes-list-map-keys", "expected an array, got a string"},
		{"root not object", func(c map[string]any) {
			s := schema(c)
			delete(s, "properties")
			s["type"] = "string"
		}, root, "the root must be an object, not scalar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := decodeJSON(t, widgetCRD)
			tt.edit(crd)
			_, err := FromCRD(crd)
			want := source + tt.path + ": " + tt.want
			if err == nil {
				t.Fatalf("no error, want %s", want)
			}
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n got %s\nwant %s", err, want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Path != tt.path || e.Source != `customresourcedefinition "widgets.example.com"` {
				t.Errorf("error %#v does not carry the CRD and the path", err)
			}
		})
	}
}

// TestFromCRDCopiesDefaults checks that Types do not share defaults with the
// caller's CRD.
func TestFromCRDCopiesDefaults(t *testing.T) {
	crd := decodeJSON(t, widgetCRD)
	spec := crd["spec"].(map[string]any)
	props := spec["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)
	def := map[string]any{"a": "b"}
	props["spec"].(map[string]any)["default"] = def
	versions, err := FromCRD(crd)
	if err != nil {
		t.Fatal(err)
	}
	def["a"] = "changed"
	if got := versions[0].Type.Field("spec").Default; !reflect.DeepEqual(got, map[string]any{"a": "b"}) {
		t.Errorf("default %v follows the caller's map", got)
	}
}
