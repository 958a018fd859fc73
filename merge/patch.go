package merge

import (
	"maps"
	"slices"
	"strings"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// patcher merges a strategic merge patch into an object. It runs in two
// modes, as kubectl's does:
//
//   - server (Apply): directives are carried out ($retainKeys clears fields,
//     $setElementOrder orders lists, $deleteFromPrimitiveList deletes values)
//     and null deletes a field;
//   - combine (inside ThreeWay, merging the deletions patch with the changes
//     patch): directives are carried over into the result, and nulls kept.
//
// It never modifies its inputs: maps and lists on the path of a change are
// copied, everything else is shared.
type patcher struct {
	server bool
}

// mergeMap merges patch into original. original may be nil.
func (p *patcher) mergeMap(original, patch map[string]any, t *schema.Type) (map[string]any, error) {
	if d, ok := patch[patchKey]; ok {
		switch d {
		case patchReplace:
			out := make(map[string]any, len(patch))
			for k, v := range patch {
				if k != patchKey {
					out[k] = v
				}
			}
			if p.server {
				return cleanMap(out), nil
			}
			return out, nil
		case patchDelete:
			return map[string]any{}, nil
		}
		return nil, atField(patchErrorf("unknown %s directive %q in an object", patchKey, keyString(d)), patchKey)
	}

	var out map[string]any
	if original != nil {
		// A clone copies the map's groups whole, without hashing its keys
		// again; most patches change fields that original has.
		out = maps.Clone(original)
	} else {
		out = make(map[string]any, len(patch))
	}
	if err := p.retainKeys(out, patch); err != nil {
		return nil, err
	}
	done, err := p.setElementOrders(out, patch, t)
	if err != nil {
		return nil, err
	}

	// Deletions from primitive lists run after everything else, so that
	// their result does not depend on the order of the patch's keys.
	var deleteLists []string
	for k, patchV := range patch {
		if k == retainKeysDirective || strings.HasPrefix(k, setOrderPrefix) || slices.Contains(done, k) {
			continue
		}
		if strings.HasPrefix(k, deleteFromPrefix) {
			if !p.server {
				out[k] = patchV
				continue
			}
			deleteLists = append(deleteLists, k)
			continue
		}
		if err := p.mergeField(out, k, patchV, t); err != nil {
			return nil, err
		}
	}
	for _, k := range deleteLists {
		name := k[len(deleteFromPrefix):]
		if name == "" {
			return nil, atField(patchErrorf("%s needs a field name", deleteFromPrefix), k)
		}
		cur, ok := out[name].([]any)
		if !ok {
			continue
		}
		del, ok := patch[k].([]any)
		if !ok {
			return nil, atField(&TypeError{Want: "list", Got: value.TypeName(patch[k])}, k)
		}
		if _, err := listElemKind(cur, del); err != nil {
			return nil, atField(err, name)
		}
		out[name] = deleteFromSlice(cur, del)
	}
	return out, nil
}

// mergeField merges the patch value of key k into out.
func (p *patcher) mergeField(out map[string]any, k string, patchV any, t *schema.Type) error {
	if patchV == nil {
		delete(out, k)
		if p.server {
			return nil
		}
		out[k] = nil
		return nil
	}
	origV, ok := out[k]
	if !ok || origV == nil {
		p.put(out, k, patchV)
		return nil
	}
	switch pv := patchV.(type) {
	case map[string]any:
		ov, ok := origV.(map[string]any)
		if !ok {
			break
		}
		ft := t.Field(k)
		if ft.Replace {
			p.putRaw(out, k, pv)
			return nil
		}
		merged, err := p.mergeMap(ov, pv, ft)
		if err != nil {
			return atField(err, k)
		}
		out[k] = merged
		return nil
	case []any:
		ov, ok := origV.([]any)
		if !ok {
			break
		}
		ft := t.Field(k)
		merged, err := p.mergeSliceHandler(ov, pv, ft)
		if err != nil {
			return atField(err, k)
		}
		out[k] = merged
		return nil
	default:
		if _, isMap := origV.(map[string]any); isMap {
			break
		}
		if _, isList := origV.([]any); isList {
			break
		}
		p.put(out, k, patchV)
		return nil
	}
	// The types differ: the patch's value replaces the original's.
	p.put(out, k, patchV)
	return nil
}

// put sets out[k] to a value taken whole from the patch, without its
// directives (and, on the server, without nulls). A value that is itself a
// directive element is dropped.
func (p *patcher) put(out map[string]any, k string, v any) {
	if !p.server {
		if l, ok := v.([]any); ok && isReplaceList(l) {
			out[k] = v
			return
		}
	}
	c, keep := removeDirectives(v, p.server)
	if !keep {
		delete(out, k)
		return
	}
	out[k] = c
}

// putRaw sets out[k] to a value that replaces live's whole (an atomic list,
// an object with the replace strategy): as it is when combining patches,
// cleaned on the server.
func (p *patcher) putRaw(out map[string]any, k string, v any) {
	if p.server {
		v = cleanValue(v)
	}
	out[k] = v
}

// mergeSliceHandler merges a patch list into a live list by the field's
// strategy: lists merged by key or as sets merge, others are replaced.
func (p *patcher) mergeSliceHandler(original, patch []any, t *schema.Type) ([]any, error) {
	if !listMerges(t) {
		if p.server {
			return cleanList(patch), nil
		}
		return patch, nil
	}
	return p.mergeSlice(original, patch, t)
}

// mergeSlice merges two lists with the merge strategy.
func (p *patcher) mergeSlice(original, patch []any, t *schema.Type) ([]any, error) {
	if len(original) == 0 && len(patch) == 0 {
		return original, nil
	}
	kind, err := listElemKind(original, patch)
	if err != nil {
		return nil, err
	}
	mergeKey := t.MergeKey
	var merged []any
	if kind != elemMap {
		both := make([]any, 0, len(original)+len(patch))
		both = append(both, original...)
		both = append(both, patch...)
		merged = deduplicateScalars(both)
		mergeKey = ""
	} else {
		if mergeKey == "" {
			return nil, &TypeError{Want: "list of scalars (the field has no merge key)", Got: "list of objects"}
		}
		var replaced bool
		original, patch, replaced, err = mergeSliceWithSpecialElements(original, patch, mergeKey)
		if err != nil {
			return nil, err
		}
		if replaced && p.server {
			original = cleanList(original)
		}
		merged, err = p.mergeSliceWithoutSpecialElements(original, patch, mergeKey, t.Element())
		if err != nil {
			return nil, err
		}
	}
	patchItems, serverOnly, err := partition(merged, patch, mergeKey, kind)
	if err != nil {
		return nil, err
	}
	return normalizeElementOrder(patchItems, serverOnly, patch, original, mergeKey, kind)
}

// mergeSliceWithSpecialElements carries out the directive elements of a
// patch list ({"$patch": "delete"} and {"$patch": "replace"}) and returns the
// remaining original and patch elements.
func mergeSliceWithSpecialElements(original, patch []any, mergeKey string) (orig, rest []any, replaced bool, err error) {
	special := false
	for _, v := range patch {
		if _, ok := v.(map[string]any)[patchKey]; ok {
			special = true
			break
		}
	}
	if !special {
		return original, patch, false, nil
	}
	rest = make([]any, 0, len(patch))
	orig = original
	copied := false
	for i, v := range patch {
		m := v.(map[string]any)
		d, ok := m[patchKey]
		if !ok {
			rest = append(rest, v)
			continue
		}
		switch d {
		case patchDelete:
			mv, ok := m[mergeKey]
			if !ok {
				return nil, nil, false, at(&MissingKeyError{Key: mergeKey}, value.IndexElement(i))
			}
			if !copied {
				orig = append([]any(nil), orig...)
				copied = true
			}
			orig = deleteMatching(orig, mergeKey, mv)
		case patchReplace:
			replaced = true
		case patchMerge:
			return nil, nil, false, at(patchErrorf("merging lists cannot yet be specified in the patch"), value.IndexElement(i))
		default:
			return nil, nil, false, at(patchErrorf("unknown %s directive %q in a list", patchKey, keyString(d)), value.IndexElement(i))
		}
	}
	if replaced {
		return rest, nil, true, nil
	}
	return orig, rest, false, nil
}

// deleteMatching removes every element whose merge key equals mv.
func deleteMatching(l []any, mergeKey string, mv any) []any {
	id := comparable(mv)
	out := l[:0]
	for _, v := range l {
		if m, ok := v.(map[string]any); ok {
			if k, ok := m[mergeKey]; ok && comparable(k) == id {
				continue
			}
		}
		out = append(out, v)
	}
	return out
}

// mergeSliceWithoutSpecialElements merges each patch element into the
// original element with its merge key, or appends it.
func (p *patcher) mergeSliceWithoutSpecialElements(original, patch []any, mergeKey string, elemT *schema.Type) ([]any, error) {
	out := make([]any, len(original), len(original)+len(patch))
	copy(out, original)
	// The first position of each merge key in out: ids (nil for an element
	// without the key) scanned linearly while out is short, a map after.
	var idx map[any]int
	var idBuf [smallList]any
	ids := idBuf[:0]
	for i, v := range original {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, at(&TypeError{Want: "object", Got: value.TypeName(v)}, value.IndexElement(i))
		}
		var id any = noKey{}
		if k, ok := m[mergeKey]; ok {
			id = comparable(k)
		}
		ids = append(ids, id)
	}
	if len(original)+len(patch) > smallList {
		idx = make(map[any]int, len(original))
		for i, id := range ids {
			if _, dup := idx[id]; !dup && id != (noKey{}) {
				idx[id] = i
			}
		}
	}
	for i, v := range patch {
		pm := v.(map[string]any)
		mv, ok := pm[mergeKey]
		if !ok {
			return nil, at(&MissingKeyError{Key: mergeKey}, value.IndexElement(i))
		}
		id := comparable(mv)
		j, found := -1, false
		if idx != nil {
			j, found = idx[id]
		} else {
			for x, y := range ids {
				if y == id {
					j, found = x, true
					break
				}
			}
		}
		if found {
			merged, err := p.mergeMap(out[j].(map[string]any), pm, elemT)
			if err != nil {
				return nil, at(err, value.KeyElement(value.KeyField{Name: mergeKey, Value: mv}))
			}
			out[j] = merged
			continue
		}
		if p.server {
			out = append(out, cleanValue(pm))
		} else {
			out = append(out, pm)
		}
		if idx != nil {
			idx[id] = len(out) - 1
		} else {
			ids = append(ids, id)
		}
	}
	return out, nil
}

