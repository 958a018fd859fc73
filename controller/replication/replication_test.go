package replication_test

import (
	"strings"
	"testing"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/replication"
	"github.com/konverge/konverge/schema"
)

var rcGVK = schema.GVK{Version: "v1", Kind: "ReplicationController"}

// TestLifecycle follows the rc scenario that internal/workloadtest
// recorded from kube-controller-manager: a ReplicationController (its
// selector defaulted from the template's labels) adopts a matching orphan,
// creates the pods it lacks, scales up, replaces a pod it releases when
// its labels stop matching, and scales down, with the ReplicaSet
// controller's Events under the ReplicationController's name.
func TestLifecycle(t *testing.T) {
	e := ctrltest.New(t)
	settle := func() { e.Settle([]controller.Controller{replication.Controller{}}, ctrltest.RunPods) }
	e.Create(map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "stray", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:1.25"}}}})
	e.Create(map[string]any{"apiVersion": "v1", "kind": "ReplicationController",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{"replicas": int64(3),
			"template": ctrltest.PodTemplate("nginx:1.25", map[string]any{"app": "web"})}})
	type counts struct{ pods, owned, created, deleted int64 }
	check := func(step string, want counts, status map[string]int64) {
		t.Helper()
		var got counts
		rc := e.Get(rcGVK, "default", "web")
		for _, p := range e.List(kobj.PodGVK, "default") {
			got.pods++
			if ref := kobj.ControllerRef(p); ref != nil {
				if ref["kind"] != "ReplicationController" || ref["apiVersion"] != "v1" || ref["uid"] != kobj.UID(rc) {
					t.Errorf("%s: pod %s controller reference %v", step, kobj.Name(p), ref)
				}
				got.owned++
			}
		}
		for _, ev := range e.List(kobj.EventGVK, "default") {
			if kobj.Str(ev, "involvedObject", "kind") != "ReplicationController" {
				continue
			}
			n := kobj.IntOr(ev, 1, "count")
			switch {
			case ev["reason"] == "SuccessfulCreate" && strings.HasPrefix(kobj.Str(ev, "message"), "Created pod: web-"):
				got.created += n
			case ev["reason"] == "SuccessfulDelete" && strings.HasPrefix(kobj.Str(ev, "message"), "Deleted pod: web-"):
				got.deleted += n
			default:
				t.Errorf("%s: event %s %s", step, ev["reason"], ev["message"])
			}
		}
		if got != want {
			t.Errorf("%s: %+v, want %+v", step, got, want)
		}
		for f, n := range status {
			if v := kobj.IntOr(rc, -1, "status", f); v != n {
				t.Errorf("%s: status.%s %d, want %d", step, f, v, n)
			}
		}
	}
	settle()
	if got := kobj.Labels(e.Get(rcGVK, "default", "web")); got["app"] != "web" {
		t.Errorf("labels defaulted from the template: %v", got)
	}
	if ref := kobj.ControllerRef(e.Get(kobj.PodGVK, "default", "stray")); ref == nil {
		t.Error("the orphan was not adopted")
	}
	check("create", counts{pods: 3, owned: 3, created: 2}, map[string]int64{"replicas": 3, "readyReplicas": 3, "availableReplicas": 3})

	e.Modify(rcGVK, "default", "web", func(rc map[string]any) { rc["spec"].(map[string]any)["replicas"] = int64(5) })
	settle()
	check("scale-up", counts{pods: 5, owned: 5, created: 4}, map[string]int64{"replicas": 5, "readyReplicas": 5, "observedGeneration": 2})

	e.Modify(kobj.PodGVK, "default", "stray", func(p map[string]any) {
		p["metadata"].(map[string]any)["labels"] = map[string]any{"app": "other"}
	})
	settle()
	if ref := kobj.ControllerRef(e.Get(kobj.PodGVK, "default", "stray")); ref != nil {
		t.Errorf("the relabelled pod is still owned: %v", ref)
	}
	check("release", counts{pods: 6, owned: 5, created: 5}, map[string]int64{"replicas": 5, "readyReplicas": 5})

	e.Modify(rcGVK, "default", "web", func(rc map[string]any) { rc["spec"].(map[string]any)["replicas"] = int64(2) })
	settle()
	check("scale-down", counts{pods: 3, owned: 2, created: 5, deleted: 3}, map[string]int64{"replicas": 2})
}
