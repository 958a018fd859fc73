// Package admission is the embedded API server's admission chain: the
// plugins a default kube-apiserver 1.37 enables that act on what a user
// writes, each in its own file, and the order they run in (chain.go).
//
// The registry (package local) runs a request through the chain in the
// places kube-apiserver does:
//
//  1. Lifecycle, before anything else of a create: the namespace must
//     exist and not be terminating (NamespaceLifecycle).
//  2. Mutate, after decoding and defaulting, before the registry
//     strategy prepares the object: plugins may change it.
//  3. Validate, after the strategy's validation, before the write:
//     plugins may only refuse it.
//
// Plugins read the cluster through Store, in the transaction of the
// request; they write nothing but the object they admit. The package
// knows nothing of how objects are stored (internal/archtest checks that
// it does not depend on the store).
package admission

import (
	"fmt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/cluster/local/internal/usage"
)

// Operation is what a request does to the object.
type Operation int

// The operations admission sees.
const (
	Create Operation = iota
	Update
)

// Attributes are one request, as a plugin sees it.
type Attributes struct {
	Operation Operation
	Resource  cluster.Resource
	// Name is how refusals name the object: the name the request gave, or
	// its generateName when it gave none.
	Name string
	// Object is the object to be written; mutating plugins change it in
	// place.
	Object map[string]any
	// Old is the stored object of an update, nil on a create.
	Old map[string]any
}

// Kind is the group and kind of the request's resource.
func (a *Attributes) Kind() jsonobj.GroupKind {
	return jsonobj.GroupKind{Group: a.Resource.GVK.Group, Kind: a.Resource.GVK.Kind}
}

// Namespace is the namespace of the request's object.
func (a *Attributes) Namespace() string {
	return jsonobj.MetaString(a.Object, "namespace")
}

// forbid is the plugin's refusal of the request.
func (a *Attributes) forbid(why string) error {
	return Forbidden(a.Resource, a.Name, why)
}

// Store is what plugins may read of the cluster.
type Store interface {
	// Get returns an object, nil when it does not exist.
	Get(gk jsonobj.GroupKind, namespace, name string) (map[string]any, error)
	// List returns the objects of a kind in a namespace ("" for
	// cluster-scoped kinds), in name order.
	List(gk jsonobj.GroupKind, namespace string) ([]map[string]any, error)
	// NamespacePhase is a namespace's status.phase, "" when it does not
	// exist.
	NamespacePhase(name string) (string, error)
	// Quotas returns the ResourceQuotas of a namespace and, for each, the
	// usage the objects stored now count against it.
	Quotas(namespace string) (quotas []map[string]any, used []usage.Set, err error)
	// CountName is the object-count quota resource of a kind
	// ("count/deployments.apps").
	CountName(gk jsonobj.GroupKind) string
}

// Plugin is an admission plugin. A plugin takes part in the phases whose
// interface (LifecycleChecker, Mutator, Validator) it implements.
type Plugin interface {
	// Name is the plugin's name in kube-apiserver's
	// --enable-admission-plugins.
	Name() string
}

// LifecycleChecker is a plugin of the first phase.
type LifecycleChecker interface {
	Plugin
	CheckLifecycle(s Store, a *Attributes) error
}

// Mutator is a plugin of the mutating phase.
type Mutator interface {
	Plugin
	Mutate(s Store, a *Attributes) error
}

// Validator is a plugin of the validating phase.
type Validator interface {
	Plugin
	Validate(s Store, a *Attributes) error
}

// Chain is plugins in the order they run.
type Chain []Plugin

// CheckLifecycle runs the first phase.
func (c Chain) CheckLifecycle(s Store, a *Attributes) error {
	return each(c, func(p LifecycleChecker) error { return p.CheckLifecycle(s, a) })
}

// Mutate runs the mutating phase.
func (c Chain) Mutate(s Store, a *Attributes) error {
	return each(c, func(p Mutator) error { return p.Mutate(s, a) })
}

// Validate runs the validating phase.
func (c Chain) Validate(s Store, a *Attributes) error {
	return each(c, func(p Validator) error { return p.Validate(s, a) })
}

// each runs a phase: the plugins of the chain that take part in it (those
// that implement P), in order, up to the first refusal.
func each[P Plugin](c Chain, run func(P) error) error {
	for _, p := range c {
		if x, ok := p.(P); ok {
			if err := run(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// Forbidden is kube-apiserver's 403 for a request a plugin refuses,
// naming the resource and, when there is one, the object.
func Forbidden(res cluster.Resource, name, why string) *cluster.StatusError {
	msg := res.GroupResource() + " is forbidden: " + why
	if name != "" {
		msg = fmt.Sprintf("%s %q is forbidden: %s", res.GroupResource(), name, why)
	}
	return &cluster.StatusError{Code: 403, Reason: cluster.ReasonForbidden, Group: res.GVK.Group, Kind: res.Plural, Name: name, Message: msg}
}

// Kinds the plugins act on.
var (
	podGK            = jsonobj.GroupKind{Kind: "Pod"}
	pvcGK            = jsonobj.GroupKind{Kind: "PersistentVolumeClaim"}
	pvGK             = jsonobj.GroupKind{Kind: "PersistentVolume"}
	serviceAccountGK = jsonobj.GroupKind{Kind: "ServiceAccount"}
	limitRangeGK     = jsonobj.GroupKind{Kind: "LimitRange"}
	priorityClassGK  = jsonobj.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}
	storageClassGK   = jsonobj.GroupKind{Group: "storage.k8s.io", Kind: "StorageClass"}
	runtimeClassGK   = jsonobj.GroupKind{Group: "node.k8s.io", Kind: "RuntimeClass"}
)

// Short names for the object accessors the plugins use.
var (
	str        = jsonobj.Str
	metaString = jsonobj.MetaString
	child      = jsonobj.Child
	peek       = jsonobj.Peek
	objectList = jsonobj.ObjectList
)
