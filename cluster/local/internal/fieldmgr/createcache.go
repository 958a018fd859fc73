package fieldmgr

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// CreateCache remembers the managedFields that TrackFast computed for
// created objects, by the objects' shape: what a create records is the set
// of the object's fields, which depends on its map keys, its lists (whose
// elements' keys name fields) and the kinds of its scalars, never on the
// scalars' values. A directory of ten thousand objects made from a few
// templates is a few shapes, and each one's field set is computed once
// instead of once an object (a typed conversion, a comparison and an
// encoding of the set).
//
// The shape keeps every map key and every list whole, so two objects with
// one shape have one field set; only successes are remembered. The zero
// value is ready to use and safe for concurrent use.
//
// The entries Track returns are the caller's own, but for their fieldsV1,
// which they share with the cache and with every other object of the
// shape: a field set is the largest part of a created object's metadata,
// and copying it for each object cost more than tracking did. Nothing may
// change a fieldsV1 tree in place, which holds in the store: what it
// writes it encodes, what it reads later it decodes anew, and the field
// manager builds new sets rather than changing old ones. A caller of the
// store that changes the managedFields of an object a create returned
// must replace an entry's fieldsV1, never edit it (see the package
// documentation of cluster/local).
type CreateCache struct {
	mu      sync.Mutex
	entries map[string][]any // by shape
	hits    int
}

// createCacheSize bounds the shapes remembered; the cache starts over when
// it is full.
const createCacheSize = 1024

// Track returns the managedFields of obj created by manager, as TrackFast
// would for a create (live, the kind's empty object, which emptyLive
// makes when the cache does not know the shape) whose request sets no
// managedFields, of a kind whose type converter tc never changes (a
// built-in kind); scope tells apart what reset depends on beside gvk.
func (c *CreateCache) Track(tc managedfields.TypeConverter, reset map[fieldpath.APIVersion]fieldpath.Filter, scope string, gvk schema.GVK,
	emptyLive func() (map[string]any, error), obj map[string]any, manager, now string) ([]any, error) {
	sc := shapePool.Get().(*shapeScratch)
	defer sc.release()
	ok := sc.key(scope, gvk, manager, obj)
	if ok {
		c.mu.Lock()
		cached, hit := c.entries[string(sc.buf)]
		if hit {
			c.hits++
		}
		c.mu.Unlock()
		if hit {
			return stamp(cached, now), nil
		}
	}
	live, err := emptyLive()
	if err != nil {
		return nil, err
	}
	entries, err := TrackFast(tc, reset, gvk, live, obj, nil, false, manager, "", now)
	if err != nil || !ok {
		return entries, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= createCacheSize {
		c.entries = map[string][]any{}
	}
	c.entries[string(sc.buf)] = stamp(entries, "")
	c.mu.Unlock()
	return entries, nil
}

// stamp is a copy of entries with the time now in those that have a time
// (on a create, the manager's), or their own when now is "". The copies
// share their fieldsV1 with entries (see CreateCache).
func stamp(entries []any, now string) []any {
	if entries == nil {
		return nil
	}
	out := make([]any, len(entries))
	for i, x := range entries {
		e := x.(map[string]any)
		c := make(map[string]any, len(e))
		for k, v := range e {
			c[k] = v
		}
		if _, ok := c["time"]; ok && now != "" {
			c["time"] = now
		}
		out[i] = c
	}
	return out
}

// shapeScratch is the memory a shape key is written in, reused (the keys
// of the maps being written are a stack in keys).
type shapeScratch struct {
	buf  []byte
	keys []string
}

var shapePool = sync.Pool{New: func() any { return &shapeScratch{buf: make([]byte, 0, 1024)} }}

func (sc *shapeScratch) release() {
	if cap(sc.buf) > 64<<10 || cap(sc.keys) > 4096 {
		return
	}
	clear(sc.keys[:cap(sc.keys)])
	sc.buf, sc.keys = sc.buf[:0], sc.keys[:0]
	shapePool.Put(sc)
}

// key writes in sc.buf what a create's field set depends on: the scope,
// the kind, the manager and the shape of obj without its managedFields;
// false for values it does not know, which are then not remembered.
func (sc *shapeScratch) key(scope string, gvk schema.GVK, manager string, obj map[string]any) bool {
	b := sc.buf[:0]
	for _, s := range []string{scope, gvk.Group, gvk.Version, gvk.Kind, manager} {
		b = appendString(b, s)
	}
	b, ok := sc.appendShape(b, obj, 0, true)
	sc.buf = b
	return ok
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendShape writes v's map keys and lists and its scalars' kinds; top
// says v is the object, whose metadata.managedFields it leaves out.
func (sc *shapeScratch) appendShape(b []byte, v any, depth int, top bool) ([]byte, bool) {
	if depth > value.MaxDepth {
		return b, false
	}
	switch x := v.(type) {
	case map[string]any:
		start := len(sc.keys)
		inMetadata := depth == 1 && top
		for k := range x {
			if inMetadata && k == "managedFields" {
				continue
			}
			sc.keys = append(sc.keys, k)
		}
		n := len(sc.keys) - start
		slices.Sort(sc.keys[start:])
		b = append(b, 'm')
		b = binary.AppendUvarint(b, uint64(n))
		for i := range n {
			// The maps below push their keys after these and pop them
			// (the stack may move: index it anew).
			k := sc.keys[start+i]
			b = appendString(b, k)
			var ok bool
			if b, ok = sc.appendShape(b, x[k], depth+1, top && depth == 0 && k == "metadata"); !ok {
				sc.keys = sc.keys[:start]
				return b, false
			}
		}
		sc.keys = sc.keys[:start]
		return b, true
	case []any:
		// Whole: a list's elements are its fields' names (keys, set
		// members) and their shapes. Its encoding follows its length,
		// four bytes written once it is known.
		b = append(b, 'l', 0, 0, 0, 0)
		at := len(b)
		enc, err := value.AppendEncode(b, x)
		if err != nil || len(enc)-at > math.MaxUint32 {
			return enc[:at], false
		}
		binary.LittleEndian.PutUint32(enc[at-4:at], uint32(len(enc)-at))
		return enc, true
	}
	return appendScalarKind(b, v)
}

// Hits is how many Track calls the cache answered.
func (c *CreateCache) Hits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

// appendScalarKind writes the kind of the scalar v, which is all a shape
// keeps of it; ok is false for a value that is not a JSON scalar, or a
// number JSON cannot write.
func appendScalarKind(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		return append(b, 's'), true
	case bool:
		return append(b, 'b'), true
	case nil:
		return append(b, 'n'), true
	case int64:
		return append(b, 'i'), true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return b, false
		}
		return append(b, 'f'), true
	}
	return b, false
}
