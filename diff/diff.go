package diff

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/mask"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// Options tune a Differ. The zero value diffs as kubectl diff does without
// flags, in namespace "default", with Secret values masked.
type Options struct {
	// Options are the options of the apply the diff shows, the same
	// apply.Options a tool gives Plan and Apply: namespace, field
	// manager, server-side, selector, prune, ApplySet, ignore rules,
	// concurrency and progress mean here what they mean there. The diff
	// runs the apply as a server dry run whatever DryRun says, with
	// MetadataOnly off. Prune also shows, as deletions, the objects
	// apply --prune would delete: with Selector those it selects, without
	// it all that carry the last-applied annotation (kubectl diff
	// --prune); an ApplySet is diffed as apply --applyset writes it (the
	// merged objects carry its label, so that objects applied with the set
	// do not all show as changed), and with Prune its members that the
	// input no longer holds show as deletions. OnResult is not called:
	// the results are the report's.
	apply.Options

	// ShowSecrets shows Secret values instead of masking them.
	ShowSecrets bool
	// ShowManagedFields keeps metadata.managedFields.
	ShowManagedFields bool

	// Namespace and EnforceNamespace are apply's (kubectl's -n).
	//
	// Deprecated: set them in Options (apply.Options); a value set here
	// overrides that one.
	Namespace        string
	EnforceNamespace bool
	// FieldManager, ServerSide and ForceConflicts are apply's.
	//
	// Deprecated: set them in Options (apply.Options); a value set here
	// overrides that one.
	FieldManager   string
	ServerSide     bool
	ForceConflicts bool
	// Selector keeps only the input objects whose labels match it, and
	// selects the objects Prune shows.
	//
	// Deprecated: set it in Options (apply.Options); a value set here
	// overrides that one.
	Selector string
	// Prune shows the objects apply --prune would delete as deletions.
	//
	// Deprecated: set it in Options (apply.Options); a value set here
	// overrides that one.
	Prune bool
	// PruneAllowlist are the kinds Prune looks at.
	//
	// Deprecated: set it in Options (apply.Options); a value set here
	// overrides that one.
	PruneAllowlist []schema.GVK
	// ApplySet names the ApplySet the objects are applied as members of.
	//
	// Deprecated: set it in Options (apply.Options); a value set here
	// overrides that one.
	ApplySet string
	// Ignore are fields left alone, as apply leaves them.
	//
	// Deprecated: set it in Options (apply.Options); a value set here
	// overrides that one.
	Ignore []apply.IgnoreRule
	// Concurrency and Progress are apply's.
	//
	// Deprecated: set them in Options (apply.Options); a value set here
	// overrides that one.
	Concurrency int
	Progress    func(apply.Progress)
}

// applyOptions returns the apply options of the diff: the embedded
// apply.Options with the deprecated fields that are set over them.
func (o Options) applyOptions() apply.Options {
	a := o.Options
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&a.Namespace, o.Namespace)
	set(&a.FieldManager, o.FieldManager)
	set(&a.Selector, o.Selector)
	set(&a.ApplySet, o.ApplySet)
	a.EnforceNamespace = a.EnforceNamespace || o.EnforceNamespace
	a.ServerSide = a.ServerSide || o.ServerSide
	a.ForceConflicts = a.ForceConflicts || o.ForceConflicts
	a.Prune = a.Prune || o.Prune
	if o.PruneAllowlist != nil {
		a.PruneAllowlist = o.PruneAllowlist
	}
	if o.Ignore != nil {
		a.Ignore = o.Ignore
	}
	if o.Concurrency != 0 {
		a.Concurrency = o.Concurrency
	}
	if o.Progress != nil {
		a.Progress = o.Progress
	}
	a.DryRun, a.MetadataOnly = apply.DryRunServer, false
	a.OnResult = nil
	return a
}

// Action is what applying would do to an object.
type Action string

// The actions of a diff.
const (
	Create Action = "create"
	Update Action = "update"
	Delete Action = "delete"
	None   Action = "none"
)

// Entry is one object of a diff.
type Entry struct {
	// Ref names the object.
	Ref objref.Ref
	// Source is where it was read from; zero for pruned objects.
	Source manifest.Source
	// Action is what applying would change: None when Live and Merged are
	// equal, even if apply would send a patch (that changes nothing on
	// the server; apply prints "configured" for it, as kubectl).
	Action Action
	// Live is the object as it is, nil when it does not exist; Merged is
	// the object as applying would leave it (the server's answer to a dry
	// run, defaults included), nil when it would be deleted. Both are as
	// kubectl diff shows them (see the package documentation): with the
	// resourceVersion, generation, uid, creationTimestamp and status the
	// server returns (a dry-run create has no resourceVersion), without
	// metadata.managedFields unless Options.ShowManagedFields, and with
	// Secret values masked unless Options.ShowSecrets. To compare them
	// yourself, normalize.Object leaves out what the server writes.
	Live, Merged map[string]any
	// Patch is the patch apply would send (Secret values masked), nil
	// when it would send none, and possibly set for None; PatchType its
	// media type.
	Patch     map[string]any
	PatchType cluster.PatchType
	// Warnings are apply's warnings about the object (kubectl diff prints
	// them on standard error).
	Warnings []string
}

