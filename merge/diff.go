package merge

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// diffOptions select which half of a two-way diff to compute; they mirror
// the options kubectl's strategic merge patch uses.
type diffOptions struct {
	// setElementOrder emits $setElementOrder lists for merged lists.
	setElementOrder bool
	// ignoreChangesAndAdditions computes only the deletions.
	ignoreChangesAndAdditions bool
	// ignoreDeletions computes only changes and additions.
	ignoreDeletions bool
	// buildRetainKeys emits the $retainKeys directive for this map.
	buildRetainKeys bool
}

// differ computes one two-way diff. other is the third object of the
// three-way merge, walked in parallel: lists whose elements share a merge
// key are merged by their full keys, which needs all three.
type differ struct {
	// fullKey tells which of the three inputs is which, for lists merged by
	// full keys: when true, the diff runs from live (original) to config
	// and other is last-applied; when false, from last-applied to config
	// with other being live, and such lists are skipped.
	fullKey bool
}

// diffMaps returns the patch that turns original into modified (or the
// half of it the options select); nil when there is none.
func (d *differ) diffMaps(original, modified, other map[string]any, t *schema.Type, o diffOptions) (map[string]any, error) {
	var patch map[string]any
	set := func(k string, v any) {
		if patch == nil {
			patch = make(map[string]any, 4)
		}
		patch[k] = v
	}
	found := 0 // keys of modified that original has
	// A reapplied config is its own other (ThreeWayReapplied): its
	// members are their own, without a lookup.
	self := other != nil && sameMap(other, modified)
	for key, modV := range modified {
		origV, ok := original[key]
		if !ok {
			if !o.ignoreChangesAndAdditions {
				set(key, modV)
			}
			continue
		}
		found++
		if key == patchKey {
			os, ok1 := origV.(string)
			ms, ok2 := modV.(string)
			if !ok1 || !ok2 {
				return nil, atField(patchErrorf("invalid value for %s", patchKey), key)
			}
			if os != ms {
				set(key, modV)
			}
			continue
		}
		switch mv := modV.(type) {
		case map[string]any:
			ov, ok := origV.(map[string]any)
			if !ok {
				break
			}
			ft := t.Field(key)
			if ft.Replace {
				if !o.ignoreChangesAndAdditions {
					set(key, mv)
				}
				continue
			}
			sub := o
			sub.buildRetainKeys = ft.RetainKeys && ft.Kind == schema.Struct
			var oth map[string]any
			if self {
				oth = mv
			} else if other != nil {
				oth, _ = other[key].(map[string]any)
			}
			p, err := d.diffMaps(ov, mv, oth, ft, sub)
			if err != nil {
				return nil, atField(err, key)
			}
			if len(p) > 0 {
				set(key, p)
			}
			continue
		case []any:
			ov, ok := origV.([]any)
			if !ok || mv == nil || ov == nil {
				break
			}
			ft := t.Field(key)
			if !listMerges(ft) {
				if !o.ignoreChangesAndAdditions && !value.Equal(ov, mv) {
					set(key, mv)
				}
				continue
			}
			var oth []any
			if self {
				oth = mv
			} else if other != nil {
				oth, _ = other[key].([]any)
			}
			if fk, err := needsFullKeys(ft, ov, mv, oth); err != nil {
				return nil, atField(err, key)
			} else if fk {
				if d.fullKey {
					p, err := fullKeyPatch(oth, mv, ov, ft)
					if err != nil {
						return nil, atField(err, key)
					}
					if p != nil {
						set(key, p)
					}
				}
				continue
			}
			sub := o
			sub.buildRetainKeys = ft.RetainKeys
			add, del, order, err := d.diffLists(ov, mv, oth, ft, sub)
			if err != nil {
				return nil, atField(err, key)
			}
			if len(add) > 0 {
				set(key, add)
			}
			if len(del) > 0 {
				set(deleteFromPrefix+key, del)
			}
			if len(order) > 0 {
				set(setOrderPrefix+key, order)
			}
			continue
		default:
			// A scalar: it changes when it is not equal, which it is not
			// either when the types differ. Deletions have none.
			if !o.ignoreChangesAndAdditions && !value.Equal(origV, modV) {
				set(key, modV)
			}
			continue
		}
		// The types differ: the config's value replaces live's.
		if !o.ignoreChangesAndAdditions {
			set(key, modV)
		}
	}
	if !o.ignoreDeletions && found < len(original) {
		for key := range original {
			if _, ok := modified[key]; !ok {
				set(key, nil)
			}
		}
	}
	if o.buildRetainKeys && (len(patch) > 0 || hasAdditionalField(original, modified)) {
		// The fields to keep: those modified sets. Built only now, for
		// most maps need none.
		var retainKeys []any
		for key, modV := range modified {
			if modV != nil {
				retainKeys = append(retainKeys, key)
			}
		}
		if len(retainKeys) > 0 {
			sortScalarsByString(retainKeys)
			set(retainKeysDirective, retainKeys)
		}
	}
	return patch, nil
}

// sameMap reports whether a and b are the same map (not equal ones).
func sameMap(a, b map[string]any) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

