package daemonset_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/daemonset"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// each runs fn with the full and the incremental controller.
func each(t *testing.T, fn func(t *testing.T, e *ctrltest.Env, ctl controller.Controller)) {
	t.Helper()
	ctrltest.Modes(t, func() controller.Controller { return daemonset.Controller{} },
		func() controller.Controller { return daemonset.New() }, fn)
}

func settle(e *ctrltest.Env, ctl controller.Controller) controller.Result {
	return e.Settle([]controller.Controller{ctl}, ctrltest.RunPods)
}

func ds(spec map[string]any) map[string]any {
	tmpl := ctrltest.PodTemplate("nginx:1.25", map[string]any{"app": "agent"})
	for k, v := range spec {
		kobj.EnsureMap(tmpl, "spec")[k] = v
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "DaemonSet",
		"metadata": map[string]any{"name": "agent", "namespace": "default"},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "agent"}},
			"template": tmpl,
		},
	}
}

// nodesOf returns, by pod name, the node each pod is pinned to by its
// required node affinity on metadata.name.
func nodesOf(t *testing.T, pods []map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range pods {
		terms := kobj.Slice(p, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		if len(terms) != 1 {
			t.Fatalf("pod %s: node selector terms %v, want one", kobj.Name(p), terms)
		}
		f := kobj.Slice(terms[0].(map[string]any), "matchFields")
		if len(f) != 1 {
			t.Fatalf("pod %s: matchFields %v, want one", kobj.Name(p), f)
		}
		fm := f[0].(map[string]any)
		vals := kobj.Slice(fm, "values")
		if fm["key"] != "metadata.name" || fm["operator"] != "In" || len(vals) != 1 {
			t.Fatalf("pod %s: matchFields %v, want metadata.name In [node]", kobj.Name(p), fm)
		}
		out[kobj.Name(p)] = vals[0].(string)
	}
	return out
}

// TestPlacement: one pod per node the DaemonSet should run on, as
// internal/workloadtest's sched-daemonset scenario recorded from
// kube-controller-manager (a NoSchedule taint without a toleration keeps
// a node out; a nodeSelector narrows to the labelled node).
func TestPlacement(t *testing.T) {
	nodes := []map[string]any{
		ctrltest.Node("node-a", map[string]string{"role": "edge"}),
		ctrltest.Node("node-b", nil, "dedicated=db:NoSchedule"),
		ctrltest.Node("node-c", nil),
		ctrltest.Node("node-d", nil, "evict:NoExecute"),
	}
	tolerate := func(key, effect string) []any {
		return []any{map[string]any{"key": key, "operator": "Exists", "effect": effect}}
	}
	for _, tc := range []struct {
		name string
		spec map[string]any // of the pod template
		want []string       // nodes with a pod
	}{
		{"taints keep nodes out", nil, []string{"node-a", "node-c"}},
		{"a tolerated NoSchedule taint", map[string]any{"tolerations": tolerate("dedicated", "NoSchedule")}, []string{"node-a", "node-b", "node-c"}},
		{"a tolerated NoExecute taint", map[string]any{"tolerations": tolerate("evict", "NoExecute")}, []string{"node-a", "node-c", "node-d"}},
		{"nodeSelector", map[string]any{"nodeSelector": map[string]any{"role": "edge"}}, []string{"node-a"}},
		{"nodeName", map[string]any{"nodeName": "node-c"}, []string{"node-c"}},
		{"required node affinity", map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{
				"matchExpressions": []any{map[string]any{"key": "role", "operator": "DoesNotExist"}}}}}}}},
			[]string{"node-c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			each(t, func(t *testing.T, e *ctrltest.Env, ctl controller.Controller) {
				for _, n := range nodes {
					e.Create(n)
				}
				e.Create(ds(tc.spec))
				settle(e, ctl)
				pods := e.List(kobj.PodGVK, "default")
				var got []string
				var events []string
				for name, node := range nodesOf(t, pods) {
					got = append(got, node)
					events = append(events, "Normal SuccessfulCreate DaemonSet/agent: Created pod: "+name)
				}
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					t.Errorf("pods on %v, want %v", got, tc.want)
				}
				gotEvents := e.Events("default")
				slices.Sort(gotEvents)
				slices.Sort(events)
				if !slices.Equal(gotEvents, events) {
					t.Errorf("events:\n%s\nwant:\n%s", strings.Join(gotEvents, "\n"), strings.Join(events, "\n"))
				}
				d := e.Get(kobj.DaemonSetGVK, "default", "agent")
				n := int64(len(tc.want))
				for _, f := range []string{"desiredNumberScheduled", "currentNumberScheduled", "updatedNumberScheduled", "numberReady", "numberAvailable"} {
					if got := kobj.IntOr(d, -1, "status", f); got != n {
						t.Errorf("status.%s = %d, want %d", f, got, n)
					}
				}
				if got := kobj.IntOr(d, -1, "status", "numberMisscheduled"); got != 0 {
					t.Errorf("status.numberMisscheduled = %d, want 0", got)
				}
			})
		})
	}
}

