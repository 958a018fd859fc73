package defaults

import (
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// DecodeError is a value that the Go type kube-apiserver decodes the object
// into cannot hold: a string where a number belongs, a number out of range,
// bad base64 in Secret data. kube-apiserver rejects such a request as a Bad
// Request before defaulting ("... cannot be handled as a Deployment: json:
// cannot unmarshal string into Go struct field ...").
type DecodeError struct {
	// Field is the path of the value: spec.template.spec.containers[0].ports[0].containerPort.
	Field string
	// Msg is what kube-apiserver says after `<Kind> in version "<version>"
	// cannot be handled as a <Kind>: `, for instance `json: cannot unmarshal
	// string into Go struct field DeploymentSpec.spec.replicas of type int32`.
	Msg string
}

func (e *DecodeError) Error() string { return "defaults: " + e.Field + ": " + e.Msg }

// fpath is a field path built on the way down and printed only when needed,
// in the form of strict-decoding errors: spec.containers[0].image. It is
// a stack: a child appends its element to its parent's, in the parent's
// spare capacity, which siblings reuse one after the other (nothing keeps
// a path beyond the call it is given to: errors print it when they are
// made), so that the walk does not allocate an element per field. A nil
// path is no path at all (the root of a value that is not a field).
type fpath []pathElem

// pathElem is one element of a path.
type pathElem struct {
	name  string
	index int
	isIdx bool
	isKey bool   // a map key
	st    string // for a struct field, the struct's table name
}

// pathRoom is the depth of path a walk keeps on its stack; deeper paths
// grow on the heap.
const pathRoom = 12

func (p fpath) child(name string) fpath { return append(p, pathElem{name: name}) }
func (p fpath) at(i int) fpath          { return append(p, pathElem{index: i, isIdx: true}) }
func (p fpath) key(k string) fpath      { return append(p, pathElem{name: k, isKey: true}) }
func (p fpath) field(st *tstruct, name string) fpath {
	return append(p, pathElem{name: name, st: st.name})
}

// goField is the "Struct.path.of.fields" of encoding/json's errors: the
// struct holding the innermost field, then the fields from the root
// (without indexes and map keys).
func (p fpath) goField() string {
	st := ""
	var names []string
	for i := len(p) - 1; i >= 0; i-- {
		if q := p[i]; q.st != "" {
			if st == "" {
				st = structGoName(q.st)
				st = st[strings.LastIndexByte(st, '.')+1:]
			}
			names = append(names, q.name)
		}
	}
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	out := st
	for _, n := range names {
		out += "." + n
	}
	return out
}

func (p fpath) String() string {
	var b []byte
	for _, e := range p {
		switch {
		case e.isIdx:
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(e.index), 10)
			b = append(b, ']')
		case e.name == "":
		default:
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, e.name...)
		}
	}
	return string(b)
}

// typed rewrites an object the way decoding it into its Go type and
// encoding it again does: unknown fields are dropped (and recorded), nulls
// become zero values or disappear, zero values of omitempty fields
// disappear, non-pointer structs appear as {} even when absent, and the
// special leaves (quantities, Secret bytes, times) take their canonical
// form.
type typed struct {
	unknown []string // paths of the dropped unknown fields
	// stored turns empty lists and maps of fields without omitempty
	// into null, as a protobuf round trip through storage does.
	stored bool
}

func (n *typed) object(m map[string]any, st *tstruct, p fpath, root bool) error {
	for k, v := range m {
		f, ok := st.field(k)
		if !ok {
			n.unknown = append(n.unknown, p.child(k).String())
			delete(m, k)
			continue
		}
		out, keep, err := n.field(v, f, p.field(st, k))
		if err != nil {
			return err
		}
		switch {
		case !keep:
			delete(m, k)
		case !same(out, v):
			m[k] = out
		}
	}
	for _, i := range st.absent {
		f := st.fields[i]
		if _, ok := m[f.name]; ok {
			continue
		}
		if root && f.name == "status" {
			continue
		}
		if v, ok := absentValue(f); ok {
			if sub, isMap := v.(map[string]any); isMap {
				if err := n.object(sub, f.typ.st, p.field(st, f.name), false); err != nil {
					return err
				}
			}
			m[f.name] = v
		}
	}
	return nil
}

