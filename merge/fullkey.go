package merge

import (
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
// as it is.

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
		p, err := threeWayMaps(lastM, cm, lm, elemT, Options{})
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
	// Interleave as kubectl does for merged lists: a live-only element goes
	// before the first config element that it preceded in live.
	result := make([]any, 0, len(fromConfig)+len(serverOnly))
	i, j := 0, 0
	for i < len(serverOnly) || j < len(fromConfig) {
		switch {
		case i >= len(serverOnly):
			result = append(result, fromConfig[j])
			j++
		case j >= len(fromConfig):
			result = append(result, serverOnly[i])
			i++
		default:
			li, lok := liveK.pos[serverOnlyKeys[i]]
			ri, rok := liveK.pos[fromConfigKeys[j]]
			if lok && rok && li < ri {
				result = append(result, serverOnly[i])
				i++
			} else {
				result = append(result, fromConfig[j])
				j++
			}
		}
	}
	if value.Equal(result, live) {
		return nil, nil
	}
	patch := make([]any, 0, len(result)+1)
	patch = append(patch, map[string]any{directiveMarker: replaceDirective})
	return append(patch, result...), nil
}