// noKey stands for the id of a list element without a merge key, which
// matches nothing.
type noKey struct{}

// deleteFromSlice removes the values of toDelete from a list of scalars.
func deleteFromSlice(current, toDelete []any) []any {
	del := make(map[any]bool, len(toDelete))
	for _, v := range toDelete {
		del[comparable(v)] = true
	}
	out := make([]any, 0, len(current))
	for _, v := range current {
		if !del[comparable(v)] {
			out = append(out, v)
		}
	}
	return out
}

// retainKeys handles the $retainKeys directive of patch: on the server it
// clears the fields of out that the list does not name; when combining
// patches it carries the directive over.
func (p *patcher) retainKeys(out, patch map[string]any) error {
	rk, ok := patch[retainKeysDirective]
	if !ok {
		return nil
	}
	if !p.server {
		if prev, ok := out[retainKeysDirective]; ok {
			if !value.Equal(prev, rk) {
				return atField(patchErrorf("the two halves of the patch disagree on %s", retainKeysDirective), retainKeysDirective)
			}
			return nil
		}
		out[retainKeysDirective] = rk
		return nil
	}
	list, ok := rk.([]any)
	if !ok {
		return atField(&TypeError{Want: "list", Got: value.TypeName(rk)}, retainKeysDirective)
	}
	keep := make(map[string]bool, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			keep[s] = true
		}
	}
	for k, v := range patch {
		if v == nil || k == retainKeysDirective || strings.HasPrefix(k, deleteFromPrefix) || strings.HasPrefix(k, setOrderPrefix) {
			continue
		}
		if !keep[k] {
			return atField(patchErrorf("field %q is in the patch but not in %s", k, retainKeysDirective), retainKeysDirective)
		}
	}
	for k := range out {
		if !keep[k] {
			delete(out, k)
		}
	}
	return nil
}