// same reports whether out is v itself (the same map, list or string,
// an equal boolean or int64), so that writing it back changes nothing:
// most values come out of the walk as they went in, and a map write
// costs a hash and a lookup.
func same(out, v any) bool {
	switch o := out.(type) {
	case map[string]any:
		m, ok := v.(map[string]any)
		return ok && *(*unsafe.Pointer)(unsafe.Pointer(&m)) == *(*unsafe.Pointer)(unsafe.Pointer(&o))
	case []any:
		l, ok := v.([]any)
		return ok && len(l) == len(o) && cap(l) == cap(o) && unsafe.SliceData(l) == unsafe.SliceData(o)
	case string:
		s, ok := v.(string)
		return ok && len(s) == len(o) && unsafe.StringData(s) == unsafe.StringData(o)
	case bool:
		b, ok := v.(bool)
		return ok && b == o
	case int64:
		i, ok := v.(int64)
		return ok && i == o
	}
	return false
}

// absentValue is what encoding the Go value of an absent field prints, if
// anything.
func absentValue(f tfield) (any, bool) {
	switch f.typ.kind {
	case tStruct:
		return map[string]any{}, true
	case tTime:
		if f.omitZero {
			return nil, false
		}
		return nil, true // metav1.Time{} encodes as null
	case tIntStr:
		return int64(0), true
	case tQuantity:
		return "0", true
	case tRaw:
		return nil, true
	}
	if f.omitEmpty || f.omitZero {
		return nil, false
	}
	switch f.typ.kind {
	case tPtr, tSlice, tMap, tBytes:
		return nil, true
	}
	return zeroScalar(f.typ), true
}

func zeroScalar(t *ttype) any {
	switch t.kind {
	case tString:
		return ""
	case tBool:
		return false
	case tInt:
		return int64(0)
	case tFloat:
		return float64(0)
	}
	return nil
}

// field normalizes the value of a struct field; keep is false when the
// encoded Go value omits the field.
func (n *typed) field(v any, f tfield, p fpath) (any, bool, error) {
	out, err := n.value(v, f.typ, p)
	if err != nil {
		return nil, false, err
	}
	if out == nil {
		switch f.typ.kind {
		case tPtr, tSlice, tMap, tBytes:
			return nil, !f.omitEmpty && !f.omitZero, nil
		case tTime:
			return nil, !f.omitZero, nil
		}
		return nil, true, nil
	}
	if (f.omitEmpty || f.omitZero) && isEmptyValue(out, f.typ) {
		return nil, false, nil
	}
	if n.stored && (f.typ.kind == tSlice || f.typ.kind == tMap) && isEmptyValue(out, f.typ) {
		// kube-apiserver stores built-in kinds as protobuf, which keeps
		// no empty lists or maps: what it returns has null.
		return nil, true, nil
	}
	return out, true, nil
}

// isEmptyValue reports what encoding/json's omitempty omits: false, 0, "",
// and empty maps, slices and byte strings (never structs or pointers).
func isEmptyValue(v any, t *ttype) bool {
	switch t.kind {
	case tString, tBytes:
		s, _ := v.(string)
		return s == ""
	case tBool:
		b, _ := v.(bool)
		return !b
	case tInt, tFloat:
		switch x := v.(type) {
		case int64:
			return x == 0
		case float64:
			return x == 0
		}
	case tSlice:
		l, _ := v.([]any)
		return len(l) == 0
	case tMap:
		m, _ := v.(map[string]any)
		return len(m) == 0
	}
	return false
}

