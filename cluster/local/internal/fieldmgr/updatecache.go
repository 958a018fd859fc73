package fieldmgr

import (
	"encoding/binary"
	"reflect"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// UpdateCache remembers the managedFields that TrackFast computed for
// updates, by what they depend on. TrackFast compares only the parts of
// the stored and the new object that differ (see differing): a key whose
// value is equal in both plays no part, two scalars that differ are a
// modified field whatever their values, and a part on one side only adds
// or removes the fields its map keys and lists name. So the new entries
// are a function of the kind, the manager, the request's entries without
// their times, and the "difference shape" of the two objects: the keys
// of the maps that differ, the kinds of the scalars that differ or stand
// on one side, and every list that differs or stands on one side whole
// (its elements' keys and values name fields). Their times are the
// manager's now (when it took fields) and the request's entries' own.
//
// Ten thousand objects of a few templates changed alike (an image, a
// last-applied annotation) are a few difference shapes: each one's
// entries are computed once, and the rest are stamped with their times,
// and take the request's own fieldsV1 where an entry's fields did not
// change; so are the status updates of the controllers. Only successes
// that came from the entries TrackFast takes first (the request's, or
// through a subresource the stored ones) and did not reach the cap of ten
// Update entries are remembered (the cap merges entries by their times). The zero value is ready to use and safe for
// concurrent use.
type UpdateCache struct {
	mu      sync.Mutex
	entries map[string][]templateEntry // by difference shape
	hits    int
}

// templateEntry is one entry of remembered managedFields: its fields
// without time and fieldsV1, where its fieldsV1 comes from (an entry of
// the request, or its own, copied) and its time (now, an entry of the
// request's, or none).
type templateEntry struct {
	fixed      map[string]any
	fields     any
	fieldsFrom int // index in the request's entries; -1: fields
	timeFrom   int // index in the request's entries; timeNow; timeNone
}

const (
	timeNow  = -1
	timeNone = -2
)

// updateCacheSize bounds the difference shapes remembered; the cache
// starts over when it is full.
const updateCacheSize = 1024

// Track returns the managedFields of obj after an update of live by
// manager, as TrackFast would, for a kind whose type converter tc never
// changes (a built-in kind); scope tells apart what reset depends on
// beside gvk and subresource. The entries it starts from are the
// request's, or through a subresource the stored ones: the result may
// share their fieldsV1, which the call must own.
func (c *UpdateCache) Track(tc managedfields.TypeConverter, reset map[fieldpath.APIVersion]fieldpath.Filter, scope string, gvk schema.GVK,
	live, obj map[string]any, reqManaged any, reqHas bool, manager, subresource, now string) ([]any, error) {
	var in []any
	var ok bool
	if subresource != "" {
		liveMD, _ := live["metadata"].(map[string]any)
		in, _ = liveMD["managedFields"].([]any)
		ok = len(in) > 0
	} else {
		in, _ = reqManaged.([]any)
		ok = reqHas && len(in) > 0 && !isResetManaged(reqManaged, reqHas)
	}
	var key []byte
	if ok {
		key, ok = updateKey(scope+"/"+subresource, gvk, manager, live, obj, in)
	}
	if ok {
		c.mu.Lock()
		tpl, hit := c.entries[string(key)]
		c.mu.Unlock()
		if hit {
			if times, valid := entryTimes(in); valid {
				c.mu.Lock()
				c.hits++
				c.mu.Unlock()
				return stampUpdate(tpl, in, times, now), nil
			}
		}
	}
	entries, info, err := trackFast(tc, reset, gvk, live, obj, reqManaged, reqHas, manager, subresource, now)
	if err != nil || !ok || !info.fromEntries || info.capped {
		return entries, err
	}
	if tpl, good := makeTemplate(in, entries, info, now); good {
		c.mu.Lock()
		if c.entries == nil || len(c.entries) >= updateCacheSize {
			c.entries = map[string][]templateEntry{}
		}
		c.entries[string(key)] = tpl
		c.mu.Unlock()
	}
	return entries, nil
}

// Hits is how many Track calls the cache answered.
func (c *UpdateCache) Hits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

// entryKey is the identifier decodeManaged files an entry under.
func entryKey(e map[string]any) string {
	s := func(k string) string { v, _ := e[k].(string); return v }
	id := managerID{Manager: s("manager"), Operation: s("operation"), APIVersion: s("apiVersion"), Subresource: s("subresource")}
	if id.Operation == "Apply" {
		id.APIVersion = ""
	}
	return id.String()
}

// entryTimes returns the times of the request's entries as decodeManaged
// reads them ("" for none); false when one does not decode.
func entryTimes(in []any) ([]string, bool) {
	times := make([]string, len(in))
	for i, x := range in {
		e, ok := x.(map[string]any)
		if !ok {
			return nil, false
		}
		v, has := e["time"]
		if !has || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, false
		}
		times[i] = tm.UTC().Format(time.RFC3339)
	}
	return times, true
}

