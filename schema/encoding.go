package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
)

// The binary form of a Registry, written by MarshalBinary:
//
//	magic       "KVS1"
//	strings     uvarint count, uvarint length of each, then their bytes
//	types       uvarint count
//	field sets  uvarint count, then each: uvarint n, n × (string, type ref)
//	types       each: kind, scalar, list type, flags (one byte each), then
//	            as the flags say: name, field set, elem, merge key, keys,
//	            default
//	kinds       uvarint count, then each: group, version, kind, type ref
//
// Strings are indexes into the string table, type refs are 1 + the index of
// a type (0 is nil), values are a tag byte and their content. A field set is
// a Fields map; Types that share a map share the set.
const binaryMagic = "KVS1"

const (
	flagRetainKeys = 1 << iota
	flagReplace
	flagName
	flagFields
	flagElem
	flagMergeKey
	flagKeys
	flagDefault
)

const (
	valueNull = iota
	valueFalse
	valueTrue
	valueInt
	valueFloat
	valueString
	valueList
	valueMap
)

// maxValueDepth bounds the nesting of encoded defaults.
const maxValueDepth = 64

// MarshalBinary encodes the kinds of r and the graph of their Types in a
// compact binary form that UnmarshalBinary reads back. Shared Types and
// shared Fields maps stay shared. The form is konverge's own and may change
// between versions of this package; it exists so that schemas (the built-in
// kinds, a cluster's /openapi/v3) can be stored and loaded quickly.
func (r *Registry) MarshalBinary() ([]byte, error) {
	e := &encoder{
		strIndex:  make(map[string]int),
		typeIndex: make(map[*Type]int),
		setIndex:  make(map[uintptr]int),
	}
	kinds := r.Kinds()
	for _, gvk := range kinds {
		e.ref(r.Lookup(gvk))
	}
	// Number every reachable Type and field set, breadth first.
	for i := 0; i < len(e.types); i++ {
		t := e.types[i]
		if len(t.Fields) > 0 {
			p := reflect.ValueOf(t.Fields).Pointer()
			if _, ok := e.setIndex[p]; !ok {
				e.setIndex[p] = len(e.sets)
				e.sets = append(e.sets, t.Fields)
				for _, name := range sortedKeys(t.Fields) {
					e.ref(t.Fields[name])
				}
			}
		}
		if t.Elem != nil {
			e.ref(t.Elem)
		}
	}

	var body []byte
	body = binary.AppendUvarint(body, uint64(len(e.types)))
	body = binary.AppendUvarint(body, uint64(len(e.sets)))
	for _, fields := range e.sets {
		body = binary.AppendUvarint(body, uint64(len(fields)))
		for _, name := range sortedKeys(fields) {
			body = e.appendString(body, name)
			body = e.appendRef(body, fields[name])
		}
	}
	for _, t := range e.types {
		var flags byte
		if t.RetainKeys {
			flags |= flagRetainKeys
		}
		if t.Replace {
			flags |= flagReplace
		}
		if t.Name != "" {
			flags |= flagName
		}
		if len(t.Fields) > 0 {
			flags |= flagFields
		}
		if t.Elem != nil {
			flags |= flagElem
		}
		if t.MergeKey != "" {
			flags |= flagMergeKey
		}
		if len(t.Keys) > 0 {
			flags |= flagKeys
		}
		if t.Default != nil {
			flags |= flagDefault
		}
		body = append(body, byte(t.Kind), byte(t.Scalar), byte(t.ListType), flags)
		if t.Name != "" {
			body = e.appendString(body, t.Name)
		}
		if len(t.Fields) > 0 {
			body = binary.AppendUvarint(body, uint64(e.setIndex[reflect.ValueOf(t.Fields).Pointer()]))
		}
		if t.Elem != nil {
			body = e.appendRef(body, t.Elem)
		}
		if t.MergeKey != "" {
			body = e.appendString(body, t.MergeKey)
		}
		if len(t.Keys) > 0 {
			body = binary.AppendUvarint(body, uint64(len(t.Keys)))
			for _, k := range t.Keys {
				body = e.appendString(body, k)
			}
		}
		if t.Default != nil {
			var err error
			if body, err = e.appendValue(body, t.Default, 0); err != nil {
				return nil, fmt.Errorf("schema: encode default of %s: %w", t.Name, err)
			}
		}
	}
	body = binary.AppendUvarint(body, uint64(len(kinds)))
	for _, gvk := range kinds {
		body = e.appendString(body, gvk.Group)
		body = e.appendString(body, gvk.Version)
		body = e.appendString(body, gvk.Kind)
		body = e.appendRef(body, r.Lookup(gvk))
	}

	out := []byte(binaryMagic)
	out = binary.AppendUvarint(out, uint64(len(e.strs)))
	for _, s := range e.strs {
		out = binary.AppendUvarint(out, uint64(len(s)))
	}
	for _, s := range e.strs {
		out = append(out, s...)
	}
	return append(out, body...), nil
}

