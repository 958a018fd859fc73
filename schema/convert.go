package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// node is the part of one JSON schema that decides how values merge. OpenAPI
// documents are decoded into nodes with encoding/json; CRD schemas, which
// arrive as map[string]any, are converted by crdNode. Everything else in a
// schema (descriptions, validations) is dropped.
type node struct {
	Ref                   string           `json:"$ref"`
	AllOf                 []*node          `json:"allOf"`
	OneOf                 []*node          `json:"oneOf"`
	AnyOf                 []*node          `json:"anyOf"`
	Type                  string           `json:"type"`
	Format                string           `json:"format"`
	Properties            map[string]*node `json:"properties"`
	AdditionalProperties  *additional      `json:"additionalProperties"`
	Items                 *node            `json:"items"`
	RawDefault            json.RawMessage  `json:"default"`
	PatchStrategy         string           `json:"x-kubernetes-patch-strategy"`
	PatchMergeKey         string           `json:"x-kubernetes-patch-merge-key"`
	ListType              string           `json:"x-kubernetes-list-type"`
	ListMapKeys           []string         `json:"x-kubernetes-list-map-keys"`
	MapType               string           `json:"x-kubernetes-map-type"`
	PreserveUnknownFields bool             `json:"x-kubernetes-preserve-unknown-fields"`
	EmbeddedResource      bool             `json:"x-kubernetes-embedded-resource"`
	IntOrString           bool             `json:"x-kubernetes-int-or-string"`
	GVKs                  []GVK            `json:"x-kubernetes-group-version-kind"`

	// value and hasValue hold the default of a node converted from a CRD,
	// which arrives decoded; OpenAPI nodes hold it in RawDefault.
	value    any
	hasValue bool
}

// additional is additionalProperties: a boolean or a schema.
type additional struct {
	Schema *node
}

func (a *additional) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] != '{' {
		var allowed bool
		return json.Unmarshal(data, &allowed)
	}
	a.Schema = new(node)
	return json.Unmarshal(data, a.Schema)
}

// hasDefault reports whether n gives a default.
func (n *node) hasDefault() bool {
	if n.hasValue {
		return true
	}
	raw := bytes.TrimSpace(n.RawDefault)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// defaultValue returns the default of n as konverge values hold JSON:
// map[string]any, []any, string, int64 for integers that fit, float64 for
// other numbers, bool.
func (n *node) defaultValue() (any, error) {
	if n.hasValue {
		return normalize(n.value)
	}
	d := json.NewDecoder(bytes.NewReader(n.RawDefault))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v)
}

// normalize returns a copy of the JSON value v with numbers as int64 (when
// integral and in range) or float64.
func normalize(v any) (any, error) {
	switch v := v.(type) {
	case nil, string, bool, int64:
		return v, nil
	case float64:
		return v, nil
	case int:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case float32:
		return float64(v), nil
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s out of range", v)
		}
		return f, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			ne, err := normalize(e)
			if err != nil {
				return nil, err
			}
			out[i] = ne
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			ne, err := normalize(e)
			if err != nil {
				return nil, err
			}
			out[k] = ne
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported default value of type %T", v)
}

// maxDepth bounds how deeply inline schemas may nest.
const maxDepth = 512

// converter turns nodes into Types.
//
// Definitions (named schemas reached through $ref) become one canonical Type
// each, created in two steps so that recursive definitions terminate:
// definition allocates the Type with its Kind and, for a Struct, its Fields
// map, and queues it; run fills the queued Types. A position that references a
// definition and adds something of its own (a patch strategy, a default)
// gets a wrapper Type that shares the definition's Fields map; wrappers are
// filled last, once every definition is complete.
type converter struct {
	// crd selects the rules for CustomResourceDefinition schemas:
	// x-kubernetes-list-type and x-kubernetes-map-type decide merging, and
	// $ref is not allowed. OpenAPI documents of built-in kinds follow the
	// Go struct tags instead, which they carry as x-kubernetes-patch-*.
	crd bool
	// source names the document or definition being converted, for errors.
	source string

	defs     map[string]*node
	defTypes map[string]*Type
	aliasing map[string]bool
	queue    []pendingDef
	wrappers []pendingWrap
	interned map[string]*Type
	// objectMeta is the type of the metadata of CRD roots and embedded
	// resources.
	objectMeta *Type
}