// Name is the entry's file name in kubectl's LIVE and MERGED directories:
// "apps.v1.Deployment.default.web", "v1.Namespace..team".
func (e Entry) Name() string {
	return string(e.appendName(make([]byte, 0, len(e.Ref.Group)+len(e.Ref.Version)+len(e.Ref.Kind)+len(e.Ref.Namespace)+len(e.Ref.Name)+4)))
}

// appendName appends Name to dst.
func (e Entry) appendName(dst []byte) []byte {
	if e.Ref.Group != "" {
		dst = append(dst, e.Ref.Group...)
		dst = append(dst, '.')
	}
	dst = append(dst, e.Ref.Version...)
	dst = append(dst, '.')
	dst = append(dst, e.Ref.Kind...)
	dst = append(dst, '.')
	dst = append(dst, e.Ref.Namespace...)
	dst = append(dst, '.')
	return append(dst, e.Ref.Name...)
}

// Report is the result of a diff: one entry per object, in the order of
// their names (the order diff -r shows kubectl's files in).
type Report struct {
	Entries []Entry
}

// HasDifferences reports whether applying would change anything.
func (r *Report) HasDifferences() bool {
	for _, e := range r.Entries {
		if e.Action != None {
			return true
		}
	}
	return false
}

// ExitCode maps a diff's outcome to kubectl diff's exit status: 0 when
// there are no differences, 1 when there are, 2 when err is not nil.
func ExitCode(r *Report, err error) int {
	switch {
	case err != nil:
		return 2
	case r != nil && r.HasDifferences():
		return 1
	}
	return 0
}

// Differ computes what applying a set of objects would change.
type Differ struct {
	c    cluster.Interface
	opts Options
	// serverSide is the diff of a server-side apply.
	serverSide bool
}

// New returns a Differ against c.
func New(c cluster.Interface, opts Options) *Differ {
	return &Differ{c: c, opts: opts, serverSide: opts.applyOptions().ServerSide}
}

// Run computes the diff of objs against the cluster: exactly what
// apply.Applier.Apply would do, as a server dry run (on the embedded
// cluster, writes rolled back, so that objects in a namespace or of a CRD
// the input creates diff too). Errors are apply's: every object's problems,
// and no report.
func (d *Differ) Run(ctx context.Context, objs []manifest.Object) (*Report, error) {
	opts, showPruned := d.dryRunOptions()
	results, err := apply.New(d.c, opts).Apply(ctx, objs)
	if err != nil {
		return nil, err
	}
	r := &Report{Entries: make([]Entry, 0, len(results))}
	for _, res := range results {
		if res.Action == apply.Pruned && !showPruned {
			continue
		}
		r.Entries = append(r.Entries, d.entry(res))
	}
	slices.SortStableFunc(r.Entries, func(a, b Entry) int { return strings.Compare(a.Name(), b.Name()) })
	return r, nil
}

// dryRunOptions are the options of the apply a diff runs, and whether the
// objects it prunes are part of the report.
func (d *Differ) dryRunOptions() (opts apply.Options, showPruned bool) {
	opts = d.opts.applyOptions()
	showPruned = opts.Prune
	// The entries leave the live objects' managedFields out.
	opts.LiveWithoutManagedFields = opts.LiveWithoutManagedFields || !d.opts.ShowManagedFields
	switch {
	case opts.ApplySet != "":
		// An ApplySet is applied with prune; without Prune the deletions
		// are left out of the report.
		opts.Prune, opts.PruneAll = true, false
	case opts.Prune && opts.Selector == "":
		opts.PruneAll = true
	}
	return opts, showPruned
}

// entry turns an apply result into a diff entry.
func (d *Differ) entry(res apply.Result) Entry {
	// Secrets are masked below, kubectl diff's way (or shown, with
	// ShowSecrets): from the plaintext.
	res = res.Unmasked()
	e := Entry{Ref: res.Ref, Source: res.Source, PatchType: res.PatchType}
	switch res.Action {
	case apply.Created:
		e.Action, e.Merged = Create, res.Object
	case apply.Pruned:
		e.Action, e.Live = Delete, res.Object
	case apply.Unchanged:
		e.Action, e.Live, e.Merged = None, res.Live, res.Object
	default:
		e.Action, e.Live, e.Merged, e.Patch = Update, res.Live, res.Object, res.Patch
	}
	e.Warnings = res.Warnings
	if e.Live != nil {
		e.Live = d.clean(e.Live)
	}
	// equalKnown is set when kubectlMerged has found whether Live and
	// Merged are equal (equal).
	equalKnown, equal := false, false
	switch {
	case !d.serverSide && e.Merged != nil && e.Action != Delete:
		e.Merged, equalKnown, equal = d.kubectlMerged(e.Merged, e.Live)
		e.Warnings = slices.DeleteFunc(slices.Clone(e.Warnings), func(w string) bool {
			return strings.Contains(w, "annotation which is required by kubectl apply")
		})
	case e.Merged != nil:
		e.Merged = d.clean(e.Merged)
	}
	// What changes is what differs between the two versions, as kubectl
	// diff compares its two directories: a patch that changes nothing on
	// the server (a quantity the server writes in its canonical form, a
	// null for a field that is absent, a Secret's stringData, a list
	// replaced by an equal one) is no difference.
	if e.Action == Update || res.Action == apply.ServerSideApplied {
		switch {
		case e.Live == nil:
			e.Action = Create
		case equalKnown && equal, !equalKnown && value.Equal(e.Live, e.Merged):
			e.Action = None
		default:
			e.Action = Update
		}
	}
	if isSecret(e.Ref) && !d.opts.ShowSecrets {
		e.Live, e.Merged = mask.Pair(e.Live, e.Merged)
		e.Patch = mask.Patch(e.Patch)
	}
	return e
}

