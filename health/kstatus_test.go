package health

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// randomObject builds an object of a kind Assess knows, with random
// counts, conditions and phases.
func randomObject(r *rand.Rand) map[string]any {
	n := func() int64 { return int64(r.IntN(4)) }
	gen := 1 + n()
	obs := gen - int64(r.IntN(2))
	md := map[string]any{"name": "o", "namespace": "default", "generation": gen}
	st := map[string]any{"observedGeneration": obs}
	spec := map[string]any{}
	obj := map[string]any{"metadata": md, "spec": spec, "status": st}
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": "m"}
	}
	tf := func() string { return []string{"True", "False", "Unknown"}[r.IntN(3)] }
	switch r.IntN(8) {
	case 0:
		obj["apiVersion"], obj["kind"] = "apps/v1", "Deployment"
		spec["replicas"] = n()
		for _, f := range []string{"replicas", "updatedReplicas", "availableReplicas", "readyReplicas"} {
			st[f] = n()
		}
		var conds []any
		if r.IntN(3) == 0 {
			conds = append(conds, cond("Progressing", tf(), []string{"ProgressDeadlineExceeded", "NewReplicaSetAvailable", "ReplicaSetUpdated"}[r.IntN(3)]))
		}
		if r.IntN(2) == 0 {
			conds = append(conds, cond("Available", tf(), "MinimumReplicasAvailable"))
		}
		st["conditions"] = conds
	case 1:
		obj["apiVersion"], obj["kind"] = "apps/v1", "StatefulSet"
		spec["replicas"] = n()
		spec["updateStrategy"] = map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": int64(r.IntN(2))}}
		for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas", "currentReplicas", "availableReplicas"} {
			st[f] = n()
		}
		st["currentRevision"], st["updateRevision"] = fmt.Sprint(r.IntN(2)), fmt.Sprint(r.IntN(2))
	case 2:
		obj["apiVersion"], obj["kind"] = "apps/v1", "DaemonSet"
		spec["updateStrategy"] = map[string]any{"type": "RollingUpdate"}
		for _, f := range []string{"desiredNumberScheduled", "currentNumberScheduled", "updatedNumberScheduled", "numberAvailable", "numberReady"} {
			st[f] = n()
		}
	case 3:
		obj["apiVersion"], obj["kind"] = "apps/v1", "ReplicaSet"
		spec["replicas"] = n()
		for _, f := range []string{"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"} {
			st[f] = n()
		}
	case 4:
		obj["apiVersion"], obj["kind"] = "batch/v1", "Job"
		delete(st, "observedGeneration")
		for _, f := range []string{"succeeded", "active", "failed"} {
			st[f] = n()
		}
		if r.IntN(2) == 0 {
			st["startTime"] = "2026-01-01T00:00:00Z"
		}
		if r.IntN(2) == 0 {
			st["conditions"] = []any{cond([]string{"Complete", "Failed"}[r.IntN(2)], tf(), "R")}
		}
	case 5:
		if r.IntN(2) == 0 {
			obj["apiVersion"], obj["kind"] = "v1", "Pod"
			delete(md, "generation")
			delete(st, "observedGeneration")
			st["phase"] = []string{"Pending", "Running", "Succeeded", "Failed"}[r.IntN(4)]
			if r.IntN(2) == 0 {
				st["conditions"] = []any{cond("Ready", tf(), "")}
			}
			if r.IntN(3) == 0 {
				st["containerStatuses"] = []any{map[string]any{"name": "c", "state": map[string]any{"waiting": map[string]any{
					"reason": []string{"CrashLoopBackOff", "ImagePullBackOff", "ContainerCreating"}[r.IntN(3)]}}}}
			}
			break
		}
		obj["apiVersion"], obj["kind"] = "v1", "PersistentVolumeClaim"
		delete(md, "generation")
		st["phase"] = []string{"Pending", "Bound", "Lost"}[r.IntN(3)]
	case 6:
		obj["apiVersion"], obj["kind"] = "v1", "Service"
		delete(md, "generation")
		spec["type"] = []string{"ClusterIP", "LoadBalancer"}[r.IntN(2)]
		if r.IntN(2) == 0 {
			st["loadBalancer"] = map[string]any{"ingress": []any{map[string]any{"ip": "10.0.0.1"}}}
		}
	default:
		obj["apiVersion"], obj["kind"] = "example.com/v1", "Widget"
		var conds []any
		for _, typ := range []string{"Reconciling", "Stalled"} {
			if r.IntN(2) == 0 {
				conds = append(conds, cond(typ, tf(), "R"))
			}
		}
		st["conditions"] = conds
	}
	if r.IntN(20) == 0 {
		md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
	}
	return obj
}

// deviates reports whether obj is one of the cases where Assess differs
// from kstatus on purpose (see the package documentation): a Job that runs
// is InProgress (kstatus: Current once started), a Pod that Failed is
// Failed (kstatus: Current, it completed), a container that cannot pull
// its image makes its Pod Failed, as does a crash loop in any phase
// (kstatus: only while Running), and a PVC whose volume is Lost is Failed.
func deviates(obj map[string]any) bool {
	switch obj["kind"] {
	case "Job":
		return condition(obj, "Complete") == nil && condition(obj, "Failed") == nil ||
			!(str(condition(obj, "Complete"), "status") == "True" || str(condition(obj, "Failed"), "status") == "True")
	case "Pod":
		if str(obj, "status", "phase") == "Failed" {
			return true
		}
		for _, cs := range list(obj, "status", "containerStatuses") {
			if failingWaits[str(cs.(map[string]any), "state", "waiting", "reason")] {
				return true
			}
		}
	case "PersistentVolumeClaim":
		return str(obj, "status", "phase") == "Lost"
	}
	return false
}

// TestAssessMatchesKstatus: Assess agrees with kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus) on the status of thousands of
// random objects, except where the package documentation says it does
// not.
func TestAssessMatchesKstatus(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	mismatch := map[string]int{}
	for i := 0; i < 20000; i++ {
		obj := randomObject(r)
		res, err := status.Compute(&unstructured.Unstructured{Object: obj})
		if err != nil {
			t.Fatal(err)
		}
		want := string(res.Status)
		got := string(Assess(obj).Status)
		if got == want || deviates(obj) {
			continue
		}
		key := fmt.Sprintf("%s: %s, kstatus %s (%s)", obj["kind"], got, want, res.Message)
		if mismatch[key] == 0 && len(mismatch) < 40 {
			t.Logf("%s\n  %v", key, obj)
		}
		mismatch[key]++
	}
	for k, n := range mismatch {
		t.Errorf("%d× %s", n, k)
	}
}
