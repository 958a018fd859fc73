package merge

import (
	"slices"
	"sort"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// Lists merged by full key.
//
// A strategic merge patch identifies the elements of a list by one field,
// the patch merge key. Some lists are keyed by more fields
// (x-kubernetes-list-map-keys): container ports by containerPort and
// protocol, Service ports by port and protocol, topology spread constraints
// by topologyKey and whenUnsatisfiable. When two elements share the merge
// key value (port 53 over UDP and over TCP), kubectl's patch collapses them
// into one and loses data. konverge instead merges such a list by all its
// keys, three-way as everywhere else, and sends the resulting list whole
// with the {"$patch": "replace"} directive, which a real API server applies
// as it is, except that it moves elements sharing a merge key next to the
// first of them (groupByMergeKey); konverge orders the list so already.

// needsFullKeys reports whether any of the lists has two elements sharing a
// merge key value, in a list whose elements have more key fields.
func needsFullKeys(t *schema.Type, lists ...[]any) (bool, error) {
	if t.ListType != schema.MergeByKey || len(t.Keys) < 2 || t.MergeKey == "" {
		return false, nil
	}
	for _, l := range lists {
		if len(l) < 2 {
			continue
		}
		if len(l) <= smallList {
			var ids [smallList]any
			n := 0
			for _, v := range l {
				m, ok := v.(map[string]any)
				if !ok {
					continue
				}
				k, ok := m[t.MergeKey]
				if !ok {
					continue
				}
				id := comparable(k)
				for _, prev := range ids[:n] {
					if prev == id {
						return true, nil
					}
				}
				ids[n] = id
				n++
			}
			continue
		}
		seen := make(map[any]bool, len(l))
		for _, v := range l {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			k, ok := m[t.MergeKey]
			if !ok {
				continue
			}
			id := comparable(k)
			if seen[id] {
				return true, nil
			}
			seen[id] = true
		}
	}
	return false, nil
}

// fullKey returns the identity of a list element by all the list's key
// fields, using the schema's default for an absent key field (protocol
// "TCP"), and the path element that names it.
func fullKey(v any, t *schema.Type, i int) (string, value.Element, error) {
	return fullKeyOf(v, t.Keys, t.Element(), i)
}

// fullKeyOf is fullKey for a list with the key fields keys and elements of
// type elemT.
func fullKeyOf(v any, keyFields []string, elemT *schema.Type, i int) (string, value.Element, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", value.Element{}, at(&TypeError{Want: "object", Got: value.TypeName(v)}, value.IndexElement(i))
	}
	keys := make([]value.KeyField, 0, len(keyFields))
	tuple := make([]any, 0, len(keyFields))
	for j, name := range keyFields {
		kv, ok := m[name]
		if !ok || kv == nil {
			kv = elemT.Field(name).Default
		}
		if kv == nil && j == 0 {
			return "", value.Element{}, at(&MissingKeyError{Key: name}, value.IndexElement(i))
		}
		tuple = append(tuple, kv)
		if kv != nil {
			keys = append(keys, value.KeyField{Name: name, Value: kv})
		}
	}
	b, err := value.Encode(tuple)
	if err != nil {
		return "", value.Element{}, at(err, value.IndexElement(i))
	}
	return string(b), value.KeyElement(keys...), nil
}

// keyedList indexes a list by full key.
type keyedList struct {
	keys  []string
	elems []value.Element
	pos   map[string]int
}

func indexFullKeys(l []any, t *schema.Type, rejectDuplicates bool) (*keyedList, error) {
	kl := &keyedList{keys: make([]string, len(l)), elems: make([]value.Element, len(l)), pos: make(map[string]int, len(l))}
	for i, v := range l {
		k, el, err := fullKey(v, t, i)
		if err != nil {
			return nil, err
		}
		kl.keys[i], kl.elems[i] = k, el
		if _, dup := kl.pos[k]; dup {
			if rejectDuplicates {
				return nil, at(&DuplicateError{Index: i}, el)
			}
			continue
		}
		kl.pos[k] = i
	}
	return kl, nil
}

