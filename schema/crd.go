package schema

import (
	"errors"
	"fmt"
	"strconv"
)

// CRDVersion is one version of a custom resource: its kind, names and the
// Type of its objects.
type CRDVersion struct {
	// GVK is spec.group, the version's name and spec.names.kind.
	GVK GVK
	// Scope is "Namespaced" or "Cluster".
	Scope string
	// Plural, Singular, ShortNames and ListKind are spec.names.
	Plural     string
	Singular   string
	ShortNames []string
	ListKind   string
	// Served and Storage are the version's flags.
	Served  bool
	Storage bool
	// Type is the type of the objects, from the version's
	// schema.openAPIV3Schema. Its root always has the fields apiVersion,
	// kind and metadata (ObjectMeta, as for built-in kinds).
	Type *Type
}

// FromCRD reads a CustomResourceDefinition of apiextensions.k8s.io/v1, as
// decoded from JSON (map[string]any, []any, string, int64, float64, bool),
// and returns its versions in the order of spec.versions.
//
// Each version's schema.openAPIV3Schema (an inline schema, without $ref)
// becomes a Type with the rules the API server applies to custom resources
// in server-side apply:
//
//   - x-kubernetes-list-type map with x-kubernetes-list-map-keys: MergeByKey,
//     MergeKey the first key and Keys all of them; set: Set; atomic or
//     absent: Atomic;
//   - x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key, where
//     present, decide instead, as in ParseOpenAPIV3;
//   - x-kubernetes-map-type atomic on an object: Replace;
//   - x-kubernetes-preserve-unknown-fields without properties: Untyped;
//   - x-kubernetes-int-or-string: IntOrString;
//   - x-kubernetes-embedded-resource: a Struct with apiVersion, kind and
//     metadata besides its properties.
//
// A version without a schema has a Type with only apiVersion, kind and
// metadata; its other fields are Untyped. Errors are *Error values naming
// the CRD and the position in it.
//
// kubectl's client-side apply sends custom resources a JSON merge patch
// (the API server does not accept strategic merge patches for them); use
// UntypedType for the objects to get that behaviour, and these Types where
// konverge should merge lists by key.
func FromCRD(crd map[string]any) ([]CRDVersion, error) {
	name := ""
	if meta, ok := crd["metadata"].(map[string]any); ok {
		name, _ = meta["name"].(string)
	}
	source := fmt.Sprintf("customresourcedefinition %q", name)
	fail := func(path string, err error) error {
		return &Error{Source: source, Path: path, Err: err}
	}
	if v, ok := crd["apiVersion"]; ok && v != "apiextensions.k8s.io/v1" {
		return nil, fail(".apiVersion", fmt.Errorf("unsupported %v, want apiextensions.k8s.io/v1", v))
	}
	if v, ok := crd["kind"]; ok && v != "CustomResourceDefinition" {
		return nil, fail(".kind", fmt.Errorf("got %v, want CustomResourceDefinition", v))
	}
	spec, err := field[map[string]any](crd, "spec", nil, true)
	if err != nil {
		return nil, fail(".spec", err)
	}
	group, err := field[string](spec, "group", "", true)
	if err != nil {
		return nil, fail(".spec.group", err)
	}
	scope, err := field[string](spec, "scope", "", true)
	if err != nil {
		return nil, fail(".spec.scope", err)
	}
	if scope != "Namespaced" && scope != "Cluster" {
		return nil, fail(".spec.scope", fmt.Errorf("got %q, want Namespaced or Cluster", scope))
	}
	names, err := field[map[string]any](spec, "names", nil, true)
	if err != nil {
		return nil, fail(".spec.names", err)
	}
	var base CRDVersion
	base.Scope = scope
	for _, f := range []struct {
		key      string
		dst      *string
		required bool
	}{
		{"kind", &base.GVK.Kind, true},
		{"plural", &base.Plural, true},
		{"singular", &base.Singular, false},
		{"listKind", &base.ListKind, false},
	} {
		if *f.dst, err = field[string](names, f.key, "", f.required); err != nil {
			return nil, fail(".spec.names."+f.key, err)
		}
	}
	if base.ShortNames, err = stringList(names["shortNames"]); err != nil {
		return nil, fail(".spec.names.shortNames", err)
	}
	versions, err := field[[]any](spec, "versions", nil, true)
	if err != nil {
		return nil, fail(".spec.versions", err)
	}
	if len(versions) == 0 {
		return nil, fail(".spec.versions", errors.New("no versions"))
	}

	out := make([]CRDVersion, 0, len(versions))
	for i, v := range versions {
		path := ".spec.versions[" + strconv.Itoa(i) + "]"
		vm, ok := v.(map[string]any)
		if !ok {
			return nil, fail(path, fmt.Errorf("expected an object, got %s", jsonTypeName(v)))
		}
		cv := base
		cv.ShortNames = append([]string(nil), base.ShortNames...)
		cv.GVK.Group = group
		if cv.GVK.Version, err = field[string](vm, "name", "", true); err != nil {
			return nil, fail(path+".name", err)
		}
		if cv.Served, err = field[bool](vm, "served", false, false); err != nil {
			return nil, fail(path+".served", err)
		}
		if cv.Storage, err = field[bool](vm, "storage", false, false); err != nil {
			return nil, fail(path+".storage", err)
		}
		var root map[string]any
		if s, err := field[map[string]any](vm, "schema", nil, false); err != nil {
			return nil, fail(path+".schema", err)
		} else if s != nil {
			if root, err = field[map[string]any](s, "openAPIV3Schema", nil, false); err != nil {
				return nil, fail(path+".schema.openAPIV3Schema", err)
			}
		}
		if cv.Type, err = crdType(source, path+".schema.openAPIV3Schema", root); err != nil {
			return nil, err
		}
		out = append(out, cv)
	}
	return out, nil
}