// setElementOrders carries out the $setElementOrder directives of patch:
// the list they name is merged and then ordered by the directive. It
// returns the list fields it handled.
func (p *patcher) setElementOrders(out, patch map[string]any, t *schema.Type) ([]string, error) {
	var done []string
	for key, orderV := range patch {
		if !strings.HasPrefix(key, setOrderPrefix) {
			continue
		}
		if !p.server {
			if prev, ok := out[key]; ok {
				if !value.Equal(prev, orderV) {
					return nil, atField(patchErrorf("the two halves of the patch disagree on %s", key), key)
				}
			} else {
				out[key] = orderV
			}
		}
		order, ok := orderV.([]any)
		if !ok {
			return nil, atField(&TypeError{Want: "list", Got: value.TypeName(orderV)}, key)
		}
		name := key[len(setOrderPrefix):]
		if name == "" {
			return nil, atField(patchErrorf("%s needs a field name", setOrderPrefix), key)
		}
		ft := t.Field(name)
		mergeKey := ft.MergeKey
		origV, foundOrig := out[name]
		patchV, foundPatch := patch[name]
		var origList, patchList []any
		if foundOrig && origV != nil {
			if origList, ok = origV.([]any); !ok {
				return nil, atField(&TypeError{Want: "list", Got: value.TypeName(origV)}, name)
			}
		}
		if foundPatch && patchV != nil {
			if patchList, ok = patchV.([]any); !ok {
				return nil, atField(&TypeError{Want: "list", Got: value.TypeName(patchV)}, name)
			}
		}
		if err := validateSetOrder(patchList, order, mergeKey); err != nil {
			return nil, atField(err, key)
		}
		var merged []any
		switch {
		case foundOrig && !foundPatch:
			merged = origList
		case !foundOrig && foundPatch:
			c, _ := removeDirectives(patchList, p.server)
			merged, _ = c.([]any)
		case foundOrig && foundPatch:
			var err error
			merged, err = p.mergeSliceHandler(origList, patchList, ft)
			if err != nil {
				return nil, atField(err, name)
			}
		default:
			continue
		}
		kind, err := listElemKind(origList, patchList)
		if err != nil {
			return nil, atField(err, name)
		}
		if kind == elemNone {
			return nil, atField(patchErrorf("%s names a list with no elements", key), key)
		}
		if kind == elemScalar {
			mergeKey = ""
		}
		patchItems, serverOnly, err := partition(merged, order, mergeKey, kind)
		if err != nil {
			return nil, atField(err, name)
		}
		serverOrder := origList
		if p.server && kind == elemMap && foundOrig && foundPatch && listMerges(ft) {
			serverOrder = aliasedOrder(origList, patchList, mergeKey)
		}
		both, err := normalizeElementOrder(patchItems, serverOnly, order, serverOrder, mergeKey, kind)
		if err != nil {
			return nil, atField(err, name)
		}
		out[name] = both
		done = append(done, name)
	}
	return done, nil
}

