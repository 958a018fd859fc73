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
	key, ok := shapeKey(scope, gvk, manager, withoutManagedFields(obj))
	if ok {
		c.mu.Lock()
		cached, hit := c.entries[key]
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
	c.entries[key] = stamp(entries, "")
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

// shapeKey encodes what a create's field set depends on; ok is false for
// values it does not know, which are then not remembered.
func shapeKey(scope string, gvk schema.GVK, manager string, obj map[string]any) (string, bool) {
	b := make([]byte, 0, 512)
	for _, s := range []string{scope, gvk.Group, gvk.Version, gvk.Kind, manager} {
		b = appendString(b, s)
	}
	b, ok := appendShape(b, obj, 0)
	return string(b), ok
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendShape writes v's map keys and lists and its scalars' kinds.
func appendShape(b []byte, v any, depth int) ([]byte, bool) {
	if depth > value.MaxDepth {
		return b, false
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, 'm')
		b = binary.AppendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			b = appendString(b, k)
			var ok bool
			if b, ok = appendShape(b, x[k], depth+1); !ok {
				return b, false
			}
		}
		return b, true
	case []any:
		// Whole: a list's elements are its fields' names (keys, set
		// members) and their shapes.
		enc, err := value.Encode(x)
		if err != nil {
			return b, false
		}
		b = append(b, 'l')
		return appendString(b, string(enc)), true
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

// Hits is how many Track calls the cache answered.
func (c *CreateCache) Hits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}
