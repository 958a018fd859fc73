package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
)

// testOpen, when set by tests, replaces Globals.Open for the commands of
// this file's family (get, describe, scale, patch, label, annotate, edit),
// so that tests pin the cluster's clock.
var testOpen func(ctx context.Context, g *Globals) (*Session, error)

// openResourceSession opens the cluster for one command (through
// openSession, or testOpen in tests).
func (g *Globals) openResourceSession(ctx context.Context) (*Session, error) {
	if testOpen != nil && !g.realCluster() {
		return testOpen(ctx, g)
	}
	return g.openSession(ctx)
}

// now returns the cluster's time.
func (s *Session) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// resourceRequest is one kind with the names asked for (none: all).
type resourceRequest struct {
	Resource cluster.Resource
	Names    []string
}

// resolveResourceArgs reads kubectl's resource arguments: "KIND NAME...",
// "KIND1,KIND2 [NAME...]" or "KIND/NAME..." (every argument in that form).
// Kinds resolve through the cluster's Mapper (short names, plurals,
// "deployment.apps"); a kind that does not resolve is kubectl's error
// `the server doesn't have a resource type "foo"`.
func resolveResourceArgs(m cluster.Mapper, args []string) ([]resourceRequest, error) {
	if len(args) == 0 {
		return nil, errors.New("you must specify the type of resource")
	}
	slash := false
	for _, a := range args {
		if strings.Contains(a, "/") {
			slash = true
		}
	}
	if slash {
		var out []resourceRequest
		for _, a := range args {
			kind, name, ok := strings.Cut(a, "/")
			if !ok {
				return nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'konverge get resource/<resource_name>' instead of 'konverge get resource resource/<resource_name>'")
			}
			if name == "" {
				return nil, fmt.Errorf("arguments in resource/name form must have a single resource and name")
			}
			res, err := findResource(m, kind)
			if err != nil {
				return nil, err
			}
			out = append(out, resourceRequest{Resource: res, Names: []string{name}})
		}
		return out, nil
	}
	var out []resourceRequest
	for _, kind := range strings.Split(args[0], ",") {
		if kind == "" {
			continue
		}
		res, err := findResource(m, kind)
		if err != nil {
			return nil, err
		}
		out = append(out, resourceRequest{Resource: res, Names: append([]string(nil), args[1:]...)})
	}
	if len(out) == 0 {
		return nil, errors.New("you must specify the type of resource")
	}
	return out, nil
}

// findResource resolves a kind name; its failure is a client-side error,
// not the API server's.
func findResource(m cluster.Mapper, kind string) (cluster.Resource, error) {
	res, err := m.Find(kind)
	if err != nil {
		var se *cluster.StatusError
		if errors.As(err, &se) {
			return res, errors.New(se.Message)
		}
		return res, err
	}
	return res, nil
}

// objectNamespace is the namespace a request for res acts in.
func (g *Globals) objectNamespace(res cluster.Resource) string {
	if !res.Namespaced {
		return ""
	}
	return g.Ns()
}

// listSelectors are the label (-l) and field (--field-selector)
// selectors of a list.
type listSelectors struct {
	labels, fields string
	// withoutManagedFields: the caller does not read the items'
	// managedFields (see cluster.WithoutManagedFields).
	withoutManagedFields bool
}

// listRequest lists the objects of a request without names: in the
// namespace (or all with allNamespaces) and matching sel. A list the
// server refuses is reported as kubectl reports it ("Unable to find ...
// that match label selector ...").
func listRequest(ctx context.Context, c cluster.Reader, res cluster.Resource, ns string, sel listSelectors) ([]map[string]any, error) {
	items, _, err := listWithVersion(ctx, c, res, ns, sel)
	return items, err
}

// listWithVersion is listRequest that also returns the list's
// resourceVersion, where a watch starts.
func listWithVersion(ctx context.Context, c cluster.Reader, res cluster.Resource, ns string, sel listSelectors) ([]map[string]any, string, error) {
	l, err := c.List(ctx, res.GVK, listOptions(res, ns, sel)...)
	if err != nil {
		return nil, "", enhanceListError(err, res, sel)
	}
	return l.Items, l.ResourceVersion, nil
}

// listOptions are the options of a list (or watch) of res in ns (every
// namespace when "") with sel.
func listOptions(res cluster.Resource, ns string, sel listSelectors) []cluster.ListOption {
	var opts []cluster.ListOption
	if res.Namespaced && ns != "" {
		opts = append(opts, cluster.InNamespace(ns))
	}
	if sel.labels != "" {
		opts = append(opts, cluster.MatchingLabels(sel.labels))
	}
	if sel.fields != "" {
		opts = append(opts, cluster.MatchingFields(sel.fields))
	}
	if sel.withoutManagedFields {
		opts = append(opts, cluster.WithoutManagedFields)
	}
	return opts
}

