package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
)

// The field managers kubectl's commands write as, unless --field-manager
// names another.
const (
	managerCreate   = "kubectl-create"
	managerReplace  = "kubectl-replace"
	managerEdit     = "kubectl-edit"
	managerPatch    = "kubectl-patch"
	managerLabel    = "kubectl-label"
	managerAnnotate = "kubectl-annotate"
	managerSet      = "kubectl-set"
	managerRollout  = "kubectl-rollout"
	managerExpose   = "kubectl-expose"
	managerRun      = "kubectl-run"
	managerScale    = "kubectl-autoscale"
	// managerUserAgent is what kube-apiserver records for kubectl's
	// requests that name no manager (kubectl scale): the first word of its
	// user agent.
	managerUserAgent = "kubectl"
)

// applyErrorLines returns what kubectl prints for the error of an apply:
// its own message for options it refuses, and with --server-side each
// object's error as the server answered it (kubectl names no file then).
func applyErrorLines(err error, serverSide bool) []string {
	var oe *apply.OptionsError
	if errors.As(err, &oe) {
		return []string{"error: " + oe.Err.Error()}
	}
	var ae apply.Errors
	if !serverSide || !errors.As(err, &ae) {
		return errorLines(err)
	}
	if len(ae) == 1 {
		if t, ok := invalidText(ae[0].Err); ok {
			return []string{sourced(ae[0], t)}
		}
	}
	out := make([]string, 0, len(ae))
	for _, e := range ae {
		t := serverSideErrorText(e.Err)
		var se *cluster.StatusError
		if errors.As(e.Err, &se) && se.Reason == cluster.ReasonInvalid {
			// kubectl names no file for a server-side apply's errors:
			// an invalid object's gets the file, document and object.
			t = sourced(e, se.Message)
		}
		out = append(out, t)
	}
	return out
}

// serverSideErrorText is one object's error of a server-side apply as
// kubectl prints it.
func serverSideErrorText(err error) string {
	var ce *apply.ConflictError
	if errors.As(err, &ce) {
		return "error: " + ce.Error()
	}
	var se *cluster.StatusError
	if errors.As(err, &se) {
		return errorText(se)
	}
	return "error: " + err.Error()
}

// diffErrorLines returns what kubectl diff prints for the error of a
// server-side diff: each object's error as the server answered it, a
// conflict without apply's advice.
func diffErrorLines(err error, serverSide bool) []string {
	var oe *apply.OptionsError
	if errors.As(err, &oe) {
		return []string{"error: " + oe.Err.Error()}
	}
	var ae apply.Errors
	if !serverSide || !errors.As(err, &ae) {
		return errorLines(err)
	}
	out := make([]string, 0, len(ae))
	for _, e := range ae {
		var se *cluster.StatusError
		if errors.As(e.Err, &se) {
			if se.Code == 409 {
				// kubectl diff takes a conflict for an object that changed
				// under it, tries once more without its lock and warns.
				out = append(out, klogWarning(time.Now(), fmt.Sprintf("Object (%s/%s, Kind=%s: %s) keeps changing, diffing without lock",
					e.Ref.GVK.Group, e.Ref.GVK.Version, e.Ref.GVK.Kind, e.Ref.Name)))
			}
			out = append(out, commandErrorText(se))
			continue
		}
		out = append(out, "error: "+e.Err.Error())
	}
	return out
}

// klogWarning is a warning line as kubectl's logger prints it: level,
// date, time, process and the source line of kubectl diff's warning.
func klogWarning(t time.Time, msg string) string {
	return fmt.Sprintf("W%02d%02d %02d:%02d:%02d.%06d %7d diff.go:723] %s",
		t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000, os.Getpid(), msg)
}
