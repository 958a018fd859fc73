package merge

import (
	"cmp"
	"slices"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// detectConflicts fails when the patch changes a field that live changed
// since lastApplied, with kubectl's notion of "changes" (kubectl apply
// --overwrite=false), and names every such field.
//
// Without conflicts it returns the patch that kubectl sends then: kubectl
// deduplicates and sorts, in place in its patch, every atomic list of
// scalars that it compares with live's change (a list both changed, to
// lists of one length that hold the same values), so a config that
// reorders args that someone else reordered too gets them sorted. The
// patch is copied where it changes.
func detectConflicts(lastApplied, live, patch map[string]any, t *schema.Type) (map[string]any, error) {
	d := &differ{}
	changed, err := d.diffMaps(lastApplied, live, nil, t, diffOptions{})
	if err != nil {
		return nil, err
	}
	c := conflictFinder{}
	c.values(patch, changed, t, false, nil)
	if len(c.paths) == 0 {
		for _, r := range c.sorted {
			patch = replaceAt(patch, r.path, r.list).(map[string]any)
		}
		return patch, nil
	}
	slices.SortFunc(c.paths, func(a, b value.Path) int { return cmp.Compare(a.String(), b.String()) })
	return nil, &ConflictError{Paths: c.paths}
}

type conflictFinder struct {
	paths []value.Path
	// sorted are the patch's lists kubectl sorts while it compares them.
	sorted []sortedList
}

type sortedList struct {
	path value.Path
	list []any
}

// replaceAt returns v with the value at path replaced by x, copying the
// objects and lists on the way. Key steps find the first element with the
// key, as the conflict check matched it.
func replaceAt(v any, path value.Path, x any) any {
	if len(path) == 0 {
		return x
	}
	el := path[0]
	switch cur := v.(type) {
	case map[string]any:
		if el.Kind != value.FieldKind {
			return v
		}
		out := make(map[string]any, len(cur))
		for k, e := range cur {
			out[k] = e
		}
		out[el.Field] = replaceAt(cur[el.Field], path[1:], x)
		return out
	case []any:
		i := -1
		switch el.Kind {
		case value.IndexKind:
			i = el.Index
		case value.KeyKind:
			if len(el.Keys) == 1 {
				i = slices.IndexFunc(cur, func(e any) bool {
					m, ok := e.(map[string]any)
					return ok && keyString(m[el.Keys[0].Name]) == keyString(el.Keys[0].Value)
				})
			}
		}
		if i < 0 || i >= len(cur) {
			return v
		}
		out := slices.Clone(cur)
		out[i] = replaceAt(cur[i], path[1:], x)
		return out
	}
	return v
}

func (c *conflictFinder) add(p value.Path) {
	c.paths = append(c.paths, append(value.Path(nil), p...))
}

// values compares a value of the patch with the change live made to the
// same field. replace is the field's replace strategy.
func (c *conflictFinder) values(left, right any, t *schema.Type, replace bool, path value.Path) {
	switch l := left.(type) {
	case map[string]any:
		r, ok := right.(map[string]any)
		if !ok {
			c.add(path)
			return
		}
		lm, lok := l[patchKey]
		rm, rok := r[patchKey]
		if lok || rok {
			if lok != rok || !value.Equal(lm, rm) {
				c.add(path)
				return
			}
		}
		if replace {
			return
		}
		c.maps(l, r, t, path)
	case []any:
		r, ok := right.([]any)
		if !ok {
			c.add(path)
			return
		}
		c.lists(l, r, t, path)
	default:
		if !value.Equal(left, right) {
			c.add(path)
		}
	}
}

func (c *conflictFinder) maps(l, r map[string]any, t *schema.Type, path value.Path) {
	for k, lv := range l {
		if k == patchKey || k == retainKeysDirective {
			continue
		}
		rv, ok := r[k]
		if !ok {
			continue
		}
		ft := t.Field(k)
		c.values(lv, rv, ft, ft.Replace, append(path, value.FieldElement(k)))
	}
}

func (c *conflictFinder) lists(l, r []any, t *schema.Type, path value.Path) {
	kind, err := listElemKind(l, r)
	if err != nil || kind == elemNone {
		c.add(path)
		return
	}
	elemT := t.Element()
	if listMerges(t) {
		if kind != elemMap {
			return // merged sets never conflict
		}
		rByKey := make(map[string]any, len(r))
		for _, v := range r {
			m, ok := v.(map[string]any)
			if !ok {
				c.add(path)
				return
			}
			k, ok := m[t.MergeKey]
			if !ok {
				c.add(path)
				return
			}
			rByKey[keyString(k)] = v
		}
		for _, v := range l {
			m, ok := v.(map[string]any)
			if !ok {
				c.add(path)
				return
			}
			k, ok := m[t.MergeKey]
			if !ok {
				c.add(path)
				return
			}
			if rv, ok := rByKey[keyString(k)]; ok {
				c.values(v, rv, elemT, false, append(path, value.KeyElement(value.KeyField{Name: t.MergeKey, Value: k})))
			}
		}
		return
	}
	if len(l) != len(r) {
		c.add(path)
		return
	}
	if kind == elemScalar {
		// kubectl deduplicates and sorts the patch's list in place: the
		// slice it holds keeps its length, with the leftovers of the
		// deduplication after the sorted values.
		arr := slices.Clone(l)
		dl := deduplicateScalars(arr)
		sortScalarsByString(dl)
		if !value.Equal(arr, l) {
			c.sorted = append(c.sorted, sortedList{path: append(value.Path(nil), path...), list: arr})
		}
		l = dl
		r = deduplicateScalars(slices.Clone(r))
		sortScalarsByString(r)
		if len(l) != len(r) {
			c.add(path)
			return
		}
	}
	for i := range l {
		c.values(l[i], r[i], elemT, false, append(path, value.IndexElement(i)))
	}
}
