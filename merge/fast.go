package merge

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// ThreeWayJSON is ThreeWay followed by Apply on JSON documents: it returns
// the strategic merge patch that client-side kubectl apply sends and the
// object live becomes when the API server applies it, both as compact JSON
// with sorted keys. lastApplied may be empty (no previous apply).
//
// The common case (documents with sorted keys, as konverge, kubectl and
// sigs.k8s.io/yaml write them; changed fields, added fields, deleted
// fields, lists merged by key whose elements keep their order) is computed
// in one walk over the three documents, patch and result together, without
// decoding them into maps: it allocates the two results and little else.
// Everything else (directives, nulls, reordered or removed list elements,
// retainKeys, fractions, Options.DetectConflicts, invalid input) takes the
// path of DecodeObject, ThreeWay, Apply and Encode, which gives the same
// results and errors; the differential tests hold both to it.
func ThreeWayJSON(lastApplied, config, live []byte, t *schema.Type, opts Options) (patch, result []byte, err error) {
	if !opts.DetectConflicts {
		f := fastPool.Get().(*fastMerge)
		ok := f.run(lastApplied, config, live, t)
		if ok {
			patch = bytes.Clone(f.patch)
			result = bytes.Clone(f.result)
		}
		f.release()
		if ok {
			return patch, result, nil
		}
	}
	return threeWayJSONSlow(lastApplied, config, live, t, opts)
}

// threeWayJSONSlow is ThreeWayJSON through decoded maps.
func threeWayJSONSlow(lastApplied, config, live []byte, t *schema.Type, opts Options) (patch, result []byte, err error) {
	var l map[string]any
	if len(bytes.TrimSpace(lastApplied)) > 0 {
		if l, err = value.DecodeObject(lastApplied); err != nil {
			return nil, nil, fmt.Errorf("last-applied configuration: %w", err)
		}
	}
	c, err := value.DecodeObject(config)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	v, err := value.DecodeObject(live)
	if err != nil {
		return nil, nil, fmt.Errorf("live object: %w", err)
	}
	p, err := ThreeWay(l, c, v, t, opts)
	if err != nil {
		return nil, nil, err
	}
	r, err := Apply(v, p, t)
	if err != nil {
		return nil, nil, err
	}
	if patch, err = value.Encode(p); err != nil {
		return nil, nil, err
	}
	result, err = value.Encode(r)
	return patch, result, err
}

// fastMerge is the scratch space of one fast three-way merge, pooled.
type fastMerge struct {
	last, conf, live flatDoc
	patch, result    []byte
	// order holds the $setElementOrder members of the objects being
	// walked, spliced in front of their other members (they sort first).
	order []byte
	// keyed counts the lists merged by key being walked: a deletion inside
	// one would need merging with the changes, which the fast path leaves
	// to the general one.
	keyed int
	ids   []int32
	bail  bool
}

var fastPool = sync.Pool{New: func() any { return new(fastMerge) }}

// maxPooled is the size above which scratch space is not kept.
const maxPooled = 8 << 20

func (f *fastMerge) release() {
	if cap(f.patch) > maxPooled || cap(f.result) > maxPooled || cap(f.last.nodes) > maxPooled/16 ||
		cap(f.conf.nodes) > maxPooled/16 || cap(f.live.nodes) > maxPooled/16 {
		return
	}
	f.last.src, f.conf.src, f.live.src = nil, nil, nil
	fastPool.Put(f)
}

// fastUsed counts the merges the fast path completed, for tests.
var fastUsed func()