// enhanceListError adds to a list's BadRequest or NotFound error what was
// listed, as kubectl's resource.EnhanceListError does.
func enhanceListError(err error, res cluster.Resource, sel listSelectors) error {
	var se *cluster.StatusError
	if !errors.As(err, &se) || (se.Reason != cluster.ReasonBadRequest && se.Reason != cluster.ReasonNotFound) {
		return err
	}
	subj := res.GVK.Group + "/" + res.GVK.Version + ", Resource=" + res.Plural
	cp := *se
	if sel.labels == "" && sel.fields == "" {
		cp.Message = fmt.Sprintf("Unable to list %q: %v", subj, se.Message)
	} else {
		cp.Message = fmt.Sprintf("Unable to find %q that match label selector %q, field selector %q: %v", subj, sel.labels, sel.fields, se.Message)
	}
	return &cp
}

// checkListSelector validates a -l selector as the API server does, failing
// with kubectl's error for the list it would have sent.
func checkListSelector(res cluster.Resource, sel listSelectors) error {
	if sel.labels == "" {
		return nil
	}
	if _, err := selector.ParseLabels(sel.labels); err != nil {
		reason := err.Error()
		var se *selector.Error
		if errors.As(err, &se) {
			reason = se.Reason
		}
		subj := res.GVK.Group + "/" + res.GVK.Version + ", Resource=" + res.Plural
		return &cluster.StatusError{Code: 400, Reason: cluster.ReasonBadRequest,
			Message: fmt.Sprintf("Unable to find %q that match label selector %q, field selector %q: %s", subj, sel.labels, sel.fields, reason)}
	}
	return nil
}

// objectRef prints "deployment.apps/web", kubectl's name of an object in
// result lines.
func objectRef(res cluster.Resource, name string) string {
	return printer.KindPrefix(res) + "/" + name
}

// errorText prints err as kubectl prints one error among several:
// "Error from server (NotFound): ..." for API errors, "error: ..." for the
// rest. A command that fails with one error alone prints it with
// commandErrorText, which words Invalid errors kubectl's way.
func errorText(err error) string {
	var se *cluster.StatusError
	if errors.As(err, &se) {
		if se.Reason != "" {
			return fmt.Sprintf("Error from server (%s): %s", se.Reason, se.Message)
		}
		return "Error from server: " + se.Message
	}
	return "error: " + err.Error()
}

// commandErrorText prints the one error a command failed with as
// kubectl's checkErr does: an Invalid API error from its details
// (invalidText), any other as errorText.
func commandErrorText(err error) string {
	if t, ok := invalidText(err); ok {
		return t
	}
	return errorText(err)
}

// invalidText is kubectl's wording of an Invalid API error that a command
// failed with alone: `The Deployment "web" is invalid: spec.replicas:
// Invalid value: -1: ...`, and with several causes a line "* field:
// message" each (repeated causes once), from the error's details rather
// than its message (which names the file or the object otherwise). ok is
// false when err holds no Invalid *cluster.StatusError.
func invalidText(err error) (text string, ok bool) {
	var se *cluster.StatusError
	if !errors.As(err, &se) || se.Reason != cluster.ReasonInvalid {
		return "", false
	}
	if se.Kind == "" && se.Group == "" && se.Name == "" && len(se.Causes) == 0 {
		// No details: the server's message, if any.
		s := "The request is invalid"
		if se.Message != "" {
			s += ": " + se.Message
		}
		return s, true
	}
	s := "The request is invalid"
	// kubectl names the kind without its group ("Deployment"); the
	// embedded cluster's details carry "Deployment.apps".
	kind, _, _ := strings.Cut(se.Kind, ".")
	switch {
	case kind != "" || se.Name != "":
		s = fmt.Sprintf("The %s %q is invalid", kind, se.Name)
	case se.Message != "" && len(se.Causes) == 0:
		s += ": " + se.Message
	}
	if len(se.Causes) == 0 {
		return s, true
	}
	var msgs []string
	seen := map[string]bool{}
	for _, c := range se.Causes {
		m := c.Field + ": " + c.Message
		if !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return s + ": " + msgs[0], true
	}
	var b strings.Builder
	b.WriteString(s + ": ")
	for _, m := range msgs {
		b.WriteString("\n* " + m)
	}
	return b.String(), true
}

// reportErrors prints errs to w as kubectl does and returns the exit
// error of the command: nil when errs is empty. One error alone is worded
// as commandErrorText words it.
func reportErrors(w io.Writer, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	if len(errs) == 1 {
		fmt.Fprintln(w, strings.TrimSuffix(commandErrorText(errs[0]), "\n"))
		return &ExitError{Code: 1}
	}
	seen := map[string]bool{}
	for _, err := range errs {
		t := errorText(err)
		if seen[t] {
			continue
		}
		seen[t] = true
		fmt.Fprintln(w, strings.TrimSuffix(t, "\n"))
	}
	return &ExitError{Code: 1}
}

// failOne prints one error as kubectl and returns the exit error.
func failOne(w io.Writer, err error) error { return reportErrors(w, []error{err}) }

