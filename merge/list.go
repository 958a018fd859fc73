package merge

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// Patch directives of the strategic merge patch.
const (
	patchKey            = "$patch"
	patchDelete         = "delete"
	patchReplace        = "replace"
	patchMerge          = "merge"
	retainKeysDirective = "$retainKeys"
	deleteFromPrefix    = "$deleteFromPrimitiveList/"
	setOrderPrefix      = "$setElementOrder/"
)

// keyString formats a scalar as fmt's %v does. kubectl orders and matches
// the elements of merged lists by this string, so konverge does too.
func keyString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "<nil>"
	}
	return fmt.Sprintf("%v", v)
}

// comparable returns a Go map key for a scalar (numbers by value); objects
// and lists, which are not valid keys, map to their encoding.
func comparable(v any) any {
	if k, ok := value.Key(v); ok {
		return k
	}
	b, _ := value.Encode(v)
	return "\x00" + string(b)
}

// elemKind is what a list holds, as far as merging cares.
type elemKind uint8

const (
	elemNone   elemKind = iota // no elements
	elemScalar                 // strings, numbers, booleans, nulls
	elemMap                    // objects
)

// listElemKind returns the kind of the elements of the lists, which must
// agree. Lists of lists cannot be merged.
func listElemKind(lists ...[]any) (elemKind, error) {
	k := elemNone
	for _, l := range lists {
		for i, v := range l {
			var vk elemKind
			switch v.(type) {
			case map[string]any:
				vk = elemMap
			case []any:
				return 0, at(&TypeError{Want: "object or scalar", Got: "list"}, value.IndexElement(i))
			default:
				vk = elemScalar
			}
			if k == elemNone {
				k = vk
			} else if k != vk {
				return 0, at(&TypeError{Want: kindName(k), Got: kindName(vk)}, value.IndexElement(i))
			}
		}
	}
	return k, nil
}

func kindName(k elemKind) string {
	if k == elemMap {
		return "object"
	}
	return "scalar"
}

// mergeKeyOf returns the merge key value of a list element.
func mergeKeyOf(v any, mergeKey string, i int) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, at(&TypeError{Want: "object", Got: value.TypeName(v)}, value.IndexElement(i))
	}
	k, ok := m[mergeKey]
	if !ok {
		return nil, at(&MissingKeyError{Key: mergeKey}, value.IndexElement(i))
	}
	return k, nil
}

// itemID is how the ordering functions identify an element: by its merge
// key value for objects, by itself for scalars.
func itemID(v any, mergeKey string, kind elemKind) any {
	if kind == elemMap {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		return comparable(m[mergeKey])
	}
	return comparable(v)
}

// indexOf maps element ids to their first position in a list: through a
// map for long lists, by a linear scan of the ids for short ones.
type indexOf struct {
	m   map[any]int
	n   int
	ids [smallList]any
}

func (x *indexOf) init(l []any, mergeKey string, kind elemKind) {
	if len(l) <= smallList {
		x.n = len(l)
		for i, v := range l {
			x.ids[i] = itemID(v, mergeKey, kind)
		}
		return
	}
	x.m = make(map[any]int, len(l))
	for i, v := range l {
		id := itemID(v, mergeKey, kind)
		if _, dup := x.m[id]; !dup {
			x.m[id] = i
		}
	}
}

func (x *indexOf) find(v any, mergeKey string, kind elemKind) int {
	id := itemID(v, mergeKey, kind)
	if x.m != nil {
		if i, ok := x.m[id]; ok {
			return i
		}
		return -1
	}
	for i, y := range x.ids[:x.n] {
		if y == id {
			return i
		}
	}
	return -1
}

// isDeleteDirective reports whether v is a {"$patch": "delete"} element.
func isDeleteDirective(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	d, ok := m[patchKey]
	return ok && d == patchDelete
}

// normalizeSliceOrder sorts toSort by the positions of its elements in
// order (stably; kubectl's comparator, which calls an element that order
// lacks "less" than anything), with {"$patch": "delete"} elements moved to
// the end. toSort is modified.
func normalizeSliceOrder(toSort, order []any, mergeKey string, kind elemKind) ([]any, error) {
	var toDelete []any
	if kind == elemMap {
		for i, v := range toSort {
			if _, err := mergeKeyOf(v, mergeKey, i); err != nil {
				return nil, err
			}
		}
		for i, v := range order {
			if _, err := mergeKeyOf(v, mergeKey, i); err != nil {
				return nil, err
			}
		}
		n := 0
		for _, v := range toSort {
			if isDeleteDirective(v) {
				toDelete = append(toDelete, v)
			} else {
				toSort[n] = v
				n++
			}
		}
		toSort = toSort[:n]
	}
	if len(toSort) > 1 {
		var idx indexOf
		idx.init(order, mergeKey, kind)
		if len(toSort) <= smallList {
			// What sort.Stable does with at most 20 elements (one
			// insertion sort), without boxing byPos into an interface.
			// The order depends on the algorithm, for byPos.Less is not
			// a strict order.
			var posBuf [smallList]int
			b := byPos{toSort, posBuf[:len(toSort)]}
			for i, v := range toSort {
				b.pos[i] = idx.find(v, mergeKey, kind)
			}
			for i := 1; i < len(toSort); i++ {
				for j := i; j > 0 && b.Less(j, j-1); j-- {
					b.Swap(j, j-1)
				}
			}
		} else {
			pos := make([]int, len(toSort))
			for i, v := range toSort {
				pos[i] = idx.find(v, mergeKey, kind)
			}
			sort.Stable(byPos{toSort, pos})
		}
	}
	return append(toSort, toDelete...), nil
}

