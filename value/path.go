package value

import (
	"strconv"
	"strings"
)

// Path names a position inside an object, from its root. It prints in the
// syntax of structured-merge-diff field paths, without the leading dot:
//
//	spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]
//	metadata.finalizers[="example.com/cleanup"]
//	spec.template.spec.containers[name="nginx"].args[3]
//
// Fields are separated by dots; elements of lists merged by key are named by
// their key fields, elements of sets by their value, elements of atomic
// lists by their index. A field whose name holds a dot or a bracket (a
// label or annotation key) is written in brackets, as kube-apiserver
// writes a map key: metadata.labels[app.kubernetes.io/name]. ParsePath
// reads every form back; Pointer gives the JSON pointer.
type Path []Element

// ElementKind tells which of Element's fields is set.
type ElementKind uint8

const (
	// FieldKind is a field of an object (Field).
	FieldKind ElementKind = iota
	// KeyKind is an element of a list of objects identified by key fields
	// (Keys).
	KeyKind
	// ValueKind is an element of a set of scalars (Value).
	ValueKind
	// IndexKind is an element of a list by position (Index).
	IndexKind
)

// KeyField is one key field of a list element and its value.
type KeyField struct {
	Name  string
	Value any
}

// Element is one step of a Path.
type Element struct {
	Kind  ElementKind
	Field string
	Keys  []KeyField
	Value any
	Index int
}

// FieldElement is the step into the field name of an object.
func FieldElement(name string) Element { return Element{Kind: FieldKind, Field: name} }

// KeyElement is the step into the element of a list identified by keys.
func KeyElement(keys ...KeyField) Element { return Element{Kind: KeyKind, Keys: keys} }

// ValueElement is the step into the element v of a set.
func ValueElement(v any) Element { return Element{Kind: ValueKind, Value: v} }

// IndexElement is the step into the i-th element of a list.
func IndexElement(i int) Element { return Element{Kind: IndexKind, Index: i} }

// String prints the element as it appears in a Path.
func (e Element) String() string {
	var b strings.Builder
	e.write(&b, true)
	return b.String()
}

func (e Element) write(b *strings.Builder, first bool) {
	switch e.Kind {
	case FieldKind:
		if !first && needsBrackets(e.Field) {
			// A key such as app.kubernetes.io/name, as kube-apiserver
			// spells a map key: the dotted form would read as several
			// fields.
			b.WriteByte('[')
			b.WriteString(e.Field)
			b.WriteByte(']')
			return
		}
		if !first {
			b.WriteByte('.')
		}
		b.WriteString(e.Field)
	case KeyKind:
		b.WriteByte('[')
		for i, k := range e.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(k.Name)
			b.WriteByte('=')
			writeScalar(b, k.Value)
		}
		b.WriteByte(']')
	case ValueKind:
		b.WriteString("[=")
		writeScalar(b, e.Value)
		b.WriteByte(']')
	case IndexKind:
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(e.Index))
		b.WriteByte(']')
	}
}

// needsBrackets reports a field name that the dotted form cannot hold:
// one with a dot or a bracket.
func needsBrackets(name string) bool {
	return strings.ContainsAny(name, ".[]")
}

func writeScalar(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any, []any:
		b.WriteString("<" + TypeName(v) + ">")
	default:
		enc, err := Encode(x)
		if err != nil {
			b.WriteString("<invalid>")
			return
		}
		b.Write(enc)
	}
}

// String prints the path; the root (an empty path) prints as ".".
func (p Path) String() string {
	if len(p) == 0 {
		return "."
	}
	var b strings.Builder
	for i, e := range p {
		e.write(&b, i == 0)
	}
	return b.String()
}

// Child returns p followed by e, without sharing p's backing array.
func (p Path) Child(e Element) Path {
	c := make(Path, len(p), len(p)+1)
	copy(c, p)
	return append(c, e)
}

// Field is p.Child(FieldElement(name)).
func (p Path) Field(name string) Path { return p.Child(FieldElement(name)) }
