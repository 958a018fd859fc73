// Package local is the embedded cluster: a Kubernetes API (cluster.Interface)
// over one bbolt database file, with the semantics of kube-apiserver 1.37's
// registry, so that konverge works without a real cluster and its reconcilers
// and apply engine are tested against the real thing.
//
// It runs no controllers of its own beyond what finishes deletions (garbage
// collection, namespace and CRD cleanup); the Deployment and ReplicaSet
// controllers and the simulated kubelet live in other packages and talk to a
// Store through cluster.Interface.
//
// # Storage
//
// Open(dir) keeps the state in dir/state.db (the directory 0700, the file
// 0600), created on first use. Objects are stored as compact JSON, one bucket
// per group and kind, keyed by namespace and name, so that a List is a prefix
// scan in the order it returns. The bucket "meta" holds the revision counter
// and is where later stages keep their own state.
//
// One process holds a state at a time (bbolt's file lock, held from Open to
// Close). Another process's Open waits for it, trying periodically, for
// Options.LockTimeout and then fails with a *LockedError naming the directory
// and the holder's pid (recorded in dir/lock.pid). So two commands applying
// to one state never interleave: the second waits for the first.
//
// Every verb is one bbolt transaction; Batch runs many calls in one, committed
// once (one fsync) or not at all. A commit is atomic: after a crash, even
// kill -9, the database opens and holds every object as it was before or
// after each committed transaction. A batch is also a cluster.ManyGetter
// and a cluster.Prefetcher: it copies the stored bytes of the objects asked
// for on its goroutine and decodes them (and applies the merge patches it
// was told) on others while it goes on; a write takes what was prepared
// only when the stored bytes and the request are still the ones it was
// prepared for.
//
// # API-server semantics
//
// Writes go through what kube-apiserver does for them:
//
//   - Create: the namespace must exist and not be terminating; uid,
//     creationTimestamp (from Options.Clock, RFC 3339 UTC, seconds),
//     resourceVersion and generation are set; generateName picks a name;
//     status is reset for kinds with a status subresource; the defaults of
//     package defaults are applied (for custom resources, after pruning the
//     fields their schema does not know); the object is validated; names are
//     unique per kind and namespace.
//   - resourceVersion is one counter for the whole store, like etcd's
//     revision: every write takes the next value. List returns the current
//     one.
//   - Update: a resourceVersion in the object must be the stored one (or the
//     update fails with a Conflict); none means unconditional. uid,
//     creationTimestamp, deletionTimestamp and, for kinds with a status
//     subresource, status are kept; UpdateStatus changes only status.
//     generation moves only when the object changes outside metadata and
//     status (Deployments: annotations too). An update that changes nothing
//     writes nothing and returns the stored object.
//   - Patch: JSON patch, JSON merge patch and (built-in kinds only)
//     strategic merge patch, applied to the stored object, then the update
//     rules; a resourceVersion in the patch is a precondition.
//   - Delete: propagation Background (the default; Orphan for v1
//     ReplicationControllers and batch/v1 Jobs, as the API server), Foreground
//     and Orphan, with the garbage collector's rules for dependents (objects
//     whose ownerReferences name the object's uid). An object with finalizers
//     is marked (deletionTimestamp, deletionGracePeriodSeconds 0) and goes
//     when an update removes the last one. A Namespace becomes Terminating,
//     its content is deleted, and it goes when empty. Pods bound to a node
//     are deleted gracefully: they stay, marked, until deleted again with a
//     grace period of 0 (by the kubelet). UID and ResourceVersion
//     preconditions are checked.
//   - Evict (the pods/eviction subresource) deletes a pod as Delete does
//     unless the one PodDisruptionBudget that selects it allows no
//     disruption: 429 TooManyRequests with the budget's cause, as
//     kube-apiserver; a granted eviction takes one from the budget's
//     disruptionsAllowed and notes the pod in status.disruptedPods.
//   - Services get a cluster IP from 10.96.0.0/12 and node ports from
//     30000-32767, unique across the state, kept by updates that leave them
//     out and freed with the Service. Jobs get their generated selector.
//   - DryRunAll on any write validates and defaults, returns the result and
//     stores nothing.
//
// # Admission and the control plane's own objects
//
// Creates and updates go through the admission plugins a default
// kube-apiserver runs (package internal/admission, one plugin a file, the
// chain in chain.go; the registry runs its phases from write.go):
// NamespaceLifecycle, LimitRanger (defaults, the
// kubernetes.io/limit-ranger annotation, min/max/ratio), ServiceAccount
// (the default account, the kube-api-access-* token volume and mounts,
// imagePullSecrets), Priority, DefaultTolerationSeconds, RuntimeClass,
// DefaultStorageClass, StorageObjectInUseProtection (pvc-protection and
// pv-protection finalizers) and ResourceQuota (refusals with the API
// server's message; every quota's status.hard and status.used kept
// current before each commit, as kube-controller-manager's quota
// controller keeps them). Open creates what every cluster holds: the
// default, kube-system, kube-public and kube-node-lease namespaces, the
// kubernetes Service, the system PriorityClasses; every namespace gets
// the default ServiceAccount and the kube-root-ca.crt ConfigMap in the
// transaction that creates it, and gets them back when they are deleted.
//
// The controllers that finish deletions in a real cluster (garbage
// collector, namespace controller, CRD finalizer) run synchronously, inside
// the call that lets them proceed, in its transaction.
//
// Errors are *cluster.StatusError with kube-apiserver's reasons and
// messages (`Deployment.apps "web" is invalid: spec.replicas: Invalid
// value: -1: must be greater than or equal to 0`); other errors name the
// object and wrap the cause (`local: decode configmaps default/web: ...`).
//
// # Custom resources
//
// Creating a CustomResourceDefinition serves its versions at once: its status
// gets acceptedNames and the NamesAccepted and Established conditions, and
// the Mapper resolves its kinds. Custom resources are pruned, defaulted and
// validated by their version's openAPIV3Schema and stored once, in the
// storage version (reads in another served version only relabel apiVersion,
// as the API server does without a conversion webhook). Deleting the CRD
// deletes its custom resources.
//
// # Watch
//
// Watch reports the writes made through this Store (ADDED, MODIFIED,
// DELETED; with selectors, objects entering or leaving the selection are
// ADDED or DELETED), after they are committed. FromResourceVersion replays
// the recent events kept in memory (at least the last 10,000 since Open);
// older resourceVersions fail with Gone. "0" starts with an ADDED event per
// existing object. Since one process holds the state at a
// time, there are no writes from other processes to watch.
//
// # Field management and server-side apply
//
// Every write records managedFields as kube-apiserver's field manager
// (k8s.io/apimachinery/pkg/util/managedfields, over structured-merge-diff)
// records them: an Update entry for the request's field manager
// (Options.FieldManager, else DefaultFieldManager, when it names none; the
// status subresource separately), the fields it changed, its times on the
// store's clock. A request that sets managedFields replaces them, an empty
// list clears them, and an object without them stays without them until
// it is applied. Patch with ApplyPatchType is server-side apply: the patch
// merged by field ownership (conflicts fail with a Conflict whose causes
// name the managers and fields, unless ForceOwnership; fields the applier
// alone owned and no longer sets are removed; an object that does not
// exist is created), with the typed schemas of package openapi for
// built-in kinds and of their CRD's schema for custom resources.
//
// The object a Create returns may share the fieldsV1 of its managedFields
// entries with other objects created in the process (objects of one shape
// have one field set, computed once): read them, replace them, delete the
// entries, but never change a fieldsV1 tree in place. Everything else in
// the returned object is the caller's. The same holds inside a write: the
// object a Patch builds shares its fieldsV1 trees (and only those) with
// the stored object it was built from, which the update steps compare it
// with, so no step may change a fieldsV1 tree in place; every other part
// of the stored object stays as it was read until the write is done.
//
// # Layout
//
// This package is the registry: the verbs, their transactions over bbolt
// (store.go, txn.go, watch.go, lock.go), and the order in which a write
// takes kube-apiserver's steps (write.go, patch.go, delete.go). The steps
// themselves are units below it, each of which knows nothing of storage
// (internal/archtest checks the arrows):
//
//   - internal/admission: the admission chain, a plugin a file, the order
//     in chain.go; plugins read the cluster through its Store interface;
//   - internal/strategy: the per-kind registry strategies (create, update,
//     status update, generation, deletion propagation);
//   - internal/fieldmgr: managedFields and server-side apply;
//   - internal/usage and internal/podres: ResourceQuota usage and a pod's
//     effective requests and limits, shared by admission, the strategies
//     and the store's quota bookkeeping (quota.go);
//   - internal/jsonobj: accessors of objects held as decoded JSON.
//
// # Not implemented
//
// Conversion between versions of built-in kinds (an object keeps the
// apiVersion it was written with, relabeled on read); admission webhooks
// and policies; and create-on-update.
// A namespaced verb without a namespace acts in "default".
package local