// byPos sorts elements by their positions in another list, as kubectl's
// comparator does: when either position is unknown (-1), "less" is true.
type byPos struct {
	items []any
	pos   []int
}

func (b byPos) Len() int { return len(b.items) }
func (b byPos) Less(i, j int) bool {
	if b.pos[i] >= 0 && b.pos[j] >= 0 {
		return b.pos[i] < b.pos[j]
	}
	return true
}
func (b byPos) Swap(i, j int) {
	b.items[i], b.items[j] = b.items[j], b.items[i]
	b.pos[i], b.pos[j] = b.pos[j], b.pos[i]
}

// normalizeElementOrder orders a merged list: the elements named by the
// patch in patchOrder, the server-only elements in serverOrder, then the two
// interleaved so that server-only elements keep their places relative to the
// patch elements they preceded in serverOrder.
func normalizeElementOrder(patch, serverOnly, patchOrder, serverOrder []any, mergeKey string, kind elemKind) ([]any, error) {
	var err error
	if patch, err = normalizeSliceOrder(patch, patchOrder, mergeKey, kind); err != nil {
		return nil, err
	}
	if serverOnly, err = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind); err != nil {
		return nil, err
	}
	return mergeSortedSlice(serverOnly, patch, serverOrder, mergeKey, kind), nil
}

// mergeSortedSlice inserts the elements of left (server-only) among those of
// right (from the patch): an element of left goes before the first element
// of right that it precedes in serverOrder.
func mergeSortedSlice(left, right, serverOrder []any, mergeKey string, kind elemKind) []any {
	if len(left) == 0 {
		return right
	}
	if len(right) == 0 {
		return left
	}
	var idx indexOf
	idx.init(serverOrder, mergeKey, kind)
	out := make([]any, 0, len(left)+len(right))
	i, j := 0, 0
	for i < len(left) || j < len(right) {
		switch {
		case i >= len(left):
			out = append(out, right[j])
			j++
		case j >= len(right):
			out = append(out, left[i])
			i++
		default:
			li := idx.find(left[i], mergeKey, kind)
			ri := idx.find(right[j], mergeKey, kind)
			if li >= 0 && ri >= 0 && li < ri {
				out = append(out, left[i])
				i++
			} else {
				out = append(out, right[j])
				j++
			}
		}
	}
	return out
}

// partition splits list into the elements whose id appears in by and the
// others, keeping their order.
func partition(list, by []any, mergeKey string, kind elemKind) (in, out []any, err error) {
	if kind == elemMap {
		for i, v := range list {
			if _, err := mergeKeyOf(v, mergeKey, i); err != nil {
				return nil, nil, err
			}
		}
	}
	var idx indexOf
	idx.init(by, mergeKey, kind)
	in = make([]any, 0, len(list))
	for _, v := range list {
		if idx.find(v, mergeKey, kind) >= 0 {
			in = append(in, v)
		} else {
			out = append(out, v)
		}
	}
	return in, out, nil
}

// deduplicateScalars removes repeated values in kubectl's order: a
// repeat of an earlier value is replaced by the list's last element (which
// is then looked at in its place) and the list shortened by one.
func deduplicateScalars(s []any) []any {
	for i := 0; i < len(s); i++ {
		for j := i + 1; j < len(s); {
			if !value.Equal(s[i], s[j]) {
				j++
				continue
			}
			last := len(s) - 1
			s[j], s = s[last], s[:last]
		}
	}
	return s
}

// sortScalarsByString sorts scalars by their %v form, as kubectl does.
func sortScalarsByString(s []any) {
	slices.SortStableFunc(s, func(a, b any) int { return strings.Compare(keyString(a), keyString(b)) })
}

// isReplaceList reports whether a patch list starts with the
// {"$patch": "replace"} directive: the list replaces live's whole.
func isReplaceList(l []any) bool {
	if len(l) == 0 {
		return false
	}
	m, ok := l[0].(map[string]any)
	return ok && len(m) == 1 && m[patchKey] == patchReplace
}

// listStrategy returns how t merges when it holds lists.
func listMerges(t *schema.Type) bool {
	return t != nil && t.Kind == schema.List && t.ListType != schema.Atomic
}
