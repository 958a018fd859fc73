package podgc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/podgc"
	"github.com/konverge/konverge/schema"
)

var nodeGVK = schema.GVK{Version: "v1", Kind: "Node"}

// pod creates a pod bound to node (none: unbound) in phase (none: left
// as created).
func pod(e *ctrltest.Env, name, node, phase string) {
	e.TB.Helper()
	spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}
	if node != "" {
		spec["nodeName"] = node
	}
	p := e.Create(map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec})
	if phase != "" {
		p["status"] = map[string]any{"phase": phase}
		e.UpdateStatus(p)
	}
}

// TestTerminatedThreshold: above the threshold the surplus of terminated
// pods goes, evicted ones first, then the oldest; running pods stay.
func TestTerminatedThreshold(t *testing.T) {
	e := ctrltest.New(t)
	e.Create(ctrltest.Node("n1", nil))
	for i := range 4 {
		pod(e, fmt.Sprintf("done-%d", i), "n1", "Succeeded")
		e.Advance(time.Second)
	}
	pod(e, "run", "n1", "Running")
	pod(e, "evicted", "n1", "")
	p := e.Get(kobj.PodGVK, "default", "evicted")
	p["status"] = map[string]any{"phase": "Failed", "reason": "Evicted"}
	e.UpdateStatus(p)
	ctl := &podgc.Controller{Threshold: 2}
	if !e.Sync(ctl).Changed {
		t.Fatal("nothing collected")
	}
	got := fmt.Sprint(e.Names(kobj.PodGVK, "default"))
	if want := "[done-2 done-3 run]"; got != want {
		t.Fatalf("pods left %s, want %s", got, want)
	}
	if e.Sync(ctl).Changed {
		t.Fatal("a second sync changed something")
	}
}

// TestOrphaned: a pod bound to a node that does not exist stays for the
// quarantine, then is marked Failed with DisruptionTarget and deleted.
func TestOrphaned(t *testing.T) {
	e := ctrltest.New(t)
	e.Create(ctrltest.Node("n1", nil))
	pod(e, "a", "n1", "Running")
	pod(e, "b", "n2", "Running")
	ctl := podgc.New()
	res := e.Sync(ctl)
	if want := e.Now().Add(podgc.Quarantine); !res.RequeueAt.Equal(want) {
		t.Fatalf("RequeueAt %v, want %v", res.RequeueAt, want)
	}
	if !e.Exists(kobj.PodGVK, "default", "b") {
		t.Fatal("b deleted before the quarantine ended")
	}
	e.Advance(podgc.Quarantine - time.Second)
	e.Sync(ctl)
	if !e.Exists(kobj.PodGVK, "default", "b") {
		t.Fatal("b deleted before the quarantine ended")
	}
	// Watch b's last status on its way out through a finalizer.
	b := e.Get(kobj.PodGVK, "default", "b")
	kobj.EnsureMap(b, "metadata")["finalizers"] = []any{"test/keep"}
	e.Update(b)
	e.Advance(time.Second)
	if !e.Sync(ctl).Changed {
		t.Fatal("nothing collected after the quarantine")
	}
	b = e.Get(kobj.PodGVK, "default", "b")
	c := kobj.Condition(b, "DisruptionTarget")
	if !kobj.Deleting(b) || kobj.Str(b, "status", "phase") != "Failed" || c == nil ||
		kobj.Str(c, "reason") != "DeletionByPodGC" || kobj.Str(c, "message") != "PodGC: node no longer exists" || kobj.Str(c, "status") != "True" {
		t.Fatalf("b: %v", b)
	}
	// As kube-controller-manager v1.37.1 writes it (a pod bound by a
	// Binding to a node then deleted: Failed, this condition, deleted
	// with grace 0 about 53s after the node).
	if g, _ := kobj.Int(b, "status", "observedGeneration"); g != 1 {
		t.Errorf("status.observedGeneration %v, want 1", kobj.Map(b, "status")["observedGeneration"])
	}
	if g, _ := kobj.Int(c, "observedGeneration"); g != 1 || kobj.Str(c, "lastTransitionTime") != kobj.FormatTime(e.Now()) {
		t.Errorf("condition %v", c)
	}
	if !e.Exists(kobj.PodGVK, "default", "a") {
		t.Fatal("a, on a node that exists, was deleted")
	}
}

// TestOrphanNodeBack: a node that comes back within the quarantine keeps
// its pods; one that goes again starts a new quarantine.
func TestOrphanNodeBack(t *testing.T) {
	e := ctrltest.New(t)
	pod(e, "a", "n1", "Running")
	ctl := podgc.New()
	e.Sync(ctl)
	e.Advance(30 * time.Second)
	e.Create(ctrltest.Node("n1", nil))
	e.Sync(ctl)
	e.Delete(nodeGVK, "", "n1")
	e.Sync(ctl)
	e.Advance(30 * time.Second)
	e.Sync(ctl)
	if !e.Exists(kobj.PodGVK, "default", "a") {
		t.Fatal("a deleted before its node's new quarantine ended")
	}
	e.Advance(10 * time.Second)
	e.Sync(ctl)
	if e.Exists(kobj.PodGVK, "default", "a") {
		t.Fatal("a still there after the quarantine")
	}
}

// TestTerminatingOutOfService: a pod being deleted on a NotReady node with
// the out-of-service taint is marked Failed and deleted at once; on a
// node without the taint it waits.
func TestTerminatingOutOfService(t *testing.T) {
	e := ctrltest.New(t)
	for _, n := range []map[string]any{ctrltest.Node("oos", nil, podgc.OutOfServiceTaint+"=nodeshutdown:NoExecute"), ctrltest.Node("plain", nil)} {
		n = e.Create(n)
		n["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "Unknown"}}}
		e.UpdateStatus(n)
	}
	pod(e, "a", "oos", "Running")
	pod(e, "b", "plain", "Running")
	e.Delete(kobj.PodGVK, "default", "a")
	e.Delete(kobj.PodGVK, "default", "b")
	if !kobj.Deleting(e.Get(kobj.PodGVK, "default", "a")) {
		t.Fatal("a is not being deleted gracefully: the test proves nothing")
	}
	ctl := podgc.New()
	e.Sync(ctl)
	if e.Exists(kobj.PodGVK, "default", "a") {
		t.Fatal("a, terminating on an out-of-service node, is still there")
	}
	if !e.Exists(kobj.PodGVK, "default", "b") {
		t.Fatal("b, on a node without the taint, was deleted")
	}
}