// fullKeyPatch merges a list by full keys, three-way, and returns the patch
// value that makes live's list the result: the whole list after a replace
// directive, or nil when live already is the result.
func fullKeyPatch(last, config, live []any, t *schema.Type) ([]any, error) {
	lastK, err := indexFullKeys(last, t, false)
	if err != nil {
		return nil, err
	}
	confK, err := indexFullKeys(config, t, true)
	if err != nil {
		return nil, err
	}
	liveK, err := indexFullKeys(live, t, false)
	if err != nil {
		return nil, err
	}
	elemT := t.Element()
	server := &patcher{server: true}

	// The config's elements, in its order, merged into live's.
	fromConfig := make([]any, 0, len(config))
	fromConfigKeys := make([]string, 0, len(config))
	for i, c := range config {
		k := confK.keys[i]
		cm := c.(map[string]any)
		j, inLive := liveK.pos[k]
		if !inLive {
			fromConfig = append(fromConfig, cleanValue(cm))
			fromConfigKeys = append(fromConfigKeys, k)
			continue
		}
		lm, _ := live[j].(map[string]any)
		var lastM map[string]any
		if li, ok := lastK.pos[k]; ok {
			lastM, _ = last[li].(map[string]any)
		}
		p, err := threeWayMaps(lastM, cm, lm, elemT, Options{}, false)
		if err != nil {
			return nil, at(err, confK.elems[i])
		}
		merged := lm
		if len(p) > 0 {
			merged, err = server.mergeMap(lm, p, elemT)
			if err != nil {
				return nil, at(err, confK.elems[i])
			}
		}
		fromConfig = append(fromConfig, merged)
		fromConfigKeys = append(fromConfigKeys, k)
	}
	// Live's other elements stay unless the last apply made them.
	var serverOnly []any
	var serverOnlyKeys []string
	for i, v := range live {
		k := liveK.keys[i]
		if _, inConfig := confK.pos[k]; inConfig {
			continue
		}
		if _, inLast := lastK.pos[k]; inLast {
			continue
		}
		serverOnly = append(serverOnly, v)
		serverOnlyKeys = append(serverOnlyKeys, k)
	}
	// The order. An API server groups the elements of a replaced list that
	// share a merge key where the first of them is (see groupByMergeKey),
	// so konverge orders the list that way itself, which makes the order a
	// fixed point and a second apply a no-op: the config's elements in its
	// order, grouped; a live-only element that shares a merge key with one
	// of them right after that group; the other live-only elements
	// interleaved as kubectl does for merged lists, each before the first
	// config element that it preceded in live.
	perm := groupPermutation(fromConfig, t.MergeKey)
	groupEnd := make(map[any]int, len(perm))
	for j, p := range perm {
		groupEnd[itemID(fromConfig[p], t.MergeKey, elemMap)] = j
	}
	attached := make(map[int][]any)
	var loose []any
	var looseKeys []string
	for i, v := range serverOnly {
		if j, ok := groupEnd[itemID(v, t.MergeKey, elemMap)]; ok {
			attached[j] = append(attached[j], v)
			continue
		}
		loose = append(loose, v)
		looseKeys = append(looseKeys, serverOnlyKeys[i])
	}
	result := make([]any, 0, len(fromConfig)+len(serverOnly))
	i := 0
	for j, p := range perm {
		ri, rok := liveK.pos[fromConfigKeys[p]]
		for ; rok && i < len(loose); i++ {
			if li, lok := liveK.pos[looseKeys[i]]; !lok || li >= ri {
				break
			}
			result = append(result, loose[i])
		}
		result = append(result, fromConfig[p])
		result = append(result, attached[j]...)
	}
	result = append(result, loose[i:]...)
	result = groupByMergeKey(result, t.MergeKey)
	if value.Equal(result, live) || inConfigOrder(live, liveK, result, confK, t) {
		return nil, nil
	}
	patch := make([]any, 0, len(result)+1)
	patch = append(patch, map[string]any{patchKey: patchReplace})
	return append(patch, result...), nil
}

// inConfigOrder reports whether live holds the elements of result, each
// once, with the config's elements in the config's order: what an earlier
// apply that added the list whole (without a replace directive) left, and
// as good as result.
func inConfigOrder(live []any, liveK *keyedList, result []any, confK *keyedList, t *schema.Type) bool {
	if len(live) != len(result) || len(liveK.pos) != len(live) {
		return false
	}
	rk := make(map[string]any, len(result))
	for _, v := range result {
		k, _, err := fullKey(v, t, 0)
		if err != nil {
			return false
		}
		rk[k] = v
	}
	last := -1
	for i, v := range live {
		k := liveK.keys[i]
		if !value.Equal(rk[k], v) {
			return false
		}
		if j, ok := confK.pos[k]; ok {
			if j < last {
				return false
			}
			last = j
		}
	}
	return true
}

// groupByMergeKey orders a list as an API server stores it after a
// replace directive: it sorts the list stably by the position of the first
// element with the same merge key, so elements sharing a merge key end up
// together where the first of them was ([53/TCP, 80, 53/UDP] becomes
// [53/TCP, 53/UDP, 80]).
func groupByMergeKey(l []any, mergeKey string) []any {
	perm := groupPermutation(l, mergeKey)
	if slices.IsSorted(perm) {
		return l
	}
	out := make([]any, len(l))
	for i, p := range perm {
		out[i] = l[p]
	}
	return out
}

// groupPermutation returns the indexes of l in the order groupByMergeKey
// puts its elements.
func groupPermutation(l []any, mergeKey string) []int {
	first := make(map[any]int, len(l))
	pos := make([]int, len(l))
	perm := make([]int, len(l))
	for i, v := range l {
		perm[i] = i
		id := itemID(v, mergeKey, elemMap)
		if j, ok := first[id]; ok {
			pos[i] = j
			continue
		}
		first[id] = i
		pos[i] = i
	}
	sort.SliceStable(perm, func(a, b int) bool { return pos[perm[a]] < pos[perm[b]] })
	return perm
}
