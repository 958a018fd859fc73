package openapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/konverge/konverge/openapi/internal/smdjson"
	"github.com/konverge/konverge/schema"
)

// RefPrefix is how a reference names a definition in the documents:
// "#/components/schemas/io.k8s.api.core.v1.PodSpec".
const RefPrefix = "#/components/schemas/"

// Definitions returns every definition of the documents (their
// components.schemas), by name ("io.k8s.api.apps.v1.Deployment"). They are
// decoded on the first call and shared: callers must not modify them.
func Definitions() (map[string]*spec.Schema, error) {
	return definitions()
}

var definitions = sync.OnceValues(decodeDefinitions)

// decodeDefinitions decodes the embedded definitions.
func decodeDefinitions() (map[string]*spec.Schema, error) {
	data, err := gunzip(definitionsData)
	if err != nil {
		return nil, fmt.Errorf("openapi: definitions: %w", err)
	}
	var defs map[string]*spec.Schema
	if err := json.Unmarshal(data, &defs); err != nil {
		return nil, fmt.Errorf("openapi: definitions: %w", err)
	}
	return defs, nil
}

// DefinitionsJSON returns the definitions as the documents hold them: one
// JSON object of every definition by name, for readers that walk them as
// plain JSON values (explain's templates). Each call decodes a new copy.
func DefinitionsJSON() ([]byte, error) {
	data, err := gunzip(definitionsData)
	if err != nil {
		return nil, fmt.Errorf("openapi: definitions: %w", err)
	}
	return data, nil
}

// Definition returns the definition of a name, nil if there is none.
func Definition(name string) (*spec.Schema, error) {
	defs, err := definitions()
	if err != nil {
		return nil, err
	}
	return defs[name], nil
}

// Kind is a kind of the documents: the definition of its objects.
type Kind struct {
	GVK schema.GVK
	// Definition is the name of its definition ("io.k8s.api.apps.v1.Deployment").
	Definition string
}

// Kinds returns every kind that names a definition (by its
// x-kubernetes-group-version-kind), sorted by group, version and kind.
// It includes the kinds of options and lists (DeleteOptions,
// DeploymentList).
func Kinds() ([]Kind, error) {
	m, err := smd()
	if err != nil {
		return nil, err
	}
	return slices.Clone(m.kinds), nil
}

// LookupKind returns the definition of a kind and its name; ok is false
// when no definition names the kind.
func LookupKind(gvk schema.GVK) (name string, def *spec.Schema, ok bool, err error) {
	m, err := smd()
	if err != nil {
		return "", nil, false, err
	}
	name, ok = m.byGVK[gvk]
	if !ok {
		return "", nil, false, nil
	}
	def, err = Definition(name)
	if err != nil {
		return "", nil, false, err
	}
	return name, def, def != nil, nil
}

// Resolve follows what a property refers to: a $ref, or a $ref that the
// documents wrap in a one-element allOf (to give it a default or a
// description). It returns the definition's name and schema, or "" and s
// itself when s refers to nothing.
func Resolve(s *spec.Schema) (string, *spec.Schema, error) {
	if s == nil {
		return "", nil, nil
	}
	ref := s.Ref.String()
	if ref == "" && len(s.AllOf) == 1 {
		ref = s.AllOf[0].Ref.String()
	}
	if ref == "" {
		return "", s, nil
	}
	name := strings.TrimPrefix(ref, RefPrefix)
	def, err := Definition(name)
	if err != nil {
		return "", nil, err
	}
	if def == nil {
		return "", nil, fmt.Errorf("openapi: no definition %q", name)
	}
	return name, def, nil
}

// smdTables is the decoded structured-merge-diff data.
type smdTables struct {
	parser *typed.Parser
	kinds  []Kind
	byGVK  map[schema.GVK]string
	zero   map[schema.GVK]json.RawMessage
	// empty caches the decoded zero objects.
	empty sync.Map
}

var smd = sync.OnceValues(decodeSMD)

// decodeSMD decodes the embedded structured-merge-diff data.
func decodeSMD() (*smdTables, error) {
	data, err := gunzip(smdData)
	if err != nil {
		return nil, fmt.Errorf("openapi: merge schema: %w", err)
	}
	var raw struct {
		Types smdjson.Raw `json:"types"`
		Kinds []struct {
			Group, Version, Kind, Definition string
		} `json:"kinds"`
		Zero map[string]json.RawMessage `json:"zero"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("openapi: merge schema: %w", err)
	}
	t := &smdTables{
		parser: &typed.Parser{Schema: smdschema.Schema{Types: smdjson.Decode(raw.Types)}},
		byGVK:  make(map[schema.GVK]string, len(raw.Kinds)),
		zero:   make(map[schema.GVK]json.RawMessage, len(raw.Zero)),
	}
	for k, v := range raw.Zero {
		parts := strings.SplitN(k, "/", 3)
		if len(parts) == 3 {
			t.zero[schema.GVK{Group: parts[0], Version: parts[1], Kind: parts[2]}] = v
		}
	}
	for _, k := range raw.Kinds {
		gvk := schema.GVK{Group: k.Group, Version: k.Version, Kind: k.Kind}
		t.kinds = append(t.kinds, Kind{GVK: gvk, Definition: k.Definition})
		t.byGVK[gvk] = k.Definition
	}
	return t, nil
}

func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// EmptyObject returns the empty object of a built-in kind as kube-apiserver
// encodes the zero value of its Go type: its struct fields without
// omitempty are there ({"metadata":{},"spec":{"selector":null,
// "template":{...},"strategy":{}},"status":{}} for a Deployment), without
// apiVersion and kind. kube-apiserver's field manager compares a created
// object with this one, so a field that is there in it is not recorded as
// added ("."). Numbers are int64. Each call returns a new object; ok is
// false for a kind that is not built in.
func EmptyObject(gvk schema.GVK) (obj map[string]any, ok bool, err error) {
	t, err := smd()
	if err != nil {
		return nil, false, err
	}
	if cached, ok := t.empty.Load(gvk); ok {
		return deepCopy(cached).(map[string]any), true, nil
	}
	raw, ok := t.zero[gvk]
	if !ok {
		return nil, false, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil {
		return nil, false, fmt.Errorf("openapi: empty %s: %w", gvk, err)
	}
	obj = normalizeNumbers(obj).(map[string]any)
	t.empty.Store(gvk, obj)
	return deepCopy(obj).(map[string]any), true, nil
}

// deepCopy copies the maps and lists of a JSON value.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = deepCopy(e)
		}
		return c
	}
	return v
}

// normalizeNumbers turns json.Numbers into int64, or float64 when they
// are not integers.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
