package health

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/polymorphichelpers"
)

// randomWorkload builds a Deployment, StatefulSet or DaemonSet with random
// counts around its spec, the shapes rollout status reads.
func randomWorkload(r *rand.Rand) map[string]any {
	n := func() int64 { return int64(r.IntN(5)) }
	gen := 1 + n()
	obs := gen - int64(r.IntN(2))
	if r.IntN(6) == 0 {
		obs = 0
	}
	md := map[string]any{"name": "w", "namespace": "default", "generation": gen}
	status := map[string]any{"observedGeneration": obs}
	spec := map[string]any{}
	obj := map[string]any{"metadata": md, "spec": spec, "status": status}
	switch r.IntN(3) {
	case 0:
		obj["apiVersion"], obj["kind"] = "apps/v1", "Deployment"
		if r.IntN(5) > 0 {
			spec["replicas"] = n()
		}
		for _, f := range []string{"replicas", "updatedReplicas", "availableReplicas", "readyReplicas"} {
			status[f] = n()
		}
		if r.IntN(4) == 0 {
			status["conditions"] = []any{map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}}
		}
		md["annotations"] = map[string]any{RevisionAnnotation: fmt.Sprint(1 + r.IntN(2))}
	case 1:
		obj["apiVersion"], obj["kind"] = "apps/v1", "StatefulSet"
		if r.IntN(5) > 0 {
			spec["replicas"] = n()
		}
		us := map[string]any{"type": []string{"RollingUpdate", "RollingUpdate", "OnDelete"}[r.IntN(3)]}
		if us["type"] == "RollingUpdate" && r.IntN(2) == 0 {
			ru := map[string]any{}
			if r.IntN(2) == 0 {
				ru["partition"] = n()
			}
			us["rollingUpdate"] = ru
		}
		spec["updateStrategy"] = us
		for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas", "currentReplicas"} {
			status[f] = n()
		}
		status["currentRevision"] = "w-" + fmt.Sprint(r.IntN(2))
		status["updateRevision"] = "w-" + fmt.Sprint(r.IntN(2))
	default:
		obj["apiVersion"], obj["kind"] = "apps/v1", "DaemonSet"
		spec["updateStrategy"] = map[string]any{"type": []string{"RollingUpdate", "RollingUpdate", "OnDelete"}[r.IntN(3)]}
		for _, f := range []string{"desiredNumberScheduled", "updatedNumberScheduled", "numberAvailable", "currentNumberScheduled"} {
			status[f] = n()
		}
	}
	return obj
}

// TestRolloutMatchesKubectl: Rollout says what kubectl's status viewers
// (k8s.io/kubectl/pkg/polymorphichelpers) say, on thousands of random
// workloads: the same line, the same done, the same error.
func TestRolloutMatchesKubectl(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		obj := randomWorkload(r)
		rev := int64(r.IntN(3))
		u := &unstructured.Unstructured{Object: obj}
		gk := schema.GroupKind{Group: "apps", Kind: obj["kind"].(string)}
		viewer, err := polymorphichelpers.StatusViewerFor(gk)
		if err != nil {
			t.Fatal(err)
		}
		wantMsg, wantDone, wantErr := viewer.Status(u, rev)
		gotMsg, gotDone, gotErr := Rollout(obj, rev)
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
			t.Fatalf("%v rev %d: error %v, kubectl %v", obj, rev, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		if strings.TrimSuffix(wantMsg, "\n") != gotMsg || wantDone != gotDone {
			t.Fatalf("%v rev %d:\n got %q %v\nwant %q %v", obj, rev, gotMsg, gotDone, wantMsg, wantDone)
		}
		// Only a finished rollout is Current.
		if st := Assess(obj).Status; st == Current && !gotDone && gk.Kind != "DaemonSet" {
			t.Fatalf("%v: Current but rollout status is not done", obj)
		}
	}
}