// makeTemplate turns the entries TrackFast computed from the request's
// entries in into a template; false when an entry's time cannot be told
// from in and now (then nothing is remembered).
func makeTemplate(in, out []any, info trackInfo, now string) ([]templateEntry, bool) {
	times, ok := entryTimes(in)
	if !ok {
		return nil, false
	}
	last := make(map[string]int, len(in))
	for i, x := range in {
		last[entryKey(x.(map[string]any))] = i
	}
	tpl := make([]templateEntry, 0, len(out))
	for _, x := range out {
		e, ok := x.(map[string]any)
		if !ok {
			return nil, false
		}
		id := entryKey(e)
		idx, fromIn := last[id]
		te := templateEntry{fieldsFrom: -1, timeFrom: timeNone}
		got, hasTime := e["time"].(string)
		switch {
		case id == info.managerKey && info.touched:
			te.timeFrom = timeNow
			if got != now {
				return nil, false
			}
		case fromIn:
			if times[idx] != "" {
				te.timeFrom = idx
			}
			if got != times[idx] || hasTime != (times[idx] != "") {
				return nil, false
			}
		default:
			return nil, false
		}
		te.fixed = make(map[string]any, len(e))
		for k, v := range e {
			if k != "time" && k != "fieldsV1" {
				te.fixed[k] = v
			}
		}
		if prev, _ := in[idx].(map[string]any); fromIn && value.Equal(prev["fieldsV1"], e["fieldsV1"]) {
			te.fieldsFrom = idx
		} else {
			te.fields = value.DeepCopy(e["fieldsV1"])
		}
		tpl = append(tpl, te)
	}
	return tpl, true
}

// stampUpdate makes the entries of a template for the request's entries
// in (whose times are times) at now.
func stampUpdate(tpl []templateEntry, in []any, times []string, now string) []any {
	out := make([]any, len(tpl))
	for i, te := range tpl {
		e := make(map[string]any, len(te.fixed)+2)
		for k, v := range te.fixed {
			e[k] = v
		}
		if te.fieldsFrom >= 0 {
			e["fieldsV1"] = in[te.fieldsFrom].(map[string]any)["fieldsV1"]
		} else {
			e["fieldsV1"] = value.DeepCopy(te.fields)
		}
		switch te.timeFrom {
		case timeNow:
			if now != "" {
				e["time"] = now
			}
		case timeNone:
		default:
			e["time"] = times[te.timeFrom]
		}
		out[i] = e
	}
	sortManagedFields(out)
	return out
}

// updateKey encodes what the entries of an update depend on beside the
// times; ok is false for values it does not know, which are then not
// remembered.
func updateKey(scope string, gvk schema.GVK, manager string, live, obj map[string]any, in []any) ([]byte, bool) {
	b := make([]byte, 0, 1024)
	for _, s := range []string{scope, gvk.Group, gvk.Version, gvk.Kind, manager} {
		b = appendString(b, s)
	}
	// The request's entries and the stored ones (which TrackFast's
	// comparison sees as removed), without their times.
	b, ok := appendEntries(b, in)
	if !ok {
		return nil, false
	}
	liveMD, _ := live["metadata"].(map[string]any)
	liveManaged, hasLive := liveMD["managedFields"]
	switch {
	case !hasLive:
		b = append(b, 'x')
	case equalEntries(liveManaged, in):
		b = append(b, '=')
	default:
		list, isList := liveManaged.([]any)
		if !isList {
			return nil, false
		}
		b = append(b, 'l')
		if b, ok = appendEntries(b, list); !ok {
			return nil, false
		}
	}
	return appendDifference(b, live, withoutManagedFields(obj), 0, atRoot)
}