type encoder struct {
	strs      []string
	strIndex  map[string]int
	types     []*Type
	typeIndex map[*Type]int
	sets      []map[string]*Type
	setIndex  map[uintptr]int
}

// ref numbers t if it is new.
func (e *encoder) ref(t *Type) {
	if t == nil {
		return
	}
	if _, ok := e.typeIndex[t]; !ok {
		e.typeIndex[t] = len(e.types)
		e.types = append(e.types, t)
	}
}

func (e *encoder) appendRef(b []byte, t *Type) []byte {
	if t == nil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(e.typeIndex[t])+1)
}

func (e *encoder) appendString(b []byte, s string) []byte {
	i, ok := e.strIndex[s]
	if !ok {
		i = len(e.strs)
		e.strIndex[s] = i
		e.strs = append(e.strs, s)
	}
	return binary.AppendUvarint(b, uint64(i))
}

func (e *encoder) appendValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxValueDepth {
		return nil, errors.New("value nested too deeply")
	}
	switch v := v.(type) {
	case nil:
		return append(b, valueNull), nil
	case bool:
		if v {
			return append(b, valueTrue), nil
		}
		return append(b, valueFalse), nil
	case int64:
		return binary.AppendVarint(append(b, valueInt), v), nil
	case int:
		return binary.AppendVarint(append(b, valueInt), int64(v)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, valueFloat), math.Float64bits(v)), nil
	case string:
		return e.appendString(append(b, valueString), v), nil
	case []any:
		b = binary.AppendUvarint(append(b, valueList), uint64(len(v)))
		for _, x := range v {
			var err error
			if b, err = e.appendValue(b, x, depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case map[string]any:
		b = binary.AppendUvarint(append(b, valueMap), uint64(len(v)))
		for _, k := range sortedKeys(v) {
			b = e.appendString(b, k)
			var err error
			if b, err = e.appendValue(b, v[k], depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// UnmarshalBinary replaces the kinds of r with those encoded in data by
// MarshalBinary.
func (r *Registry) UnmarshalBinary(data []byte) error {
	own, err := decodeRegistry(data)
	if err != nil {
		return fmt.Errorf("schema: decode registry: %w", err)
	}
	r.base, r.own = nil, own
	return nil
}

var errCorrupt = errors.New("corrupt data")

type reader struct {
	data []byte
	pos  int
	err  error
}

func (d *reader) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w at byte %d", errCorrupt, d.pos)
	}
	d.pos = len(d.data)
}

func (d *reader) byte() byte {
	if d.pos >= len(d.data) {
		d.fail()
		return 0
	}
	b := d.data[d.pos]
	d.pos++
	return b
}

func (d *reader) uvarint() uint64 {
	v, n := binary.Uvarint(d.data[d.pos:])
	if n <= 0 {
		d.fail()
		return 0
	}
	d.pos += n
	return v
}

func (d *reader) varint() int64 {
	v, n := binary.Varint(d.data[d.pos:])
	if n <= 0 {
		d.fail()
		return 0
	}
	d.pos += n
	return v
}

// index reads a uvarint that must be below n.
func (d *reader) index(n int) int {
	v := d.uvarint()
	if v >= uint64(n) {
		d.fail()
		return 0
	}
	return int(v)
}

// count reads a number of items, each taking at least minSize bytes.
func (d *reader) count(minSize int) int {
	v := d.uvarint()
	if v > uint64(len(d.data)-d.pos)/uint64(minSize) {
		d.fail()
		return 0
	}
	return int(v)
}

func decodeRegistry(data []byte) (map[GVK]*Type, error) {
	if len(data) < len(binaryMagic) || string(data[:len(binaryMagic)]) != binaryMagic {
		return nil, errors.New("not a konverge schema registry")
	}
	d := &reader{data: data, pos: len(binaryMagic)}

	// Strings: all lengths, then one block, sliced without copying again.
	nstr := d.count(1)
	lens := make([]int, nstr)
	total := 0
	for i := range lens {
		lens[i] = int(d.uvarint())
		total += lens[i]
		if lens[i] < 0 || total > len(data)-d.pos || total < 0 {
			d.fail()
			return nil, d.err
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	block := string(data[d.pos : d.pos+total])
	d.pos += total
	strs := make([]string, nstr)
	off := 0
	for i, n := range lens {
		strs[i] = block[off : off+n]
		off += n
	}

	ntypes := d.count(4)
	types := make([]Type, ntypes)
	ref := func() *Type {
		i := d.index(ntypes + 1)
		if i == 0 {
			return nil
		}
		return &types[i-1]
	}

	nsets := d.count(1)
	sets := make([]map[string]*Type, nsets)
	for i := range sets {
		n := d.count(2)
		m := make(map[string]*Type, n)
		for range n {
			name := d.str(strs)
			m[name] = ref()
		}
		sets[i] = m
	}

	for i := range types {
		t := &types[i]
		t.Kind = Kind(d.byte())
		t.Scalar = ScalarType(d.byte())
		t.ListType = ListType(d.byte())
		flags := d.byte()
		if t.Kind > List || t.Scalar > IntOrString || t.ListType > Set {
			d.fail()
		}
		t.RetainKeys = flags&flagRetainKeys != 0
		t.Replace = flags&flagReplace != 0
		if flags&flagName != 0 {
			t.Name = d.str(strs)
		}
		if flags&flagFields != 0 {
			if j := d.index(nsets); d.err == nil {
				t.Fields = sets[j]
			}
		}
		if flags&flagElem != 0 {
			t.Elem = ref()
		}
		if flags&flagMergeKey != 0 {
			t.MergeKey = d.str(strs)
		}
		if flags&flagKeys != 0 {
			keys := make([]string, d.count(1))
			for j := range keys {
				keys[j] = d.str(strs)
			}
			t.Keys = keys
		}
		if flags&flagDefault != 0 {
			t.Default = d.value(strs, 0)
		}
		if d.err != nil {
			return nil, d.err
		}
	}

	nkinds := d.count(4)
	kinds := make(map[GVK]*Type, nkinds)
	for range nkinds {
		gvk := GVK{Group: d.str(strs), Version: d.str(strs), Kind: d.str(strs)}
		t := ref()
		if t == nil {
			t = untyped
		}
		kinds[gvk] = t
	}
	if d.err != nil {
		return nil, d.err
	}
	if d.pos != len(data) {
		return nil, fmt.Errorf("%w: %d bytes after the end", errCorrupt, len(data)-d.pos)
	}
	return kinds, nil
}

func (d *reader) value(strs []string, depth int) any {
	if depth > maxValueDepth {
		d.fail()
		return nil
	}
	switch d.byte() {
	case valueNull:
		return nil
	case valueFalse:
		return false
	case valueTrue:
		return true
	case valueInt:
		return d.varint()
	case valueFloat:
		if len(d.data)-d.pos < 8 {
			d.fail()
			return nil
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(d.data[d.pos:]))
		d.pos += 8
		return f
	case valueString:
		return d.str(strs)
	case valueList:
		l := make([]any, d.count(1))
		for i := range l {
			l[i] = d.value(strs, depth+1)
		}
		return l
	case valueMap:
		n := d.count(2)
		m := make(map[string]any, n)
		for range n {
			k := d.str(strs)
			m[k] = d.value(strs, depth+1)
		}
		return m
	}
	d.fail()
	return nil
}

func (d *reader) str(strs []string) string {
	i := d.index(len(strs))
	if d.err != nil {
		return ""
	}
	return strs[i]
}
