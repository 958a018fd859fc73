package apply

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// FieldManagerLastApplied is the manager kubectl gives the last-applied
// annotation when "kubectl" first applies an object server-side, so that
// the annotation stays for a later client-side apply.
const FieldManagerLastApplied = "kubectl-last-applied"

// ConflictError is a server-side apply that the server refused because
// other managers own fields that the configuration sets to other values.
// It prints as kubectl prints it: the server's message, then how to
// resolve the conflicts. Apply again with ForceConflicts to take the fields
// over, or leave them out of the configuration.
type ConflictError struct {
	// Conflicts are the fields and their managers, in the server's order.
	Conflicts []FieldConflict
	// Err is the server's answer, a Conflict.
	Err *cluster.StatusError
}

// FieldConflict is one field another manager owns.
type FieldConflict struct {
	// Manager is the other manager ("kubectl-client-side-apply").
	Manager string
	// Operation is "Apply" or "Update".
	Operation string
	// APIVersion is the version an Update was made in ("apps/v1"); ""
	// for an Apply.
	APIVersion string
	// Subresource is the subresource an Update was made through ("scale").
	Subresource string
	// Field is the field's path as the server sends it, in
	// structured-merge-diff syntax (`.spec.template.spec.containers[name="app"].image`);
	// Path returns it as a value.Path.
	Field string

	// path is Field resolved against the applied configuration, in
	// value.Path's spelling, where the dots of a key (a label's) make
	// Field read as other fields; "" where Field reads right.
	path string
}

// Path returns the field as a value.Path, the type and spelling of
// Change.Paths, ObjectError.Path and IgnoreRule paths
// (`spec.template.spec.containers[name="app"].image`, with Pointer for a
// JSON pointer); nil when Field does not parse.
func (f FieldConflict) Path() value.Path {
	s := f.path
	if s == "" {
		s = f.Field
	}
	p, err := value.ParsePath(s)
	if err != nil || s == "" {
		return nil
	}
	return p
}

func (e *ConflictError) Error() string { return e.Err.Message + "\n" + conflictHelp }

// Unwrap returns the server's answer.
func (e *ConflictError) Unwrap() error { return e.Err }

// Managers returns the managers of the conflicts, each once, in order of
// appearance.
func (e *ConflictError) Managers() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range e.Conflicts {
		if !seen[c.Manager] {
			seen[c.Manager] = true
			out = append(out, c.Manager)
		}
	}
	return out
}

// conflictError returns the ConflictError of a server-side apply refused
// with field manager conflicts, nil for any other error.
func conflictError(err error, config map[string]any) *ConflictError {
	var se *cluster.StatusError
	if !errors.As(err, &se) || se.Reason != cluster.ReasonConflict {
		return nil
	}
	ce := &ConflictError{Err: se}
	for _, c := range se.Causes {
		if c.Type != string(metav1.CauseTypeFieldManagerConflict) {
			continue
		}
		fc, ok := parseConflict(c.Message)
		if !ok {
			continue
		}
		fc.Field = c.Field
		if p, err := value.ParsePathIn(c.Field, config); err == nil && len(p) > 0 && p.String() != fc.Path().String() {
			fc.path = p.String() // only where the dots of a key mislead
		}
		ce.Conflicts = append(ce.Conflicts, fc)
	}
	if len(ce.Conflicts) == 0 {
		return nil
	}
	return ce
}

// parseConflict reads a cause of kube-apiserver's conflict error:
// `conflict with "kubectl"`, `conflict with "kubectl" with subresource
// "scale" using apps/v1`, `conflict with "m" using v1 at 2026-...`.
func parseConflict(msg string) (FieldConflict, bool) {
	rest, ok := strings.CutPrefix(msg, "conflict with ")
	if !ok {
		return FieldConflict{}, false
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return FieldConflict{}, false
	}
	fc := FieldConflict{Operation: string(metav1.ManagedFieldsOperationApply)}
	fc.Manager, _ = strconv.Unquote(q)
	rest = rest[len(q):]
	if r, ok := strings.CutPrefix(rest, " with subresource "); ok {
		if q, err := strconv.QuotedPrefix(r); err == nil {
			fc.Subresource, _ = strconv.Unquote(q)
			rest = r[len(q):]
		}
	}
	if r, ok := strings.CutPrefix(rest, " using "); ok {
		fc.Operation = string(metav1.ManagedFieldsOperationUpdate)
		fc.APIVersion, _, _ = strings.Cut(r, " ")
	}
	return fc, true
}

