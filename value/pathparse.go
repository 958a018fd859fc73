package value

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParsePath reads a field path in the spellings konverge, kubectl and the
// API server print:
//
//	spec.template.spec.containers[name="web"].image   Path.String
//	.spec.template.spec.containers[name="web"].image  structured-merge-diff (server-side apply conflicts)
//	spec.template.spec.containers[0].image            kube-apiserver's errors: an index
//	metadata.labels[app.kubernetes.io/name]           kube-apiserver's errors: a map key
//	metadata.finalizers[="example.com/cleanup"]       an element of a set
//
// A selector [k="v",k2=80] is a list element by key fields (values are
// JSON scalars), [N] an index, [="v"] a set element, and any other [...]
// a key of a map, which becomes a field. Field names that hold a dot or a
// bracket cannot be written as a dotted field (use the [key] form, or a
// JSON pointer with Pointer). The root is "." or "".
func ParsePath(s string) (Path, error) {
	src := s
	s = strings.TrimPrefix(s, ".")
	var out Path
	for i := 0; i < len(s); {
		switch s[i] {
		case '.':
			if i == 0 || i == len(s)-1 || s[i+1] == '.' || s[i+1] == '[' {
				return nil, fmt.Errorf("value: path %q: empty field name at offset %d", src, i)
			}
			i++
		case '[':
			end, el, err := parseBracket(s, i)
			if err != nil {
				return nil, fmt.Errorf("value: path %q: %w", src, err)
			}
			out = append(out, el)
			i = end
		default:
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				if s[j] == ']' {
					return nil, fmt.Errorf("value: path %q: unexpected ']' at offset %d", src, j)
				}
				j++
			}
			out = append(out, FieldElement(s[i:j]))
			i = j
		}
	}
	return out, nil
}

// parseBracket reads the selector that starts at s[i] == '['.
func parseBracket(s string, i int) (int, Element, error) {
	end, inQuote := -1, false
	for j := i + 1; j < len(s) && end < 0; j++ {
		switch {
		case inQuote && s[j] == '\\':
			j++
		case s[j] == '"':
			inQuote = !inQuote
		case !inQuote && s[j] == ']':
			end = j
		}
	}
	if end < 0 {
		return 0, Element{}, fmt.Errorf("unclosed [ at offset %d", i)
	}
	body := s[i+1 : end]
	if body == "" {
		return 0, Element{}, fmt.Errorf("empty [] at offset %d", i)
	}
	if body[0] == '=' {
		v, err := scalar(body[1:])
		if err != nil {
			return 0, Element{}, fmt.Errorf("[%s]: %w", body, err)
		}
		return end + 1, ValueElement(v), nil
	}
	if n, err := strconv.Atoi(body); err == nil && n >= 0 && strconv.Itoa(n) == body {
		return end + 1, IndexElement(n), nil
	}
	if keys, ok := keyFields(body); ok {
		return end + 1, KeyElement(keys...), nil
	}
	return end + 1, FieldElement(body), nil // kube-apiserver's map key
}

// keyFields reads k="v",k2=80; ok is false when body is not that.
func keyFields(body string) ([]KeyField, bool) {
	var keys []KeyField
	start, inQuote := 0, false
	for j := 0; j <= len(body); j++ {
		if j < len(body) {
			switch c := body[j]; {
			case inQuote && c == '\\':
				j++
				continue
			case c == '"':
				inQuote = !inQuote
				continue
			case inQuote || c != ',':
				continue
			}
		}
		k, v, found := strings.Cut(body[start:j], "=")
		if !found || k == "" || strings.ContainsAny(k, `"[]`) {
			return nil, false
		}
		val, err := scalar(v)
		if err != nil {
			return nil, false
		}
		keys = append(keys, KeyField{Name: k, Value: val})
		start = j + 1
	}
	return keys, len(keys) > 0
}

// scalar decodes a JSON string, number, boolean or null.
func scalar(s string) (any, error) {
	v, err := Decode([]byte(s))
	if err != nil {
		return nil, errors.New("want a quoted string, a number, a boolean or null")
	}
	switch v.(type) {
	case map[string]any, []any:
		return nil, errors.New("want a quoted string, a number, a boolean or null")
	}
	return v, nil
}

// Pointer returns p as a JSON pointer (RFC 6901): a segment per field
// ("~1" for "/", "~0" for "~") and per index. A key or set element has no
// position without the object: ok is false for a path with one (see
// PointerIn). The root is "".
func (p Path) Pointer() (ptr string, ok bool) { return p.PointerIn(nil) }

// PointerIn is Pointer with key and set elements resolved to their index
// in obj, the object p is a path of; ok is false when one is not found.
func (p Path) PointerIn(obj any) (ptr string, ok bool) {
	var b strings.Builder
	cur := obj
	for _, e := range p {
		b.WriteByte('/')
		switch e.Kind {
		case FieldKind:
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(e.Field, "~", "~0"), "/", "~1"))
			m, _ := cur.(map[string]any)
			cur = m[e.Field]
		case IndexKind:
			b.WriteString(strconv.Itoa(e.Index))
			l, _ := cur.([]any)
			cur = nil
			if e.Index < len(l) {
				cur = l[e.Index]
			}
		default:
			l, _ := cur.([]any)
			i := indexOf(e, l)
			if i < 0 {
				return "", false
			}
			b.WriteString(strconv.Itoa(i))
			cur = l[i]
		}
	}
	return b.String(), true
}

// indexOf returns the index of the element of l that a key or value
// element names, -1 when there is none.
func indexOf(e Element, l []any) int {
	for i, x := range l {
		switch e.Kind {
		case ValueKind:
			if Equal(x, e.Value) {
				return i
			}
		case KeyKind:
			m, ok := x.(map[string]any)
			if !ok {
				continue
			}
			match := true
			for _, k := range e.Keys {
				if v, ok := m[k.Name]; !ok || !Equal(v, k.Value) {
					match = false
					break
				}
			}
			if match {
				return i
			}
		}
	}
	return -1
}

// ParsePathIn is ParsePath for a path of obj in a spelling that writes
// field names with dots as dotted fields (structured-merge-diff's, which
// server-side apply's conflicts use: .metadata.labels.app.kubernetes.io/name):
// where obj has a field whose name joins several dotted parts, they are
// read as that one field.
func ParsePathIn(s string, obj any) (Path, error) {
	p, err := ParsePath(s)
	if err != nil {
		return nil, err
	}
	var out Path
	cur := obj
	for i := 0; i < len(p); i++ {
		e := p[i]
		if m, ok := cur.(map[string]any); ok && e.Kind == FieldKind {
			if _, found := m[e.Field]; !found {
				// The longest run of dotted fields that m has.
				name := e.Field
				for j := i + 1; j < len(p) && p[j].Kind == FieldKind; j++ {
					name += "." + p[j].Field
					if _, found := m[name]; found {
						e, i = FieldElement(name), j
					}
				}
			}
			cur = m[e.Field]
			out = append(out, e)
			continue
		}
		l, _ := cur.([]any)
		cur = nil
		switch e.Kind {
		case IndexKind:
			if e.Index < len(l) {
				cur = l[e.Index]
			}
		case KeyKind, ValueKind:
			if k := indexOf(e, l); k >= 0 {
				cur = l[k]
			}
		}
		out = append(out, e)
	}
	return out, nil
}
