package validate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/konverge/konverge/apimeta"
	"github.com/konverge/konverge/value"
)

// ErrorType is the kind of a validation error: apimachinery's
// field.ErrorType (its values are the StatusCause types too, and its
// String is how messages print it, "Required value").
type ErrorType = field.ErrorType

// The error types.
const (
	ErrorTypeNotFound     = field.ErrorTypeNotFound
	ErrorTypeRequired     = field.ErrorTypeRequired
	ErrorTypeDuplicate    = field.ErrorTypeDuplicate
	ErrorTypeInvalid      = field.ErrorTypeInvalid
	ErrorTypeNotSupported = field.ErrorTypeNotSupported
	ErrorTypeForbidden    = field.ErrorTypeForbidden
	ErrorTypeTooLong      = field.ErrorTypeTooLong
	ErrorTypeTooMany      = field.ErrorTypeTooMany
	ErrorTypeTooFew       = field.ErrorTypeTooFew
	ErrorTypeInternal     = field.ErrorTypeInternal
	ErrorTypeTypeInvalid  = field.ErrorTypeTypeInvalid
	ErrorTypeTooShort     = field.ErrorTypeTooShort
)

// Error is one validation error of an object, as apimachinery's
// field.Error: the field path as the API server prints it
// (spec.template.spec.containers[0].image, metadata.labels, data[key]),
// the offending value and a detail.
type Error struct {
	Type     ErrorType
	Field    string
	BadValue any
	Detail   string
}

// Error prints the error as kube-apiserver does:
// `spec.replicas: Invalid value: -1: must be greater than or equal to 0`.
func (e Error) Error() string { return e.Field + ": " + e.Body() }

// Body is the message without the field path, the StatusCause message
// ("Invalid value: -1: must be greater than or equal to 0").
func (e Error) Body() string {
	var s string
	switch e.Type {
	case ErrorTypeRequired, ErrorTypeForbidden, ErrorTypeTooLong, ErrorTypeTooShort, ErrorTypeInternal:
		s = e.Type.String()
	default:
		if _, omit := e.BadValue.(omitted); omit {
			s = e.Type.String()
		} else {
			s = e.Type.String() + ": " + formatValue(e.BadValue)
		}
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// omitted is a bad value that is not printed (field.TooMany of an unknown
// count).
type omitted struct{}

// goValue is a bad value that kube-apiserver prints from a Go struct of
// its internal types (json.Marshal of a struct without json tags, such as
// {"Type":"Foo","RollingUpdate":null}); it is printed as is.
type goValue string

// formatValue prints a bad value as field.Error does: numbers and bools
// with %v, strings quoted, anything else as JSON.
func formatValue(v any) string {
	switch x := v.(type) {
	case int64, int32, int, float64, float32, bool:
		return fmt.Sprint(x)
	case string:
		return strconv.Quote(x)
	case goValue:
		return string(x)
	}
	b, err := value.Encode(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// ToCauses turns validation errors into the causes of an Invalid status
// error, as apierrors.NewInvalid does.
func ToCauses(errs []Error) []apimeta.Cause {
	out := make([]apimeta.Cause, len(errs))
	for i, e := range errs {
		out[i] = apimeta.Cause{Type: string(e.Type), Field: e.Field, Message: e.Body()}
	}
	return out
}

// path is a field path printed as apimachinery's field.Path: fields joined
// by dots, indexes and map keys in brackets (spec.ports[0],
// metadata.labels[app], data[a.txt]).
type path struct {
	parent *path
	name   string
	index  string
}

func newPath(names ...string) *path {
	var p *path
	for _, n := range names {
		p = &path{parent: p, name: n}
	}
	return p
}

func (p *path) child(names ...string) *path {
	for _, n := range names {
		p = &path{parent: p, name: n}
	}
	return p
}

func (p *path) at(i int) *path     { return &path{parent: p, index: strconv.Itoa(i)} }
func (p *path) key(k string) *path { return &path{parent: p, index: k} }

func (p *path) String() string {
	if p == nil {
		return "<nil>"
	}
	var elems []*path
	for q := p; q != nil; q = q.parent {
		elems = append(elems, q)
	}
	var b strings.Builder
	for i := len(elems) - 1; i >= 0; i-- {
		e := elems[i]
		if e.parent != nil && e.name != "" {
			b.WriteByte('.')
		}
		if e.name != "" {
			b.WriteString(e.name)
		} else {
			b.WriteString("[" + e.index + "]")
		}
	}
	return b.String()
}

// The constructors of field.

func required(p *path, detail string) Error {
	return Error{Type: ErrorTypeRequired, Field: p.String(), BadValue: "", Detail: detail}
}

func invalid(p *path, v any, detail string) Error {
	return Error{Type: ErrorTypeInvalid, Field: p.String(), BadValue: v, Detail: detail}
}

func typeInvalid(p *path, v any, detail string) Error {
	return Error{Type: ErrorTypeTypeInvalid, Field: p.String(), BadValue: v, Detail: detail}
}

func duplicate(p *path, v any) Error {
	return Error{Type: ErrorTypeDuplicate, Field: p.String(), BadValue: v}
}

func notFound(p *path, v any) Error {
	return Error{Type: ErrorTypeNotFound, Field: p.String(), BadValue: v}
}

func forbidden(p *path, detail string) Error {
	return Error{Type: ErrorTypeForbidden, Field: p.String(), BadValue: "", Detail: detail}
}

func notSupported(p *path, v any, valid ...string) Error {
	detail := ""
	if len(valid) > 0 {
		q := make([]string, len(valid))
		for i, s := range valid {
			q[i] = strconv.Quote(s)
		}
		detail = "supported values: " + strings.Join(q, ", ")
	}
	return Error{Type: ErrorTypeNotSupported, Field: p.String(), BadValue: v, Detail: detail}
}

// oneOf checks an enum field the API server requires: "" is Required, a
// value outside supported is NotSupported (listing supported in the order
// given, the API server's), and a supported value is no error.
func oneOf(p *path, v string, supported ...string) []Error {
	if v == "" {
		return []Error{required(p, "")}
	}
	if slices.Contains(supported, v) {
		return nil
	}
	return []Error{notSupported(p, v, supported...)}
}

func tooLong(p *path, max int) Error {
	unit := "bytes"
	if max == 1 {
		unit = "byte"
	}
	msg := fmt.Sprintf("may not be more than %d %s", max, unit)
	if max < 0 {
		msg = "value is too long"
	}
	return Error{Type: ErrorTypeTooLong, Field: p.String(), BadValue: "<value omitted>", Detail: msg}
}

func tooMany(p *path, actual, max int) Error {
	var msg string
	if max >= 0 {
		unit := "items"
		if max == 1 {
			unit = "item"
		}
		msg = fmt.Sprintf("must have at most %d %s", max, unit)
	} else {
		msg = "has too many items"
	}
	var v any = int64(actual)
	if actual < 0 {
		v = omitted{}
	}
	return Error{Type: ErrorTypeTooMany, Field: p.String(), BadValue: v, Detail: msg}
}