// kubectlMerged returns merged as kubectl diff shows it beside live (nil
// for a create), cleaned: with live's last-applied annotation (kubectl
// diff merges the configuration without it: the annotation stays as live
// has it, none on a create), and with live's generation if that makes it
// equal to live (the generation does not move for the annotation alone; a
// Deployment's does for any change of its annotations). merged is not
// modified.
//
// It copies merged's top level and metadata once, where clean,
// keepLastApplied and objref.WithMetadata would each copy them, and it
// reports, when it can tell (known), whether the result equals live:
// merged with live's generation is equal to live exactly when the result
// is (value.Equal is symmetric), unless live's generation is something
// other than an int64 or absent.
func (d *Differ) kubectlMerged(merged, live map[string]any) (out map[string]any, known, equal bool) {
	md, ok := merged["metadata"].(map[string]any)
	if !ok {
		out = keepLastApplied(d.clean(merged), live)
		if live != nil {
			gen := objref.Metadata(live)["generation"]
			if g := objref.WithMetadata(out, "generation", gen); value.Equal(g, live) {
				out = g
			}
		}
		return out, false, false
	}
	out = maps.Clone(merged)
	nmd := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" || d.opts.ShowManagedFields {
			nmd[k] = v
		}
	}
	out["metadata"] = nmd
	want, has := lastApplied(live)
	got, had := lastApplied(merged)
	if has != had || want != got {
		old, _ := nmd["annotations"].(map[string]any)
		if anns := withLastApplied(old, want, has); anns == nil {
			delete(nmd, "annotations")
		} else {
			nmd["annotations"] = anns
		}
	}
	if live == nil {
		return out, false, false
	}
	lmd, isMap := live["metadata"].(map[string]any)
	gen, hasGen := lmd["generation"]
	_, isInt := gen.(int64)
	known = isMap && (!hasGen || isInt)
	old, hadGen := nmd["generation"]
	if gen == nil {
		delete(nmd, "generation")
	} else {
		nmd["generation"] = gen
	}
	if value.Equal(out, live) {
		return out, known, true
	}
	if hadGen {
		nmd["generation"] = old
	} else {
		delete(nmd, "generation")
	}
	return out, known, false
}

// lastApplied is obj's last-applied annotation, as
// objref.Annotations(obj)[lastapplied.Annotation] has it.
func lastApplied(obj map[string]any) (string, bool) {
	anns, _ := objref.Metadata(obj)["annotations"].(map[string]any)
	s, ok := anns[lastapplied.Annotation].(string)
	return s, ok
}

// keepLastApplied returns merged with live's last-applied annotation
// (none when live is nil or has none). merged is not modified.
func keepLastApplied(merged, live map[string]any) map[string]any {
	want, has := objref.Annotations(live)[lastapplied.Annotation]
	got, had := objref.Annotations(merged)[lastapplied.Annotation]
	if has == had && want == got {
		return merged
	}
	old, _ := objref.Metadata(merged)["annotations"].(map[string]any)
	if anns := withLastApplied(old, want, has); anns != nil {
		return objref.WithMetadata(merged, "annotations", anns)
	}
	return objref.WithMetadata(merged, "annotations", nil)
}

// withLastApplied returns a copy of anns with the last-applied annotation
// set to want (removed when has is false), nil when nothing is left. anns
// is not modified.
func withLastApplied(anns map[string]any, want any, has bool) map[string]any {
	out := make(map[string]any, len(anns)+1)
	for k, v := range anns {
		out[k] = v
	}
	if has {
		out[lastapplied.Annotation] = want
	} else {
		delete(out, lastapplied.Annotation)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// clean returns obj without metadata.managedFields (unless
// ShowManagedFields), as kubectl diff prints objects. obj is not modified.
func (d *Differ) clean(obj map[string]any) map[string]any {
	md := objref.Metadata(obj)
	if _, ok := md["managedFields"]; !ok || d.opts.ShowManagedFields {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	nmd := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			nmd[k] = v
		}
	}
	out["metadata"] = nmd
	return out
}

// isSecret reports a v1 Secret, whose values kubectl diff masks (it checks
// the version and kind only).
func isSecret(ref objref.Ref) bool {
	return ref.Version == "v1" && ref.Kind == "Secret"
}

func (e Entry) String() string {
	return fmt.Sprintf("%s %s", e.Ref, e.Action)
}