func hasAdditionalField(original, modified map[string]any) bool {
	for k, v := range original {
		if v == nil {
			continue
		}
		if _, ok := modified[k]; !ok {
			return true
		}
	}
	return false
}

// diffLists diffs a list with the merge patch strategy. It returns the
// patch list (changed and added elements, then deletion directives), the
// $deleteFromPrimitiveList list and the $setElementOrder list.
func (d *differ) diffLists(original, modified, other []any, t *schema.Type, o diffOptions) (add, del, order []any, err error) {
	if len(original) == 0 {
		if len(modified) == 0 || o.ignoreChangesAndAdditions {
			return nil, nil, nil, nil
		}
		return modified, nil, nil, nil
	}
	kind, err := listElemKind(original, modified)
	if err != nil {
		return nil, nil, nil, err
	}
	if kind == elemMap {
		mergeKey := t.MergeKey
		// The merge keys of the elements (all present once the diff
		// succeeded), from the diff of short lists or looked up.
		var keys *smallKeys
		if len(original) <= smallList && len(modified) <= smallList && len(other) <= smallList {
			keys = new(smallKeys)
			add, del, err = d.diffSmallListsOfMaps(original, modified, other, t, mergeKey, o, keys)
		} else {
			add, del, err = d.diffListsOfMaps(original, modified, other, t, mergeKey, o)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		var origKeys, modKeys []any
		if keys != nil {
			origKeys, modKeys = keys.orig[:len(original)], keys.mod[:len(modified)]
		}
		keyOf := func(l, keys []any, i int) any {
			if keys != nil {
				return keys[i]
			}
			return l[i].(map[string]any)[mergeKey]
		}
		add = append(add, del...)
		emit := false
		switch {
		case !o.setElementOrder:
		case len(add) > 0:
			emit = !o.ignoreChangesAndAdditions || !o.ignoreDeletions
		case !o.ignoreChangesAndAdditions:
			// Without changes, the order is sent when it changed.
			emit = len(original) != len(modified)
			for i := 0; !emit && i < len(modified); i++ {
				emit = comparable(keyOf(original, origKeys, i)) != comparable(keyOf(modified, modKeys, i))
			}
		}
		if emit {
			order = make([]any, len(modified))
			for i := range modified {
				order[i] = map[string]any{mergeKey: keyOf(modified, modKeys, i)}
			}
		}
		return add, nil, order, nil
	}
	add, del = diffListsOfScalars(original, modified, o)
	if len(add) > 1 {
		add, _ = normalizeSliceOrder(add, modified, "", elemScalar)
	}
	if o.setElementOrder && ((!o.ignoreDeletions && len(del) > 0) ||
		(!o.ignoreChangesAndAdditions && !value.Equal(sortedScalars(original), modified))) {
		order = modified
	}
	return add, del, order, nil
}

// sortedScalars returns a sorted copy of a list of scalars. kubectl sorts
// the original list in place before it decides whether the order changed,
// so it compares the config's list with the sorted original: a live list
// that holds the config's values in another order gets no
// $setElementOrder when the config's are sorted, and gets one when they
// are not, even if live's order is the config's.
func sortedScalars(l []any) []any {
	s := slices.Clone(l)
	sortScalarsByString(s)
	return s
}

// smallList is the length up to which list algorithms find elements by a
// linear scan instead of building an index map: for the few containers,
// ports or env vars of a pod, comparing keys is cheaper than hashing them.
const smallList = 16

// diffListsOfMaps matches the elements of two lists by merge key and
// returns the patch elements (in modified's order) and the deletion
// directives (ordered by key, as kubectl orders them).
func (d *differ) diffListsOfMaps(original, modified, other []any, t *schema.Type, mergeKey string, o diffOptions) (patch, deletions []any, err error) {
	elemT := t.Element()
	type slot struct {
		m       map[string]any
		matched bool
	}
	byKey := make(map[string]*slot, len(original))
	slots := make([]slot, len(original))
	for i, v := range original {
		k, err := mergeKeyOf(v, mergeKey, i)
		if err != nil {
			return nil, nil, err
		}
		slots[i].m = v.(map[string]any)
		ks := keyString(k)
		if _, dup := byKey[ks]; !dup {
			byKey[ks] = &slots[i]
		}
	}
	var otherByKey map[string]map[string]any
	if len(other) > 0 {
		otherByKey = make(map[string]map[string]any, len(other))
		for _, v := range other {
			if m, ok := v.(map[string]any); ok {
				if k, ok := m[mergeKey]; ok {
					otherByKey[keyString(k)] = m
				}
			}
		}
	}
	seen := make(map[string]bool, len(modified))
	for i, v := range modified {
		k, err := mergeKeyOf(v, mergeKey, i)
		if err != nil {
			return nil, nil, err
		}
		mv := v.(map[string]any)
		ks := keyString(k)
		if seen[ks] {
			continue
		}
		seen[ks] = true
		s := byKey[ks]
		if s == nil {
			if !o.ignoreChangesAndAdditions {
				patch = append(patch, mv)
			}
			continue
		}
		s.matched = true
		p, err := d.diffMaps(s.m, mv, otherByKey[ks], elemT, o)
		if err != nil {
			return nil, nil, at(err, value.KeyElement(value.KeyField{Name: mergeKey, Value: k}))
		}
		if len(p) > 0 {
			p[mergeKey] = k
			patch = append(patch, p)
		}
	}
	if !o.ignoreDeletions {
		for i := range slots {
			if slots[i].matched {
				continue
			}
			k := slots[i].m[mergeKey]
			if seen[keyString(k)] {
				continue // a repeated key, matched through its first element
			}
			deletions = append(deletions, map[string]any{mergeKey: k, patchKey: patchDelete})
		}
		sortDeletions(deletions, mergeKey)
	}
	return patch, deletions, nil
}

// smallKeys are the merge keys of the elements of two short lists.
type smallKeys struct {
	orig, mod [smallList]any
}

// diffSmallListsOfMaps is diffListsOfMaps for lists of at most smallList
// elements, matching them by linear scans. It leaves the merge keys of the
// elements in keys.
func (d *differ) diffSmallListsOfMaps(original, modified, other []any, t *schema.Type, mergeKey string, o diffOptions, keys *smallKeys) (patch, deletions []any, err error) {
	elemT := t.Element()
	origKeys, modKeys := keys.orig[:len(original)], keys.mod[:len(modified)]
	for i, v := range original {
		k, err := mergeKeyOf(v, mergeKey, i)
		if err != nil {
			return nil, nil, err
		}
		origKeys[i] = k
	}
	var othMaps [smallList]map[string]any
	var othKeys [smallList]any
	for i, v := range other {
		if m, ok := v.(map[string]any); ok {
			if k, ok := m[mergeKey]; ok {
				othMaps[i], othKeys[i] = m, k
			}
		}
	}
next:
	for i, v := range modified {
		k, err := mergeKeyOf(v, mergeKey, i)
		if err != nil {
			return nil, nil, err
		}
		modKeys[i] = k
		for _, prev := range modKeys[:i] {
			if keyEqual(prev, k) {
				continue next // a repeated key: its first element counts
			}
		}
		mv := v.(map[string]any)
		j := 0
		for j < len(origKeys) && !keyEqual(origKeys[j], k) {
			j++
		}
		if j == len(origKeys) {
			if !o.ignoreChangesAndAdditions {
				patch = append(patch, mv)
			}
			continue
		}
		// The last element of other with the key, as an index map keeps it.
		var oth map[string]any
		for x := len(other) - 1; x >= 0; x-- {
			if othMaps[x] != nil && keyEqual(othKeys[x], k) {
				oth = othMaps[x]
				break
			}
		}
		p, err := d.diffMaps(original[j].(map[string]any), mv, oth, elemT, o)
		if err != nil {
			return nil, nil, at(err, value.KeyElement(value.KeyField{Name: mergeKey, Value: k}))
		}
		if len(p) > 0 {
			p[mergeKey] = k
			patch = append(patch, p)
		}
	}
	if !o.ignoreDeletions {
	deleted:
		for _, k := range origKeys {
			for _, mk := range modKeys {
				if keyEqual(mk, k) {
					continue deleted
				}
			}
			deletions = append(deletions, map[string]any{mergeKey: k, patchKey: patchDelete})
		}
		sortDeletions(deletions, mergeKey)
	}
	return patch, deletions, nil
}

// sortDeletions orders deletion directives by key, as kubectl does.
func sortDeletions(deletions []any, mergeKey string) {
	if len(deletions) > 1 {
		slices.SortStableFunc(deletions, func(a, b any) int {
			return strings.Compare(keyString(a.(map[string]any)[mergeKey]), keyString(b.(map[string]any)[mergeKey]))
		})
	}
}

// keyEqual reports whether keyString(a) == keyString(b), without formatting
// the common keys (strings, integers).
func keyEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x == y
		}
	case int64:
		if y, ok := b.(int64); ok {
			return x == y
		}
	}
	return keyString(a) == keyString(b)
}

// diffListsOfScalars returns the values added to and removed from a set,
// compared as kubectl compares them: sorted by their %v form.
func diffListsOfScalars(original, modified []any, o diffOptions) (add, del []any) {
	os := slices.Clone(original)
	ms := slices.Clone(modified)
	sortScalarsByString(os)
	sortScalarsByString(ms)
	i, j := 0, 0
	for i < len(os) || j < len(ms) {
		var oStr, mStr string
		if i < len(os) {
			oStr = keyString(os[i])
		}
		if j < len(ms) {
			mStr = keyString(ms[j])
		}
		switch {
		case i < len(os) && j < len(ms) && oStr == mStr:
			i++
			j++
		case i >= len(os) || (j < len(ms) && oStr > mStr):
			if !o.ignoreChangesAndAdditions {
				add = append(add, ms[j])
			}
			j++
		default:
			if !o.ignoreDeletions {
				del = append(del, os[i])
			}
			i++
		}
	}
	return add, deduplicateScalars(del)
}
