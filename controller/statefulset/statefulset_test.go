package statefulset_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/statefulset"
)

// TestParallelBurst: a Parallel StatefulSet of 1,001 replicas gets at
// most 500 pods per second of cluster time, and asks for the next sync a
// second later while pods are missing; nothing more at the same time.
// Scaled down, it deletes at most 500 pods per sync.
func TestParallelBurst(t *testing.T) {
	e := ctrltest.New(t)
	e.Create(map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "wide", "namespace": "default"},
		"spec": map[string]any{
			"replicas":            int64(1001),
			"podManagementPolicy": "Parallel",
			"serviceName":         "wide",
			"selector":            map[string]any{"matchLabels": map[string]any{"app": "wide"}},
			"template":            ctrltest.PodTemplate("nginx", map[string]any{"app": "wide"}),
		},
	})
	count := func() int { return len(e.List(kobj.PodGVK, "default")) }
	for i, want := range []int{500, 1000, 1001} {
		var last time.Time
		for range 10 {
			res := e.Sync(statefulset.Controller{})
			last = res.RequeueAt
			if !res.Changed {
				break
			}
		}
		if got := count(); got != want {
			t.Fatalf("after second %d: %d pods, want %d", i, got, want)
		}
		if want < 1001 && !last.Equal(e.Now().Add(time.Second)) {
			t.Fatalf("after second %d: requeue at %v, want a second later", i, last)
		}
		e.Advance(time.Second)
	}

	// Scaled to 0: at most 500 deletions per sync.
	e.Modify(kobj.StatefulSetGVK, "default", "wide", func(set map[string]any) {
		set["spec"].(map[string]any)["replicas"] = int64(0)
	})
	for _, want := range []int{501, 1, 0} {
		res := e.Sync(statefulset.Controller{})
		if got := count(); got != want {
			t.Fatalf("scale down: %d pods left after a sync, want %d", got, want)
		}
		if want > 0 && !res.RequeueAt.Equal(e.Now().Add(time.Second)) {
			t.Fatalf("scale down: requeue at %v, want a second later", res.RequeueAt)
		}
	}
}

func each(t *testing.T, fn func(t *testing.T, e *ctrltest.Env, ctl controller.Controller)) {
	t.Helper()
	ctrltest.Modes(t, func() controller.Controller { return statefulset.Controller{} },
		func() controller.Controller { return statefulset.New() }, fn)
}

func webSet(replicas int64, spec map[string]any) map[string]any {
	s := map[string]any{
		"serviceName": "web",
		"replicas":    replicas,
		"selector":    map[string]any{"matchLabels": map[string]any{"app": "web"}},
		"template":    ctrltest.PodTemplate("nginx:1.25", map[string]any{"app": "web"}),
		"volumeClaimTemplates": []any{map[string]any{
			"metadata": map[string]any{"name": "data"},
			"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"},
				"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
		}},
	}
	for k, v := range spec {
		s[k] = v
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "web", "namespace": "default"}, "spec": s}
}

// TestOrderedReady follows the sts-ordering scenario that
// internal/workloadtest recorded from kube-controller-manager: pods and
// their claims one at a time in ordinal order, each once the one before
// is ready, with upstream's Events; scale down from the highest ordinal;
// a deleted pod comes back under its name.
func TestOrderedReady(t *testing.T) {
	each(t, func(t *testing.T, e *ctrltest.Env, ctl controller.Controller) {
		set := e.Create(webSet(3, nil))
		names := func() []string { return e.Names(kobj.PodGVK, "default") }
		for i, want := range [][]string{{"web-0"}, {"web-0", "web-1"}, {"web-0", "web-1", "web-2"}} {
			e.Settle([]controller.Controller{ctl})
			if got := names(); !slices.Equal(got, want) {
				t.Fatalf("round %d: pods %v, want %v (one at a time, each once the one before is ready)", i, got, want)
			}
			ctrltest.RunPods(e)
		}
		e.Settle([]controller.Controller{ctl}, ctrltest.RunPods)
		if got, want := e.Names(kobj.PVCGVK, "default"), []string{"data-web-0", "data-web-1", "data-web-2"}; !slices.Equal(got, want) {
			t.Errorf("claims %v, want %v", got, want)
		}
		var want []string
		for i := range 3 {
			want = append(want,
				fmt.Sprintf("Normal SuccessfulCreate StatefulSet/web: Create Claim data-web-%d Pod web-%d in StatefulSet web success", i, i),
				fmt.Sprintf("Normal SuccessfulCreate StatefulSet/web: Create Pod web-%d in StatefulSet web successful", i))
		}
		if got := e.Events("default"); !slices.Equal(got, want) {
			t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		p := e.Get(kobj.PodGVK, "default", "web-1")
		l := kobj.Labels(p)
		if l[statefulset.PodNameLabel] != "web-1" || l[statefulset.PodIndexLabel] != "1" || l[statefulset.RevisionLabel] == "" || l["app"] != "web" {
			t.Errorf("web-1 labels %v", l)
		}
		if ref := kobj.ControllerRef(p); ref == nil || ref["uid"] != kobj.UID(set) || ref["kind"] != "StatefulSet" {
			t.Errorf("web-1 controller reference %v", ref)
		}
		if kobj.Str(p, "spec", "hostname") != "web-1" || kobj.Str(p, "spec", "subdomain") != "web" {
			t.Errorf("web-1 hostname %q subdomain %q", kobj.Str(p, "spec", "hostname"), kobj.Str(p, "spec", "subdomain"))
		}
		st := e.Get(kobj.StatefulSetGVK, "default", "web")
		for _, f := range []string{"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"} {
			if got := kobj.IntOr(st, -1, "status", f); got != 3 {
				t.Errorf("status.%s = %d, want 3", f, got)
			}
		}

		// Scale down: from the highest ordinal; the claims stay (the
		// default retention policy).
		e.Modify(kobj.StatefulSetGVK, "default", "web", func(s map[string]any) { s["spec"].(map[string]any)["replicas"] = int64(1) })
		e.Settle([]controller.Controller{ctl}, ctrltest.RunPods)
		if got := names(); !slices.Equal(got, []string{"web-0"}) {
			t.Errorf("scaled to 1: pods %v", got)
		}
		evs := e.Events("default")
		tail := []string{
			"Normal SuccessfulDelete StatefulSet/web: Delete Pod web-2 in StatefulSet web successful",
			"Normal SuccessfulDelete StatefulSet/web: Delete Pod web-1 in StatefulSet web successful",
		}
		if len(evs) < 2 || !slices.Equal(evs[len(evs)-2:], tail) {
			t.Errorf("scale-down events\n%s\nwant them to end with\n%s", strings.Join(evs, "\n"), strings.Join(tail, "\n"))
		}
		if got := len(e.Names(kobj.PVCGVK, "default")); got != 3 {
			t.Errorf("%d claims after the scale-down, want 3 kept", got)
		}

		// A deleted pod comes back under its name.
		old := kobj.UID(e.Get(kobj.PodGVK, "default", "web-0"))
		e.Delete(kobj.PodGVK, "default", "web-0")
		e.Settle([]controller.Controller{ctl}, ctrltest.RunPods)
		if p := e.Get(kobj.PodGVK, "default", "web-0"); kobj.UID(p) == old {
			t.Error("web-0 was not recreated")
		}
	})
}