// serverSide sends the object as a server-side apply patch, then does what
// kubectl apply --server-side does after: with the field manager "kubectl",
// it keeps the last-applied annotation under a manager of its own, and it
// moves the fields of client-side apply's managers to the applier (client-go's
// csaupgrade) and applies again, so that fields the configuration dropped
// while the object was applied client-side are removed.
func (r *run) serverSide(ctx context.Context, c cluster.Interface, p plan, mode writeMode, res Result) (Result, error) {
	it := p.it
	out, err := c.Patch(ctx, it.ref.GVK, it.ref.Namespace, it.ref.Name, cluster.ApplyPatchType, p.data, r.serverSideOptions(mode)...)
	if err != nil {
		var se *cluster.StatusError
		if errors.As(err, &se) && se.Code == 415 {
			//lint:ignore ST1005 kubectl apply --server-side's message, word for word
			return res, fmt.Errorf("Server-side apply not available on the server: (%w)", err)
		}
		if ce := conflictError(err, it.config); ce != nil {
			return res, ce
		}
		return res, err
	}
	if saved, err := r.saveLastApplied(ctx, c, it.ref, out, mode); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("Warning: failed to migrate kubectl.kubernetes.io/last-applied-configuration for Server-Side Apply. This is non-fatal and will be retried next time you apply. Error: %v", err))
	} else {
		out = saved
		migrated, upgraded, err := r.migrateToServerSide(ctx, c, it.ref, out, mode)
		switch {
		case err != nil:
			res.Warnings = append(res.Warnings, fmt.Sprintf("Warning: server rejected managed fields migration to Server-Side Apply. This is non-fatal and will be retried next time you apply. Error: %v", err))
		case migrated:
			out = upgraded
			again, err := c.Patch(ctx, it.ref.GVK, it.ref.Namespace, it.ref.Name, cluster.ApplyPatchType, p.data, r.serverSideOptions(mode)...)
			if err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("Warning: failed to re-apply configuration after performing Server-Side Apply migration. This is non-fatal and will be retried next time you apply. Error: %v", err))
			} else {
				out = again
			}
		}
	}
	if r.rollback {
		// What a dry run returns: the object at its live revision, none
		// for a create.
		var rv any
		if p.live != nil {
			rv = objref.ResourceVersion(p.live)
		}
		out = objref.WithMetadata(out, "resourceVersion", rv)
	}
	res.Action, res.Object = ServerSideApplied, out
	r.warnIfDeleting(&res)
	return res, nil
}

// lastAppliedPath is the field of the last-applied annotation.
var lastAppliedPath = fieldpath.NewSet(fieldpath.MakePathOrDie("metadata", "annotations", lastapplied.Annotation))

// saveLastApplied applies the object's last-applied annotation alone as
// FieldManagerLastApplied, when the applier is "kubectl", the object has
// the annotation and no applier owns it yet: kubectl's
// saveLastApplyAnnotationIfNecessary. It returns the object as it is now.
func (r *run) saveLastApplied(ctx context.Context, c cluster.Interface, ref objref.Ref, obj map[string]any, mode writeMode) (map[string]any, error) {
	if r.opts.fieldManager() != FieldManagerServerSideApply {
		return obj, nil
	}
	ann, ok := objref.Annotations(obj)[lastapplied.Annotation]
	if !ok {
		return obj, nil
	}
	u := &unstructured.Unstructured{Object: obj}
	if owners := csaupgrade.FindFieldsOwners(u.GetManagedFields(), metav1.ManagedFieldsOperationApply, lastAppliedPath); len(owners) > 0 {
		return obj, nil
	}
	md := map[string]any{"name": ref.Name, "annotations": map[string]any{lastapplied.Annotation: ann}}
	if ref.Namespace != "" {
		md["namespace"] = ref.Namespace
	}
	data, err := value.Encode(map[string]any{"apiVersion": ref.GVK.APIVersion(), "kind": ref.GVK.Kind, "metadata": md})
	if err != nil {
		return obj, err
	}
	opts := []cluster.PatchOption{cluster.FieldOwner(FieldManagerLastApplied), cluster.Subresource(r.opts.Subresource)}
	if mode == writeDryRun {
		opts = append(opts, cluster.DryRunAll)
	}
	return c.Patch(ctx, ref.GVK, ref.Namespace, ref.Name, cluster.ApplyPatchType, data, opts...)
}

// migrateToServerSide moves the fields of the Update managers that own the
// last-applied annotation (client-side apply's) to the applier, with a JSON
// patch of managedFields: kubectl's migrateToSSAIfNecessary. It reports
// whether it did, and the object as it is now.
func (r *run) migrateToServerSide(ctx context.Context, c cluster.Interface, ref objref.Ref, obj map[string]any, mode writeMode) (bool, map[string]any, error) {
	manager := r.opts.fieldManager()
	for attempt := 0; ; attempt++ {
		u := &unstructured.Unstructured{Object: obj}
		names := sets.New[string]()
		for _, e := range csaupgrade.FindFieldsOwners(u.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, lastAppliedPath) {
			names.Insert(e.Manager)
		}
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(u, names, manager)
		if err != nil || patch == nil {
			return false, obj, err
		}
		opts := []cluster.PatchOption{cluster.FieldOwner(manager), cluster.Subresource(r.opts.Subresource)}
		if mode == writeDryRun {
			opts = append(opts, cluster.DryRunAll)
		}
		out, err := c.Patch(ctx, ref.GVK, ref.Namespace, ref.Name, cluster.JSONPatchType, patch, opts...)
		if err == nil {
			return true, out, nil
		}
		if !cluster.IsConflict(err) || attempt+1 >= maxPatchRetry {
			return false, obj, err
		}
		if obj, err = c.Get(ctx, ref.GVK, ref.Namespace, ref.Name); err != nil {
			return false, obj, err
		}
	}
}

// serverSideOptions are the options of the apply patch: kubectl's, with
// the subresource (kubectl sends the later patches of an apply to it too).
func (r *run) serverSideOptions(mode writeMode) []cluster.PatchOption {
	return append(r.patchOptions(mode), cluster.Subresource(r.opts.Subresource))
}
