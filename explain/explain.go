package explain

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"text/template"

	"github.com/mitchellh/go-wordwrap"
)

// plaintext is kubectl's plaintext template (k8s.io/kubectl
// pkg/explain/v2/templates/plaintext.tmpl, v1.37.1), unchanged.
//
//go:embed plaintext.tmpl
var plaintext string

// GVR names a resource of an API group version, as a document's paths
// name it ("/apis/apps/v1/deployments").
type GVR struct {
	Group, Version, Resource string
}

// String is how kubectl names a GVR in its errors:
// "apps/v1, Resource=deployments" ("/v1, Resource=pods" for the core
// group).
func (r GVR) String() string {
	return r.Group + "/" + r.Version + ", Resource=" + r.Resource
}

// Request is what to explain.
type Request struct {
	// GVR is the resource whose kind is explained; the document's paths
	// say which kind it serves.
	GVR GVR
	// FieldPath is the field to explain ("spec", "template"), empty for
	// the kind itself.
	FieldPath []string
	// Recursive prints the names and types of the fields of fields, down
	// to MaxDepth levels (0: all).
	Recursive bool
	MaxDepth  int
}

// Error is a failure that kubectl explain reports as its template words
// it ("field \"nope\" does not exist"), without kubectl's "error: ".
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Render writes the explanation of req from doc, an OpenAPI v3 document
// of req.GVR's group version as JSON values (paths and
// components.schemas), exactly as `kubectl explain` prints it. What the
// template printed before it failed stays written, as with kubectl (the
// GROUP/KIND/VERSION header before a missing field's error); the failure
// is an *Error.
func Render(w io.Writer, doc map[string]any, req Request) error {
	t, err := parsed()
	if err != nil {
		return err
	}
	if req.FieldPath == nil {
		req.FieldPath = []string{}
	}
	err = t.Execute(w, templateContext{
		GVR:       req.GVR,
		Document:  doc,
		Recursive: req.Recursive,
		MaxDepth:  req.MaxDepth,
		FieldPath: req.FieldPath,
	})
	var thrown thrownError
	if errors.As(err, &thrown) {
		return &Error{Msg: strings.TrimPrefix(string(thrown), "error: ")}
	}
	return err
}

// templateContext is the template's data, as kubectl gives it.
type templateContext struct {
	GVR       GVR
	Document  map[string]any
	Recursive bool
	MaxDepth  int
	FieldPath []string
}

// thrownError is the template's "throw".
type thrownError string

func (e thrownError) Error() string { return string(e) }

var parsed = sync.OnceValues(func() (*template.Template, error) {
	t := template.New("plaintext")
	t, err := withFuncs(t).Parse(plaintext)
	if err != nil {
		return nil, fmt.Errorf("explain: parsing the plaintext template: %w", err)
	}
	return t, nil
})

// withFuncs adds the functions kubectl's explain templates use, as
// kubectl defines them.
func withFuncs(tmpl *template.Template) *template.Template {
	return tmpl.Funcs(map[string]any{
		"throw": func(e string, args ...any) (string, error) {
			return "", thrownError(fmt.Sprintf(e, args...))
		},
		"toJson": func(obj any) (string, error) {
			res, err := json.Marshal(obj)
			return string(res), err
		},
		"toPrettyJson": func(obj any) (string, error) {
			res, err := json.MarshalIndent(obj, "", "    ")
			return string(res), err
		},
		"fail": func(message string) (string, error) {
			return "", errors.New(message)
		},
		"wrap": func(l int, s string) (string, error) {
			return wordwrap.WrapString(s, uint(l)), nil
		},
		"split": strings.Split,
		"join": func(sep string, strs ...string) string {
			return strings.Join(strs, sep)
		},
		"include": func(name string, data any) (string, error) {
			var buf bytes.Buffer
			if err := tmpl.ExecuteTemplate(&buf, name, data); err != nil {
				return "", err
			}
			return buf.String(), nil
		},
		"ternary": func(a, b any, condition bool) any {
			if condition {
				return a
			}
			return b
		},
		"first": func(list any) (any, error) { return at(list, "first", 0) },
		"last":  func(list any) (any, error) { return at(list, "last", -1) },
		"indent": func(amount int, str string) string {
			pad := strings.Repeat(" ", amount)
			return pad + strings.ReplaceAll(str, "\n", "\n"+pad)
		},
		"dict": func(keysAndValues ...any) (map[string]any, error) {
			if len(keysAndValues)%2 != 0 {
				return nil, errors.New("expected even # of arguments")
			}
			res := map[string]any{}
			for i := 0; i+1 < len(keysAndValues); i += 2 {
				key, ok := keysAndValues[i].(string)
				if !ok {
					return nil, fmt.Errorf("key of type %T is not a string as expected", keysAndValues[i])
				}
				res[key] = keysAndValues[i+1]
			}
			return res, nil
		},
		"contains": func(list any, value any) bool {
			if list == nil {
				return false
			}
			val := reflect.ValueOf(list)
			if val.Kind() != reflect.Slice {
				return false
			}
			for i := 0; i < val.Len(); i++ {
				cur := val.Index(i)
				if cur.CanInterface() && reflect.DeepEqual(cur.Interface(), value) {
					return true
				}
			}
			return false
		},
		"set": func(dict map[string]any, keysAndValues ...any) (any, error) {
			if len(keysAndValues)%2 != 0 {
				return nil, errors.New("expected even number of arguments")
			}
			out := make(map[string]any, len(dict)+len(keysAndValues)/2)
			for k, v := range dict {
				out[k] = v
			}
			for i := 0; i < len(keysAndValues); i += 2 {
				key, ok := keysAndValues[i].(string)
				if !ok {
					return nil, errors.New("keys must be strings")
				}
				out[key] = keysAndValues[i+1]
			}
			return out, nil
		},
		"list": func(values ...any) ([]any, error) { return values, nil },
		"add":  func(value, operand int) int { return value + operand },
		"sub":  func(value, operand int) int { return value - operand },
		"mul":  func(value, operand int) int { return value * operand },
		"resolveRef": func(refAny any, document map[string]any) map[string]any {
			return resolveRef(refAny, document)
		},
	})
}

// at returns the element i of a list (-1: the last), kubectl's first and
// last.
func at(list any, name string, i int) (any, error) {
	if list == nil {
		return nil, errors.New("list is empty")
	}
	v := reflect.ValueOf(list)
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			return nil, errors.New("list is empty")
		}
		if i < 0 {
			i = v.Len() - 1
		}
		return v.Index(i).Interface(), nil
	}
	return nil, fmt.Errorf("%s cannot be used on type: %T", name, list)
}

// resolveRef follows a local reference ("#/components/schemas/NAME") in
// document; nil when it is not one or names nothing.
func resolveRef(refAny any, document map[string]any) map[string]any {
	ref, ok := refAny.(string)
	if !ok {
		return nil
	}
	fragment, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	cur := document
	for _, k := range strings.Split(fragment, "/") {
		if k == "" {
			continue
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}
