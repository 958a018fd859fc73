package apply

import (
	"errors"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

// FieldManagerClientSideApply is the field manager of client-side apply,
// kubectl's default.
const FieldManagerClientSideApply = "kubectl-client-side-apply"

// FieldManagerServerSideApply is the field manager of server-side apply,
// kubectl's default.
const FieldManagerServerSideApply = "kubectl"

// Options tune an Applier. The zero value applies client-side, as kubectl
// apply does without flags, into namespace "default". The same Options
// serve Plan, Apply and ApplyPlan, and diff.Options embeds them, so that
// a tool keeps one value for all of them.
type Options struct {
	// Namespace is given to namespaced objects that name none; "" means
	// "default".
	Namespace string
	// EnforceNamespace makes Namespace a requirement, as kubectl's
	// -n/--namespace flag does: a namespaced object that names another
	// namespace is an error, and a namespaced ApplySet parent lives in
	// Namespace.
	EnforceNamespace bool

	// DryRun simulates the apply: DryRunClient computes results without
	// writing, DryRunServer has the server validate and default every write
	// without storing it.
	DryRun DryRun
	// FieldManager names the writer in the object's managed fields; ""
	// means FieldManagerClientSideApply (FieldManagerServerSideApply with
	// ServerSide).
	FieldManager string
	// NoOverwrite refuses to change fields that someone else changed since
	// the last apply (kubectl apply --overwrite=false): the object fails
	// with a *merge.ConflictError naming them. Custom resources, which get
	// JSON merge patches, are not checked, as with kubectl.
	NoOverwrite bool
	// Force deletes and re-creates an object whose patch the server refuses
	// as Invalid or keeps failing with a Conflict (kubectl apply --force).
	Force bool
	// ForceTimeout is how long Force waits for the deleted object to go;
	// 0 means one look, as kubectl's default --timeout=0s.
	ForceTimeout time.Duration

	// ServerSide sends each object as a server-side apply patch
	// (kubectl apply --server-side); see the package documentation.
	ServerSide bool
	// ForceConflicts takes over fields other managers own, with ServerSide.
	ForceConflicts bool
	// Subresource applies to a subresource of the objects ("status"), with
	// ServerSide (kubectl apply --server-side --subresource).
	Subresource string

	// Selector keeps only the input objects whose labels match it (kubectl
	// apply -l), and with Prune selects the objects to prune.
	Selector string
	// Prune deletes the objects that carry the last-applied annotation, match
	// Selector (or, with PruneAll, any labels), are of a kind in
	// PruneAllowlist and are not in the input: kubectl apply --prune.
	// With ApplySet, it deletes instead the members of the set that are not
	// in the input.
	Prune bool
	// PruneAll allows Prune without Selector (kubectl's --all).
	PruneAll bool
	// PruneAllowlist are the kinds Prune looks at; nil means kubectl's
	// default list (prune.DefaultAllowlist).
	PruneAllowlist []schema.GVK
	// ApplySet names the ApplySet parent, as kubectl's
	// --applyset=[RESOURCE[.GROUP]/]NAME: a Secret by default. Every
	// applied object is labelled as a member, and Prune deletes the
	// members that are not in the input. It requires Prune, and a
	// namespaced parent (a Secret, a ConfigMap) requires
	// EnforceNamespace, with Namespace naming the parent's namespace, as
	// kubectl requires -n (see the package documentation).
	ApplySet string
	// ToolingVersion is the version in the ApplySet tooling annotation
	// ("konverge/<version>"); "" means the module's version.
	ToolingVersion string

	// FieldValidation is sent with every write: how the server treats
	// fields the kinds do not have (cluster.FieldValidationStrict, as
	// kubectl's --validate=strict sends; "" leaves the server's default,
	// Warn).
	FieldValidation cluster.FieldValidation
	// Warn receives warnings that concern no one object (pruning's
	// deprecation notice), one line each. Nil drops them.
	Warn func(msg string)

	// CRDTimeout is how long an apply waits for a created
	// CustomResourceDefinition to be Established before it applies what
	// follows; 0 means a minute.
	CRDTimeout time.Duration
	// Concurrency is how many requests an apply has in flight at once on
	// a cluster that is not a Batcher (reads, dry runs, writes, prune
	// lists and deletions); 0 means DefaultConcurrency, 1 one at a time.
	Concurrency int
	// MetadataOnly asks, with every write of a client-side apply, for the
	// metadata of the result alone (cluster.MetadataOnly): Result.Object
	// may then hold only the object's apiVersion, kind and metadata, which
	// costs a real API server less to answer. For callers that print or
	// keep only names, uids and resourceVersions.
	MetadataOnly bool
	// GiveObjects gives Apply the objects it is passed, for a caller that
	// read them for this one Apply and never uses them again (the CLI):
	// Apply may then hand them to the cluster's creates (cluster.HandOver),
	// which change them, where it otherwise leaves them as they are. Not
	// for objects a manifest.Cache keeps.
	GiveObjects bool
	// LiveWithoutManagedFields tells Apply that the caller does not read
	// the metadata.managedFields of Result.Live (nor of Result.Object,
	// which is Live for an unchanged object): the embedded cluster then
	// does not decode them when it reads the live objects of a client-side
	// apply, where they are most of an object's fields. Without effect on
	// a server-side apply and with ignore rules by manager, which read
	// them.
	LiveWithoutManagedFields bool
	// Progress, when set, is called each time one more object of a step
	// is done, from the goroutine that did it, one call at a time.
	Progress func(Progress)
	// OnResult, when set, receives each object's Result, settled as
	// Apply would return it (Drift set, a Secret's values masked), instead
	// of Apply collecting them: Apply then returns no results, and a caller
	// that keeps only what it needs of each result (a diff its text) holds
	// far less than the whole list. On a Batcher each result is handed over
	// as soon as its write is made, in the order of the writes (namespaces
	// and CRDs first); elsewhere after all writes, in input order; the
	// pruned objects come last. Calls are made one at a time. When Apply
	// returns an error, the results handed over may be of writes that were
	// undone or never made.
	OnResult func(Result)

	// Ignore are fields that plan, diff and apply leave alone on the
	// objects that exist: neither reported, nor overwritten, nor deleted
	// (see IgnoreRule).
	Ignore []IgnoreRule

	// RetryBackoff is the pause before the second and later retries of a
	// patch that failed with a Conflict; 0 means a second, as kubectl.
	RetryBackoff time.Duration
}

// Progress is how far an apply is.
type Progress struct {
	// Step is what is under way: StepCheck or StepApply.
	Step string
	// Done of Total objects of the step are done.
	Done, Total int
}

// The steps of an apply that report Progress.
const (
	// StepCheck: the writes are tried as server dry runs before any is
	// made (on a cluster that is not a Batcher).
	StepCheck = "checking"
	// StepApply: the objects are applied.
	StepApply = "applying"
)

// OptionsError is a combination of options that kubectl refuses; Err
// is kubectl's message ("--force-conflicts only works with --server-side").
type OptionsError struct{ Err error }

func (e *OptionsError) Error() string { return "apply: " + e.Err.Error() }

// Unwrap returns kubectl's message.
func (e *OptionsError) Unwrap() error { return e.Err }

// check reports flag combinations kubectl refuses, with its messages.
func (o Options) check() error {
	switch {
	case o.ForceConflicts && !o.ServerSide:
		return errors.New("--force-conflicts only works with --server-side")
	case o.DryRun == DryRunClient && o.ServerSide:
		return errors.New("--dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)")
	case o.ServerSide && o.Force:
		return errors.New("--force cannot be used with --server-side")
	case o.DryRun == DryRunServer && o.Force:
		return errors.New("--dry-run=server cannot be used with --force")
	case o.PruneAll && o.Selector != "":
		return errors.New("cannot set --all and --selector at the same time")
	case o.ApplySet != "" && !o.Prune:
		return errors.New("--applyset requires --prune")
	}
	if o.DryRun != DryRunNone && o.DryRun != DryRunClient && o.DryRun != DryRunServer {
		return errors.New(`Invalid dry-run value (` + string(o.DryRun) + `). Must be "none", "server", or "client".`)
	}
	if !o.Prune {
		return o.checkSubresource()
	}
	if o.Force {
		return errors.New("--force cannot be used with --prune")
	}
	if o.ApplySet != "" {
		switch {
		case o.PruneAll:
			return errors.New("--all is incompatible with --applyset")
		case o.Selector != "":
			return errors.New("--selector is incompatible with --applyset")
		case len(o.PruneAllowlist) > 0:
			return errors.New("--prune-allowlist is incompatible with --applyset")
		}
		return o.checkSubresource()
	}
	if !o.PruneAll && o.Selector == "" {
		return errors.New("all resources selected for prune without explicitly passing --all. To prune all resources, pass the --all flag. If you did not mean to prune all resources, specify a label selector")
	}
	if o.ServerSide {
		return errors.New("--prune is in alpha and doesn't currently work on objects created by server-side apply")
	}
	return o.checkSubresource()
}

func (o Options) checkSubresource() error {
	if o.Subresource != "" && !o.ServerSide {
		return errors.New("--subresource can only be specified for --server-side")
	}
	return nil
}

func (o Options) namespace() string {
	if o.Namespace == "" {
		return "default"
	}
	return o.Namespace
}

func (o Options) fieldManager() string {
	switch {
	case o.FieldManager != "":
		return o.FieldManager
	case o.ServerSide:
		return FieldManagerServerSideApply
	}
	return FieldManagerClientSideApply
}

func (o Options) crdTimeout() time.Duration {
	if o.CRDTimeout <= 0 {
		return time.Minute
	}
	return o.CRDTimeout
}

func (o Options) concurrency() int {
	if o.Concurrency <= 0 {
		return DefaultConcurrency
	}
	return o.Concurrency
}

func (o Options) retryBackoff() time.Duration {
	if o.RetryBackoff <= 0 {
		return time.Second
	}
	return o.RetryBackoff
}
