package apply

import (
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/mask"
	"github.com/konverge/konverge/normalize"
	"github.com/konverge/konverge/objref"
)

// Action is what an apply did to one object. Its value is the operation
// kubectl prints after the object's name.
type Action string

// The actions of apply, prune and delete.
const (
	// Created: the object did not exist and was created.
	Created Action = "created"
	// Configured: the object existed and was patched.
	Configured Action = "configured"
	// Unchanged: the object existed and needed no change (an empty patch,
	// nothing sent).
	Unchanged Action = "unchanged"
	// ServerSideApplied: the object was sent as a server-side apply patch.
	ServerSideApplied Action = "serverside-applied"
	// Pruned: the object was deleted because the input no longer holds it.
	Pruned Action = "pruned"
	// Deleted: the object was deleted (konverge delete).
	Deleted Action = "deleted"
)

// DryRun says whether and where a run is simulated, as kubectl's
// --dry-run flag.
type DryRun string

// The dry-run strategies. The zero value is DryRunNone.
const (
	// DryRunNone writes.
	DryRunNone DryRun = ""
	// DryRunClient computes every result locally and sends no write.
	DryRunClient DryRun = "client"
	// DryRunServer sends every write as a dry run: the server validates and
	// defaults and stores nothing.
	DryRunServer DryRun = "server"
)

// suffix is what kubectl appends to result lines in this mode.
func (d DryRun) suffix() string {
	switch d {
	case DryRunClient:
		return " (dry run)"
	case DryRunServer:
		return " (server dry run)"
	}
	return ""
}

// Result is what happened to one object.
//
// The values of a Secret are masked in Object, Live and Patch (inside
// the last-applied annotation too), as everywhere apply, diff and their
// errors print or serialise an object (see the package documentation);
// Unmasked returns them in plaintext.
type Result struct {
	// Ref names the object.
	Ref objref.Ref
	// Action is what was done.
	Action Action
	// DryRun is the mode the result was computed in.
	DryRun DryRun
	// Drift reports that the object differs after the action from what
	// it was before (Created, Pruned and Deleted always do): Live and
	// Object compared without the metadata the server writes and status
	// (normalize.Object). A Configured result without Drift is a patch
	// that changed nothing (kubectl prints "configured" for a re-applied
	// Secret written with stringData).
	Drift bool
	// Object is the object after the action, as the server returned it
	// (with DryRunClient, as computed locally); for Pruned and Deleted, the
	// object as it was before. It is what -o yaml|json prints (Unmasked).
	Object map[string]any
	// Live is the object before the action: nil for Created.
	Live map[string]any
	// Patch is the patch sent for Configured (of type PatchType), nil
	// otherwise.
	Patch     map[string]any
	PatchType cluster.PatchType
	// Source is where the object was read from; zero for pruned objects.
	Source manifest.Source
	// Warnings are what kubectl prints on standard error about the object
	// ("Warning: resource deployments/web is missing the ... annotation
	// ..."), one line each, without the trailing newline.
	Warnings []string

	// plain holds a Secret's Object, Live and Patch unmasked; a pointer,
	// so that printing a Result with %+v shows no value.
	plain *plaintext
}

// plaintext are the unmasked objects of a Secret's Result or Change.
type plaintext struct {
	object, live, patch map[string]any
}

// String returns kubectl's result line: "deployment.apps/nginx created",
// "configmap/x unchanged (server dry run)".
func (r Result) String() string {
	return r.Ref.String() + " " + string(r.Action) + r.DryRun.suffix()
}

// Changed reports whether the action changed (or, in a dry run, would
// change) the object: a create or a deletion, or Drift. Before Drift, it
// was true for every action but Unchanged, which counted a patch that
// changes nothing; Action != Unchanged says that.
func (r Result) Changed() bool {
	switch r.Action {
	case Unchanged:
		return false
	case Created, Pruned, Deleted:
		return true
	}
	return r.Drift
}

// Unmasked returns the result with a Secret's values in plaintext in
// Object, Live and Patch: for a caller that prints the object as the
// server holds it (kubectl apply -o yaml) or writes it elsewhere. Other
// results are returned as they are.
func (r Result) Unmasked() Result {
	if r.plain == nil {
		return r
	}
	r.Object, r.Live, r.Patch = r.plain.object, r.plain.live, r.plain.patch
	r.plain = nil
	return r
}

// finish settles the results of a run: their Drift, and a Secret's values
// masked (kept for Unmasked). With Options.OnResult they were settled and
// handed over as they came, and there are none.
func (r *run) finish() []Result {
	for i := range r.results {
		r.results[i] = r.settle(r.results[i])
	}
	return r.results
}

// settle sets a result's Drift and masks a Secret's values.
func (r *run) settle(res Result) Result {
	res.Drift = resultDrift(res, r.opts.MetadataOnly)
	return maskResult(res)
}

// add records the result of an input object: its uid as visited, so that
// prune leaves the object alone, and the result emitted.
func (r *run) add(res Result) {
	if uid := objref.UID(res.Object); uid != "" {
		r.visited.UIDs[uid] = true
	}
	r.emit(res)
}

// emit keeps a result for finish or, with Options.OnResult, settles it
// and hands it over.
func (r *run) emit(res Result) {
	if r.opts.OnResult == nil {
		r.results = append(r.results, res)
		return
	}
	r.opts.OnResult(r.settle(res))
}

// resultDrift reports whether a result's object differs from its live
// one.
func resultDrift(r Result, metadataOnly bool) bool {
	switch r.Action {
	case Unchanged:
		return false
	case Created, Pruned, Deleted:
		return true
	}
	if r.Live == nil || r.Object == nil {
		return true
	}
	if metadataOnly {
		// Object may be metadata alone: a write that changes nothing
		// leaves the resourceVersion.
		rv := func(o map[string]any) any { return objref.Metadata(o)["resourceVersion"] }
		return rv(r.Live) != rv(r.Object)
	}
	same, err := normalize.Equal(r.Live, r.Object, normalize.Options{})
	return err != nil || !same
}

// maskResult masks a Secret's result, keeping the plaintext for Unmasked;
// a result already masked is returned as it is.
func maskResult(r Result) Result {
	if r.plain != nil || !isSecretResult(r) {
		return r
	}
	r.plain = &plaintext{object: r.Object, live: r.Live, patch: r.Patch}
	switch {
	case r.Live == nil:
		r.Object = mask.Object(r.Object)
	case r.Object == nil:
		r.Live = mask.Object(r.Live)
	default:
		r.Live, r.Object = mask.Pair(r.Live, r.Object)
	}
	r.Patch = mask.Patch(r.Patch)
	return r
}

// isSecretResult reports a result about a v1 Secret.
func isSecretResult(r Result) bool {
	return isSecretRef(r.Ref) || mask.IsSecret(r.Object) || mask.IsSecret(r.Live)
}
