package printer

import (
	"fmt"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/util/jsonpath"
)

// SortByField orders objs by the value at a JSONPath (--sort-by), as
// kubectl's sorter does: numbers by value, strings as quantities when both
// parse as one ("2" < "10", "500m" < "1") and otherwise lexically, lists
// element by element; objects without the field first. The order of
// objects with equal values is the one Go's sort.Sort leaves, as in
// kubectl. It returns the permutation applied (result[i] is the index in
// objs of the i-th object). It fails when no object has the field or a
// value cannot be ordered.
func SortByField(objs []any, field string) ([]int, error) {
	expr, err := RelaxedJSONPath(field)
	if err != nil {
		expr = field
	}
	parser := jsonpath.New("sorting").AllowMissingKeys(true)
	if err := parser.Parse(expr); err != nil {
		return nil, fmt.Errorf("sorting error: %v", err)
	}
	s := &fieldSorter{order: make([]int, len(objs))}
	found := false
	for i, o := range objs {
		s.order[i] = i
		v, err := plain(o)
		if err != nil {
			return nil, err
		}
		vals, err := parser.FindResults(v)
		if err != nil {
			//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
			return nil, fmt.Errorf("Failed to get values for %#v using %s (%#v)", vals, expr, err)
		}
		var first *reflect.Value
		if len(vals) > 0 && len(vals[0]) > 0 {
			first = &vals[0][0]
			found = true
		}
		s.values = append(s.values, first)
	}
	if len(objs) > 0 && !found {
		return nil, fmt.Errorf("couldn't find any field with path %q in the list of objects", expr)
	}
	s.field = expr
	sort.Sort(s)
	if s.err != nil {
		return nil, s.err
	}
	return s.order, nil
}

type fieldSorter struct {
	field  string
	values []*reflect.Value
	order  []int
	err    error
}

func (s *fieldSorter) Len() int { return len(s.values) }

func (s *fieldSorter) Swap(i, j int) {
	s.values[i], s.values[j] = s.values[j], s.values[i]
	s.order[i], s.order[j] = s.order[j], s.order[i]
}

// Less puts objects without the field first; the first comparison that
// fails is kept as the sort's error.
func (s *fieldSorter) Less(i, j int) bool {
	a, b := s.values[i], s.values[j]
	switch {
	case a == nil:
		return true
	case b == nil:
		return false
	}
	less, err := isLess(*a, *b)
	if err != nil && s.err == nil {
		//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
		s.err = fmt.Errorf("Field %s is an unsortable type: %s, err: %v", s.field, a.Kind(), err)
	}
	return less
}

// isLess orders two values found at the --sort-by path as kubectl's
// sorter orders them. Values of a static kind compare by that kind (a
// pointer by what it points to); lists compare element by element over
// the shorter length and count as less unless an element is not; dynamic
// values (what a decoded JSON object holds) compare when both have the
// same type among int64, int, float64 and string, strings as quantities
// when both parse as one. A nil dynamic value is less than any other.
func isLess(a, b reflect.Value) (bool, error) {
	switch k := a.Kind(); {
	case k >= reflect.Int && k <= reflect.Int64:
		return a.Int() < b.Int(), nil
	case k >= reflect.Uint && k <= reflect.Uint64:
		return a.Uint() < b.Uint(), nil
	case k == reflect.Float32 || k == reflect.Float64:
		return a.Float() < b.Float(), nil
	case k == reflect.String:
		return a.String() < b.String(), nil
	case k == reflect.Pointer:
		return isLess(a.Elem(), b.Elem())
	case k == reflect.Array || k == reflect.Slice:
		for n := range min(a.Len(), b.Len()) {
			if less, err := isLess(a.Index(n), b.Index(n)); err != nil || !less {
				return less, err
			}
		}
		return true, nil
	case k == reflect.Interface:
		return isLessDynamic(a, b)
	default:
		return false, fmt.Errorf("unsortable type: %v", k)
	}
}

// isLessDynamic is isLess for two interface values.
func isLessDynamic(a, b reflect.Value) (bool, error) {
	if a.IsNil() || b.IsNil() {
		return a.IsNil() && !b.IsNil(), nil
	}
	other := b.Interface()
	switch x := a.Interface().(type) {
	case int64:
		if y, ok := other.(int64); ok {
			return x < y, nil
		}
	case int:
		if y, ok := other.(int); ok {
			return x < y, nil
		}
	case float64:
		if y, ok := other.(float64); ok {
			return x < y, nil
		}
	case string:
		if y, ok := other.(string); ok {
			return lessText(x, y), nil
		}
	default:
		return false, fmt.Errorf("unsortable type: %T", x)
	}
	return false, fmt.Errorf("unsortable interface: %v", a.Kind())
}

// lessText compares two strings as quantities when both are one ("500m"
// before "1"), else by their bytes.
func lessText(x, y string) bool {
	qx, errX := resource.ParseQuantity(x)
	qy, errY := resource.ParseQuantity(y)
	if errX != nil || errY != nil {
		return x < y
	}
	return qx.Cmp(qy) < 0
}