// crdType converts the openAPIV3Schema of one CRD version (nil when absent).
func crdType(source, path string, schema map[string]any) (*Type, error) {
	c := newConverter(true, nil)
	c.source = source
	c.objectMeta = objectMeta()
	root := &Type{Kind: Struct, Fields: make(map[string]*Type, 3)}
	if schema != nil {
		n, err := crdNode(schema, path, 0)
		if err != nil {
			// crdNode returns *Error values without a Source.
			var e *Error
			if errors.As(err, &e) {
				e.Source = source
			}
			return nil, err
		}
		t, err := c.position(n, path, 0)
		if err != nil {
			return nil, err
		}
		if err := c.run(); err != nil {
			return nil, err
		}
		switch t.Kind {
		case Struct:
			// position never shares Structs: t is ours to extend.
			root = t
		case Untyped:
			root.Default = t.Default
			root.Replace = t.Replace
		default:
			return nil, &Error{Source: source, Path: path, Err: fmt.Errorf("the root must be an object, not %s", t.Kind)}
		}
	}
	c.addObjectFields(root)
	return root, nil
}

// field returns m[key] as a T. A missing key (or null) is an error when
// required and def otherwise.
func field[T any](m map[string]any, key string, def T, required bool) (T, error) {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			return def, errors.New("required")
		}
		return def, nil
	}
	t, ok := v.(T)
	if !ok {
		var want T
		return def, fmt.Errorf("expected %s, got %s", jsonTypeName(any(want)), jsonTypeName(v))
	}
	return t, nil
}

// stringList converts a JSON array of strings.
func stringList(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []string:
		return append([]string(nil), v...), nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("[%d]: expected a string, got %s", i, jsonTypeName(e))
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("expected an array, got %s", jsonTypeName(v))
}

// jsonTypeName names the JSON type of a decoded value.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int32, int64, float32, float64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any, []string:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

// crdNode converts one JSON schema of a CRD, decoded as map[string]any, into
// a node. path is its position in the CRD; errors are *Error values with
// that path and no Source.
func crdNode(m map[string]any, path string, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, &Error{Path: path, Err: fmt.Errorf("schema nested more than %d levels deep", maxDepth)}
	}
	n := &node{}
	wrong := func(key string, want string, v any) error {
		return &Error{Path: path + "." + key, Err: fmt.Errorf("expected %s, got %s", want, jsonTypeName(v))}
	}
	child := func(key string, v any) (*node, error) {
		cm, ok := v.(map[string]any)
		if !ok {
			return nil, wrong(key, "an object", v)
		}
		return crdNode(cm, path+"."+key, depth+1)
	}
	children := func(key string, v any) ([]*node, error) {
		l, ok := v.([]any)
		if !ok {
			return nil, wrong(key, "an array", v)
		}
		out := make([]*node, len(l))
		for i, e := range l {
			c, err := child(key+"["+strconv.Itoa(i)+"]", e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	strs := map[string]*string{
		"$ref":                         &n.Ref,
		"type":                         &n.Type,
		"format":                       &n.Format,
		"x-kubernetes-patch-strategy":  &n.PatchStrategy,
		"x-kubernetes-patch-merge-key": &n.PatchMergeKey,
		"x-kubernetes-list-type":       &n.ListType,
		"x-kubernetes-map-type":        &n.MapType,
	}
	bools := map[string]*bool{
		"x-kubernetes-preserve-unknown-fields": &n.PreserveUnknownFields,
		"x-kubernetes-embedded-resource":       &n.EmbeddedResource,
		"x-kubernetes-int-or-string":           &n.IntOrString,
	}
	var err error
	for key, v := range m {
		if dst, ok := strs[key]; ok {
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, wrong(key, "a string", v)
			}
			*dst = s
			continue
		}
		if dst, ok := bools[key]; ok {
			if v == nil {
				continue
			}
			b, ok := v.(bool)
			if !ok {
				return nil, wrong(key, "a boolean", v)
			}
			*dst = b
			continue
		}
		switch key {
		case "properties":
			pm, ok := v.(map[string]any)
			if !ok {
				return nil, wrong(key, "an object", v)
			}
			n.Properties = make(map[string]*node, len(pm))
			for _, name := range sortedKeys(pm) {
				if n.Properties[name], err = child("properties."+name, pm[name]); err != nil {
					return nil, err
				}
			}
		case "additionalProperties":
			switch v := v.(type) {
			case bool, nil:
			default:
				s, err := child(key, v)
				if err != nil {
					return nil, err
				}
				n.AdditionalProperties = &additional{Schema: s}
			}
		case "items":
			if _, ok := v.([]any); ok {
				return nil, &Error{Path: path + ".items", Err: errors.New("items as an array of schemas is not supported")}
			}
			if n.Items, err = child(key, v); err != nil {
				return nil, err
			}
		case "allOf":
			if n.AllOf, err = children(key, v); err != nil {
				return nil, err
			}
		case "oneOf":
			if n.OneOf, err = children(key, v); err != nil {
				return nil, err
			}
		case "anyOf":
			if n.AnyOf, err = children(key, v); err != nil {
				return nil, err
			}
		case "x-kubernetes-list-map-keys":
			if n.ListMapKeys, err = stringList(v); err != nil {
				return nil, &Error{Path: path + "." + key, Err: err}
			}
		case "default":
			n.value, n.hasValue = v, v != nil
		}
	}
	return n, nil
}
