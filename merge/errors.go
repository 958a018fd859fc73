package merge

import (
	"errors"
	"fmt"
	"strings"

	"github.com/konverge/konverge/value"
)

// FieldError is a problem at one position of an object. Err says what; it
// never carries field values (a Secret's data stays out of errors), only
// field names, key values and types.
type FieldError struct {
	Path value.Path
	Err  error
}

func (e *FieldError) Error() string {
	return "merge: " + e.Path.String() + ": " + e.Err.Error()
}

func (e *FieldError) Unwrap() error { return e.Err }

// Sentinel causes, for errors.Is.
var (
	// ErrType: a value does not have the type the schema gives its field.
	ErrType = errors.New("wrong type")
	// ErrMissingKey: an element of a list merged by key lacks a key field.
	ErrMissingKey = errors.New("list element without its key")
	// ErrDuplicate: two elements of a list have the same key.
	ErrDuplicate = errors.New("duplicate list element")
	// ErrPatch: a strategic merge patch is malformed (a bad directive).
	ErrPatch = errors.New("invalid patch")
	// ErrConflict: live changed a field that the config changes too.
	ErrConflict = errors.New("conflict")
)

// TypeError is a value whose JSON type does not fit its schema.
type TypeError struct {
	Want string // "object", "list", "string", "integer", ...
	Got  string // value.TypeName of the value
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("expected %s, got %s", e.Want, e.Got)
}

func (e *TypeError) Is(target error) bool { return target == ErrType }

// MissingKeyError is an element of a list merged by key that lacks a key
// field.
type MissingKeyError struct {
	Key string
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("list element has no %q, the key of the list", e.Key)
}

func (e *MissingKeyError) Is(target error) bool { return target == ErrMissingKey }

// DuplicateError is two elements of one list with the same key (two
// containers with one name), or a set holding a value twice. Index is the
// position of the second one.
type DuplicateError struct {
	Index int
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("duplicate entry (element %d repeats an earlier key)", e.Index)
}

func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// PatchError is a malformed strategic merge patch directive.
type PatchError struct {
	Msg string
}

func (e *PatchError) Error() string { return e.Msg }

func (e *PatchError) Is(target error) bool { return target == ErrPatch }

func patchErrorf(format string, args ...any) error {
	return &PatchError{Msg: fmt.Sprintf(format, args...)}
}

// ConflictError lists the fields that live changed since the last apply
// and that the config changes too, sorted. ThreeWay returns it when
// Options.DetectConflicts is set.
type ConflictError struct {
	Paths []value.Path
}

func (e *ConflictError) Error() string {
	parts := make([]string, len(e.Paths))
	for i, p := range e.Paths {
		parts[i] = p.String()
	}
	return "merge: live object changed since the last apply, and the config changes the same fields: " + strings.Join(parts, ", ")
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// at wraps err with the position el, building the path on the way back out
// of the recursion.
func at(err error, el value.Element) error {
	if err == nil {
		return nil
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		p := make(value.Path, 0, len(fe.Path)+1)
		p = append(p, el)
		fe.Path = append(p, fe.Path...)
		return err
	}
	return &FieldError{Path: value.Path{el}, Err: err}
}

// atField is at(err, value.FieldElement(name)).
func atField(err error, name string) error {
	if err == nil {
		return nil
	}
	return at(err, value.FieldElement(name))
}
