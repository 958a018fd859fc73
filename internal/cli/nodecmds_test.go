package cli

import (
	"strings"
	"testing"
)

// TestNodeCordonTaint runs cordon, uncordon and taint as a user would;
// the lines and exit codes are kubectl v1.37.1's on the same steps
// against kube-apiserver with kube-controller-manager (the
// unschedulable taint is the node lifecycle controller's). A cordoned
// node takes no new pod, with kube-scheduler's reason, until uncordoned;
// a tainted node takes only the pods that tolerate the taint.
func TestNodeCordonTaint(t *testing.T) {
	dir := t.TempDir()
	useSimSessions(dir)
	steps := []struct {
		args     []string
		out, err string
		code     int
	}{
		{args: []string{"cluster", "init", "--clock=manual"}, out: "*"},
		{args: []string{"cordon", "konverge-node"}, out: "node/konverge-node cordoned\n"},
		{args: []string{"cordon", "konverge-node"}, out: "node/konverge-node already cordoned\n"},
		{args: []string{"cordon", "konverge-node", "--dry-run=client"}, out: "node/konverge-node already cordoned (dry run)\n"},
		{args: []string{"cordon", "konverge-node", "--dry-run=server"}, out: "node/konverge-node already cordoned (server dry run)\n"},
		{args: []string{"get", "node", "konverge-node", "-o", "jsonpath={.spec.unschedulable} {.spec.taints[0].key}:{.spec.taints[0].effect}"}, out: "true node.kubernetes.io/unschedulable:NoSchedule"},
		{args: []string{"run", "web", "--image=nginx"}, out: "pod/web created\n"},
		{args: []string{"get", "pod", "web", "-o", "jsonpath={.status.conditions[0].message}"}, out: "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
		{args: []string{"uncordon", "konverge-node"}, out: "node/konverge-node uncordoned\n"},
		{args: []string{"uncordon", "konverge-node"}, out: "node/konverge-node already uncordoned\n"},
		{args: []string{"uncordon", "konverge-node", "--dry-run=client"}, out: "node/konverge-node already uncordoned (dry run)\n"},
		{args: []string{"get", "node", "konverge-node", "-o", "jsonpath={.spec.unschedulable}{.spec.taints}"}, out: ""},
		{args: []string{"get", "pod", "web", "-o", "jsonpath={.spec.nodeName}"}, out: "konverge-node"},
		{args: []string{"taint", "nodes", "konverge-node", "dedicated=db:NoSchedule"}, out: "node/konverge-node tainted\n"},
		{args: []string{"taint", "nodes", "konverge-node", "dedicated=web:NoSchedule"}, err: "error: node konverge-node already has dedicated taint(s) with same effect(s) and --overwrite is false\n", code: 1},
		{args: []string{"taint", "nodes", "konverge-node", "dedicated=web:NoSchedule", "--overwrite"}, out: "node/konverge-node modified\n"},
		{args: []string{"run", "api", "--image=nginx"}, out: "pod/api created\n"},
		{args: []string{"get", "pod", "api", "-o", "jsonpath={.status.conditions[0].message}"}, out: "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
		{args: []string{"taint", "nodes", "konverge-node", "dedicated:NoSchedule-"}, out: "node/konverge-node untainted\n"},
		{args: []string{"get", "pod", "api", "-o", "jsonpath={.spec.nodeName}"}, out: "konverge-node"},
		{args: []string{"taint", "nodes", "konverge-node", "dedicated-"}, err: "error: taint \"dedicated\" not found\n", code: 1},
		{args: []string{"taint", "nodes", "konverge-node", "a=b:Bogus"}, err: "error: invalid taint effect: Bogus, unsupported taint effect\nSee 'konverge taint -h' for help and examples\n", code: 1},
		{args: []string{"taint", "nodes", "konverge-node", "k=v:NoExecute", "k2:PreferNoSchedule"}, out: "node/konverge-node tainted\n"},
		{args: []string{"get", "node", "konverge-node", "-o", "jsonpath={.spec.taints}"}, out: `[{"effect":"NoExecute","key":"k","value":"v"},{"effect":"PreferNoSchedule","key":"k2"}]`},
		{args: []string{"taint", "nodes", "konverge-node", "k-"}, out: "node/konverge-node untainted\n"},
		{args: []string{"cordon", "nosuch"}, err: "Error from server (NotFound): nodes \"nosuch\" not found\n", code: 1},
		{args: []string{"taint", "nodes", "konverge-node"}, err: "error: at least one taint update is required\n", code: 1},
	}
	for _, s := range steps {
		out, errOut, code := runKonverge(t, dir, "", s.args...)
		if s.out != "*" && out != s.out || errOut != s.err || code != s.code {
			t.Errorf("konverge %s:\n got  %d %q %q\n want %d %q %q", strings.Join(s.args, " "), code, out, errOut, s.code, s.out, s.err)
		}
	}
}

// TestNoExecuteTaintEvicts: a NoExecute taint evicts the pods that do
// not tolerate it (DisruptionTarget, TaintManagerEviction), keeps those
// that tolerate it for ever, and evicts those that tolerate it for a
// while once that while is over.
func TestNoExecuteTaintEvicts(t *testing.T) {
	dir := t.TempDir()
	useSimSessions(dir)
	const pods = `apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: tolerant}
spec:
  tolerations: [{key: maintenance, operator: Exists, effect: NoExecute}]
  containers: [{name: c, image: nginx}]
`
	for _, s := range [][]string{
		{"cluster", "init", "--clock=manual"},
		{"apply", "-f", "-"},
		{"clock", "advance", "10s"},
		{"taint", "nodes", "konverge-node", "maintenance=now:NoExecute"},
		{"clock", "advance", "1m"},
	} {
		stdin := ""
		if s[0] == "apply" {
			stdin = pods
		}
		if _, errOut, code := runKonverge(t, dir, stdin, s...); code != 0 {
			t.Fatalf("konverge %s: %d %s", strings.Join(s, " "), code, errOut)
		}
	}
	out, _, _ := runKonverge(t, dir, "", "get", "pods", "-o", "custom-columns=NAME:.metadata.name", "--no-headers")
	if out != "tolerant\n" {
		t.Errorf("pods after the NoExecute taint: %q, want only tolerant", out)
	}
	ev, _, _ := runKonverge(t, dir, "", "get", "events", "--field-selector", "reason=TaintManagerEviction", "-o", "custom-columns=MSG:.message,FROM:.source.component", "--no-headers")
	if !strings.Contains(ev, "Marking for deletion Pod default/plain") || !strings.Contains(ev, "taint-eviction-controller") || strings.Contains(ev, "tolerant") {
		t.Errorf("eviction Events:\n%s", ev)
	}
}
