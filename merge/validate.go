package merge

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// maxValidationErrors bounds how many problems Validate reports for one
// object.
const maxValidationErrors = 50

// Validate checks that obj fits t as far as merging needs: every value has
// its field's JSON type, every element of a list merged by key has its merge
// key, and no two elements of a merged list share their key (two containers
// with one name, one port listed twice). Null is valid anywhere (it deletes
// the field), and keys starting with "$" are patch directives, not checked.
// The result joins one *FieldError per problem, sorted by path.
func Validate(obj map[string]any, t *schema.Type) error {
	if validObject(obj, t) {
		return nil
	}
	v := validator{}
	v.object(obj, t, make(value.Path, 0, 16))
	if len(v.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(v.errs, func(a, b error) int {
		return cmp.Compare(a.(*FieldError).Path.String(), b.(*FieldError).Path.String())
	})
	if len(v.errs) == 1 {
		return v.errs[0]
	}
	return errors.Join(v.errs...)
}

type validator struct {
	errs []error
}

func (v *validator) fail(path value.Path, err error) {
	if len(v.errs) >= maxValidationErrors {
		return
	}
	v.errs = append(v.errs, &FieldError{Path: append(value.Path(nil), path...), Err: err})
}

func (v *validator) value(x any, t *schema.Type, path value.Path) {
	if x == nil || len(v.errs) >= maxValidationErrors {
		return
	}
	switch t.KindOf() {
	case schema.Untyped:
		return
	case schema.Struct, schema.Map:
		m, ok := x.(map[string]any)
		if !ok {
			v.fail(path, &TypeError{Want: "object", Got: value.TypeName(x)})
			return
		}
		v.object(m, t, path)
	case schema.List:
		l, ok := x.([]any)
		if !ok {
			v.fail(path, &TypeError{Want: "list", Got: value.TypeName(x)})
			return
		}
		v.list(l, t, path)
	case schema.Scalar:
		if want := scalarMismatch(x, t.Scalar); want != "" {
			v.fail(path, &TypeError{Want: want, Got: value.TypeName(x)})
		}
	}
}

func (v *validator) object(m map[string]any, t *schema.Type, path value.Path) {
	if t.KindOf() == schema.Untyped {
		return
	}
	for k, x := range m {
		if strings.HasPrefix(k, "$") {
			continue
		}
		v.value(x, t.Field(k), append(path, value.FieldElement(k)))
	}
}

func (v *validator) list(l []any, t *schema.Type, path value.Path) {
	elemT := t.Element()
	switch t.ListType {
	case schema.MergeByKey:
		keys := t.Keys
		if len(keys) == 0 {
			keys = []string{t.MergeKey}
		}
		seen := make(map[any]bool, len(l))
		for i, x := range l {
			m, ok := x.(map[string]any)
			if !ok {
				if x != nil {
					v.fail(append(path, value.IndexElement(i)), &TypeError{Want: "object", Got: value.TypeName(x)})
				}
				continue
			}
			if _, directive := m[patchKey]; directive {
				continue
			}
			mk, ok := m[t.MergeKey]
			if !ok || mk == nil {
				v.fail(append(path, value.IndexElement(i)), &MissingKeyError{Key: t.MergeKey})
				continue
			}
			var id any
			var el value.Element
			if len(keys) == 1 {
				id = comparable(mk)
				el = value.KeyElement(value.KeyField{Name: t.MergeKey, Value: mk})
			} else {
				k, e, err := fullKeyOf(m, keys, elemT, i)
				if err != nil {
					v.fail(path, err)
					continue
				}
				id, el = k, e
			}
			p := append(path, el)
			if seen[id] {
				v.fail(p, &DuplicateError{Index: i})
				continue
			}
			seen[id] = true
			v.object(m, elemT, p)
		}
	case schema.Set:
		seen := make(map[any]bool, len(l))
		for i, el := range l {
			switch el.(type) {
			case map[string]any, []any:
				v.fail(append(path, value.IndexElement(i)), &TypeError{Want: "scalar", Got: value.TypeName(el)})
				continue
			}
			id := comparable(el)
			if seen[id] {
				v.fail(append(path, value.ValueElement(el)), &DuplicateError{Index: i})
				continue
			}
			seen[id] = true
			v.value(el, elemT, append(path, value.ValueElement(el)))
		}
	default:
		for i, el := range l {
			v.value(el, elemT, append(path, value.IndexElement(i)))
		}
	}
}

// scalarMismatch returns what a scalar of type st should have been, or ""
// when x fits.
func scalarMismatch(x any, st schema.ScalarType) string {
	switch st {
	case schema.String:
		if _, ok := x.(string); !ok {
			return "string"
		}
	case schema.Integer:
		if !value.IsInteger(x) {
			return "integer"
		}
	case schema.Number:
		if !value.IsNumber(x) {
			return "number"
		}
	case schema.Boolean:
		if _, ok := x.(bool); !ok {
			return "boolean"
		}
	case schema.IntOrString:
		if _, ok := x.(string); !ok && !value.IsInteger(x) {
			return "integer or string"
		}
	default:
		switch x.(type) {
		case map[string]any, []any:
			return "scalar"
		}
	}
	return ""
}

// validObject is Validate's fast path: it reports whether obj is valid
// without building paths or errors. When it is not sure (a key of a type it
// does not compare, a long list), it reports false and Validate runs the
// validator, which has the last word.
func validObject(m map[string]any, t *schema.Type) bool {
	if t.KindOf() == schema.Untyped {
		return true
	}
	for k, x := range m {
		if x == nil || (len(k) > 0 && k[0] == '$') {
			continue
		}
		if !validValue(x, t.Field(k)) {
			return false
		}
	}
	return true
}

func validValue(x any, t *schema.Type) bool {
	if x == nil {
		return true
	}
	switch t.KindOf() {
	case schema.Untyped:
		return true
	case schema.Struct, schema.Map:
		m, ok := x.(map[string]any)
		return ok && validObject(m, t)
	case schema.List:
		l, ok := x.([]any)
		return ok && validList(l, t)
	case schema.Scalar:
		return scalarMismatch(x, t.Scalar) == ""
	}
	return true
}

// simpleKey reports whether a key value is of a type whose equality
// validList decides with ==: strings, int64s, booleans and null.
func simpleKey(v any) bool {
	switch v.(type) {
	case string, int64, bool, nil:
		return true
	}
	return false
}

func validList(l []any, t *schema.Type) bool {
	if len(l) > smallList {
		return false
	}
	elemT := t.Element()
	switch t.ListType {
	case schema.MergeByKey:
		var keys []string
		if len(t.Keys) > 1 {
			keys = t.Keys
		}
		// ids holds, for each element, its key values (with defaults), one
		// after the other; directive elements and nulls have none.
		var idBuf [4 * smallList]any
		var hasID [smallList]bool
		n := max(len(keys), 1)
		if n > 4 {
			return false
		}
		for i, x := range l {
			m, ok := x.(map[string]any)
			if !ok {
				if x != nil {
					return false
				}
				continue
			}
			if _, directive := m[patchKey]; directive {
				continue
			}
			mk, ok := m[t.MergeKey]
			if !ok || mk == nil || !simpleKey(mk) {
				return false
			}
			id := idBuf[i*n : i*n+n]
			if keys == nil {
				id[0] = mk
			} else {
				for j, name := range keys {
					kv, ok := m[name]
					if !ok || kv == nil {
						kv = elemT.Field(name).Default
					}
					// Validate compares full keys by their encoding, which
					// writes every invalid UTF-8 sequence as U+FFFD.
					if (kv == nil && j == 0) || !simpleKey(kv) {
						return false
					}
					if s, ok := kv.(string); ok && !utf8.ValidString(s) {
						return false
					}
					id[j] = kv
				}
			}
			for p := range i {
				if hasID[p] && slices.Equal(idBuf[p*n:p*n+n], id) {
					return false
				}
			}
			hasID[i] = true
			if !validObject(m, elemT) {
				return false
			}
		}
	case schema.Set:
		for i, el := range l {
			if !simpleKey(el) {
				return false
			}
			for _, prev := range l[:i] {
				if prev == el {
					return false
				}
			}
			if !validValue(el, elemT) {
				return false
			}
		}
	default:
		for _, el := range l {
			if !validValue(el, elemT) {
				return false
			}
		}
	}
	return true
}
