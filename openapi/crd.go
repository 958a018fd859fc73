package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/konverge/konverge/schema"
)

// objectMetaDef is the definition of every object's metadata.
const objectMetaDef = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// CustomResourceTypeConverter returns the converter of the custom resources
// that a CustomResourceDefinition (apiextensions.k8s.io/v1, as JSON values)
// defines, built as kube-apiserver builds it: each version's
// openAPIV3Schema with apiVersion, kind and metadata (ObjectMeta) added at
// the root and in embedded resources (x-kubernetes-embedded-resource),
// converted with spec.preserveUnknownFields. The list types
// (x-kubernetes-list-type, -list-map-keys), map types
// (x-kubernetes-map-type) and x-kubernetes-preserve-unknown-fields of the
// schema decide how server-side apply merges. A version without a schema
// has objects with only the fields at its root known; a CRD none of whose
// versions has a schema merges every field atomically, as
// managedfields.NewDeducedTypeConverter.
func CustomResourceTypeConverter(crd map[string]any) (managedfields.TypeConverter, error) {
	spec_, _ := crd["spec"].(map[string]any)
	group, _ := spec_["group"].(string)
	names, _ := spec_["names"].(map[string]any)
	kind, _ := names["kind"].(string)
	preserve, _ := spec_["preserveUnknownFields"].(bool)
	versions, _ := spec_["versions"].([]any)
	if group == "" || kind == "" || len(versions) == 0 {
		return nil, fmt.Errorf("openapi: CustomResourceDefinition without group, kind or versions")
	}
	models := map[string]*spec.Schema{}
	gvks := map[schema.GVK]string{}
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		version, _ := vm["name"].(string)
		if version == "" {
			continue
		}
		var root any
		if val, ok := vm["schema"].(map[string]any); ok {
			root = val["openAPIV3Schema"]
		}
		if root == nil {
			if val, ok := spec_["validation"].(map[string]any); ok {
				root = val["openAPIV3Schema"]
			}
		}
		s, err := customResourceSchema(root)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s/%s %s: %w", group, version, kind, err)
		}
		name := modelName(group, version, kind)
		models[name] = s
		gvks[schema.GVK{Group: group, Version: version, Kind: kind}] = name
	}
	if len(models) == 0 {
		return managedfields.NewDeducedTypeConverter(), nil
	}
	conv, err := schemaconv.ToSchemaFromOpenAPI(models, preserve)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s %s: %w", group, kind, err)
	}
	meta, err := metaTypes()
	if err != nil {
		return nil, err
	}
	own := map[string]bool{}
	for _, td := range conv.Types {
		own[td.Name] = true
	}
	types := slices.Clone(conv.Types)
	for _, td := range meta {
		if !own[td.Name] {
			types = append(types, td)
		}
	}
	parser := &typed.Parser{Schema: smdschema.Schema{Types: types}}
	byGVK := make(map[schema.GVK]*typed.ParseableType, len(gvks))
	for gvk, name := range gvks {
		pt := parser.Type(name)
		byGVK[gvk] = &pt
	}
	return &crdConverter{types: byGVK}, nil
}

type crdConverter struct {
	types map[schema.GVK]*typed.ParseableType
}

// ObjectToTyped implements managedfields.TypeConverter.
func (c *crdConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return objectToTyped(obj, func(gvk schema.GVK) *typed.ParseableType { return c.types[gvk] }, opts)
}

// TypedToObject implements managedfields.TypeConverter.
func (c *crdConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	return typedToObject(v)
}

// modelName is the definition name kube-apiserver gives a custom kind:
// the group reversed ("com.example.v1.Widget").
func modelName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + version + "." + kind
}

// customResourceSchema is the schema of a custom kind's objects from the
// openAPIV3Schema of one version (nil: none): the schema with apiVersion,
// kind and metadata at the root and in embedded resources.
func customResourceSchema(root any) (*spec.Schema, error) {
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	if root == nil {
		return s, nil
	}
	data, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("openAPIV3Schema: %w", err)
	}
	addEmbedded(s)
	s.SetProperty("metadata", *spec.RefSchema(RefPrefix + objectMetaDef))
	s.SetProperty("apiVersion", *spec.StringProperty())
	s.SetProperty("kind", *spec.StringProperty())
	return s, nil
}

// addEmbedded gives every embedded resource (x-kubernetes-embedded-resource)
// below s its apiVersion, kind and metadata.
func addEmbedded(s *spec.Schema) {
	if s == nil {
		return
	}
	for k, p := range s.Properties {
		addEmbedded(&p)
		s.Properties[k] = p
	}
	if s.Items != nil {
		addEmbedded(s.Items.Schema)
		for i := range s.Items.Schemas {
			addEmbedded(&s.Items.Schemas[i])
		}
	}
	if s.AdditionalProperties != nil {
		addEmbedded(s.AdditionalProperties.Schema)
	}
	if embedded, ok := s.Extensions.GetBool("x-kubernetes-embedded-resource"); ok && embedded {
		s.SetProperty("apiVersion", *spec.StringProperty())
		s.SetProperty("kind", *spec.StringProperty())
		s.SetProperty("metadata", *spec.RefSchema(RefPrefix + objectMetaDef))
	}
}

// metaTypes are the types of the built-in schema that ObjectMeta needs,
// with the ones every schema holds.
var metaTypes = sync.OnceValues(func() ([]smdschema.TypeDef, error) {
	t, err := smd()
	if err != nil {
		return nil, err
	}
	s := &t.parser.Schema
	seen := map[string]bool{}
	var out []smdschema.TypeDef
	var visitRef func(tr smdschema.TypeRef)
	var visitAtom func(a smdschema.Atom)
	visitRef = func(tr smdschema.TypeRef) {
		if tr.NamedType != nil {
			name := *tr.NamedType
			if seen[name] {
				return
			}
			seen[name] = true
			td, ok := s.FindNamedType(name)
			if !ok {
				return
			}
			out = append(out, td)
			visitAtom(td.Atom)
			return
		}
		visitAtom(tr.Inlined)
	}
	visitAtom = func(a smdschema.Atom) {
		if a.Map != nil {
			for _, f := range a.Map.Fields {
				visitRef(f.Type)
			}
			visitRef(a.Map.ElementType)
		}
		if a.List != nil {
			visitRef(a.List.ElementType)
		}
	}
	name := objectMetaDef
	visitRef(smdschema.TypeRef{NamedType: &name})
	if len(out) == 0 {
		return nil, fmt.Errorf("openapi: no definition %s", objectMetaDef)
	}
	for _, common := range []string{"__untyped_atomic_", "__untyped_deduced_"} {
		if td, ok := s.FindNamedType(common); ok && !seen[common] {
			out = append(out, td)
		}
	}
	return out, nil
})
