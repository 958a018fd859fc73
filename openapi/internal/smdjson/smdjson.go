// Package smdjson encodes structured-merge-diff schemas as compact JSON.
//
// schema.Schema carries only YAML tags, and its Atom embeds List and Map,
// whose fields of the same names encoding/json would drop; YAML decoding of
// a schema of every built-in kind takes tens of milliseconds. This package
// mirrors the types with short JSON names instead.
package smdjson

import smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

type typeDef struct {
	Name string `json:"n"`
	Atom atom   `json:"a"`
}

type typeRef struct {
	NamedType           *string `json:"n,omitempty"`
	Inlined             *atom   `json:"i,omitempty"`
	ElementRelationship *string `json:"r,omitempty"`
	Nullable            bool    `json:"z,omitempty"`
}

type atom struct {
	Scalar *string  `json:"s,omitempty"`
	List   *list    `json:"l,omitempty"`
	Map    *mapAtom `json:"m,omitempty"`
}

type mapAtom struct {
	Fields              []field           `json:"f,omitempty"`
	Unions              []smdschema.Union `json:"u,omitempty"`
	ElementType         typeRef           `json:"e"`
	ElementRelationship string            `json:"r,omitempty"`
}

type field struct {
	Name    string  `json:"n"`
	Type    typeRef `json:"t"`
	Default any     `json:"d,omitempty"`
}

type list struct {
	ElementType         typeRef  `json:"e"`
	ElementRelationship string   `json:"r,omitempty"`
	Keys                []string `json:"k,omitempty"`
}

// Raw is the encoded form, to embed in a larger JSON document.
type Raw = []typeDef

// Encode converts types to their encoded form.
func Encode(types []smdschema.TypeDef) Raw {
	out := make([]typeDef, len(types))
	for i, td := range types {
		out[i] = typeDef{Name: td.Name, Atom: fromAtom(td.Atom)}
	}
	return out
}

// Decode converts the encoded form back.
func Decode(in Raw) []smdschema.TypeDef {
	out := make([]smdschema.TypeDef, len(in))
	for i, td := range in {
		out[i] = smdschema.TypeDef{Name: td.Name, Atom: toAtom(td.Atom)}
	}
	return out
}

func fromAtom(a smdschema.Atom) atom {
	var out atom
	if a.Scalar != nil {
		s := string(*a.Scalar)
		out.Scalar = &s
	}
	if a.List != nil {
		out.List = &list{ElementType: fromRef(a.List.ElementType), ElementRelationship: string(a.List.ElementRelationship), Keys: a.List.Keys}
	}
	if a.Map != nil {
		m := &mapAtom{Unions: a.Map.Unions, ElementType: fromRef(a.Map.ElementType), ElementRelationship: string(a.Map.ElementRelationship)}
		for _, f := range a.Map.Fields {
			m.Fields = append(m.Fields, field{Name: f.Name, Type: fromRef(f.Type), Default: f.Default})
		}
		out.Map = m
	}
	return out
}

func fromRef(r smdschema.TypeRef) typeRef {
	out := typeRef{NamedType: r.NamedType, Nullable: r.Nullable}
	if r.ElementRelationship != nil {
		s := string(*r.ElementRelationship)
		out.ElementRelationship = &s
	}
	if r.Inlined.Scalar != nil || r.Inlined.List != nil || r.Inlined.Map != nil {
		a := fromAtom(r.Inlined)
		out.Inlined = &a
	}
	return out
}

func toAtom(a atom) smdschema.Atom {
	var out smdschema.Atom
	if a.Scalar != nil {
		s := smdschema.Scalar(*a.Scalar)
		out.Scalar = &s
	}
	if a.List != nil {
		out.List = &smdschema.List{ElementType: toRef(a.List.ElementType), ElementRelationship: smdschema.ElementRelationship(a.List.ElementRelationship), Keys: a.List.Keys}
	}
	if a.Map != nil {
		m := &smdschema.Map{Unions: a.Map.Unions, ElementType: toRef(a.Map.ElementType), ElementRelationship: smdschema.ElementRelationship(a.Map.ElementRelationship)}
		for _, f := range a.Map.Fields {
			m.Fields = append(m.Fields, smdschema.StructField{Name: f.Name, Type: toRef(f.Type), Default: f.Default})
		}
		out.Map = m
	}
	return out
}

func toRef(r typeRef) smdschema.TypeRef {
	out := smdschema.TypeRef{NamedType: r.NamedType, Nullable: r.Nullable}
	if r.ElementRelationship != nil {
		er := smdschema.ElementRelationship(*r.ElementRelationship)
		out.ElementRelationship = &er
	}
	if r.Inlined != nil {
		out.Inlined = toAtom(*r.Inlined)
	}
	return out
}
