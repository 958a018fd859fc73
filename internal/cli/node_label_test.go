package cli

import (
	"strings"
	"testing"
)

// TestNodeLabelReachesScheduling labels the simulated node and checks
// that a pod and a DaemonSet selecting that label run: the kubelet reads
// the Node's labels as stored, not the ones it registered with (issue 24,
// item 8). Before the label, the pod waits with kube-scheduler's message.
func TestNodeLabelReachesScheduling(t *testing.T) {
	dir := t.TempDir()
	useSimSessions(dir)
	if _, stderr, code := runKonverge(t, dir, "", "cluster", "init", "--clock=manual"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	const manifests = `apiVersion: v1
kind: Pod
metadata: {name: fast}
spec:
  nodeSelector: {disktype: ssd}
  containers: [{name: c, image: nginx}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {disktype: ssd}
      containers: [{name: c, image: nginx}]
`
	if _, stderr, code := runKonverge(t, dir, manifests, "apply", "-f", "-"); code != 0 {
		t.Fatalf("apply: %d %s", code, stderr)
	}
	out, stderr, code := runKonverge(t, dir, "", "get", "pod", "fast", "-o", "jsonpath={.status.phase} {.status.conditions[0].message}")
	if code != 0 {
		t.Fatalf("get: %d %s", code, stderr)
	}
	if want := "Pending 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."; !strings.HasPrefix(out, want) {
		t.Fatalf("before the label: %q, want prefix %q", out, want)
	}
	if out, stderr, code := runKonverge(t, dir, "", "label", "node", "konverge-node", "disktype=ssd"); code != 0 || out != "node/konverge-node labeled\n" {
		t.Fatalf("label: %d %q %s", code, out, stderr)
	}
	if _, stderr, code := runKonverge(t, dir, "", "clock", "advance", "1m"); code != 0 {
		t.Fatalf("clock advance: %d %s", code, stderr)
	}
	out, stderr, code = runKonverge(t, dir, "", "get", "pods", "-o", "custom-columns=NAME:.metadata.name,PHASE:.status.phase,NODE:.spec.nodeName", "--no-headers")
	if code != 0 {
		t.Fatalf("get: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("pods after the label: %q, want the pod and one daemon pod", out)
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) != 3 || f[1] != "Running" || f[2] != "konverge-node" {
			t.Errorf("pod %q does not run on konverge-node", l)
		}
	}
}
