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
func detectConflicts(lastApplied, live, patch map[string]any, t *schema.Type) error {
	d := &differ{}
	changed, err := d.diffMaps(lastApplied, live, nil, t, diffOptions{})
	if err != nil {
		return err
	}
	c := conflictFinder{}
	c.values(patch, changed, t, false, nil)
	if len(c.paths) == 0 {
		return nil
	}
	slices.SortFunc(c.paths, func(a, b value.Path) int { return cmp.Compare(a.String(), b.String()) })
	return &ConflictError{Paths: c.paths}
}

type conflictFinder struct {
	paths []value.Path
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
		lm, lok := l[directiveMarker]
		rm, rok := r[directiveMarker]
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
		if k == directiveMarker || k == retainKeysDirective {
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
		l = deduplicateScalars(slices.Clone(l))
		r = deduplicateScalars(slices.Clone(r))
		sortScalarsByString(l)
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
