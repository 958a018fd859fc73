package node_test

import (
	"slices"
	"testing"

	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/node"
)

// TestRegisteredNode: a new Node gets the TTL controller's annotation
// (0 in a small cluster) and one RegisteredNode Event from
// node-controller, as kube-controller-manager v1.37 gives them (recorded
// in internal/describe/testdata/node); a second settle adds nothing.
func TestRegisteredNode(t *testing.T) {
	e := ctrltest.New(t)
	e.Create(ctrltest.Node("node-1", nil))
	settle(e)
	if got := kobj.Annotation(e.Get(kobj.NodeGVK, "", "node-1"), node.TTLAnnotation); got != "0" {
		t.Errorf("ttl annotation %q, want 0", got)
	}
	want := []string{"Normal RegisteredNode Node/node-1: Node node-1 event: Registered Node node-1 in Controller"}
	if evs := e.Events("default"); !slices.Equal(evs, want) {
		t.Errorf("events %q, want %q", evs, want)
	}
	settle(e)
	if evs := e.Events("default"); !slices.Equal(evs, want) {
		t.Errorf("after a second settle: events %q", evs)
	}
}
