package openapi

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/schemaconv"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/openapi/internal/smdjson"
	"github.com/konverge/konverge/schema"
)

// The merge schema embedded ahead of time is the one kube-apiserver
// computes from the definitions.
func TestSMDMatchesDefinitions(t *testing.T) {
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	want, err := schemaconv.ToSchemaFromOpenAPI(defs, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSMD()
	if err != nil {
		t.Fatal(err)
	}
	sortForCompare(want)
	gotSchema := &smdschema.Schema{Types: slices.Clone(got.parser.Schema.Types)}
	sortForCompare(gotSchema)
	if len(want.Types) != len(gotSchema.Types) {
		t.Fatalf("%d types embedded, %d converted", len(gotSchema.Types), len(want.Types))
	}
	for i := range want.Types {
		// Compared in their encoding: the types hold caches.
		w, g := smdjson.Encode(want.Types[i:i+1]), smdjson.Encode(gotSchema.Types[i:i+1])
		if !reflect.DeepEqual(w, g) {
			t.Errorf("type %s differs from its conversion:\n%#v\n%#v", want.Types[i].Name, want.Types[i], gotSchema.Types[i])
		}
	}
	// Every kind of the definitions, and only those, is indexed.
	n := 0
	for name, d := range defs {
		list, _ := d.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, x := range list {
			m := x.(map[string]any)
			gvk := schema.GVK{Group: m["group"].(string), Version: m["version"].(string), Kind: m["kind"].(string)}
			n++
			if got.byGVK[gvk] != name {
				t.Errorf("%v: definition %q, want %q", gvk, got.byGVK[gvk], name)
			}
		}
	}
	if n != len(got.kinds) {
		t.Errorf("%d kinds indexed, %d in the definitions", len(got.kinds), n)
	}
}

func sortForCompare(s *smdschema.Schema) {
	slices.SortFunc(s.Types, func(a, b smdschema.TypeDef) int { return cmp.Compare(a.Name, b.Name) })
	var walk func(a *smdschema.Atom)
	walk = func(a *smdschema.Atom) {
		if a.Map != nil {
			slices.SortFunc(a.Map.Fields, func(x, y smdschema.StructField) int { return cmp.Compare(x.Name, y.Name) })
			for i := range a.Map.Fields {
				walk(&a.Map.Fields[i].Type.Inlined)
			}
			walk(&a.Map.ElementType.Inlined)
		}
		if a.List != nil {
			walk(&a.List.ElementType.Inlined)
		}
	}
	for i := range s.Types {
		walk(&s.Types[i].Atom)
	}
}

func mustObject(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80}]
        args: [a, b]
`

// The converter gives the field sets of kube-apiserver's own converter,
// built at run time from the same definitions.
func TestTypeConverterMatchesManagedFields(t *testing.T) {
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := managedfields.NewTypeConverter(defs, false)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	obj := mustObject(t, deployment)
	want, err := ref.ObjectToTyped(obj)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tc.ObjectToTyped(obj)
	if err != nil {
		t.Fatal(err)
	}
	wantSet, _ := want.ToFieldSet()
	gotSet, _ := got.ToFieldSet()
	if !wantSet.Equals(gotSet) {
		t.Fatalf("field set\n%s\nwant\n%s", gotSet, wantSet)
	}
	for _, p := range []string{
		`.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]`,
		`.spec.template.spec.containers[name="nginx"].args`,
		`.metadata.labels.app`,
	} {
		if !strings.Contains(gotSet.String(), p) {
			t.Errorf("field set lacks %s:\n%s", p, gotSet)
		}
	}
	back, err := tc.TypedToObject(got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.(*unstructured.Unstructured).Object, obj.Object) {
		t.Errorf("round trip changed the object: %v", back)
	}
}

func TestTypeConverterErrors(t *testing.T) {
	tc, err := TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	_, err = tc.ObjectToTyped(mustObject(t, "apiVersion: example.com/v1\nkind: Widget\n"))
	if !runtime.IsNotRegisteredError(err) {
		t.Errorf("unknown kind: %v, want a not-registered error", err)
	}
	_, err = tc.ObjectToTyped(mustObject(t, "apiVersion: v1\nkind: ConfigMap\ndata: {a: 1}\nfoo: 1\n"))
	if err == nil || !strings.Contains(err.Error(), ".foo: field not declared in schema") {
		t.Errorf("unknown field: %v", err)
	}
}

func TestLookupKind(t *testing.T) {
	name, def, ok, err := LookupKind(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})
	if err != nil || !ok {
		t.Fatalf("LookupKind: %v %v", ok, err)
	}
	if name != "io.k8s.api.apps.v1.Deployment" || !strings.HasPrefix(def.Description, "Deployment enables declarative updates") {
		t.Errorf("got %s: %q", name, def.Description)
	}
	specName, specDef, err := Resolve(ptr(def.Properties["spec"]))
	if err != nil || specName != "io.k8s.api.apps.v1.DeploymentSpec" || specDef.Properties["replicas"].Description == "" {
		t.Errorf("Resolve(spec) = %s, %v", specName, err)
	}
	if _, _, ok, _ := LookupKind(schema.GVK{Group: "example.com", Version: "v1", Kind: "Widget"}); ok {
		t.Error("found a kind that is not built in")
	}
	kinds, err := Kinds()
	if err != nil || len(kinds) < 100 {
		t.Fatalf("Kinds: %d, %v", len(kinds), err)
	}
	if !slices.IsSortedFunc(kinds, func(a, b Kind) int {
		return cmp.Or(cmp.Compare(a.GVK.Group, b.GVK.Group), cmp.Compare(a.GVK.Version, b.GVK.Version), cmp.Compare(a.GVK.Kind, b.GVK.Kind))
	}) {
		t.Error("Kinds not sorted")
	}
}

func ptr[T any](v T) *T { return &v }

func BenchmarkDecodeDefinitions(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeDefinitions(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeSMD(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeSMD(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewTypeConverterFromDefinitions is what building the converter
// from the definitions at run time costs instead (after decoding them).
func BenchmarkNewTypeConverterFromDefinitions(b *testing.B) {
	defs, err := Definitions()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := managedfields.NewTypeConverter(defs, false); err != nil {
			b.Fatal(err)
		}
	}
}

func TestEmptyObject(t *testing.T) {
	obj, ok, err := EmptyObject(schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	want := map[string]any{
		"metadata": map[string]any{},
		"spec": map[string]any{
			"selector": nil,
			"template": map[string]any{"metadata": map[string]any{}, "spec": map[string]any{"containers": nil}},
			"strategy": map[string]any{},
		},
		"status": map[string]any{},
	}
	if !reflect.DeepEqual(obj, want) {
		t.Errorf("got %v", obj)
	}
	svc, _, _ := EmptyObject(schema.GVK{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
	if n := svc["spec"].(map[string]any)["groupPriorityMinimum"]; n != int64(0) {
		t.Errorf("number %T %v", n, n)
	}
	kinds, _ := Kinds()
	for _, k := range kinds {
		if _, ok, err := EmptyObject(k.GVK); !ok || err != nil {
			t.Errorf("%v: no empty object (%v)", k.GVK, err)
		}
	}
	if _, ok, _ := EmptyObject(schema.GVK{Group: "example.com", Version: "v1", Kind: "Widget"}); ok {
		t.Error("an empty object for a kind that is not built in")
	}
}