// validateSetOrder checks that the elements of a patch list appear in the
// $setElementOrder list in the same relative order.
func validateSetOrder(patchList, order []any, mergeKey string) error {
	if len(order) == 0 || len(patchList) == 0 {
		return nil
	}
	if mergeKey != "" {
		nonDelete := make([]any, 0, len(patchList))
		for _, v := range patchList {
			if !isDeleteDirective(v) {
				nonDelete = append(nonDelete, v)
			}
		}
		patchList = nonDelete
	}
	pi, oi := 0, 0
	for pi < len(patchList) && oi < len(order) {
		pv := patchList[pi]
		if m, ok := pv.(map[string]any); ok {
			if _, ok := m[patchKey]; ok {
				pi++
				continue
			}
		}
		eq, err := mergeKeyValueEqual(pv, order[oi], mergeKey)
		if err != nil {
			return err
		}
		if eq {
			pi++
		}
		oi++
	}
	if pi < len(patchList) && oi >= len(order) {
		return patchErrorf("the order of the patch list does not match its %s list", setOrderPrefix)
	}
	return nil
}

func mergeKeyValueEqual(a, b any, mergeKey string) (bool, error) {
	if mergeKey == "" {
		return comparable(a) == comparable(b), nil
	}
	am, ok1 := a.(map[string]any)
	bm, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return false, &TypeError{Want: "object", Got: "scalar"}
	}
	ak, ok1 := am[mergeKey]
	bk, ok2 := bm[mergeKey]
	if !ok1 || !ok2 {
		return false, &MissingKeyError{Key: mergeKey}
	}
	return comparable(ak) == comparable(bk), nil
}