type pendingDef struct {
	name string
	t    *Type
	n    *node
}

type pendingWrap struct {
	source, path string
	w, base      *Type
	n            *node
}

func newConverter(crd bool, defs map[string]*node) *converter {
	c := &converter{
		crd:      crd,
		defs:     defs,
		defTypes: make(map[string]*Type),
		aliasing: make(map[string]bool),
		interned: make(map[string]*Type),
	}
	c.interned[typeKey(untyped)] = untyped
	return c
}

func (c *converter) errorf(path, format string, args ...any) error {
	return &Error{Source: c.source, Path: path, Err: fmt.Errorf(format, args...)}
}

func definitionSource(name string) string {
	return fmt.Sprintf("openapi definition %q", name)
}

// refName returns the definition a $ref names.
func refName(ref string) (string, error) {
	if name, ok := strings.CutPrefix(ref, "#/components/schemas/"); ok {
		return name, nil
	}
	if name, ok := strings.CutPrefix(ref, "#/definitions/"); ok {
		return name, nil
	}
	return "", fmt.Errorf("unsupported reference %q", ref)
}

// ref resolves the $ref of the position at path to the canonical Type of
// its definition.
func (c *converter) ref(ref, path string) (*Type, error) {
	name, err := refName(ref)
	if err != nil {
		return nil, &Error{Source: c.source, Path: path, Err: err}
	}
	t, err := c.definition(name)
	if err != nil {
		return nil, c.errorf(path, "reference %q: %w", ref, err)
	}
	return t, nil
}

// definition returns the canonical Type of the named definition, queueing it
// to be filled if it is new. Its errors carry no position: callers add it.
func (c *converter) definition(name string) (*Type, error) {
	if t, ok := c.defTypes[name]; ok {
		return t, nil
	}
	n, ok := c.defs[name]
	if !ok || n == nil {
		return nil, fmt.Errorf("no definition %q", name)
	}
	if ref := aliasOf(n); ref != "" {
		// A definition that is only a reference is the definition it
		// references.
		if c.aliasing[name] {
			return nil, fmt.Errorf("definition %q refers to itself", name)
		}
		target, err := refName(ref)
		if err != nil {
			return nil, fmt.Errorf("definition %q: %w", name, err)
		}
		c.aliasing[name] = true
		t, err := c.definition(target)
		delete(c.aliasing, name)
		if err != nil {
			return nil, err
		}
		c.defTypes[name] = t
		return t, nil
	}
	t := &Type{Name: name}
	t.Kind, t.Scalar = c.shape(n)
	if t.Kind == Struct {
		t.Fields = make(map[string]*Type, len(n.Properties))
	}
	c.defTypes[name] = t
	c.queue = append(c.queue, pendingDef{name: name, t: t, n: n})
	return t, nil
}

// aliasOf returns the reference a definition consists of, if it is nothing
// but a reference.
func aliasOf(n *node) string {
	if n.Type != "" || len(n.Properties) > 0 || n.Items != nil || n.AdditionalProperties != nil {
		return ""
	}
	if n.Ref != "" {
		return n.Ref
	}
	if len(n.AllOf) == 1 && n.AllOf[0] != nil {
		return n.AllOf[0].Ref
	}
	return ""
}

