package cli

import (
	"strings"
	"testing"
)

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
