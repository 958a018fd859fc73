package value_test

import (
	"testing"

	"github.com/konverge/konverge/value"
)

func TestPathString(t *testing.T) {
	key := func(kvs ...any) value.Element {
		var keys []value.KeyField
		for i := 0; i < len(kvs); i += 2 {
			keys = append(keys, value.KeyField{Name: kvs[i].(string), Value: kvs[i+1]})
		}
		return value.KeyElement(keys...)
	}
	field := value.FieldElement
	for _, tc := range []struct {
		name string
		path value.Path
		want string
	}{
		{"root", nil, "."},
		{"empty", value.Path{}, "."},
		{"field", value.Path{field("spec")}, "spec"},
		{"field chain", value.Path{field("spec"), field("template")}, "spec.template"},
		{"key", value.Path{field("containers"), key("name", "nginx")}, `containers[name="nginx"]`},
		{"multiple keys", value.Path{field("ports"), key("containerPort", int64(80), "protocol", "TCP")}, `ports[containerPort=80,protocol="TCP"]`},
		{"float key value", value.Path{field("ports"), key("containerPort", 80.0)}, `ports[containerPort=80]`},
		{"set value", value.Path{field("metadata"), field("finalizers"), value.ValueElement("a")}, `metadata.finalizers[="a"]`},
		{"set number", value.Path{field("codes"), value.ValueElement(int64(404))}, `codes[=404]`},
		{"set null", value.Path{field("l"), value.ValueElement(nil)}, `l[=null]`},
		{"set bool", value.Path{field("l"), value.ValueElement(true)}, `l[=true]`},
		{"index", value.Path{field("args"), value.IndexElement(3)}, "args[3]"},
		{"index of index", value.Path{field("m"), value.IndexElement(0), value.IndexElement(12)}, "m[0][12]"},
		{"starts with key", value.Path{key("name", "x"), field("image")}, `[name="x"].image`},
		{"starts with index", value.Path{value.IndexElement(0), field("kind")}, `[0].kind`},
		{"starts with value", value.Path{value.ValueElement("v")}, `[="v"]`},
		{"full", value.Path{
			field("spec"), field("template"), field("spec"), field("containers"), key("name", "nginx"),
			field("ports"), key("containerPort", int64(80), "protocol", "TCP"),
		}, `spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]`},
		{"args of a container", value.Path{field("containers"), key("name", "nginx"), field("args"), value.IndexElement(3)}, `containers[name="nginx"].args[3]`},
		{"quoted key value", value.Path{key("name", `a"b\c`)}, `[name="a\"b\\c"]`},
		{"html in key value", value.Path{key("name", "<x>")}, `[name="\u003cx\u003e"]`},
		{"object as key value", value.Path{key("k", map[string]any{"a": 1})}, `[k=<object>]`},
		{"list as value", value.Path{value.ValueElement([]any{1})}, `[=<list>]`},
		{"NaN as value", value.Path{value.ValueElement(0.0 / zero)}, `[=<invalid>]`},
		{"empty field", value.Path{field("data"), field("")}, "data."},
		{"field with dot", value.Path{field("metadata"), field("annotations"), field("example.com/x")}, "metadata.annotations[example.com/x]"},
		{"no keys", value.Path{key()}, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.path.String(); got != tc.want {
				t.Errorf("String() = %s, want %s", got, tc.want)
			}
		})
	}
}

var zero float64

func TestElementString(t *testing.T) {
	for _, tc := range []struct {
		el   value.Element
		want string
	}{
		{value.FieldElement("spec"), "spec"},
		{value.KeyElement(value.KeyField{Name: "name", Value: "nginx"}), `[name="nginx"]`},
		{value.ValueElement("a"), `[="a"]`},
		{value.IndexElement(3), "[3]"},
	} {
		if got := tc.el.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
	}
}

func TestPathChild(t *testing.T) {
	base := make(value.Path, 1, 8) // spare capacity a careless append would share
	base[0] = value.FieldElement("spec")
	a := base.Field("a")
	b := base.Child(value.IndexElement(1))
	if a.String() != "spec.a" || b.String() != "spec[1]" || base.String() != "spec" {
		t.Errorf("Child shares memory: base %s, a %s, b %s", base, a, b)
	}
	if got := value.Path(nil).Field("metadata").Field("name").String(); got != "metadata.name" {
		t.Errorf("Field chain = %s", got)
	}
}
