// Package replication is the ReplicationController controller of the
// embedded cluster. As kube-controller-manager's (pkg/controller/replication),
// it is the ReplicaSet controller working through adapters: it sees every
// ReplicationController as the ReplicaSet it would be (its map selector as
// matchLabels), and what it writes goes back as a ReplicationController:
// the status (without the fields a ReplicationController does not have),
// the controller references of the pods it creates or adopts, and its
// Events, which come from the "replication-controller" component.
package replication

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/replicaset"
	"github.com/konverge/konverge/schema"
)

// Component is the source of the controller's Events.
const Component = "replication-controller"

// GVK is the kind the controller reconciles.
var GVK = schema.GVK{Version: "v1", Kind: "ReplicationController"}

// Controller is the ReplicationController controller; the zero value is
// ready to use.
type Controller struct{}

var _ controller.Controller = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "replicationcontroller" }

// Sync reconciles every ReplicationController once, as the ReplicaSet
// controller reconciles ReplicaSets.
func (Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	rcs, err := c.List(ctx, GVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("replicationcontroller: list: %w", err)
	}
	if len(rcs.Items) == 0 {
		return controller.Result{}, nil
	}
	a := &adapter{Interface: c, rcs: rcs, uids: map[string]bool{}}
	for _, rc := range rcs.Items {
		a.uids[kobj.UID(rc)] = true
	}
	res, err := replicaset.Controller{NoTerminatingReplicas: true}.Sync(ctx, a, now)
	if err != nil {
		return res, fmt.Errorf("replicationcontroller: %w", err)
	}
	return res, nil
}

// adapter shows the ReplicaSet controller the ReplicationControllers as
// ReplicaSets and turns its writes back.
type adapter struct {
	cluster.Interface
	rcs  *cluster.List
	uids map[string]bool // of the ReplicationControllers
}

func (a *adapter) List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	switch gvk {
	case kobj.ReplicaSetGVK:
		out := &cluster.List{ResourceVersion: a.rcs.ResourceVersion}
		for _, rc := range a.rcs.Items {
			out.Items = append(out.Items, asReplicaSet(rc))
		}
		return out, nil
	case kobj.EventGVK:
		l, err := a.Interface.List(ctx, gvk, opts...)
		if err != nil {
			return nil, err
		}
		out := &cluster.List{ResourceVersion: l.ResourceVersion}
		for _, e := range l.Items {
			out.Items = append(out.Items, a.eventIn(e))
		}
		return out, nil
	}
	return a.Interface.List(ctx, gvk, opts...)
}

func (a *adapter) Get(ctx context.Context, gvk schema.GVK, namespace, name string) (cluster.Object, error) {
	switch gvk {
	case kobj.ReplicaSetGVK:
		o, err := a.Interface.Get(ctx, GVK, namespace, name)
		if err != nil {
			return nil, err
		}
		return asReplicaSet(o), nil
	case kobj.EventGVK:
		o, err := a.Interface.Get(ctx, gvk, namespace, name)
		if err != nil {
			return nil, err
		}
		return a.eventIn(o), nil
	}
	return a.Interface.Get(ctx, gvk, namespace, name)
}

func (a *adapter) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	return a.Interface.Create(ctx, a.out(obj), opts...)
}

func (a *adapter) Update(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	o, err := a.Interface.Update(ctx, a.out(obj), opts...)
	if err != nil || kobj.Str(o, "kind") != "Event" {
		return o, err
	}
	return a.eventIn(o), nil
}

func (a *adapter) UpdateStatus(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	if kobj.Str(obj, "kind") != "ReplicaSet" {
		return a.Interface.UpdateStatus(ctx, obj, opts...)
	}
	o, err := a.Interface.UpdateStatus(ctx, asReplicationController(obj), opts...)
	if err != nil {
		return nil, err
	}
	return asReplicaSet(o), nil
}

// out turns what the ReplicaSet controller writes into what the
// ReplicationController controller writes: references to a
// ReplicationController seen as a ReplicaSet, and its Events.
func (a *adapter) out(obj cluster.Object) cluster.Object {
	switch kobj.Str(obj, "kind") {
	case "Pod":
		md := kobj.Map(obj, "metadata")
		refs, _ := md["ownerReferences"].([]any)
		var next []any
		for i, r := range refs {
			m, _ := r.(map[string]any)
			if m == nil || m["kind"] != "ReplicaSet" || !a.uids[kobj.Str(m, "uid")] {
				continue
			}
			if next == nil {
				next = append([]any{}, refs...)
			}
			ref := kobj.Copy(m)
			ref["apiVersion"], ref["kind"] = "v1", GVK.Kind
			next[i] = ref
		}
		if next == nil {
			return obj
		}
		obj = maps.Clone(obj)
		md = maps.Clone(md)
		md["ownerReferences"] = next
		obj["metadata"] = md
	case "Event":
		io := kobj.Map(obj, "involvedObject")
		if io["kind"] != "ReplicaSet" || !a.uids[kobj.Str(io, "uid")] {
			return obj
		}
		obj = kobj.Copy(obj)
		io = kobj.Map(obj, "involvedObject")
		io["apiVersion"], io["kind"] = "v1", GVK.Kind
		if src := kobj.Map(obj, "source"); src != nil && src["component"] == replicaset.Component {
			src["component"] = Component
		}
		if obj["reportingComponent"] == replicaset.Component {
			obj["reportingComponent"] = Component
		}
	}
	return obj
}

// eventIn is an Event as the ReplicaSet controller would have written it,
// when it is one of this controller's.
func (a *adapter) eventIn(e cluster.Object) cluster.Object {
	io := kobj.Map(e, "involvedObject")
	if io["kind"] != GVK.Kind || !a.uids[kobj.Str(io, "uid")] || kobj.Str(e, "source", "component") != Component {
		return e
	}
	e = kobj.Copy(e)
	io = kobj.Map(e, "involvedObject")
	io["apiVersion"], io["kind"] = kobj.ReplicaSetGVK.APIVersion(), kobj.ReplicaSetGVK.Kind
	kobj.Map(e, "source")["component"] = replicaset.Component
	if e["reportingComponent"] == Component {
		e["reportingComponent"] = replicaset.Component
	}
	return e
}

// asReplicaSet is a ReplicationController seen as a ReplicaSet.
func asReplicaSet(rc cluster.Object) cluster.Object {
	rs := maps.Clone(rc)
	rs["apiVersion"], rs["kind"] = kobj.ReplicaSetGVK.APIVersion(), kobj.ReplicaSetGVK.Kind
	spec := maps.Clone(kobj.Map(rc, "spec"))
	sel := map[string]any{}
	if m, ok := spec["selector"].(map[string]any); ok && len(m) > 0 {
		sel["matchLabels"] = m
	}
	spec["selector"] = sel
	rs["spec"] = spec
	return rs
}

// asReplicationController turns a ReplicaSet made by asReplicaSet back.
func asReplicationController(rs cluster.Object) cluster.Object {
	rc := maps.Clone(rs)
	rc["apiVersion"], rc["kind"] = GVK.APIVersion(), GVK.Kind
	spec := maps.Clone(kobj.Map(rs, "spec"))
	if ml := kobj.Map(spec, "selector", "matchLabels"); ml != nil {
		spec["selector"] = ml
	} else {
		delete(spec, "selector")
	}
	rc["spec"] = spec
	if st := kobj.Map(rs, "status"); st != nil {
		st = maps.Clone(st)
		delete(st, "terminatingReplicas")
		rc["status"] = st
	}
	return rc
}
