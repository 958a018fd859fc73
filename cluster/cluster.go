package cluster

import (
	"context"

	"github.com/konverge/konverge/apimeta"
	"github.com/konverge/konverge/schema"
)

// Object is a Kubernetes object as JSON values.
type Object = map[string]any

// List is the result of a list call.
type List struct {
	Items []Object
	// ResourceVersion is the version of the collection, from which a Watch
	// can start.
	ResourceVersion string
}

// Reader reads objects.
type Reader interface {
	// Get returns the object, or a NotFound *StatusError. Cluster-scoped
	// kinds take namespace "".
	Get(ctx context.Context, gvk schema.GVK, namespace, name string) (Object, error)
	// List returns the objects of a kind, in one namespace (InNamespace) or
	// all, matching label and field selectors, ordered by namespace and
	// name.
	List(ctx context.Context, gvk schema.GVK, opts ...ListOption) (*List, error)
	// Watch reports changes to objects of a kind after the given resource
	// version (or from now) until ctx ends or Stop is called.
	Watch(ctx context.Context, gvk schema.GVK, opts ...ListOption) (Watcher, error)
}

// Writer changes objects. Every call returns the object as stored (or as it
// would be stored, with DryRunAll).
type Writer interface {
	// Create stores a new object. The API server fills in uid,
	// creationTimestamp, resourceVersion, generation and defaults, and
	// validates.
	Create(ctx context.Context, obj Object, opts ...CreateOption) (Object, error)
	// Update replaces an object. A resourceVersion in obj must be current,
	// or the call fails with a Conflict; status is kept as it is.
	Update(ctx context.Context, obj Object, opts ...UpdateOption) (Object, error)
	// UpdateStatus replaces the status of an object and nothing else.
	UpdateStatus(ctx context.Context, obj Object, opts ...UpdateOption) (Object, error)
	// Patch changes an object with a patch of type pt.
	Patch(ctx context.Context, gvk schema.GVK, namespace, name string, pt PatchType, patch []byte, opts ...PatchOption) (Object, error)
	// Delete deletes an object, its dependents by PropagationPolicy
	// (background by default). An object with finalizers is only marked
	// for deletion (deletionTimestamp) until they are removed.
	Delete(ctx context.Context, gvk schema.GVK, namespace, name string, opts ...DeleteOption) error
}

// Interface is a Kubernetes API.
type Interface interface {
	Reader
	Writer
	// Mapper returns the kinds the API serves.
	Mapper() Mapper
}

// PatchType is the media type of a patch.
type PatchType string

// The patch types of the Kubernetes API.
const (
	JSONPatchType           PatchType = "application/json-patch+json"
	MergePatchType          PatchType = "application/merge-patch+json"
	StrategicMergePatchType PatchType = "application/strategic-merge-patch+json"
	ApplyPatchType          PatchType = "application/apply-patch+yaml"
)

// EventType says what happened to an object.
type EventType string

// The event types of a watch.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// Event is one change seen by a Watcher.
type Event struct {
	Type   EventType
	Object Object
}

// Watcher delivers events until it is stopped or its context ends; then
// the channel is closed.
type Watcher interface {
	ResultChan() <-chan Event
	Stop()
}

// Resource is a kind as an API serves it (see apimeta.Resource).
type Resource = apimeta.Resource

// Mapper tells which kinds an API serves and how.
type Mapper interface {
	// ResourceFor returns how a kind is served, or a NotFound
	// *StatusError ("no matches for kind").
	ResourceFor(gvk schema.GVK) (Resource, error)
	// Find resolves a name as kubectl users type it: a plural, singular or
	// short name, or a kind, optionally qualified by group or version
	// ("deploy", "deployments.apps", "Deployment", "deployments.v1.apps").
	Find(name string) (Resource, error)
	// Schema returns the merge schema of a kind; nil means none (JSON
	// merge patch semantics).
	Schema(gvk schema.GVK) *schema.Type
	// Resources lists every served kind, preferred versions first.
	Resources() []Resource
}

// SubresourceReader reads a subresource of an object, as kubectl get
// --subresource does: "status" (the object) or "scale" (its
// autoscaling/v1 Scale). Writes go through Patch with the Subresource
// option, and UpdateStatus. Both backends implement it; an unknown
// subresource is a NotFound *StatusError.
type SubresourceReader interface {
	GetSubresource(ctx context.Context, gvk schema.GVK, namespace, name, subresource string) (Object, error)
}

// Key names one object: its kind, its namespace ("" for a
// cluster-scoped kind) and its name.
type Key struct {
	GVK       schema.GVK
	Namespace string
	Name      string
}

// ManyGetter reads several objects in one call. GetMany reads them as
// they are when it is called; wait, which any goroutine may call (once),
// returns them: objs[i] and errs[i] are what Get would answer for keys[i]
// (a NotFound *StatusError for an object that does not exist), and the
// objects are the caller's, as Get's are. Of opts, WithoutManagedFields
// counts: the objects may then lack their metadata.managedFields. The
// embedded cluster's batch implements it: it copies the objects' stored
// bytes in the call and decodes them on other goroutines, so that the
// batch goes on meanwhile.
type ManyGetter interface {
	GetMany(ctx context.Context, keys []Key, opts ...ListOption) (wait func() (objs []Object, errs []error))
}

// Upcoming is a write a caller is about to make: to the object of Key,
// and, when Patch is set, a Patch of PatchType with that body (which the
// caller does not change afterwards).
type Upcoming struct {
	Key
	PatchType PatchType
	Patch     []byte
}

// Prefetcher is told the writes a caller is about to make (Patch or
// Update of existing objects), so that it can prepare them ahead. It is a
// hint: what it prepares serves a write only when the stored object is
// still the one it read, and the write the one it was told. The embedded
// cluster's batch implements it: on another goroutine, while the batch
// writes others, it decodes the objects and applies the merge patches it
// was told.
type Prefetcher interface {
	Prefetch(ctx context.Context, writes []Upcoming)
}

// Evicter evicts pods through the pods/eviction subresource: it creates
// a policy/v1 Eviction for the pod, with opts as its deleteOptions
// (DryRunAll, GracePeriod, preconditions). The API server deletes the pod
// as Delete would, unless the PodDisruptionBudget that selects it allows
// no disruption now: then the error is a TooManyRequests *StatusError
// (code 429) whose cause (type "DisruptionBudget") says why. Both
// backends implement it.
type Evicter interface {
	Evict(ctx context.Context, namespace, name string, opts ...DeleteOption) error
}
