package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDescribeNodeEmbedded runs on the embedded cluster the scenario
// whose `kubectl describe node` output was recorded from the real
// control plane (internal/describe/testdata/node: the nodes of nodes.json
// registered by scripts/multinode-kubelet.py, kube-scheduler placing
// pods.yaml) and compares: the same text once times and ages are masked,
// and the two System Info lines that say which kubelet runs the node
// (the stand-in's, konverge's simulated one).
func TestDescribeNodeEmbedded(t *testing.T) {
	rec := filepath.Join("..", "describe", "testdata", "node")
	state, dir := t.TempDir(), t.TempDir()
	useSimSessions(state)
	profile := filepath.Join(dir, "profile.yaml")
	if err := os.WriteFile(profile, []byte(`nodes:
- name: node-a
  labels: {disktype: ssd, node-role.kubernetes.io/worker: ""}
  taints: [{key: dedicated, value: db, effect: NoSchedule}, {key: spot, effect: PreferNoSchedule}]
  capacity: {cpu: "4", memory: 8Gi, pods: "20", example.com/gpu: "2"}
  allocatable: {cpu: 3500m}
- name: node-b
  capacity: {cpu: "2", memory: 4Gi, pods: "10"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := konvergeRun(t, nil, append([]string{"--state", state}, args...)...)
		if code != 0 {
			t.Fatalf("konverge %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	run("cluster", "init", "--clock=manual", "--sim-profile", profile)
	run("apply", "-f", filepath.Join(rec, "pods.yaml"))
	run("clock", "advance", "10s")
	times := regexp.MustCompile(`(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d [+-]\d{4}`)
	ages := regexp.MustCompile(`\b\d+s\b`)
	runtime := regexp.MustCompile(`(?m)^(  (OS Image|Container Runtime Version):[ \t]+).*$`)
	maskOut := func(s string) string {
		s = times.ReplaceAllString(s, "<time>")
		s = ages.ReplaceAllString(s, "<age>")
		return runtime.ReplaceAllString(s, "$1<runtime>")
	}
	for _, name := range []string{"node-a", "node-b"} {
		want, err := os.ReadFile(filepath.Join(rec, name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		got := run("describe", "node", name)
		if g, w := maskOut(got), maskOut(string(want)); g != w {
			t.Errorf("describe node %s:\n%s\nkubectl printed (masked):\n%s", name, g, w)
		}
	}
}