func (f *fastMerge) run(lastApplied, config, live []byte, t *schema.Type) bool {
	f.patch, f.result, f.order = f.patch[:0], f.result[:0], f.order[:0]
	f.keyed, f.bail = 0, false
	hasLast := len(bytes.TrimSpace(lastApplied)) > 0
	if !f.conf.parse(config) || !f.live.parse(live) || (hasLast && !f.last.parse(lastApplied)) {
		return false
	}
	if f.conf.nodes[0].kind != kObject || f.live.nodes[0].kind != kObject {
		return false
	}
	l := int32(-1)
	if hasLast {
		if f.last.nodes[0].kind != kObject {
			return false
		}
		l = 0
	}
	if !f.valid(t, 0) {
		return false
	}
	f.patch = append(f.patch, '{')
	f.object(t, l, 0, 0, nil)
	f.patch = append(f.patch, '}')
	if f.bail {
		return false
	}
	if fastUsed != nil {
		fastUsed()
	}
	return true
}

// str turns a key into a string for a schema lookup, without copying:
// the schema does not keep it.
func str(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// level is the state of one object of the patch being written.
type level struct {
	start      int // where its members start in f.patch
	orderStart int // where its $setElementOrder members start in f.order
	members    int // members written, the forced one included
	real       int // members written other than the forced merge key
}

func (f *fastMerge) key(buf []byte, n int, k []byte) []byte {
	if n > 0 {
		buf = append(buf, ',')
	}
	buf = append(buf, '"')
	buf = append(buf, k...)
	return append(buf, '"', ':')
}

// object walks the objects c of config and v of live (and l of
// last-applied, or -1), writing the members of their patch to f.patch and
// the merged object to f.result. force is the merge key of a list element:
// it is written when anything else is. It returns how many members it
// wrote.
func (f *fastMerge) object(t *schema.Type, l, c, v int32, force []byte) int {
	L, C, V := &f.last, &f.conf, &f.live
	lv := level{start: len(f.patch), orderStart: len(f.order)}
	f.result = append(f.result, '{')
	rn := 0
	forcedAt := -1
	// The members of the three objects, joined by key (all ascending).
	var li, ci, vi, le, ce, ve int32 = -1, c + 1, v + 1, -1, C.nodes[c].next, V.nodes[v].next
	if l >= 0 {
		li, le = l+1, L.nodes[l].next
	}
	for !f.bail {
		var k []byte
		if ci < ce {
			k = C.bytesOf(ci)
		}
		if vi < ve {
			if vk := V.bytesOf(vi); k == nil || bytes.Compare(vk, k) < 0 {
				k = vk
			}
		}
		if li >= 0 && li < le {
			if lk := L.bytesOf(li); k == nil || bytes.Compare(lk, k) < 0 {
				k = lk
			}
		}
		if k == nil {
			break
		}
		inC := ci < ce && bytes.Equal(C.bytesOf(ci), k)
		inV := vi < ve && bytes.Equal(V.bytesOf(vi), k)
		inL := li >= 0 && li < le && bytes.Equal(L.bytesOf(li), k)
		cv, vv, lval := ci+1, vi+1, int32(-1)
		if inL {
			lval = li + 1
		}
		switch {
		case inC && inV:
			if force != nil && forcedAt < 0 && bytes.Equal(k, force) {
				forcedAt = len(f.patch)
				f.patch = f.key(f.patch, lv.members, k)
				f.patch = append(f.patch, C.raw(cv)...)
				lv.members++
			}
			f.result = f.key(f.result, rn, k)
			rn++
			f.both(t, k, lval, cv, vv, &lv)
		case inC:
			if inL && L.nodes[lval].kind >= kObject && L.nodes[lval].kind <= kArray && !flatEqual(L, lval, C, cv) {
				f.bail = true
				break
			}
			f.patch = f.key(f.patch, lv.members, k)
			f.patch = append(f.patch, C.raw(cv)...)
			lv.members++
			lv.real++
			f.result = f.key(f.result, rn, k)
			rn++
			f.result = append(f.result, C.raw(cv)...)
		case inL:
			// Dropped from the config since the last apply: deleted.
			if f.keyed > 0 {
				f.bail = true
				break
			}
			f.patch = f.key(f.patch, lv.members, k)
			f.patch = append(f.patch, "null"...)
			lv.members++
			lv.real++
		default:
			f.result = f.key(f.result, rn, k)
			rn++
			f.result = append(f.result, V.raw(vv)...)
		}
		if inC {
			ci = C.nodes[cv].next
		}
		if inV {
			vi = V.nodes[vv].next
		}
		if inL {
			li = L.nodes[lval].next
		}
	}
	f.result = append(f.result, '}')
	if f.bail {
		return 0
	}
	if len(f.order) > lv.orderStart {
		// $setElementOrder/... sorts before every key the parser lets
		// through: put the order members first.
		ins := f.order[lv.orderStart:]
		if lv.members > 0 {
			ins = append(ins, ',')
		}
		f.patch = slices.Insert(f.patch, lv.start, ins...)
		f.order = f.order[:lv.orderStart]
		return lv.members + 1
	}
	if forcedAt >= 0 && lv.real == 0 {
		f.patch = f.patch[:lv.start]
		return 0
	}
	return lv.members
}

// both merges the member k that config and live both have.
func (f *fastMerge) both(t *schema.Type, k []byte, l, c, v int32, lv *level) {
	L, C, V := &f.last, &f.conf, &f.live
	cn, vn := &C.nodes[c], &V.nodes[v]
	ft := t.Field(str(k))
	if cn.kind == kArray && listMerges(ft) && ft.ListType != schema.MergeByKey && !C.ascendingStrings(c) {
		// kubectl sends $setElementOrder for a set whose config order is
		// not sorted, even when nothing changed: left to the general path.
		f.bail = true
		return
	}
	if flatEqual(C, c, V, v) && (l < 0 || flatEqual(L, l, C, c)) {
		f.result = append(f.result, V.raw(v)...)
		return
	}
	switch {
	case cn.kind == kObject && vn.kind == kObject:
		if ft.Replace || ft.RetainKeys {
			f.bail = true
			return
		}
		if l >= 0 && L.nodes[l].kind != kObject {
			l = -1
		}
		mark := len(f.patch)
		f.patch = f.key(f.patch, lv.members, k)
		f.patch = append(f.patch, '{')
		if f.object(ft, l, c, v, nil) == 0 {
			f.patch = f.patch[:mark]
			return
		}
		f.patch = append(f.patch, '}')
		lv.members++
		lv.real++
	case cn.kind == kArray && vn.kind == kArray:
		if listMerges(ft) {
			if l >= 0 && L.nodes[l].kind != kArray {
				l = -1
			}
			f.keyedList(ft, k, l, c, v, lv)
			return
		}
		f.replace(k, c, v, lv)
	case cn.kind != kObject && cn.kind != kArray && vn.kind != kObject && vn.kind != kArray:
		f.replace(k, c, v, lv)
	default:
		f.bail = true
	}
}

// replace makes config's value the patch's and the result's, unless it
// equals live's.
func (f *fastMerge) replace(k []byte, c, v int32, lv *level) {
	if flatEqual(&f.conf, c, &f.live, v) {
		f.result = append(f.result, f.live.raw(v)...)
		return
	}
	f.patch = f.key(f.patch, lv.members, k)
	f.patch = append(f.patch, f.conf.raw(c)...)
	lv.members++
	lv.real++
	f.result = append(f.result, f.conf.raw(c)...)
}

// keyedList merges a list merged by key whose elements are, in config and
// live (and last-applied, when it has the list), the same keys in the same
// order; other lists are left to the general path.
func (f *fastMerge) keyedList(t *schema.Type, k []byte, l, c, v int32, lv *level) {
	L, C, V := &f.last, &f.conf, &f.live
	mk := t.MergeKey
	n := C.nodes[c].n
	if t.ListType != schema.MergeByKey || mk == "" || t.RetainKeys || V.nodes[v].n != n || (l >= 0 && L.nodes[l].n != n) {
		f.bail = true
		return
	}
	mkb := unsafe.Slice(unsafe.StringData(mk), len(mk))
	// The elements' merge keys agree position by position, and config
	// repeats none.
	start := len(f.ids)
	defer func() { f.ids = f.ids[:start] }()
	ce, ve, le := c+1, v+1, l+1
	for i := int32(0); i < n; i++ {
		ck := C.member(ce, mkb)
		if ck < 0 || C.nodes[ck].esc || (i > 0 && C.nodes[ck].kind != C.nodes[f.ids[start]].kind) {
			f.bail = true
			return
		}
		if vk := V.member(ve, mkb); vk < 0 || !flatEqual(C, ck, V, vk) {
			f.bail = true
			return
		}
		if l >= 0 {
			if lk := L.member(le, mkb); lk < 0 || !flatEqual(C, ck, L, lk) {
				f.bail = true
				return
			}
			le = L.nodes[le].next
		}
		f.ids = append(f.ids, ck)
		ce, ve = C.nodes[ce].next, V.nodes[ve].next
	}
	ids := f.ids[start:]
	if C.repeats(ids) {
		f.bail = true
		return
	}
	mark := len(f.patch)
	f.patch = f.key(f.patch, lv.members, k)
	f.patch = append(f.patch, '[')
	f.result = append(f.result, '[')
	elemT := t.Element()
	wrote := 0
	ce, ve, le = c+1, v+1, l+1
	for i := int32(0); i < n && !f.bail; i++ {
		if i > 0 {
			f.result = append(f.result, ',')
		}
		lel := int32(-1)
		if l >= 0 {
			lel = le
		}
		if flatEqual(C, ce, V, ve) && (lel < 0 || flatEqual(L, lel, C, ce)) {
			f.result = append(f.result, V.raw(ve)...)
		} else {
			em := len(f.patch)
			if wrote > 0 {
				f.patch = append(f.patch, ',')
			}
			f.patch = append(f.patch, '{')
			f.keyed++
			if f.object(elemT, lel, ce, ve, mkb) == 0 {
				f.patch = f.patch[:em]
			} else {
				f.patch = append(f.patch, '}')
				wrote++
			}
			f.keyed--
		}
		ce, ve = C.nodes[ce].next, V.nodes[ve].next
		if l >= 0 {
			le = L.nodes[le].next
		}
	}
	f.result = append(f.result, ']')
	if wrote == 0 {
		// Same keys in the same order: no $setElementOrder either.
		f.patch = f.patch[:mark]
		return
	}
	f.patch = append(f.patch, ']')
	lv.members++
	lv.real++
	// The order of the config's elements.
	if len(f.order) > lv.orderStart {
		f.order = append(f.order, ',')
	}
	f.order = append(f.order, `"$setElementOrder/`...)
	f.order = append(f.order, k...)
	f.order = append(f.order, `":[`...)
	for i, id := range ids {
		if i > 0 {
			f.order = append(f.order, ',')
		}
		f.order = append(f.order, `{"`...)
		f.order = append(f.order, mk...)
		f.order = append(f.order, `":`...)
		f.order = append(f.order, C.raw(id)...)
		f.order = append(f.order, '}')
	}
	f.order = append(f.order, ']')
}

// member returns the value node of the member k of object o, or -1 (also
// when o is not an object).
func (d *flatDoc) member(o int32, k []byte) int32 {
	if d.nodes[o].kind != kObject {
		return -1
	}
	i, end := o+1, d.nodes[o].next
	for i < end {
		switch bytes.Compare(d.bytesOf(i), k) {
		case 0:
			return i + 1
		case 1:
			return -1
		}
		i = d.nodes[i+1].next
	}
	return -1
}

// ascendingStrings reports whether the elements of array a are strings
// without escapes in strictly ascending order.
func (d *flatDoc) ascendingStrings(a int32) bool {
	var prev []byte
	for e := a + 1; e < d.nodes[a].next; e = d.nodes[e].next {
		if d.nodes[e].kind != kString || d.nodes[e].esc {
			return false
		}
		s := d.bytesOf(e)
		if e > a+1 && bytes.Compare(prev, s) >= 0 {
			return false
		}
		prev = s
	}
	return true
}

// repeats reports whether two of the scalar nodes ids have the same text.
func (d *flatDoc) repeats(ids []int32) bool {
	if len(ids) <= 16 {
		for i := range ids {
			for j := range i {
				if bytes.Equal(d.raw(ids[i]), d.raw(ids[j])) {
					return true
				}
			}
		}
		return false
	}
	s := slices.Clone(ids) // long lists only
	slices.SortFunc(s, func(a, b int32) int { return bytes.Compare(d.raw(a), d.raw(b)) })
	for i := 1; i < len(s); i++ {
		if bytes.Equal(d.raw(s[i]), d.raw(s[i-1])) {
			return true
		}
	}
	return false
}

// valid reports whether node i of the config surely passes Validate
// against t; when it is not sure, the general path decides.
func (f *fastMerge) valid(t *schema.Type, i int32) bool {
	C := &f.conf
	nd := &C.nodes[i]
	switch t.KindOf() {
	case schema.Untyped:
		return true
	case schema.Struct, schema.Map:
		if nd.kind != kObject {
			return false
		}
		for m := i + 1; m < nd.next; m = C.nodes[m+1].next {
			if !f.valid(t.Field(str(C.bytesOf(m))), m+1) {
				return false
			}
		}
		return true
	case schema.List:
		if nd.kind != kArray {
			return false
		}
		elemT := t.Element()
		switch t.ListType {
		case schema.MergeByKey:
			if t.MergeKey == "" {
				return false
			}
			mkb := unsafe.Slice(unsafe.StringData(t.MergeKey), len(t.MergeKey))
			var first []byte
			if len(t.Keys) >= 2 && t.Keys[0] != t.MergeKey {
				if elemT.Field(t.Keys[0]).Default == nil {
					first = unsafe.Slice(unsafe.StringData(t.Keys[0]), len(t.Keys[0]))
				}
			}
			start := len(f.ids)
			for e := i + 1; e < nd.next; e = C.nodes[e].next {
				k := C.member(e, mkb)
				if k < 0 || C.nodes[k].kind == kObject || C.nodes[k].kind == kArray || C.nodes[k].esc {
					f.ids = f.ids[:start]
					return false
				}
				if first != nil && C.member(e, first) < 0 {
					f.ids = f.ids[:start]
					return false
				}
				f.ids = append(f.ids, k)
			}
			ids := f.ids[start:]
			ok := !C.repeats(ids)
			for j := 1; ok && j < len(ids); j++ {
				ok = C.nodes[ids[j]].kind == C.nodes[ids[0]].kind
			}
			f.ids = f.ids[:start]
			for e := i + 1; ok && e < nd.next; e = C.nodes[e].next {
				ok = f.valid(elemT, e)
			}
			return ok
		case schema.Set:
			if !C.ascendingStrings(i) {
				// kubectl sends $setElementOrder for a set whose config
				// order is not sorted, even when nothing changed.
				return false
			}
			start := len(f.ids)
			for e := i + 1; e < nd.next; e = C.nodes[e].next {
				if kd := C.nodes[e].kind; kd == kObject || kd == kArray || C.nodes[e].esc {
					return false
				}
				if !f.valid(elemT, e) {
					return false
				}
				f.ids = append(f.ids, e)
			}
			ids := f.ids[start:]
			for j := 1; j < len(ids); j++ {
				if C.nodes[ids[j]].kind != C.nodes[ids[0]].kind {
					return false
				}
			}
			rep := C.repeats(ids)
			f.ids = f.ids[:start]
			return !rep
		default:
			for e := i + 1; e < nd.next; e = C.nodes[e].next {
				if !f.valid(elemT, e) {
					return false
				}
			}
			return true
		}
	case schema.Scalar:
		switch t.Scalar {
		case schema.String:
			return nd.kind == kString
		case schema.Integer, schema.Number:
			return nd.kind == kNumber
		case schema.Boolean:
			return nd.kind == kTrue || nd.kind == kFalse
		case schema.IntOrString:
			return nd.kind == kString || nd.kind == kNumber
		default:
			return nd.kind != kObject && nd.kind != kArray
		}
	}
	return false
}
