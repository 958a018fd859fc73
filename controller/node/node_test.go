package node_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/node"
)

func settle(e *ctrltest.Env) controller.Result {
	return e.Settle([]controller.Controller{node.Controller{}})
}

// pod creates a pod bound to node-1 with the tolerations.
func pod(e *ctrltest.Env, name string, tolerations ...any) {
	e.TB.Helper()
	spec := map[string]any{"nodeName": "node-1", "containers": []any{map[string]any{"name": "c", "image": "nginx"}}}
	if len(tolerations) > 0 {
		spec["tolerations"] = tolerations
	}
	e.Create(map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec})
}

func toleration(seconds int64) map[string]any {
	t := map[string]any{"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}
	if seconds >= 0 {
		t["tolerationSeconds"] = seconds
	}
	return t
}

// TestTaintEviction: a NoExecute taint evicts the pods that do not
// tolerate it at once (the DisruptionTarget condition, a graceful
// deletion, a TaintManagerEviction Event), those that tolerate it for a
// while once that while after the taint's timeAdded (or, without one,
// after the controller first saw the taint) is over, and never those
// that tolerate it for ever.
// (internal/cli's TestNoExecuteTaintEvicts shows the same through the
// CLI, with the kubelet finishing the deletion.)
func TestTaintEviction(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tols      []any
		noTime    bool          // the taint has no timeAdded
		evictedAt time.Duration // after the taint; -1: never
	}{
		{"not tolerated", nil, false, 0},
		{"tolerated for ever", []any{toleration(-1)}, false, -1},
		{"tolerated for 30s", []any{toleration(30)}, false, 30 * time.Second},
		{"tolerated for 0s", []any{toleration(0)}, false, 0},
		{"the shortest of two", []any{toleration(90), toleration(20)}, false, 20 * time.Second},
		// As kube-controller-manager, from when the controller sees it
		// (sched-noexecute of internal/workloadtest records it).
		{"no timeAdded: from when it is seen", []any{toleration(30)}, true, 30 * time.Second},
		{"another key tolerated", []any{map[string]any{"key": "other", "operator": "Exists", "effect": "NoExecute"}}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ctrltest.New(t)
			e.Create(ctrltest.Node("node-1", nil))
			pod(e, "p", tc.tols...)
			settle(e)
			taintedAt := e.Now()
			taint := map[string]any{"key": "maintenance", "value": "now", "effect": "NoExecute"}
			if !tc.noTime {
				taint["timeAdded"] = kobj.FormatTime(taintedAt)
			}
			e.Modify(kobj.NodeGVK, "", "node-1", func(n map[string]any) {
				kobj.EnsureMap(n, "spec")["taints"] = []any{taint}
			})
			res := settle(e)
			for _, at := range []time.Duration{0, 10 * time.Second, 20 * time.Second, 30 * time.Second, time.Hour} {
				e.Clock.Set(taintedAt.Add(at))
				res = settle(e)
				p := e.Get(kobj.PodGVK, "default", "p")
				evicted := kobj.Deleting(p)
				if want := tc.evictedAt >= 0 && at >= tc.evictedAt; evicted != want {
					t.Fatalf("%v after the taint: evicted %v, want %v", at, evicted, want)
				}
				if !evicted && tc.evictedAt > at && !res.RequeueAt.Equal(taintedAt.Add(tc.evictedAt)) {
					t.Errorf("%v after the taint: requeue at %v, want at the eviction, %v", at, res.RequeueAt, taintedAt.Add(tc.evictedAt))
				}
				if !evicted {
					continue
				}
				c := kobj.Condition(p, "DisruptionTarget")
				if c == nil || c["status"] != "True" || c["reason"] != "DeletionByTaintManager" || c["message"] != "Taint manager: deleting due to NoExecute taint" {
					t.Errorf("DisruptionTarget condition %v", c)
				}
				want := "Normal TaintManagerEviction Pod/p: Marking for deletion Pod default/p"
				// (The node's own RegisteredNode Event is not this test's.)
				evs := slices.DeleteFunc(e.Events("default"), func(s string) bool { return strings.HasPrefix(s, "Normal RegisteredNode ") })
				if !slices.Equal(evs, []string{want}) {
					t.Errorf("events %v, want %q", evs, want)
				}
				return
			}
			if tc.evictedAt >= 0 {
				t.Fatal("never evicted")
			}
			if !res.RequeueAt.IsZero() {
				t.Errorf("a pod that stays asks for a wake-up at %v", res.RequeueAt)
			}
		})
	}
}

// TestCordonAndLease: a cordoned node gets the unschedulable NoSchedule
// taint (with the time it was added) and loses it uncordoned; its Lease
// is created as the kubelet's and renewed only once RenewInterval old,
// without a wake-up of its own.
func TestCordonAndLease(t *testing.T) {
	e := ctrltest.New(t)
	e.Create(ctrltest.Node("node-1", nil, "keep=me:NoSchedule"))
	if res := settle(e); !res.RequeueAt.IsZero() {
		t.Errorf("requeue at %v, want none", res.RequeueAt)
	}
	lease := e.Get(kobj.LeaseGVK, node.LeaseNamespace, "node-1")
	renewed := kobj.Str(lease, "spec", "renewTime")
	if kobj.Str(lease, "spec", "holderIdentity") != "node-1" || kobj.IntOr(lease, 0, "spec", "leaseDurationSeconds") != node.LeaseDurationSeconds || renewed == "" {
		t.Errorf("lease spec %v", lease["spec"])
	}
	if ref := kobj.Slice(lease, "metadata", "ownerReferences"); len(ref) != 1 || ref[0].(map[string]any)["kind"] != "Node" {
		t.Errorf("lease owners %v", ref)
	}

	e.Advance(node.RenewInterval - time.Second)
	settle(e)
	if got := kobj.Str(e.Get(kobj.LeaseGVK, node.LeaseNamespace, "node-1"), "spec", "renewTime"); got != renewed {
		t.Errorf("renewed before RenewInterval: %s", got)
	}
	e.Advance(time.Second)
	settle(e)
	if got := kobj.Str(e.Get(kobj.LeaseGVK, node.LeaseNamespace, "node-1"), "spec", "renewTime"); got == renewed {
		t.Error("not renewed after RenewInterval")
	}

	taints := func() []string {
		var out []string
		for _, x := range kobj.Slice(e.Get(kobj.NodeGVK, "", "node-1"), "spec", "taints") {
			m := x.(map[string]any)
			s := kobj.Str(m, "key") + ":" + kobj.Str(m, "effect")
			if m["key"] == node.UnschedulableTaint && kobj.Str(m, "timeAdded") != kobj.FormatTime(e.Now()) {
				s += " timeAdded " + kobj.Str(m, "timeAdded")
			}
			out = append(out, s)
		}
		return out
	}
	e.Modify(kobj.NodeGVK, "", "node-1", func(n map[string]any) { kobj.EnsureMap(n, "spec")["unschedulable"] = true })
	settle(e)
	if got, want := taints(), []string{"keep:NoSchedule", node.UnschedulableTaint + ":NoSchedule"}; !slices.Equal(got, want) {
		t.Errorf("cordoned: taints %v, want %v", got, want)
	}
	e.Modify(kobj.NodeGVK, "", "node-1", func(n map[string]any) { delete(kobj.EnsureMap(n, "spec"), "unschedulable") })
	settle(e)
	if got, want := taints(), []string{"keep:NoSchedule"}; !slices.Equal(got, want) {
		t.Errorf("uncordoned: taints %v, want %v", got, want)
	}
}
