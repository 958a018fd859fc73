// Package controller holds what the reconcilers of the embedded cluster
// share: the Controller contract (and Incremental, for those that sync
// from what changed) that the runner of package sim drives on the virtual
// clock, one transaction per Sync, until no controller writes anything.
//
// A controller sees only a cluster.Interface and the cluster time it is
// given; what it keeps between calls (an Incremental controller's indexes,
// caches of what it read) changes nothing it writes, so that the same
// objects and the same time always give the same writes.
//
// # The controllers
//
// Each is a package of its own under controller/, after the
// kube-controller-manager 1.37 controller of the same name; its package
// doc says what it simulates and what not:
//
//   - workloads: deployment (ReplicaSets, rollouts, rollback), replicaset
//     (pods), replication (ReplicationControllers, through the ReplicaSet
//     controller), statefulset (ordered pods, claims, revisions),
//     daemonset (one pod per node), job (pods to completion, and
//     TTLAfterFinished), cronjob (Jobs on a schedule), podautoscaler
//     (HorizontalPodAutoscalers);
//   - services: endpoint (Endpoints), endpointslice (EndpointSlices, and
//     Mirroring of selector-less Services' Endpoints);
//   - storage: persistentvolume (the claim binder), volumeprotection (the
//     pvc- and pv-protection finalizers);
//   - the cluster itself: gc (the garbage collector, for what the store
//     does not collect in the deleting transaction), node (Node leases and
//     NoExecute taint eviction), disruption (the status of
//     PodDisruptionBudgets), podgc (terminated pods over the threshold,
//     pods whose node is gone), event (how controllers record Events, and
//     the TTLController that expires them), controlplane (the kubernetes
//     Service that kube-apiserver keeps).
//
// The simulated kubelet (package kubelet) is a Controller too.
//
// # The scaffold
//
// The parts the controllers used to repeat live in controller/internal, in the roles controller-runtime gives a client, a
// cache and a reconciler:
//
//   - the client is the cluster.Interface of a Sync; GetShared and
//     OwnerIndex below are its read-only shortcuts;
//   - the cache is what an Incremental controller remembers: podmemo for
//     controllers whose owners claim pods (daemonset, statefulset, job;
//     podmemo.Owners is their Sync and SyncChanged), on reconcile.Clean
//     and reconcile.Dirty (the owners whose last sync wrote nothing, and
//     those a write concerns); reconcile.Queue, the work queue of the
//     controllers whose SyncChanged lists nothing (deployment,
//     replicaset, and, through svcpods, the endpoint controllers and
//     the mirroring controller): the owners as last read and those
//     queued, so that a sync the client rate limit cuts short goes on
//     with the owners it did not reach and costs what is queued;
//   - the reconciler is one owner's sync; reconcile.Loop runs it for each
//     owner with upstream's work-queue back-off (event.Waiting,
//     event.AfterSync) for the daemonset, statefulset, job and cronjob
//     controllers;
//   - kobj reads objects; claim adopts and releases (ControllerRef
//     manager); history and podhash keep ControllerRevisions and template
//     hashes; ctrltest is the harness of the controllers' unit tests (a
//     real store on a manual clock).
package controller