// equalEntries reports whether two managedFields lists are equal but for
// the values of their times (not the kinds of value they are).
func equalEntries(a any, b []any) bool {
	list, ok := a.([]any)
	if !ok || len(list) != len(b) {
		return false
	}
	for i, x := range list {
		ea, okA := x.(map[string]any)
		eb, okB := b[i].(map[string]any)
		if !okA || !okB || len(ea) != len(eb) {
			return false
		}
		for k, va := range ea {
			vb, ok := eb[k]
			if !ok {
				return false
			}
			if k == "time" {
				_, sa := va.(string)
				_, sb := vb.(string)
				if sa != sb || (!sa && !value.Equal(va, vb)) {
					return false
				}
				continue
			}
			if !sameMap(va, vb) && !value.Equal(va, vb) {
				return false
			}
		}
	}
	return true
}

// sameMap reports whether a and b are one and the same map: a patch's
// object keeps the stored object's fieldsV1 trees (see the package doc of
// cluster/local), which then need no comparison.
func sameMap(a, b any) bool {
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	return okA && okB && ma != nil && reflect.ValueOf(ma).UnsafePointer() == reflect.ValueOf(mb).UnsafePointer()
}

// appendEntries writes managedFields entries without their times (but
// with the kind of value each time is).
func appendEntries(b []byte, list []any) ([]byte, bool) {
	b = binary.AppendUvarint(b, uint64(len(list)))
	var keys []string
	for _, x := range list {
		e, ok := x.(map[string]any)
		if !ok {
			return b, false
		}
		keys = keys[:0]
		for k := range e {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = binary.AppendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			b = appendString(b, k)
			v := e[k]
			if k == "time" {
				switch v.(type) {
				case nil:
					b = append(b, 'n')
				case string:
					b = append(b, 's')
				default:
					return b, false
				}
				continue
			}
			// Scalars and fieldsV1 as JSON, which tells where each ends.
			var err error
			if b, err = value.AppendEncode(b, v); err != nil {
				return b, false
			}
		}
	}
	return b, true
}

// Where appendDifference is: the stored managedFields are written with the
// entries, not in the difference.
const (
	atRoot = iota
	atMetadata
	below
)

// appendDifference writes the difference shape of a and b as differing
// splits them.
func appendDifference(b []byte, a, bm map[string]any, depth, at int) ([]byte, bool) {
	if depth > value.MaxDepth {
		return b, false
	}
	keys := make([]string, 0, len(a)+2)
	for k := range a {
		keys = append(keys, k)
	}
	for k := range bm {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	ok := true
	for _, k := range keys {
		va, inA := a[k]
		vb, inB := bm[k]
		if inA && inB {
			ma, okA := va.(map[string]any)
			mb, okB := vb.(map[string]any)
			if okA && okB && ma != nil && mb != nil {
				// Two objects are equal exactly when their difference
				// names no key: write it, and take it back when it is
				// empty, rather than compare them whole first (and
				// again at every level below).
				start := len(b)
				b = appendString(b, k)
				b = append(b, 'M')
				next := below
				if at == atRoot && k == "metadata" {
					next = atMetadata
				}
				mark := len(b)
				if b, ok = appendDifference(b, ma, mb, depth+1, next); !ok {
					return b, false
				}
				if len(b) == mark+1 {
					b = b[:start]
				}
				continue
			}
			if value.Equal(va, vb) {
				continue
			}
		}
		b = appendString(b, k)
		switch {
		case inA && inB:
			ma, okA := va.(map[string]any)
			mb, okB := vb.(map[string]any)
			if okA && okB {
				b = append(b, 'M')
				next := below
				if at == atRoot && k == "metadata" {
					next = atMetadata
				}
				b, ok = appendDifference(b, ma, mb, depth+1, next)
			} else {
				b = append(b, 'B')
				if b, ok = appendValueShape(b, va, depth+1); ok {
					b, ok = appendValueShape(b, vb, depth+1)
				}
			}
		case inA:
			b = append(b, 'A')
			if at == atMetadata && k == "managedFields" {
				// Written with the entries.
				continue
			}
			b, ok = appendValueShape(b, va, depth+1)
		default:
			b = append(b, 'N')
			b, ok = appendValueShape(b, vb, depth+1)
		}
		if !ok {
			return b, false
		}
	}
	return append(b, '.'), true
}

// appendValueShape writes v's map keys, its lists whole and its scalars'
// kinds.
func appendValueShape(b []byte, v any, depth int) ([]byte, bool) {
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
			if b, ok = appendValueShape(b, x[k], depth+1); !ok {
				return b, false
			}
		}
		return b, true
	case []any:
		enc, err := value.Encode(x)
		if err != nil {
			return b, false
		}
		b = append(b, 'l')
		return appendString(b, string(enc)), true
	}
	return appendScalarKind(b, v)
}
