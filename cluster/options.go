package cluster

// CreateOptions tune Create.
type CreateOptions struct {
	DryRun       bool
	FieldManager string
	// FieldValidation is how the server treats fields the kind does not
	// have: FieldValidationStrict, FieldValidationWarn (what "" means) or
	// FieldValidationIgnore.
	FieldValidation string
	// MetadataOnly: the caller reads only the apiVersion, kind and
	// metadata of the result (see the MetadataOnly option).
	MetadataOnly bool
	// HandedOver: the caller gives the object to Create (see HandOver).
	HandedOver bool
}

// UpdateOptions tune Update and UpdateStatus.
type UpdateOptions struct {
	DryRun          bool
	FieldManager    string
	FieldValidation string
}

// PatchOptions tune Patch.
type PatchOptions struct {
	DryRun          bool
	FieldManager    string
	FieldValidation string
	// Force takes over fields other managers own (server-side apply).
	Force bool
	// Subresource patches a subresource of the object instead ("status",
	// "scale"), as kubectl's --subresource. A patch of "scale" is a patch
	// of the object's autoscaling/v1 Scale, which Patch returns.
	Subresource string
	// MetadataOnly: the caller reads only the apiVersion, kind and
	// metadata of the result (see the MetadataOnly option).
	MetadataOnly bool
}

// Propagation is how a deletion treats the object's dependents.
type Propagation string

// The propagation policies of the Kubernetes API.
const (
	// Background deletes the object now and its dependents after.
	Background Propagation = "Background"
	// Foreground deletes the dependents first; the object is marked for
	// deletion until they are gone.
	Foreground Propagation = "Foreground"
	// Orphan deletes the object and leaves its dependents without owner.
	Orphan Propagation = "Orphan"
)

// DeleteOptions tune Delete.
type DeleteOptions struct {
	DryRun            bool
	PropagationPolicy Propagation
	// Precondition UID and ResourceVersion, when set, must match.
	UID             string
	ResourceVersion string
	// GracePeriodSeconds overrides the object's grace period (pods).
	GracePeriodSeconds *int64
}

// ListOptions tune List and Watch.
type ListOptions struct {
	// Namespace restricts to one namespace; "" means all.
	Namespace string
	// LabelSelector and FieldSelector use kubectl's syntax
	// ("app=web,tier in (a,b)", "metadata.name=x").
	LabelSelector string
	FieldSelector string
	// ResourceVersion is where a Watch starts; "" means now.
	ResourceVersion string
	// WithoutManagedFields: the caller does not read the items'
	// metadata.managedFields (see the WithoutManagedFields option).
	WithoutManagedFields bool
}

// CreateOption is an option of Create.
type CreateOption interface{ ApplyToCreate(*CreateOptions) }

// UpdateOption is an option of Update and UpdateStatus.
type UpdateOption interface{ ApplyToUpdate(*UpdateOptions) }

// PatchOption is an option of Patch.
type PatchOption interface{ ApplyToPatch(*PatchOptions) }

// DeleteOption is an option of Delete.
type DeleteOption interface{ ApplyToDelete(*DeleteOptions) }

// ListOption is an option of List and Watch.
type ListOption interface{ ApplyToList(*ListOptions) }

// DryRunAll makes a write validate and return its result without storing
// anything (kubectl's --dry-run=server).
var DryRunAll = dryRunAll{}

type dryRunAll struct{}

func (dryRunAll) ApplyToCreate(o *CreateOptions) { o.DryRun = true }
func (dryRunAll) ApplyToUpdate(o *UpdateOptions) { o.DryRun = true }
func (dryRunAll) ApplyToPatch(o *PatchOptions)   { o.DryRun = true }
func (dryRunAll) ApplyToDelete(o *DeleteOptions) { o.DryRun = true }

// MetadataOnly tells a Create or Patch that the caller reads only the
// apiVersion, kind and metadata of the object it returns (its
// resourceVersion, uid, managedFields, ...), as when a dry run only checks
// that a write would pass. A real API server then answers with the
// object's metadata alone, which costs it less to encode and the client
// less to decode; a cluster may return the whole object anyway. Errors are
// the same either way.
var MetadataOnly = metadataOnly{}

type metadataOnly struct{}

func (metadataOnly) ApplyToCreate(o *CreateOptions) { o.MetadataOnly = true }
func (metadataOnly) ApplyToPatch(o *PatchOptions)   { o.MetadataOnly = true }

// HandOver tells a Create that the caller gives it the object: the
// cluster may change it, and every map and list it holds, and return it
// (or parts of it) as its result instead of working on a copy. After the
// call, failed or not, the caller must neither read nor change the object,
// nor anything that shares a map or a list with it. The embedded cluster
// then saves itself a deep copy of every object created; one that sends
// the object elsewhere (a real API server) ignores it.
var HandOver = handOver{}

type handOver struct{}

func (handOver) ApplyToCreate(o *CreateOptions) { o.HandedOver = true }