import (
	"context"
	"errors"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

// Controller is one reconciler.
type Controller interface {
	// Name names the controller in errors ("deployment").
	Name() string
	// Sync reconciles every object the controller owns once, at cluster
	// time now, and reports what it did.
	Sync(ctx context.Context, c cluster.Interface, now time.Time) (Result, error)
}

// Result is what one Sync did.
type Result struct {
	// Changed reports that Sync wrote something: the runner syncs every
	// controller again until none changes anything.
	Changed bool
	// RequeueAt is the earliest cluster time at which the controller
	// has work due without any write happening (a probe period, a
	// back-off, minReadySeconds, a progress deadline); zero means none.
	RequeueAt time.Time
	// Scheduled is the earliest cluster time of work that must happen at
	// its own time rather than be caught up later (a CronJob's next
	// schedule): a long catch-up does not cross it at once. It is also a
	// RequeueAt (set both); zero means none.
	Scheduled time.Time
}

// Merge combines the results of two syncs: changed if either changed, the
// earlier non-zero RequeueAt and Scheduled.
func (r Result) Merge(o Result) Result {
	r.Changed = r.Changed || o.Changed
	r.RequeueAt = earlier(r.RequeueAt, o.RequeueAt)
	r.Scheduled = earlier(r.Scheduled, o.Scheduled)
	return r
}

func earlier(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// Key names one object of the cluster that writes changed; Deleted: the
// last of them deleted it.
type Key struct {
	Group, Kind, Namespace, Name string
	Deleted                      bool
}

// Incremental is a Controller that can also sync from what changed: the
// runner of package sim calls Sync the first time, and SyncChanged after a
// Sync or SyncChanged of the same value on the same cluster, with the
// objects written since that call began (deleted ones included, its own
// writes included, each once, in the order of their first write).
//
// SyncChanged must make the same writes as Sync would and return the same
// Result: "the same objects and the same time give the same writes" holds
// whichever the runner calls. What a controller keeps in memory between
// the calls (indexes, due times) must be rebuilt by Sync from the stored
// objects alone, so that a new process (or a Reset after a rollback)
// starts again from Sync. One runner drives a controller value: two
// runners must not share one that remembers.
type Incremental interface {
	Controller
	SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []Key) (Result, error)
}

// SharedGetter is offered by the cluster.Interface that the runner of
// package sim gives the controllers: GetShared returns an object as Get
// does, without a copy (the object is shared with other controllers and
// must not be changed; copy it to write it).
type SharedGetter interface {
	GetShared(ctx context.Context, gvk schema.GVK, namespace, name string) (cluster.Object, error)
}

// GetShared reads an object through c's SharedGetter, or with Get when c
// has none.
func GetShared(ctx context.Context, c cluster.Interface, gvk schema.GVK, namespace, name string) (cluster.Object, error) {
	if g, ok := c.(SharedGetter); ok {
		return g.GetShared(ctx, gvk, namespace, name)
	}
	return c.Get(ctx, gvk, namespace, name)
}

// OwnerIndex is offered by a cluster.Interface that indexes the
// ownerReferences of what it stores (the embedded cluster's store, and the
// interface the runner of package sim gives the controllers): Owned calls
// fn with the group, kind, namespace and name of every object that has
// ownerReferences, each once, ordered by those four. An error that is
// errors.ErrUnsupported says that this cluster keeps no such index (an
// interface that passes the method on to one that may not).
type OwnerIndex interface {
	Owned(ctx context.Context, fn func(group, kind, namespace, name string) error) error
}

// Meter is offered by the cluster.Interface that the runner of package
// sim gives the controllers, which meters their work (its work limit
// bounds a command): Read counts n objects of kinds other than Pods and
// Events that a sync read from what its controller remembers rather than
// from a List, as if listed. An incremental controller that lists
// nothing still pays for what it reads: a sync costs what it looks at.
type Meter interface {
	Read(n int)
}

// Read counts n objects read from memory through c's Meter, if it has one.
func Read(c cluster.Interface, n int) {
	if m, ok := c.(Meter); ok {
		m.Read(n)
	}
}

// ErrThrottled is what a write returns when the controller's client rate
// limit holds it back past the time of the sync (as kube-controller-manager
// gives every controller a client of its own, limited to --kube-api-qps 20
// and --kube-api-burst 30, the runner of package sim gives each a token
// bucket in cluster time): the request is not sent. A controller may stop
// there and carry on at its next sync, which the runner makes when the
// next token comes; one that returns the error (wrapped or not) has the
// writes sent before it kept, and its next sync is a full one.
var ErrThrottled = errors.New("the controller's client rate limit holds the request back")

// IsThrottled reports whether err is, or wraps, ErrThrottled.
func IsThrottled(err error) bool { return errors.Is(err, ErrThrottled) }