// selectTargets finds the live objects a command acts on: those of -f
// files, or the kinds and names of args, or with -l or --all every object
// of the kinds matching. Objects that cannot be read are errors; the
// others are returned in order.
func selectTargets(ctx context.Context, g *Globals, sess *Session, ff flags.FilenameFlags, args []string, labelSel string, all bool) ([]gotObject, []error) {
	var out []gotObject
	var errs []error
	if ff.Given() {
		ff.Warnings = g.ErrOut
		objs, err := ff.Read(ctx, g.In)
		if err != nil {
			return nil, []error{err}
		}
		for _, mo := range objs {
			obj := mo.Obj
			gvk := schema.ParseGVK(printer.Str(obj, "apiVersion"), printer.Str(obj, "kind"))
			res, err := sess.Mapper().ResourceFor(gvk)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ns := ""
			if res.Namespaced {
				ns = printer.Str(obj, "metadata", "namespace")
				if ns == "" {
					ns = g.Ns()
				}
			}
			live, err := sess.Cluster.Get(ctx, res.GVK, ns, printer.Str(obj, "metadata", "name"))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, gotObject{res: res, obj: live})
		}
		return out, errs
	}
	if len(args) == 0 {
		return nil, []error{errors.New("you must specify the type of resource, or -f")}
	}
	reqs, err := resolveResourceArgs(sess.Mapper(), args)
	if err != nil {
		return nil, []error{err}
	}
	for _, r := range reqs {
		if len(r.Names) == 0 {
			if labelSel == "" && !all {
				return nil, []error{fmt.Errorf("resource(s) were provided, but no name was specified")}
			}
			if err := checkListSelector(r.Resource, listSelectors{labels: labelSel}); err != nil {
				return nil, []error{err}
			}
			items, err := listRequest(ctx, sess.Cluster, r.Resource, g.Ns(), listSelectors{labels: labelSel})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, it := range items {
				out = append(out, gotObject{res: r.Resource, obj: it, listed: true})
			}
			continue
		}
		for _, n := range r.Names {
			obj, err := sess.Cluster.Get(ctx, r.Resource.GVK, g.objectNamespace(r.Resource), n)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, gotObject{res: r.Resource, obj: obj})
		}
	}
	return out, errs
}

// gatherObjects reads what reqs ask for: every object of the kinds named
// without names (in namespace ns, "" for all, matching the label selector
// sel), and the named objects (in their namespace as -n gives it). A Get
// that fails goes through onGetErr, which returns the objects to use
// instead, or the error to report; a nil onGetErr reports every failure.
// A selector that cannot be used for a list ends the gathering (stop).
func (g *Globals) gatherObjects(ctx context.Context, c cluster.Reader, reqs []resourceRequest, ns string, sel listSelectors,
	onGetErr func(r resourceRequest, name string, err error) ([]gotObject, error)) (found []gotObject, errs []error, stop error) {
	for _, r := range reqs {
		if len(r.Names) == 0 {
			if err := checkListSelector(r.Resource, sel); err != nil {
				return nil, nil, err
			}
			items, err := listRequest(ctx, c, r.Resource, ns, sel)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, it := range items {
				found = append(found, gotObject{res: r.Resource, obj: it, listed: true})
			}
			continue
		}
		for _, n := range r.Names {
			obj, err := c.Get(ctx, r.Resource.GVK, g.objectNamespace(r.Resource), n)
			if err == nil {
				found = append(found, gotObject{res: r.Resource, obj: obj})
				continue
			}
			if onGetErr != nil {
				var instead []gotObject
				if instead, err = onGetErr(r, n, err); err == nil {
					found = append(found, instead...)
					continue
				}
			}
			errs = append(errs, err)
		}
	}
	return found, errs, nil
}

// shortNameWarning is kubectl's warning when a short name also names a
// resource of lower priority ("ev": Events of the core group and of
// events.k8s.io): `short name "ev" could also match lower priority
// resource events.events.k8s.io`; "" when it names one resource.
func shortNameWarning(m cluster.Mapper, name string, chosen cluster.Resource) string {
	seen := map[string]bool{chosen.GVK.Group + "/" + chosen.Plural: true}
	for _, r := range m.Resources() {
		key := r.GVK.Group + "/" + r.Plural
		if seen[key] {
			continue
		}
		for _, s := range r.ShortNames {
			if s == name {
				seen[key] = true
				gr := r.Plural
				if r.GVK.Group != "" {
					gr += "." + r.GVK.Group
				}
				return fmt.Sprintf("short name %q could also match lower priority resource %s", name, gr)
			}
		}
	}
	return ""
}

// warnShortNames prints shortNameWarning for the kinds of args (KIND,
// KIND1,KIND2 or KIND/NAME) on w, as kubectl does.
func warnShortNames(w io.Writer, m cluster.Mapper, args []string, reqs []resourceRequest) {
	var kinds []string
	if len(args) > 0 && !strings.Contains(args[0], "/") {
		kinds = strings.Split(args[0], ",")
	} else {
		for _, a := range args {
			k, _, _ := strings.Cut(a, "/")
			kinds = append(kinds, k)
		}
	}
	i := 0
	for _, k := range kinds {
		if k == "" {
			continue
		}
		if i < len(reqs) {
			if msg := shortNameWarning(m, k, reqs[i].Resource); msg != "" {
				printWarning(w, msg)
			}
		}
		i++
	}
}
