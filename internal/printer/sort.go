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

func (s *fieldSorter) Less(i, j int) bool {
	if s.values[i] == nil {
		return true
	}
	if s.values[j] == nil {
		return false
	}
	less, err := isLess(*s.values[i], *s.values[j])
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("Field %s is an unsortable type: %s, err: %v", s.field, s.values[i].Kind(), err)
	}
	return less
}

// isLess is kubectl's comparison of two values found by a JSONPath.
func isLess(i, j reflect.Value) (bool, error) {
	switch i.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return i.Int() < j.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return i.Uint() < j.Uint(), nil
	case reflect.Float32, reflect.Float64:
		return i.Float() < j.Float(), nil
	case reflect.String:
		return i.String() < j.String(), nil
	case reflect.Pointer:
		return isLess(i.Elem(), j.Elem())
	case reflect.Array, reflect.Slice:
		for idx := 0; idx < min(i.Len(), j.Len()); idx++ {
			less, err := isLess(i.Index(idx), j.Index(idx))
			if err != nil || !less {
				return less, err
			}
		}
		return true, nil
	case reflect.Interface:
		if i.IsNil() && j.IsNil() {
			return false, nil
		} else if i.IsNil() {
			return true, nil
		} else if j.IsNil() {
			return false, nil
		}
		switch it := i.Interface().(type) {
		case int64:
			if jt, ok := j.Interface().(int64); ok {
				return it < jt, nil
			}
		case float64:
			if jt, ok := j.Interface().(float64); ok {
				return it < jt, nil
			}
		case int:
			if jt, ok := j.Interface().(int); ok {
				return it < jt, nil
			}
		case string:
			if jt, ok := j.Interface().(string); ok {
				iq, err := resource.ParseQuantity(it)
				if err != nil {
					return it < jt, nil
				}
				jq, err := resource.ParseQuantity(jt)
				if err != nil {
					return it < jt, nil
				}
				return iq.Cmp(jq) < 0, nil
			}
		default:
			return false, fmt.Errorf("unsortable type: %T", it)
		}
		return false, fmt.Errorf("unsortable interface: %v", i.Kind())
	}
	return false, fmt.Errorf("unsortable type: %v", i.Kind())
}
