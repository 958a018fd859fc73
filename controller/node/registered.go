package node

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// What kube-controller-manager does when a Node appears: the node
// lifecycle controller records a RegisteredNode Event about it ("Node X
// event: Registered Node X in Controller", from node-controller), and the
// TTL controller sets its node.alpha.kubernetes.io/ttl annotation, the
// seconds a kubelet may cache the objects its pods use: 0 up to 100
// nodes, then 15, 30, 60 and 300 seconds as the cluster grows past 500,
// 1000 and 2000 nodes. Here a Node without the annotation is one the
// controllers have not seen yet: it gets both.

// TTLAnnotation is the TTL controller's annotation of a Node.
const TTLAnnotation = "node.alpha.kubernetes.io/ttl"

// NodeControllerComponent is the source of the node lifecycle
// controller's Events.
const NodeControllerComponent = "node-controller"

// ttlFor is the TTL controller's ttl for a cluster of n nodes.
func ttlFor(n int) int {
	switch {
	case n <= 100:
		return 0
	case n <= 500:
		return 15
	case n <= 1000:
		return 30
	case n <= 2000:
		return 60
	}
	return 300
}

// register annotates a Node the controllers see for the first time and
// records its RegisteredNode Event; it reports whether it wrote.
func register(ctx context.Context, c cluster.Interface, node map[string]any, nodes int, now time.Time) (bool, error) {
	want := strconv.Itoa(ttlFor(nodes))
	if _, ok := kobj.Map(node, "metadata", "annotations")[TTLAnnotation]; ok {
		return false, nil
	}
	next := kobj.Copy(node)
	kobj.SetAnnotation(next, TTLAnnotation, want)
	if _, err := c.Update(ctx, next); err != nil {
		if cluster.IsConflict(err) || cluster.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("annotate node: %w", err)
	}
	name := kobj.Name(node)
	if _, err := event.Emit(ctx, c, event.Event{Involved: node, Type: event.Normal, Reason: "RegisteredNode",
		Message:   fmt.Sprintf("Node %s event: Registered Node %s in Controller", name, name),
		Component: NodeControllerComponent, Time: now}); err != nil {
		return true, fmt.Errorf("record RegisteredNode: %w", err)
	}
	return true, nil
}