// removeDirectives returns v without directive elements (objects holding
// "$patch") and, when dropNulls is set, without null fields; keep is false
// when v itself is a directive. v is copied only where something is removed.
func removeDirectives(v any, dropNulls bool) (c any, keep bool) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[patchKey]; ok {
			return nil, false
		}
		if !needsCleaning(x, dropNulls) {
			return x, true
		}
		out := make(map[string]any, len(x))
		for k, el := range x {
			if dropNulls && (el == nil || isDirectiveKey(k)) {
				continue
			}
			if ce, keep := removeDirectives(el, dropNulls); keep {
				out[k] = ce
			}
		}
		return out, true
	case []any:
		if x == nil {
			return x, true
		}
		if !dropNulls && isReplaceList(x) {
			return x, true // a list konverge merged by full keys
		}
		if !needsCleaning(x, dropNulls) {
			return x, true
		}
		out := make([]any, 0, len(x))
		for _, el := range x {
			if ce, keep := removeDirectives(el, dropNulls); keep {
				out = append(out, ce)
			}
		}
		return out, true
	}
	return v, true
}

func isDirectiveKey(k string) bool {
	return k == patchKey || k == retainKeysDirective ||
		strings.HasPrefix(k, setOrderPrefix) || strings.HasPrefix(k, deleteFromPrefix)
}

// needsCleaning reports whether removeDirectives would change v.
func needsCleaning(v any, dropNulls bool) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, el := range x {
			if dropNulls && (el == nil || isDirectiveKey(k)) {
				return true
			}
			if m, ok := el.(map[string]any); ok {
				if _, ok := m[patchKey]; ok {
					return true
				}
			}
			if needsCleaning(el, dropNulls) {
				return true
			}
		}
	case []any:
		if !dropNulls && isReplaceList(x) {
			return false
		}
		for _, el := range x {
			if m, ok := el.(map[string]any); ok {
				if _, ok := m[patchKey]; ok {
					return true
				}
			}
			if needsCleaning(el, dropNulls) {
				return true
			}
		}
	}
	return false
}

// cleanValue is what the API server stores of a value taken from a patch:
// no directives, no nulls.
func cleanValue(v any) any {
	c, _ := removeDirectives(v, true)
	return c
}

func cleanMap(m map[string]any) map[string]any {
	c, _ := removeDirectives(m, true)
	out, _ := c.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

func cleanList(l []any) []any {
	c, _ := removeDirectives(l, true)
	out, _ := c.([]any)
	return out
}

// aliasedOrder returns the order in which kubectl's API server sees live's
// list when it orders the merged list by a $setElementOrder directive. The
// server merges the patch into live's list in place: each deletion shifts
// the following elements left (leaving the old last element in the freed
// slot at the end), and elements the patch appends fill the freed slots.
// It then orders the result by that modified list, which places live-only
// elements after deletions differently than live's own order would; API
// servers have done this for years, so konverge does it too.
func aliasedOrder(live, patch []any, mergeKey string) []any {
	deletes := false
	for _, v := range patch {
		if isDeleteDirective(v) {
			deletes = true
			break
		}
	}
	if !deletes {
		return live
	}
	arr := make([]any, len(live))
	copy(arr, live)
	n := len(arr)
	keyAt := func(i int) any {
		if m, ok := arr[i].(map[string]any); ok {
			if k, ok := m[mergeKey]; ok {
				return comparable(k)
			}
		}
		return nil
	}
	replaced := false
	for _, v := range patch {
		m := v.(map[string]any)
		switch m[patchKey] {
		case patchDelete:
			mk, ok := m[mergeKey]
			if !ok {
				continue
			}
			id := comparable(mk)
			for {
				i := 0
				for i < n && keyAt(i) != id {
					i++
				}
				if i == n {
					break
				}
				copy(arr[i:n-1], arr[i+1:n])
				n--
			}
		case patchReplace:
			replaced = true
		}
	}
	if replaced {
		return arr
	}
	for _, v := range patch {
		m := v.(map[string]any)
		if _, ok := m[patchKey]; ok {
			continue
		}
		mk, ok := m[mergeKey]
		if !ok {
			continue
		}
		id := comparable(mk)
		found := false
		for i := 0; i < n; i++ {
			if keyAt(i) == id {
				found = true
				break
			}
		}
		if found {
			continue
		}
		if n >= len(arr) {
			break
		}
		arr[n] = v
		n++
	}
	return arr
}