// run fills every queued definition, then every wrapper.
func (c *converter) run() error {
	for i := 0; i < len(c.queue); i++ {
		d := c.queue[i]
		c.source = definitionSource(d.name)
		if err := c.build(d.t, d.n, "", 0); err != nil {
			return err
		}
		if err := c.decorate(d.t, d.n, ""); err != nil {
			return err
		}
	}
	c.queue = c.queue[:0]
	for _, p := range c.wrappers {
		c.source = p.source
		*p.w = *p.base
		if err := c.decorate(p.w, p.n, p.path); err != nil {
			return err
		}
	}
	c.wrappers = c.wrappers[:0]
	return nil
}

// position returns the Type of the value at one position (a property, the
// items of a list, the values of a map).
func (c *converter) position(n *node, path string, depth int) (*Type, error) {
	if n == nil {
		return untyped, nil
	}
	if depth > maxDepth {
		return nil, c.errorf(path, "schema nested more than %d levels deep", maxDepth)
	}
	if n.Ref != "" && c.crd {
		return nil, c.errorf(path, "$ref is not allowed in a CustomResourceDefinition schema")
	}
	// A reference, directly or as the first member of allOf (as
	// kube-openapi writes a property that references a definition): the
	// position's own extensions and default sit beside it.
	var base *Type
	switch {
	case n.Ref != "":
		t, err := c.ref(n.Ref, path)
		if err != nil {
			return nil, err
		}
		base = t
	case !c.crd && len(n.AllOf) > 0 && n.AllOf[0] != nil && n.Type == "" && len(n.Properties) == 0 && n.Items == nil && n.AdditionalProperties == nil:
		t, err := c.position(n.AllOf[0], path+".allOf[0]", depth+1)
		if err != nil {
			return nil, err
		}
		base = t
	}
	if base != nil {
		if !c.hasExtras(n) {
			return base, nil
		}
		return c.wrap(base, n, path)
	}
	t := &Type{}
	if err := c.build(t, n, path, depth); err != nil {
		return nil, err
	}
	if err := c.decorate(t, n, path); err != nil {
		return nil, err
	}
	return c.intern(t), nil
}

// hasExtras reports whether a position that references a definition adds
// anything to it.
func (c *converter) hasExtras(n *node) bool {
	if n.PatchStrategy != "" || n.PatchMergeKey != "" || len(n.ListMapKeys) > 0 || n.hasDefault() {
		return true
	}
	return c.crd && (n.ListType != "" || n.MapType != "")
}

// wrap returns the Type of a position that references base and adds its own
// extensions. Wrappers with the same base and extensions are shared.
func (c *converter) wrap(base *Type, n *node, path string) (*Type, error) {
	var key strings.Builder
	fmt.Fprintf(&key, "wrap\x00%p\x00%s\x00%s\x00%q\x00%s\x00%s\x00", base, n.PatchStrategy, n.PatchMergeKey, n.ListMapKeys, n.ListType, n.MapType)
	if n.hasDefault() {
		v, err := n.defaultValue()
		if err != nil {
			return nil, c.errorf(path, "default: %w", err)
		}
		writeValueKey(&key, v)
	}
	if w, ok := c.interned[key.String()]; ok {
		return w, nil
	}
	// Kind and Scalar are known now (definitions get them when defined);
	// the rest is copied from base once base is complete.
	w := &Type{Kind: base.Kind, Scalar: base.Scalar, Name: base.Name}
	c.interned[key.String()] = w
	c.wrappers = append(c.wrappers, pendingWrap{source: c.source, path: path, w: w, base: base, n: n})
	return w, nil
}

// shape returns the Kind and ScalarType of n without looking at its
// children.
func (c *converter) shape(n *node) (Kind, ScalarType) {
	if n.IntOrString || n.Format == "int-or-string" {
		return Scalar, IntOrString
	}
	switch n.Type {
	case "string":
		return Scalar, String
	case "integer":
		return Scalar, Integer
	case "number":
		return Scalar, Number
	case "boolean":
		return Scalar, Boolean
	case "array":
		return List, AnyScalar
	case "object", "":
		if len(n.Properties) > 0 || (c.crd && n.EmbeddedResource) {
			return Struct, AnyScalar
		}
		if n.AdditionalProperties != nil && n.AdditionalProperties.Schema != nil {
			return Map, AnyScalar
		}
		if n.Type == "" {
			if st, ok := scalarUnion(n); ok {
				return Scalar, st
			}
		}
	}
	return Untyped, AnyScalar
}

