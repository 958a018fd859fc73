package defaults

import (
	"fmt"
	"strings"
	"sync"
)

// The type table (typetable_generated.go) is the JSON shape of the Go types
// of k8s.io/api that kube-apiserver decodes built-in objects into. Its lines
// are either a kind, "@apiVersion/kind StructName", or a struct,
// "StructName field:type[,flags] ...", where type is a struct name, a
// scalar (string, bool, int32, int64, uint..., float64), one of the special
// leaves (time: metav1.Time, quantity: resource.Quantity, intstr:
// intstr.IntOrString, bytes: []byte, raw: any JSON), or built from them
// with "*" (pointer), "[]" (slice) and "map[]" (map with string keys).
// Flags: o = omitempty, z = omitzero. Inline (embedded) structs are already
// flattened into their parent.

type tkind uint8

const (
	tString tkind = iota
	tBool
	tInt
	tFloat
	tTime
	tQuantity
	tIntStr
	tBytes
	tRaw
	tStruct
	tPtr
	tSlice
	tMap
)

type ttype struct {
	kind   tkind
	name   string // the scalar's Go kind (int32, uint64, ...) or the struct's name
	goName string // the Go name of a named scalar type (v1.Protocol)
	elem   *ttype // tPtr, tSlice, tMap
	st     *tstruct
}

// goString is the type as encoding/json names it in errors.
func (t *ttype) goString() string {
	switch t.kind {
	case tPtr:
		return t.elem.goString()
	case tSlice:
		return "[]" + t.elem.goString()
	case tMap:
		return "map[string]" + t.elem.goString()
	case tStruct:
		return structGoName(t.name)
	case tTime:
		return "v1.Time"
	case tQuantity:
		return "resource.Quantity"
	case tIntStr:
		return "intstr.IntOrString"
	case tBytes:
		return "[]uint8"
	case tRaw:
		return "runtime.RawExtension"
	}
	if t.goName != "" {
		return t.goName
	}
	return t.name
}

type tfield struct {
	name      string
	typ       *ttype
	omitEmpty bool
	omitZero  bool
}

type tstruct struct {
	name   string
	fields []tfield
	index  map[string]int
	// absent are the indexes of the fields that print something when
	// they are absent (absentValue): the only ones the walk looks for in
	// an object, once per struct rather than once per object.
	absent []int
}

func (s *tstruct) field(name string) (tfield, bool) {
	i, ok := s.index[name]
	if !ok {
		return tfield{}, false
	}
	return s.fields[i], true
}

type typeTables struct {
	kinds   map[string]*tstruct // "apps/v1/Deployment"
	structs map[string]*tstruct
}

var (
	tablesOnce sync.Once
	tables     *typeTables
)

func loadTables() *typeTables {
	tablesOnce.Do(func() {
		t, err := parseTypeTable(typeTable)
		if err != nil {
			panic("defaults: bad generated type table: " + err.Error()) // a static table; tested
		}
		tables = t
	})
	return tables
}

// kindStruct returns the struct of the kind apiVersion/kind, or nil.
func kindStruct(apiVersion, kind string) *tstruct {
	return loadTables().kinds[apiVersion+"/"+kind]
}

func parseTypeTable(src string) (*typeTables, error) {
	t := &typeTables{kinds: map[string]*tstruct{}, structs: map[string]*tstruct{}}
	lines := strings.Split(strings.TrimSpace(src), "\n")
	// First pass: declare structs so that fields can refer to any of them.
	for _, line := range lines {
		if line == "" || line[0] == '@' {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		t.structs[name] = &tstruct{name: name, index: map[string]int{}}
	}
	for _, line := range lines {
		if line == "" {
			continue
		}
		words := strings.Fields(line)
		if line[0] == '@' {
			if len(words) != 2 || t.structs[words[1]] == nil {
				return nil, fmt.Errorf("bad kind line %q", line)
			}
			t.kinds[words[0][1:]] = t.structs[words[1]]
			continue
		}
		st := t.structs[words[0]]
		for _, w := range words[1:] {
			name, rest, ok := strings.Cut(w, ":")
			if !ok {
				return nil, fmt.Errorf("bad field %q in %s", w, st.name)
			}
			typ, flags, _ := strings.Cut(rest, ",")
			tt, err := t.parseType(typ)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", st.name, name, err)
			}
			st.index[name] = len(st.fields)
			st.fields = append(st.fields, tfield{
				name:      name,
				typ:       tt,
				omitEmpty: strings.Contains(flags, "o"),
				omitZero:  strings.Contains(flags, "z"),
			})
			if _, ok := absentValue(st.fields[len(st.fields)-1]); ok {
				st.absent = append(st.absent, len(st.fields)-1)
			}
		}
	}
	return t, nil
}

func (t *typeTables) parseType(s string) (*ttype, error) {
	switch {
	case strings.HasPrefix(s, "*"):
		e, err := t.parseType(s[1:])
		return &ttype{kind: tPtr, elem: e}, err
	case strings.HasPrefix(s, "[]"):
		e, err := t.parseType(s[2:])
		return &ttype{kind: tSlice, elem: e}, err
	case strings.HasPrefix(s, "map[]"):
		e, err := t.parseType(s[5:])
		return &ttype{kind: tMap, elem: e}, err
	}
	if kind, goName, ok := strings.Cut(s, "="); ok {
		t, err := t.parseType(kind)
		if err == nil {
			t.goName = goName
		}
		return t, err
	}
	switch s {
	case "string":
		return &ttype{kind: tString, name: s}, nil
	case "bool":
		return &ttype{kind: tBool, name: s}, nil
	case "int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64":
		return &ttype{kind: tInt, name: s}, nil
	case "float64":
		return &ttype{kind: tFloat, name: s}, nil
	case "time":
		return &ttype{kind: tTime, name: s}, nil
	case "quantity":
		return &ttype{kind: tQuantity, name: s}, nil
	case "intstr":
		return &ttype{kind: tIntStr, name: s}, nil
	case "bytes":
		return &ttype{kind: tBytes, name: s}, nil
	case "raw":
		return &ttype{kind: tRaw, name: s}, nil
	}
	st, ok := t.structs[s]
	if !ok {
		return nil, fmt.Errorf("unknown type %q", s)
	}
	return &ttype{kind: tStruct, name: s, st: st}, nil
}
