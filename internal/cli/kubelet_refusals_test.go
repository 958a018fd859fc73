package cli

import (
	"strings"
	"testing"
)

// TestMissingConfigMapWaitsThenStarts: a Deployment whose pods take their
// environment from a ConfigMap that does not exist yet waits in
// CreateContainerConfigError (rollout status and wait time out on the
// virtual clock, a day of cluster time costs nothing), and its pod
// starts once the ConfigMap is created.
func TestMissingConfigMapWaitsThenStarts(t *testing.T) {
	c := newSeedCluster(t)
	f := c.file("web.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: nginx:1.14.2
        envFrom: [{configMapRef: {name: web-config}}]
`)
	c.ok("apply", "-f", f)
	if _, _, code := c.run("rollout", "status", "deployment/web", "--timeout=30s"); code == 0 {
		t.Errorf("rollout status succeeded for a pod without its ConfigMap\n%s", c.log.String())
	}
	if out := c.ok("get", "pods"); !strings.Contains(out, "CreateContainerConfigError") {
		t.Errorf("get pods:\n%s", out)
	}
	out := c.ok("describe", "pods", "-l", "app=web")
	if !strings.Contains(out, `Error: configmap "web-config" not found`) || !strings.Contains(out, "CreateContainerConfigError") {
		t.Errorf("describe:\n%s", out)
	}
	c.ok("clock", "advance", "24h")
	if _, _, code := c.run("wait", "--for=condition=Ready", "pod", "-l", "app=web", "--timeout=60s"); code == 0 {
		t.Errorf("wait succeeded\n%s", c.log.String())
	}
	c.ok("create", "configmap", "web-config", "--from-literal=mode=fast")
	c.ok("wait", "--for=condition=Ready", "pod", "-l", "app=web", "--timeout=60s")
	c.ok("rollout", "status", "deployment/web", "--timeout=30s")
	if out := c.ok("get", "pods"); !strings.Contains(out, "Running") {
		t.Errorf("get pods:\n%s", out)
	}
}

// TestPinnedPodRejectedOverAndOver: a Deployment whose pods name a node
// too small for them: the kubelet rejects each (OutOfcpu), the ReplicaSet
// replaces each failed pod (as the real ReplicaSet controller does: a
// Failed pod is not active), and the rollout never completes.
func TestPinnedPodRejectedOverAndOver(t *testing.T) {
	c := newSeedCluster(t)
	f := c.file("pinned.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: pinned}
spec:
  replicas: 1
  selector: {matchLabels: {app: pinned}}
  template:
    metadata: {labels: {app: pinned}}
    spec:
      nodeName: konverge-node
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "40"}}}]
`)
	c.ok("apply", "-f", f)
	out := c.ok("get", "pods", "-l", "app=pinned", "--no-headers")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || strings.Count(out, "OutOfcpu") < len(lines)-1 {
		t.Errorf("want rejected pods replaced over and over:\n%s", out)
	}
	d := c.ok("describe", "pod", strings.Fields(lines[0])[0])
	if !strings.Contains(d, "Pod was rejected: Node didn't have enough resource: cpu, requested: 40000, used: 0, capacity: 8000") ||
		!strings.Contains(d, "Warning  OutOfcpu") {
		t.Errorf("describe:\n%s", d)
	}
	if rs := c.ok("get", "rs", "-l", "app=pinned", "--no-headers"); strings.Join(strings.Fields(rs)[1:4], " ") != "1 1 0" {
		t.Errorf("the ReplicaSet counts the failed pods: %s", rs)
	}
}