// scalarUnion returns the ScalarType of a schema that is one of several
// scalar types (oneOf/anyOf): IntOrString for integer or string
// (intstr.IntOrString), AnyScalar otherwise (resource.Quantity, a string or
// a number).
func scalarUnion(n *node) (ScalarType, bool) {
	alts := n.OneOf
	if len(alts) == 0 {
		alts = n.AnyOf
	}
	if len(alts) == 0 {
		return 0, false
	}
	var hasInt, hasString, hasOther bool
	for _, a := range alts {
		if a == nil {
			return 0, false
		}
		switch a.Type {
		case "integer":
			hasInt = true
		case "string":
			hasString = true
		case "number", "boolean":
			hasOther = true
		default:
			return 0, false
		}
	}
	if hasInt && hasString && !hasOther {
		return IntOrString, true
	}
	return AnyScalar, true
}

// build sets t's shape from n and converts its children.
func (c *converter) build(t *Type, n *node, path string, depth int) error {
	t.Kind, t.Scalar = c.shape(n)
	switch t.Kind {
	case Struct:
		if t.Fields == nil {
			t.Fields = make(map[string]*Type, len(n.Properties))
		}
		for _, name := range sortedKeys(n.Properties) {
			ft, err := c.position(n.Properties[name], path+".properties."+name, depth+1)
			if err != nil {
				return err
			}
			t.Fields[name] = ft
		}
		if c.crd && n.EmbeddedResource {
			c.addObjectFields(t)
		}
	case Map:
		et, err := c.position(n.AdditionalProperties.Schema, path+".additionalProperties", depth+1)
		if err != nil {
			return err
		}
		t.Elem = et
	case List:
		et, err := c.position(n.Items, path+".items", depth+1)
		if err != nil {
			return err
		}
		t.Elem = et
	}
	return nil
}

// addObjectFields gives a Struct the fields every Kubernetes object has:
// apiVersion, kind and metadata.
func (c *converter) addObjectFields(t *Type) {
	str := c.intern(&Type{Kind: Scalar, Scalar: String})
	t.Fields["apiVersion"] = str
	t.Fields["kind"] = str
	if c.objectMeta != nil {
		t.Fields["metadata"] = c.objectMeta
	} else if t.Fields["metadata"] == nil {
		t.Fields["metadata"] = untyped
	}
}

// patchStrategy is a parsed x-kubernetes-patch-strategy.
type patchStrategy struct {
	merge, retainKeys, replace bool
}

// parsePatchStrategy splits a comma-separated strategy as strategicpatch
// does. Parts it does not know are ignored.
func parsePatchStrategy(s string) patchStrategy {
	var p patchStrategy
	for part := range strings.SplitSeq(s, ",") {
		switch strings.TrimSpace(part) {
		case "merge":
			p.merge = true
		case "retainKeys":
			p.retainKeys = true
		case "replace":
			p.replace = true
		}
	}
	return p
}

// decorate applies the merge extensions and the default of n to t.
func (c *converter) decorate(t *Type, n *node, path string) error {
	if n.hasDefault() {
		v, err := n.defaultValue()
		if err != nil {
			return c.errorf(path, "default: %w", err)
		}
		t.Default = v
	}
	ps := parsePatchStrategy(n.PatchStrategy)
	hasStrategy := n.PatchStrategy != ""
	switch t.Kind {
	case List:
		if err := c.decorateList(t, n, ps, path); err != nil {
			return err
		}
	case Struct, Map, Untyped:
		if c.crd {
			switch n.MapType {
			case "":
			case "atomic":
				t.Replace = true
			case "granular":
				t.Replace = false
			default:
				return c.errorf(path, "unknown x-kubernetes-map-type %q", n.MapType)
			}
		}
		if hasStrategy {
			t.RetainKeys = ps.retainKeys
			t.Replace = ps.replace
		}
	}
	return nil
}

