package cli

import (
	"strings"
	"testing"
)

// TestDeploymentStatusLines: kubectl's DeploymentStatusViewer lines, in
// its order of checks.
func TestDeploymentStatusLines(t *testing.T) {
	d := func(gen, observed, spec, replicas, updated, available int64, reason string) map[string]any {
		obj := map[string]any{
			"metadata": map[string]any{"name": "web", "generation": gen,
				"annotations": map[string]any{"deployment.kubernetes.io/revision": "2"}},
			"spec": map[string]any{"replicas": spec},
			"status": map[string]any{"observedGeneration": observed, "replicas": replicas,
				"updatedReplicas": updated, "availableReplicas": available},
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
	}{
		{obj: d(2, 1, 3, 3, 3, 3, ""), want: "Waiting for deployment spec update to be observed...\n"},
		{obj: d(2, 2, 3, 4, 1, 3, ""), want: "Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...\n"},
		{obj: d(2, 2, 3, 4, 3, 3, ""), want: "Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination...\n"},
		{obj: d(2, 2, 3, 3, 3, 2, ""), want: "Waiting for deployment \"web\" rollout to finish: 2 of 3 updated replicas are available...\n"},
		{obj: d(2, 2, 3, 3, 3, 3, ""), want: "deployment \"web\" successfully rolled out\n", done: true},
		{obj: d(2, 2, 3, 4, 1, 3, "ProgressDeadlineExceeded"), err: `deployment "web" exceeded its progress deadline`},
		{obj: d(2, 2, 3, 3, 3, 3, ""), rev: 1, err: "desired revision (1) is different from the running revision (2)"},
		{obj: d(2, 2, 3, 3, 3, 3, ""), rev: 2, want: "deployment \"web\" successfully rolled out\n", done: true},
	}
	for i, c := range cases {
		got, done, err := deploymentStatus(c.obj, c.rev)
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
}

// TestSetLeavesLastAppliedAlone: set image and set resources change the
// live template only; errors name the container; a second identical set
// prints nothing.
func TestSetLeavesLastAppliedAlone(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	c.ok("apply", "-f", c.file("d.yaml", simDeployment))
	before := liveLastApplied(t, c)
	c.ok("set", "image", "deployment/nginx-deployment", "*=nginx:1.16.1")
	if out := c.ok("set", "image", "deployment/nginx-deployment", "nginx=nginx:1.16.1"); out != "" {
		t.Errorf("set image to the same image printed %q", out)
	}
	c.ok("set", "resources", "deployment", "nginx-deployment", "--requests=cpu=100m", "--limits=memory=1Gi")
	if got := liveLastApplied(t, c); got != before {
		t.Errorf("last-applied changed:\n%s\n%s", before, got)
	}
	y := c.quiet("get", "deploy", "nginx-deployment", "-o", "yaml")
	for _, w := range []string{"image: nginx:1.16.1", "cpu: 100m", "memory: 1Gi", "containerPort: 80"} {
		if !strings.Contains(y, w) {
			t.Errorf("no %q in\n%s", w, y)
		}
	}
	for _, bad := range []struct {
		args []string
		err  string
	}{
		{[]string{"set", "image", "deployment/nginx-deployment", "php=php:8"}, "error: unable to find container named \"php\"\n"},
		{[]string{"set", "image", "deployment/nginx-deployment"}, "error: at least one image update is required\n"},
		{[]string{"set", "resources", "deployment/nginx-deployment", "-c=php", "--limits=cpu=1"}, "error: unable to find container named php\n"},
		{[]string{"set", "resources", "deployment/nginx-deployment"}, "error: you must specify an update to requests or limits (in the form of --requests/--limits)\n"},
		{[]string{"set", "resources", "deployment/nginx-deployment", "--limits=cpu"}, "error: invalid argument syntax cpu, expected <resource>=<value>\n"},
		{[]string{"rollout", "status", "deployment/nope"}, "Error from server (NotFound): deployments.apps \"nope\" not found\n"},
		{[]string{"rollout", "status", "deployment/nginx-deployment", "--revision=-1"}, "error: revision must be a positive integer: -1\n"},
		{[]string{"wait", "deployment/nginx-deployment"}, "error: --for must be specified\n"},
		{[]string{"wait", "--for=ready", "deployment/nginx-deployment"}, "error: unrecognized condition: \"ready\"\n"},
		{[]string{"wait", "--for=condition=Progressing=False", "deployment/nginx-deployment", "--timeout=0"}, "error: timed out waiting for the condition on deployments/nginx-deployment\n"},
	} {
		if _, errOut, code := c.run(bad.args...); code != 1 || errOut != bad.err {
			t.Errorf("%s: exit %d %q, want %q", strings.Join(bad.args, " "), code, errOut, bad.err)
		}
	}
	// wait --for=delete of an object that is gone succeeds; a pause then
	// restart fails as kubectl's.
	c.ok("wait", "--for=delete", "deployment/gone")
	c.ok("rollout", "pause", "deployment/nginx-deployment")
	if _, errOut, code := c.run("rollout", "restart", "deployment/nginx-deployment"); code != 1 || !strings.Contains(errOut, "can't restart paused deployment (run rollout resume first)") {
		t.Errorf("restart paused: exit %d %q", code, errOut)
	}
	if _, errOut, code := c.run("rollout", "undo", "deployment/nginx-deployment"); code != 1 || !strings.Contains(errOut, "you cannot rollback a paused deployment") {
		t.Errorf("undo paused: exit %d %q", code, errOut)
	}
	c.ok("rollout", "resume", "deployment/nginx-deployment")
}

func liveLastApplied(t *testing.T, c *seedCluster) string {
	t.Helper()
	obj, err := getObject(t, c.state, deploymentGVK, "default", "nginx-deployment")
	if err != nil {
		t.Fatal(err)
	}
	return obj["metadata"].(map[string]any)["annotations"].(map[string]any)["kubectl.kubernetes.io/last-applied-configuration"].(string)
}
