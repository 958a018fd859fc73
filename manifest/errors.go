package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// ErrRequired is the cause of an Error about a field every object must
// have: apiVersion, kind, metadata.name (or metadata.generateName).
var ErrRequired = errors.New("required")

// ErrNotExist is the cause of an Error about a path that does not exist.
// errors.Is(ErrNotExist, fs.ErrNotExist) holds.
var ErrNotExist error = notExist{}

type notExist struct{}

func (notExist) Error() string        { return "path does not exist" }
func (notExist) Is(target error) bool { return target == fs.ErrNotExist }

// Error is a problem with one input, document or object. It prints as
//
//	manifest: deploy/app.yaml#2 (line 14): Deployment/web: metadata.name: required
//
// that is the source, the object (when known), the field path (when known)
// and the cause, separated by ": ". Neither Object, Path nor Err ever holds
// a field's value, so that errors about Secrets reveal nothing of their
// data.
type Error struct {
	// Source is where the problem is: the file alone for problems with a
	// path or a whole file, otherwise the document (and List item).
	Source Source
	// Object is the object as "Kind/name", "Kind" without a name, or "".
	Object string
	// Path is the field path inside the document, in value.Path syntax
	// (spec.template.spec.containers[0].image), or "".
	Path string
	// Err is the cause: ErrRequired, ErrNotExist, a *SyntaxError, a
	// *SizeError, or another error.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("manifest: ")
	b.WriteString(e.Source.String())
	if e.Object != "" {
		b.WriteString(": ")
		b.WriteString(e.Object)
	}
	if e.Path != "" {
		b.WriteString(": ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errors are all the problems Read found, in the order of the inputs, then
// of the documents and List items within each. It prints one Error a line.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// SyntaxError is input that is not well-formed YAML or JSON, or that this
// package refuses to decode: a duplicate key, nesting deeper than
// value.MaxDepth, aliases that expand too far, a number JSON cannot hold.
// Msg never quotes the input.
type SyntaxError struct {
	// Line is the 1-based line in the file, 0 when the parser did not say.
	Line int
	// Column is the 1-based column, 0 when unknown (go-yaml reports lines
	// only).
	Column int
	Msg    string
}

func (e *SyntaxError) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// SizeError is a file larger than Options.MaxFileSize. Size is -1 when the
// input is a stream whose size is known only to exceed the limit.
type SizeError struct {
	Size, Limit int64
}

func (e *SizeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("larger than the limit of %d bytes (Options.MaxFileSize)", e.Limit)
	}
	return fmt.Sprintf("%d bytes, larger than the limit of %d bytes (Options.MaxFileSize)", e.Size, e.Limit)
}