// decorateList decides how the list t merges.
func (c *converter) decorateList(t *Type, n *node, ps patchStrategy, path string) error {
	keys := n.ListMapKeys
	if c.crd {
		switch n.ListType {
		case "", "atomic":
			t.ListType, t.MergeKey = Atomic, ""
		case "set":
			t.ListType, t.MergeKey = Set, ""
		case "map":
			if len(keys) == 0 {
				return c.errorf(path, "x-kubernetes-list-type map needs x-kubernetes-list-map-keys")
			}
			if t.Elem.KindOf() == Scalar || t.Elem.KindOf() == List {
				return c.errorf(path, "x-kubernetes-list-type map needs object items, not %s", t.Elem.KindOf())
			}
			t.ListType, t.MergeKey = MergeByKey, keys[0]
		default:
			return c.errorf(path, "unknown x-kubernetes-list-type %q", n.ListType)
		}
	}
	// x-kubernetes-patch-strategy, where given, decides: it is what
	// strategicpatch reads (from the Go struct tags it mirrors).
	if n.PatchStrategy != "" {
		t.ListType, t.MergeKey = Atomic, ""
		if ps.merge {
			switch t.Elem.KindOf() {
			case Scalar:
				t.ListType = Set
			case Struct, Map, Untyped:
				key := n.PatchMergeKey
				if key == "" && len(keys) > 0 {
					key = keys[0]
				}
				// A merge strategy without a key cannot merge objects
				// (strategicpatch fails on it): such a list stays atomic.
				if key != "" {
					t.ListType, t.MergeKey = MergeByKey, key
				}
			}
		}
		t.RetainKeys = ps.retainKeys
		t.Replace = ps.replace
	}
	switch {
	case t.ListType != MergeByKey:
		t.Keys = nil
	case len(keys) > 0:
		k := slices.Clone(keys)
		if !slices.Contains(k, t.MergeKey) {
			k = append([]string{t.MergeKey}, k...)
		}
		t.Keys = k
	case len(t.Keys) == 0 || !slices.Contains(t.Keys, t.MergeKey):
		t.Keys = []string{t.MergeKey}
	}
	return nil
}

// intern returns the shared Type equal to t, so that the many positions
// typed "string" or "list of strings" share one Type. Structs are never
// interned: each owns its Fields map.
func (c *converter) intern(t *Type) *Type {
	if t.Kind == Struct {
		return t
	}
	k := typeKey(t)
	if s, ok := c.interned[k]; ok {
		return s
	}
	c.interned[k] = t
	return t
}

// typeKey identifies a non-Struct Type by its content; children by
// identity.
func typeKey(t *Type) string {
	var b strings.Builder
	fmt.Fprintf(&b, "type\x00%d\x00%d\x00%s\x00%p\x00%d\x00%s\x00%q\x00%t\x00%t\x00",
		t.Kind, t.Scalar, t.Name, t.Elem, t.ListType, t.MergeKey, t.Keys, t.RetainKeys, t.Replace)
	if t.Default != nil {
		writeValueKey(&b, t.Default)
	}
	return b.String()
}

// writeValueKey writes a JSON value with its Go types, so that int64(1) and
// float64(1) differ.
func writeValueKey(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		b.WriteString("{")
		for _, k := range sortedKeys(v) {
			fmt.Fprintf(b, "%q:", k)
			writeValueKey(b, v[k])
			b.WriteString(",")
		}
		b.WriteString("}")
	case []any:
		b.WriteString("[")
		for _, e := range v {
			writeValueKey(b, e)
			b.WriteString(",")
		}
		b.WriteString("]")
	default:
		fmt.Fprintf(b, "%T(%#v)", v, v)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