// WithoutManagedFields tells a List (or a ManyGetter) that the caller
// does not read the items' metadata.managedFields (it prints a table of
// them, or leaves them out): a cluster may then leave them out, which
// costs it less to decode and hold (the embedded one does); it may also
// return them.
var WithoutManagedFields = withoutManagedFields{}

type withoutManagedFields struct{}

func (withoutManagedFields) ApplyToList(o *ListOptions) { o.WithoutManagedFields = true }

// FieldOwner names the manager of the fields a write sets.
type FieldOwner string

func (f FieldOwner) ApplyToCreate(o *CreateOptions) { o.FieldManager = string(f) }
func (f FieldOwner) ApplyToUpdate(o *UpdateOptions) { o.FieldManager = string(f) }
func (f FieldOwner) ApplyToPatch(o *PatchOptions)   { o.FieldManager = string(f) }

// FieldValidation is how the server treats unknown fields in a write
// (kube-apiserver's fieldValidation parameter): Strict refuses the request
// (400 Bad Request, `strict decoding error: unknown field "spec.replica"`),
// Warn (the server's default) drops them with a warning each, Ignore
// drops them silently. kubectl's --validate=strict, the default, sends
// Strict.
type FieldValidation string

// The field validation directives.
const (
	FieldValidationStrict FieldValidation = "Strict"
	FieldValidationWarn   FieldValidation = "Warn"
	FieldValidationIgnore FieldValidation = "Ignore"
)

func (v FieldValidation) ApplyToCreate(o *CreateOptions) { o.FieldValidation = string(v) }
func (v FieldValidation) ApplyToUpdate(o *UpdateOptions) { o.FieldValidation = string(v) }
func (v FieldValidation) ApplyToPatch(o *PatchOptions)   { o.FieldValidation = string(v) }

// ForceOwnership makes a server-side apply take over conflicting fields.
var ForceOwnership = forceOwnership{}

type forceOwnership struct{}

func (forceOwnership) ApplyToPatch(o *PatchOptions) { o.Force = true }

// ApplyToDelete sets the propagation policy.
func (p Propagation) ApplyToDelete(o *DeleteOptions) { o.PropagationPolicy = p }

// Preconditions must hold for a Delete to happen.
type Preconditions struct {
	UID             string
	ResourceVersion string
}

// ApplyToDelete sets the preconditions.
func (p Preconditions) ApplyToDelete(o *DeleteOptions) {
	o.UID, o.ResourceVersion = p.UID, p.ResourceVersion
}

// GracePeriod overrides the grace period of a deletion.
type GracePeriod int64

// ApplyToDelete sets the grace period.
func (g GracePeriod) ApplyToDelete(o *DeleteOptions) {
	s := int64(g)
	o.GracePeriodSeconds = &s
}

// InNamespace restricts a List or Watch to one namespace.
type InNamespace string

// ApplyToList sets the namespace.
func (n InNamespace) ApplyToList(o *ListOptions) { o.Namespace = string(n) }

// MatchingLabels selects objects by a label selector in kubectl's syntax.
type MatchingLabels string

// ApplyToList sets the label selector.
func (s MatchingLabels) ApplyToList(o *ListOptions) { o.LabelSelector = string(s) }

// MatchingFields selects objects by a field selector in kubectl's syntax.
type MatchingFields string

// ApplyToList sets the field selector.
func (s MatchingFields) ApplyToList(o *ListOptions) { o.FieldSelector = string(s) }

// FromResourceVersion starts a Watch after a resource version.
type FromResourceVersion string

// ApplyToList sets the resource version.
func (v FromResourceVersion) ApplyToList(o *ListOptions) { o.ResourceVersion = string(v) }

// Collect folds options into their struct; implementations call these.
func CollectCreate(opts []CreateOption) CreateOptions {
	var o CreateOptions
	for _, x := range opts {
		x.ApplyToCreate(&o)
	}
	return o
}

// CollectUpdate folds update options.
func CollectUpdate(opts []UpdateOption) UpdateOptions {
	var o UpdateOptions
	for _, x := range opts {
		x.ApplyToUpdate(&o)
	}
	return o
}

// CollectPatch folds patch options.
func CollectPatch(opts []PatchOption) PatchOptions {
	var o PatchOptions
	for _, x := range opts {
		x.ApplyToPatch(&o)
	}
	return o
}

// CollectDelete folds delete options.
func CollectDelete(opts []DeleteOption) DeleteOptions {
	var o DeleteOptions
	for _, x := range opts {
		x.ApplyToDelete(&o)
	}
	return o
}

// CollectList folds list options.
func CollectList(opts []ListOption) ListOptions {
	var o ListOptions
	for _, x := range opts {
		x.ApplyToList(&o)
	}
	return o
}

// Subresource makes a Patch act on a subresource of the object ("status",
// "scale").
type Subresource string

// ApplyToPatch sets the subresource.
func (s Subresource) ApplyToPatch(o *PatchOptions) { o.Subresource = string(s) }