// value normalizes v as a Go value of type t; it returns nil for a nil
// pointer, slice or map.
func (n *typed) value(v any, t *ttype, p fpath) (any, error) {
	if v == nil {
		switch t.kind {
		case tPtr, tSlice, tMap, tBytes, tRaw, tTime:
			return nil, nil
		case tStruct:
			m := map[string]any{}
			return m, n.object(m, t.st, p, false)
		case tQuantity:
			return "0", nil
		case tIntStr:
			return int64(0), nil
		}
		return zeroScalar(t), nil
	}
	switch t.kind {
	case tPtr:
		// A pointer keeps even a zero value; null was handled above.
		return n.value(v, t.elem, p)
	case tStruct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, mismatch(p, v, t)
		}
		return m, n.object(m, t.st, p, false)
	case tSlice:
		l, ok := v.([]any)
		if !ok {
			return nil, mismatch(p, v, t)
		}
		for i, e := range l {
			out, err := n.value(e, t.elem, p.at(i))
			if err != nil {
				return nil, err
			}
			l[i] = out
		}
		return l, nil
	case tMap:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, mismatch(p, v, t)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := m[k]
			out, err := n.value(v, t.elem, p.key(k))
			if err != nil {
				return nil, err
			}
			if !same(out, v) {
				m[k] = out
			}
		}
		return m, nil
	case tString:
		if _, ok := v.(string); !ok {
			return nil, mismatch(p, v, t)
		}
		return v, nil
	case tBool:
		if _, ok := v.(bool); !ok {
			return nil, mismatch(p, v, t)
		}
		return v, nil
	case tInt:
		return intValue(v, t, p)
	case tFloat:
		switch v.(type) {
		case int64, float64:
			return v, nil
		}
		return nil, mismatch(p, v, t)
	case tIntStr:
		switch x := v.(type) {
		case string:
			return x, nil
		case int64, float64:
			out, err := intValue(x, &ttype{kind: tInt, name: "int32"}, nil)
			if err != nil {
				return nil, &DecodeError{Field: p.String(), Msg: "json: cannot unmarshal " + numberText(x) + " into Go value of type int32"}
			}
			return out, nil
		}
		return nil, &DecodeError{Field: p.String(), Msg: fmt.Sprintf("json: cannot unmarshal %s into Go value of type int32", jsonType(v))}
	case tQuantity:
		q, err := normalizeQuantity(v)
		if err != nil {
			return nil, &DecodeError{Field: p.String(), Msg: err.Error()}
		}
		return q, nil
	case tBytes:
		s, ok := v.(string)
		if !ok {
			return nil, mismatch(p, v, t)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, &DecodeError{Field: p.String(), Msg: err.Error()}
		}
		return base64.StdEncoding.EncodeToString(b), nil
	case tTime:
		s, ok := v.(string)
		if !ok {
			return nil, &DecodeError{Field: p.String(), Msg: fmt.Sprintf("json: cannot unmarshal %s into Go value of type string", jsonType(v))}
		}
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, &DecodeError{Field: p.String(), Msg: err.Error()}
		}
		return tm.UTC().Format(time.RFC3339), nil
	case tRaw:
		return v, nil
	}
	return v, nil
}

func intValue(v any, t *ttype, p fpath) (any, error) {
	var i int64
	switch x := v.(type) {
	case int64:
		i = x
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || x > math.MaxInt64 || x < math.MinInt64 {
			return nil, mismatchText(p, numberText(x), t)
		}
		i = int64(x)
	default:
		return nil, mismatch(p, v, t)
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch t.name {
	case "int8":
		lo, hi = math.MinInt8, math.MaxInt8
	case "int16":
		lo, hi = math.MinInt16, math.MaxInt16
	case "int32":
		lo, hi = math.MinInt32, math.MaxInt32
	case "uint8":
		lo, hi = 0, math.MaxUint8
	case "uint16":
		lo, hi = 0, math.MaxUint16
	case "uint32":
		lo, hi = 0, math.MaxUint32
	case "uint64":
		lo = 0
	}
	if i < lo || i > hi {
		return nil, mismatchText(p, numberText(i), t)
	}
	return i, nil
}

func numberText(v any) string {
	switch x := v.(type) {
	case int64:
		return "number " + strconv.FormatInt(x, 10)
	case float64:
		return "number " + strconv.FormatFloat(x, 'g', -1, 64)
	}
	return "number"
}

// mismatch is encoding/json's UnmarshalTypeError for the value v.
func mismatch(p fpath, v any, t *ttype) error {
	return mismatchText(p, jsonType(v), t)
}

func mismatchText(p fpath, what string, t *ttype) error {
	if p == nil {
		return &DecodeError{Msg: "json: cannot unmarshal " + what + " into Go value of type " + t.goString()}
	}
	return &DecodeError{Field: p.String(), Msg: "json: cannot unmarshal " + what + " into Go struct field " + p.goField() + " of type " + t.goString()}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case int64, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// structGoName turns a table name (core_v1.PodSpec) into the Go name
// (v1.PodSpec) that encoding/json prints.
func structGoName(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '_' {
			return name[i+1:]
		}
	}
	return name
}
