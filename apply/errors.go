package apply

import (
	"cmp"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// ObjectError is a problem with one object of the input. It prints as
//
//	apply: deploy/app.yaml#2 (line 14) deployment.apps/web: spec.template.spec.containers[name="web"]: duplicate entry (element 1 repeats an earlier key)
//
// that is the source, the object and the cause. The cause of a field
// problem starts with the field path (a *merge.FieldError found before
// anything was sent, or the API server's Invalid causes in a
// *cluster.StatusError). The message never holds a value of a Secret's data.
type ObjectError struct {
	Source manifest.Source
	Ref    objref.Ref
	// Path is the field the cause is about, when it is about one field:
	// a *merge.FieldError's, the one cause of an API server's Invalid
	// error, or the field of a value the kind cannot hold; nil otherwise
	// (the causes of an Invalid error with several are in its
	// *cluster.StatusError, each with Cause.Path). It is the type and
	// spelling of Change.Paths and IgnoreRule paths.
	Path value.Path
	Err  error
	// msg is Err's message with Secret values masked.
	msg string
	// secret is the config of a Secret, whose values Redact masks.
	secret map[string]any
}

func newObjectError(src manifest.Source, ref objref.Ref, err error, secret map[string]any) *ObjectError {
	return &ObjectError{Source: src, Ref: ref, Path: pathOf(err), Err: err, msg: redact(causeText(err), secret), secret: secret}
}

// pathOf returns the one field err is about, nil when there is none.
func pathOf(err error) value.Path {
	var fe *merge.FieldError
	if errors.As(err, &fe) {
		return fe.Path
	}
	var se *cluster.StatusError
	if errors.As(err, &se) {
		if len(se.Causes) == 1 {
			return se.Causes[0].Path() // an undecodable value's too
		}
	}
	return nil
}

// Redact returns s with the values of the object's Secret data and
// stringData masked, as the error's own message is: for a caller that
// words the cause its own way (a command printing an API error's causes).
func (e *ObjectError) Redact(s string) string { return redact(s, e.secret) }

func (e *ObjectError) Error() string {
	msg := e.msg
	if msg == "" && e.Err != nil {
		msg = causeText(e.Err)
	}
	return e.Where() + ": " + msg
}

// Where is the start of the error's message, before its cause: "apply: ",
// the source and the object, as in
//
//	apply: deploy/app.yaml#2 (line 14) deployment.apps/web
//
// for a caller that words the cause its own way (a command printing an
// API error as kubectl does) and still names where the object came from.
func (e *ObjectError) Where() string {
	var b strings.Builder
	b.WriteString("apply: ")
	if src := e.Source.String(); src != "" {
		b.WriteString(src)
		b.WriteByte(' ')
	}
	b.WriteString(e.Ref.String())
	return b.String()
}

func (e *ObjectError) Unwrap() error { return e.Err }

// causeText prints a cause; a merge.FieldError without its package prefix,
// since the object error says where it comes from.
func causeText(err error) string {
	var fe *merge.FieldError
	if errors.As(err, &fe) && fe == err {
		return fe.Path.String() + ": " + fe.Err.Error()
	}
	return err.Error()
}

// Errors are the problems of an apply, one per object and cause, sorted by
// source (file, document, List item). It prints one error a line.
type Errors []*ObjectError

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sortErrors orders errors by source, keeping the order of one object's
// causes.
func sortErrors(es Errors) {
	slices.SortStableFunc(es, func(a, b *ObjectError) int {
		return cmp.Or(
			cmp.Compare(a.Source.File, b.Source.File),
			cmp.Compare(a.Source.Doc, b.Source.Doc),
			cmp.Compare(a.Source.Item, b.Source.Item),
		)
	})
}

// errorList collects object errors; it is safe for concurrent use.
type errorList struct {
	mu   sync.Mutex
	errs Errors
}

// add records err for an item; a joined error (merge.Validate's) becomes
// one ObjectError per cause.
func (l *errorList) add(it *item, err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if _, isErrors := err.(Errors); !isErrors {
			for _, e := range j.Unwrap() {
				l.add(it, e)
			}
			return
		}
	}
	var secret map[string]any
	if it.isSecret() {
		secret = it.config
	}
	e := newObjectError(it.src, it.ref, err, secret)
	l.mu.Lock()
	l.errs = append(l.errs, e)
	l.mu.Unlock()
}

// len returns how many errors were recorded.
func (l *errorList) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.errs)
}

func (l *errorList) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) == 0 {
		return nil
	}
	sortErrors(l.errs)
	return l.errs
}

// redact replaces, in msg, every value of a Secret's data and stringData (as
// written and, for data, base64-decoded) by "***": a safety net under the
// rule that errors carry no values, for messages that come from a server.
func redact(msg string, secret map[string]any) string {
	if secret == nil {
		return msg
	}
	var values []string
	for _, field := range []string{"data", "stringData"} {
		m, _ := secret[field].(map[string]any)
		for _, v := range m {
			s, ok := v.(string)
			if !ok {
				continue
			}
			values = append(values, s)
			if field == "data" {
				if d, err := base64.StdEncoding.DecodeString(s); err == nil {
					values = append(values, string(d))
				}
			}
		}
	}
	// Longest first, so that a value containing another goes whole.
	slices.SortFunc(values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, v := range values {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "***")
		}
	}
	return msg
}
