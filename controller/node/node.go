// Package node keeps the heartbeat of the embedded cluster's Nodes, as a
// kubelet does: the Lease kube-node-lease/<node> (holderIdentity, a
// leaseDurationSeconds of 40, the Node as its owner) created once the
// kubelet has registered its Node, and its renewTime moved on; and, as
// the node lifecycle controller does, the
// node.kubernetes.io/unschedulable:NoSchedule taint of a cordoned node;
// and, as the node lifecycle and TTL controllers do, a new Node's
// RegisteredNode Event and node.alpha.kubernetes.io/ttl annotation.
//
// A real kubelet renews its Lease every 10 seconds. Here a renewal costs
// nothing unless something else happens: the controller asks for no
// wake-up of its own, and renews the Lease only when the cluster is synced
// anyway (a write, a due time of another controller) and the last renewal
// is 10 seconds old or more. A long clock advance with nothing to do
// writes nothing; one with work writes at most one renewal per due time.
package node

import (
	"context"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// The Lease of a node, as the kubelet writes it.
const (
	LeaseNamespace       = "kube-node-lease"
	LeaseDurationSeconds = 40
	// RenewInterval is how old the renewTime gets before a renewal
	// (a quarter of the lease duration, as the kubelet).
	RenewInterval = 10 * time.Second
)

// Controller renews the Lease of every Node of the embedded cluster. The
// zero value is ready to use.
type Controller struct{}

var _ controller.Controller = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "node-lease" }

// Sync creates the missing Leases of the Nodes and renews the stale ones.
func (Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	if _, err := c.Mapper().ResourceFor(kobj.LeaseGVK); err != nil {
		return res, nil
	}
	if _, err := c.Mapper().ResourceFor(kobj.NodeGVK); err != nil {
		return res, nil
	}
	nodes, err := c.List(ctx, kobj.NodeGVK)
	if err != nil {
		return res, fmt.Errorf("node-lease: list nodes: %w", err)
	}
	for _, n := range nodes.Items {
		if kobj.Deleting(n) {
			continue
		}
		registered, err := register(ctx, c, n, len(nodes.Items), now)
		if err != nil {
			return res, fmt.Errorf("node-lease: %s: %w", kobj.Name(n), err)
		}
		if registered {
			// Written: the rest of this node waits for the next round.
			res.Changed = true
			continue
		}
		tainted, err := syncUnschedulableTaint(ctx, c, n, now)
		if err != nil {
			return res, fmt.Errorf("node-lease: %s: %w", kobj.Name(n), err)
		}
		res.Changed = res.Changed || tainted
		changed, err := renew(ctx, c, n, now)
		if err != nil {
			return res, fmt.Errorf("node-lease: %s: %w", kobj.Name(n), err)
		}
		res.Changed = res.Changed || changed
	}
	evicted, next, err := evictNoExecute(ctx, c, nodes.Items, now)
	if err != nil {
		return res, fmt.Errorf("taint-eviction: %w", err)
	}
	res.Changed = res.Changed || evicted
	if !next.IsZero() {
		res.RequeueAt = next
	}
	return res, nil
}

// UnschedulableTaint is the taint of a cordoned node.
const UnschedulableTaint = "node.kubernetes.io/unschedulable"

// syncUnschedulableTaint is the node lifecycle controller's part in
// cordoning: a node with spec.unschedulable gets the
// node.kubernetes.io/unschedulable:NoSchedule taint (with the time it was
// added), and loses it when it is uncordoned.
func syncUnschedulableTaint(ctx context.Context, c cluster.Interface, node map[string]any, now time.Time) (bool, error) {
	want := kobj.Bool(node, "spec", "unschedulable")
	taints := kobj.Slice(node, "spec", "taints")
	has := false
	var kept []any
	for _, t := range taints {
		tm, _ := t.(map[string]any)
		if kobj.Str(tm, "key") == UnschedulableTaint && kobj.Str(tm, "effect") == "NoSchedule" {
			has = true
			continue
		}
		kept = append(kept, t)
	}
	if want == has {
		return false, nil
	}
	next := kobj.Copy(node)
	spec := kobj.EnsureMap(next, "spec")
	if want {
		spec["taints"] = append(append([]any{}, taints...), map[string]any{"key": UnschedulableTaint, "effect": "NoSchedule", "timeAdded": kobj.FormatTime(now)})
	} else if len(kept) == 0 {
		delete(spec, "taints")
	} else {
		spec["taints"] = kept
	}
	if _, err := c.Update(ctx, next); err != nil {
		if cluster.IsConflict(err) || cluster.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("taint node: %w", err)
	}
	return true, nil
}

func renew(ctx context.Context, c cluster.Interface, node map[string]any, now time.Time) (bool, error) {
	name := kobj.Name(node)
	lease, err := c.Get(ctx, kobj.LeaseGVK, LeaseNamespace, name)
	switch {
	case cluster.IsNotFound(err):
		lease = map[string]any{
			"apiVersion": "coordination.k8s.io/v1",
			"kind":       "Lease",
			"metadata": map[string]any{
				"name":      name,
				"namespace": LeaseNamespace,
				"ownerReferences": []any{map[string]any{
					"apiVersion": "v1", "kind": "Node", "name": name, "uid": kobj.UID(node),
				}},
			},
			"spec": map[string]any{
				"holderIdentity":       name,
				"leaseDurationSeconds": int64(LeaseDurationSeconds),
				"renewTime":            kobj.FormatMicroTime(now),
			},
		}
		if _, err := c.Create(ctx, lease); err != nil && !cluster.IsAlreadyExists(err) {
			return false, fmt.Errorf("create lease: %w", err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("get lease: %w", err)
	}
	last := kobj.ParseTime(kobj.Str(lease, "spec", "renewTime"))
	if !last.IsZero() && now.Sub(last) < RenewInterval {
		return false, nil
	}
	next := kobj.Copy(lease)
	spec := kobj.EnsureMap(next, "spec")
	spec["holderIdentity"] = name
	spec["leaseDurationSeconds"] = int64(LeaseDurationSeconds)
	spec["renewTime"] = kobj.FormatMicroTime(now)
	if _, err := c.Update(ctx, next); err != nil {
		if cluster.IsConflict(err) || cluster.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("renew lease: %w", err)
	}
	return true, nil
}
