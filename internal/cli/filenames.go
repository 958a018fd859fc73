package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/manifest"
)

// openSession opens the cluster for cmd, with a clearer message when
// another konverge process holds the state past the lock timeout.
func (g *Globals) openSession(ctx context.Context) (*Session, error) {
	s, err := g.Open(ctx)
	if err != nil {
		if errors.Is(err, local.ErrLocked) {
			return nil, fmt.Errorf("%w; gave up waiting for it (run the command again when the other one has finished)", err)
		}
		return nil, err
	}
	return s, nil
}

// fail prints err on standard error as kubectl would and returns the
// ExitError that ends the command with code. Lists of errors (manifest's,
// apply's) print one line each; API errors print as kubectl prints them,
// "Error from server (NotFound): ...".
func fail(w io.Writer, code int, err error) error {
	for _, line := range errorLines(err) {
		fmt.Fprintln(w, line)
	}
	return &ExitError{Code: code}
}

// errorLines returns err as the lines kubectl would print for it: one
// line (or more, for a multi-line message) for each error of a list
// (manifest's, apply's, errors.Join's). A command that fails with a single
// Invalid API error prints it as kubectl does, from its causes
// (invalidText).
func errorLines(err error) []string {
	leaves := leafErrors(err, nil)
	if len(leaves) == 1 {
		if t, ok := invalidText(leaves[0]); ok {
			var oe *apply.ObjectError
			if errors.As(leaves[0], &oe) {
				t = sourced(oe, t)
			}
			return []string{t}
		}
	}
	out := make([]string, 0, len(leaves))
	for _, e := range leaves {
		out = append(out, errorLine(e))
	}
	return out
}

// sourced is text, an object's API error as kubectl words it, after the
// file, document and object it concerns (apply.ObjectError.Where), with
// the values of a Secret masked: kubectl's message for an object that
// failed alone, or for a server-side apply, names no file, which leaves the
// user of a directory of many files guessing.
//
//	error: apply: dir/b.yaml#2 (line 8) configmap/x: The ConfigMap "x" is invalid: data[a b]: ...
func sourced(oe *apply.ObjectError, text string) string {
	text = oe.Redact(text)
	if oe.Source.File == "" {
		return text
	}
	return "error: " + oe.Where() + ": " + strings.TrimPrefix(text, "error: ")
}

// errorLine is one error of a list as kubectl prints it.
func errorLine(err error) string {
	var oe *apply.ObjectError
	var me *manifest.Error
	if errors.As(err, &oe) || errors.As(err, &me) {
		return "error: " + err.Error()
	}
	var se *cluster.StatusError
	if errors.As(err, &se) && se.Reason != "" {
		return "Error from server (" + string(se.Reason) + "): " + err.Error()
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "error: ") {
		return msg
	}
	return "error: " + msg
}

// leafErrors appends the errors that err lists (apply.Errors,
// manifest.Errors, errors.Join), or err itself, to out.
func leafErrors(err error, out []error) []error {
	var ae apply.Errors
	var me manifest.Errors
	switch {
	case err == nil:
		return out
	case errors.As(err, &ae):
		for _, e := range ae {
			out = append(out, e)
		}
		return out
	case errors.As(err, &me):
		for _, e := range me {
			out = append(out, e)
		}
		return out
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = leafErrors(e, out)
		}
		return out
	}
	return append(out, err)
}

// printWarning writes a warning line as kubectl prints warnings.
func printWarning(w io.Writer, msg string) {
	if !strings.HasPrefix(msg, "Warning: ") {
		msg = "Warning: " + msg
	}
	fmt.Fprintln(w, msg)
}