// TestPodsAndRevisions: the pods' labels, owner, tolerations and the
// ControllerRevision, as the ds-rolling scenario of internal/workloadtest
// recorded them from kube-controller-manager (the same template gives the
// same hash).
func TestPodsAndRevisions(t *testing.T) {
	each(t, func(t *testing.T, e *ctrltest.Env, ctl controller.Controller) {
		e.Create(ctrltest.Node("konverge-node", nil))
		obj := ds(map[string]any{"tolerations": []any{map[string]any{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}}})
		obj["spec"].(map[string]any)["revisionHistoryLimit"] = int64(1)
		c := kobj.Slice(obj, "spec", "template", "spec", "containers")[0].(map[string]any)
		c["name"] = "a"
		c["resources"] = map[string]any{"limits": map[string]any{"cpu": "100m", "memory": "64Mi"}}
		e.Create(obj)
		settle(e, ctl)

		revs := e.List(kobj.ControllerRevisionGVK, "default")
		if len(revs) != 1 || kobj.Name(revs[0]) != "agent-56b79b4d47" || kobj.IntOr(revs[0], 0, "revision") != 1 {
			t.Fatalf("revisions %v, want agent-56b79b4d47 revision 1", e.Names(kobj.ControllerRevisionGVK, "default"))
		}
		if got := kobj.Labels(revs[0])[daemonset.HashLabel]; got != "56b79b4d47" {
			t.Errorf("revision hash label %q", got)
		}
		pods := e.List(kobj.PodGVK, "default")
		if len(pods) != 1 {
			t.Fatalf("%d pods, want 1", len(pods))
		}
		p := pods[0]
		if l := kobj.Labels(p); l[daemonset.HashLabel] != "56b79b4d47" || l[daemonset.TemplateGenerationLabel] != "1" || l["app"] != "agent" {
			t.Errorf("pod labels %v", l)
		}
		if ref := kobj.ControllerRef(p); ref == nil || ref["kind"] != "DaemonSet" || ref["name"] != "agent" || ref["blockOwnerDeletion"] != true {
			t.Errorf("pod controller reference %v", ref)
		}
		var tol []string
		for _, x := range kobj.Slice(p, "spec", "tolerations") {
			m := x.(map[string]any)
			tol = append(tol, fmt.Sprintf("%s:%s:%s", m["key"], m["operator"], m["effect"]))
		}
		want := []string{
			"dedicated:Exists:NoSchedule",
			"node.kubernetes.io/not-ready:Exists:NoExecute",
			"node.kubernetes.io/unreachable:Exists:NoExecute",
			"node.kubernetes.io/disk-pressure:Exists:NoSchedule",
			"node.kubernetes.io/memory-pressure:Exists:NoSchedule",
			"node.kubernetes.io/pid-pressure:Exists:NoSchedule",
			"node.kubernetes.io/unschedulable:Exists:NoSchedule",
		}
		if !slices.Equal(tol, want) {
			t.Errorf("tolerations\n%s\nwant\n%s", strings.Join(tol, "\n"), strings.Join(want, "\n"))
		}
		if got := nodesOf(t, pods)[kobj.Name(p)]; got != "konverge-node" {
			t.Errorf("pinned to %q", got)
		}
	})
}

