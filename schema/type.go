package schema

import "strings"

// Kind is the shape of a value at one position of an object.
type Kind uint8

const (
	// Untyped is a value with no schema: objects merge key by key and lists
	// are atomic, the JSON merge patch rules. Every field of an Untyped
	// object is Untyped too.
	Untyped Kind = iota
	// Scalar is a string, number or boolean (see ScalarType).
	Scalar
	// Struct is an object with named fields (Fields); fields not named are
	// Untyped.
	Struct
	// Map is an object whose values all have the type Elem (labels,
	// ConfigMap data).
	Map
	// List is a JSON array of Elem; ListType says how it merges.
	List
)

func (k Kind) String() string {
	switch k {
	case Untyped:
		return "untyped"
	case Scalar:
		return "scalar"
	case Struct:
		return "struct"
	case Map:
		return "map"
	case List:
		return "list"
	}
	return "unknown"
}

// ScalarType narrows a Scalar.
type ScalarType uint8

const (
	// AnyScalar accepts strings, numbers and booleans.
	AnyScalar ScalarType = iota
	String
	Integer
	Number
	Boolean
	// IntOrString accepts an integer or a string (maxSurge, targetPort).
	IntOrString
)

func (s ScalarType) String() string {
	switch s {
	case AnyScalar:
		return "scalar"
	case String:
		return "string"
	case Integer:
		return "integer"
	case Number:
		return "number"
	case Boolean:
		return "boolean"
	case IntOrString:
		return "int-or-string"
	}
	return "unknown"
}

// ListType is how a list merges.
type ListType uint8

const (
	// Atomic lists are replaced whole (args, command; every list without a
	// patch strategy).
	Atomic ListType = iota
	// MergeByKey lists hold objects identified by MergeKey
	// (x-kubernetes-patch-merge-key): containers by name, ports by
	// containerPort.
	MergeByKey
	// Set lists hold scalars merged as a set (patch strategy merge on a list
	// of scalars: metadata.finalizers).
	Set
)

func (l ListType) String() string {
	switch l {
	case Atomic:
		return "atomic"
	case MergeByKey:
		return "map"
	case Set:
		return "set"
	}
	return "unknown"
}

// Type is the schema of the value at one position of an object: its shape
// and, for maps and lists, the strategic merge strategy of that position.
//
// Types form a graph (a PodSpec is reached from many kinds, and recursive
// types such as JSONSchemaProps point back at themselves). Positions that
// share a definition share its Fields map. Types are immutable once built;
// every lookup method is safe for concurrent use and allocates nothing.
//
// A nil *Type is valid and means Untyped.
type Type struct {
	// Kind is the shape.
	Kind Kind
	// Scalar narrows a Scalar kind.
	Scalar ScalarType
	// Name is the definition this position refers to
	// ("io.k8s.api.core.v1.PodSpec"), or empty. Informational only.
	Name string
	// Fields are the named fields of a Struct.
	Fields map[string]*Type
	// Elem is the type of the values of a Map or the elements of a List.
	Elem *Type
	// ListType is how a List merges.
	ListType ListType
	// MergeKey identifies elements of a MergeByKey list
	// (x-kubernetes-patch-merge-key).
	MergeKey string
	// Keys are the fields that together identify an element of a list of
	// objects (x-kubernetes-list-map-keys). They include MergeKey. konverge
	// uses them where elements share a MergeKey value (a port over TCP and
	// UDP), which the strategic merge patch alone cannot tell apart.
	Keys []string
	// RetainKeys marks the retainKeys patch strategy. On a Struct, a patch
	// that changes it lists the fields to keep ($retainKeys) so that the
	// other fields are cleared (Deployment spec.strategy). On a List, it
	// applies to each element (Pod spec.volumes).
	RetainKeys bool
	// Replace marks the replace patch strategy on a Struct or Map: a change
	// replaces the whole object instead of merging it.
	Replace bool
	// Default is the value the API server fills in when the field is
	// absent, as the OpenAPI document gives it, or nil. Merge uses the
	// defaults of key fields to identify list elements ("protocol": "TCP").
	Default any
}

// untyped is returned for every position that has no schema.
var untyped = &Type{Kind: Untyped}

// UntypedType returns the schema of values with no schema: JSON merge patch
// semantics.
func UntypedType() *Type { return untyped }

// Field returns the type of the field name of an object of type t. Unknown
// fields, fields of an Untyped object and fields of a nil Type are Untyped.
// The values of a Map are its Elem.
func (t *Type) Field(name string) *Type {
	if t == nil {
		return untyped
	}
	switch t.Kind {
	case Struct:
		if f := t.Fields[name]; f != nil {
			return f
		}
	case Map:
		if t.Elem != nil {
			return t.Elem
		}
	}
	return untyped
}

// Element returns the type of the elements of a List, or Untyped.
func (t *Type) Element() *Type {
	if t == nil || t.Kind != List || t.Elem == nil {
		return untyped
	}
	return t.Elem
}

// IsObject reports whether values of t are JSON objects (Struct, Map or
// Untyped).
func (t *Type) IsObject() bool {
	return t == nil || t.Kind == Struct || t.Kind == Map || t.Kind == Untyped
}

// KindOf returns t's Kind; a nil Type is Untyped.
func (t *Type) KindOf() Kind {
	if t == nil {
		return Untyped
	}
	return t.Kind
}

// Strategy returns the patch strategy of t as it would be written in an
// x-kubernetes-patch-strategy extension ("merge", "merge,retainKeys",
// "retainKeys", "replace"), or "".
func (t *Type) Strategy() string {
	if t == nil {
		return ""
	}
	var parts []string
	if t.Kind == List && t.ListType != Atomic {
		parts = append(parts, "merge")
	}
	if t.Replace {
		parts = append(parts, "replace")
	}
	if t.RetainKeys {
		parts = append(parts, "retainKeys")
	}
	return strings.Join(parts, ",")
}
