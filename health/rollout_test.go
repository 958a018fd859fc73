package health

import "testing"

// TestDeploymentRolloutLines: kubectl's DeploymentStatusViewer lines, in
// its order of checks.
func TestDeploymentRolloutLines(t *testing.T) {
	d := func(gen, observed, spec, replicas, updated, available int64, reason string) map[string]any {
		obj := map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "generation": gen,
				"annotations": map[string]any{"deployment.kubernetes.io/revision": "2"}},
			"spec": map[string]any{"replicas": spec},
			"status": map[string]any{"observedGeneration": observed, "replicas": replicas,
				"updatedReplicas": updated, "availableReplicas": available, "readyReplicas": available,
				"conditions": []any{
					map[string]any{"type": "Available", "status": "True"},
					map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
				}},
		}
		if reason != "" {
			obj["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Progressing", "status": "False", "reason": reason}}
		}
		return obj
	}
	cases := []struct {
		obj  map[string]any
		rev  int64
		want string
		done bool
		err  string
		st   Status
	}{
		{obj: d(2, 1, 3, 3, 3, 3, ""), want: "Waiting for deployment spec update to be observed...", st: InProgress},
		{obj: d(2, 2, 3, 4, 1, 3, ""), want: "Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...", st: InProgress},
		{obj: d(2, 2, 3, 4, 3, 3, ""), want: "Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination...", st: InProgress},
		{obj: d(2, 2, 3, 3, 3, 2, ""), want: "Waiting for deployment \"web\" rollout to finish: 2 of 3 updated replicas are available...", st: InProgress},
		{obj: d(2, 2, 3, 3, 3, 3, ""), want: "deployment \"web\" successfully rolled out", done: true, st: Current},
		{obj: d(2, 2, 3, 4, 1, 3, "ProgressDeadlineExceeded"), err: `deployment "web" exceeded its progress deadline`, st: Failed},
		{obj: d(2, 2, 3, 3, 3, 3, ""), rev: 1, err: "desired revision (1) is different from the running revision (2)", st: Current},
		{obj: d(2, 2, 3, 3, 3, 3, ""), rev: 2, want: "deployment \"web\" successfully rolled out", done: true, st: Current},
	}
	for i, c := range cases {
		if got := Assess(c.obj).Status; got != c.st {
			t.Errorf("%d: Assess %s, want %s", i, got, c.st)
		}
		got, done, err := Rollout(c.obj, c.rev)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%d: error %v, want %q", i, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want || done != c.done {
			t.Errorf("%d: %q %v %v, want %q %v", i, got, done, err, c.want, c.done)
		}
	}
	_, _, err := Rollout(map[string]any{"apiVersion": "batch/v1", "kind": "Job"}, 0)
	if err == nil || err.Error() != "no status viewer has been implemented for Job.batch" {
		t.Errorf("Job: %v", err)
	}
}