// TestUpdateStrategies: RollingUpdate deletes the old pod before it
// creates the new one (maxUnavailable 1, as the ds-rolling scenario);
// OnDelete leaves the pods of an older template alone; the history keeps
// revisionHistoryLimit old revisions.
func TestUpdateStrategies(t *testing.T) {
	image := func(img string) func(map[string]any) {
		return func(d map[string]any) {
			kobj.Slice(d, "spec", "template", "spec", "containers")[0].(map[string]any)["image"] = img
		}
	}
	each(t, func(t *testing.T, e *ctrltest.Env, ctl controller.Controller) {
		e.Create(ctrltest.Node("node-a", nil))
		obj := ds(nil)
		obj["spec"].(map[string]any)["revisionHistoryLimit"] = int64(1)
		e.Create(obj)
		settle(e, ctl)
		first := e.List(kobj.PodGVK, "default")

		e.Modify(kobj.DaemonSetGVK, "default", "agent", image("nginx:1.26"))
		settle(e, ctl)
		second := e.Names(kobj.PodGVK, "default")
		if len(second) != 1 || kobj.UID(e.Get(kobj.PodGVK, "default", second[0])) == kobj.UID(first[0]) {
			t.Fatalf("after the update: pods %v, want one new pod", second)
		}
		// (The store may give the new pod the old one's name.)
		evs := e.Events("default")
		for _, want := range []string{
			"Normal SuccessfulDelete DaemonSet/agent: Deleted pod: " + kobj.Name(first[0]),
			"Normal SuccessfulCreate DaemonSet/agent: Created pod: " + second[0],
		} {
			if !slices.Contains(evs, want) {
				t.Errorf("events\n%s\nwant\n%s", strings.Join(evs, "\n"), want)
			}
		}
		if got := kobj.Labels(e.Get(kobj.PodGVK, "default", second[0]))[daemonset.TemplateGenerationLabel]; got != "2" {
			t.Errorf("new pod's template generation %q, want 2", got)
		}

		e.Modify(kobj.DaemonSetGVK, "default", "agent", func(d map[string]any) {
			d["spec"].(map[string]any)["updateStrategy"] = map[string]any{"type": "OnDelete"}
			image("nginx:1.27")(d)
		})
		settle(e, ctl)
		if got := e.Names(kobj.PodGVK, "default"); !slices.Equal(got, second) {
			t.Errorf("OnDelete: pods %v, want %v kept", got, second)
		}
		d := e.Get(kobj.DaemonSetGVK, "default", "agent")
		// Zero, left out of the status as the recording shows.
		if got := kobj.IntOr(d, -1, "status", "updatedNumberScheduled"); got != -1 {
			t.Errorf("OnDelete: updatedNumberScheduled %d, want none", got)
		}
		if revs := e.List(kobj.ControllerRevisionGVK, "default"); len(revs) != 2 {
			t.Errorf("revisions %v, want the current one and one old one", e.Names(kobj.ControllerRevisionGVK, "default"))
		}
		// The pod deleted, its replacement has the new template.
		e.Delete(kobj.PodGVK, "default", second[0])
		settle(e, ctl)
		third := e.Names(kobj.PodGVK, "default")
		if len(third) != 1 {
			t.Fatalf("OnDelete after a deletion: pods %v", third)
		}
		if got := kobj.Labels(e.Get(kobj.PodGVK, "default", third[0]))[daemonset.TemplateGenerationLabel]; got != "3" {
			t.Errorf("replacement's template generation %q, want 3", got)
		}
	})
}

// TestNodesComeAndGo: a new node gets a pod; the pod of a node that
// leaves goes; a failed daemon pod is deleted with upstream's event and
// replaced.
func TestNodesComeAndGo(t *testing.T) {
	each(t, func(t *testing.T, e *ctrltest.Env, ctl controller.Controller) {
		e.Create(ctrltest.Node("node-a", nil))
		e.Create(ds(nil))
		settle(e, ctl)
		e.Create(ctrltest.Node("node-b", nil))
		settle(e, ctl)
		byNode := func() map[string]string {
			out := map[string]string{}
			for pod, node := range nodesOf(t, e.List(kobj.PodGVK, "default")) {
				out[node] = pod
			}
			return out
		}
		if got := byNode(); len(got) != 2 || got["node-b"] == "" {
			t.Fatalf("after node-b joined: pods by node %v", got)
		}
		e.Delete(kobj.NodeGVK, "", "node-b")
		settle(e, ctl)
		if got := byNode(); len(got) != 1 || got["node-a"] == "" {
			t.Fatalf("after node-b left: pods by node %v", got)
		}

		failed := byNode()["node-a"]
		p := e.Get(kobj.PodGVK, "default", failed)
		p["status"] = map[string]any{"phase": "Failed"}
		e.UpdateStatus(p)
		settle(e, ctl)
		got := byNode()
		if len(got) != 1 || got["node-a"] == "" {
			t.Fatalf("after the failure: pods by node %v, want one on node-a", got)
		}
		// (The store may give the new pod the old one's name.)
		if kobj.UID(e.Get(kobj.PodGVK, "default", got["node-a"])) == kobj.UID(p) {
			t.Errorf("the failed pod %s stayed", failed)
		}
		want := fmt.Sprintf("Warning FailedDaemonPod DaemonSet/agent: Found failed daemon pod default/%s on node node-a, will try to kill it", failed)
		if !slices.Contains(e.Events("default"), want) {
			t.Errorf("events\n%s\nwant\n%s", strings.Join(e.Events("default"), "\n"), want)
		}
	})
}
