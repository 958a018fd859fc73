package kubelet_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

var podGVK = schema.GVK{Version: "v1", Kind: "Pod"}

// env is a real embedded cluster with only the kubelet, on a manual clock.
type env struct {
	t   *testing.T
	ctx context.Context
	st  *local.Store
	clk *clock.Clock
	r   *sim.Runner
}

func newEnv(t *testing.T, profile string) *env {
	t.Helper()
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk, LockTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := kubelet.DefaultProfile()
	if profile != "" {
		if p, err = kubelet.ParseProfile([]byte(profile)); err != nil {
			t.Fatal(err)
		}
	}
	return &env{t: t, ctx: context.Background(), st: st, clk: clk, r: sim.New(st, clk, kubelet.New(p))}
}

func (e *env) create(manifest string) {
	e.t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.st.Create(e.ctx, obj); err != nil {
		e.t.Fatal(err)
	}
}

// at advances the clock to Epoch+d.
func (e *env) at(d time.Duration) {
	e.t.Helper()
	if err := e.r.AdvanceTo(e.ctx, clock.Epoch.Add(d)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) pod(name string) map[string]any {
	e.t.Helper()
	p, err := e.st.Get(e.ctx, podGVK, "default", name)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// get reads a dotted path ("status.phase", "status.containerStatuses.0.state").
func get(obj any, path string) any {
	cur := obj
	for _, f := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			cur = v[f]
		case []any:
			var i int
			fmt.Sscan(f, &i)
			if i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

func cond(pod map[string]any, typ string) string {
	for _, c := range get(pod, "status.conditions").([]any) {
		if get(c, "type") == typ {
			return get(c, "status").(string)
		}
	}
	return ""
}

// expect checks dotted paths of a pod.
func (e *env) expect(name string, want map[string]any) {
	e.t.Helper()
	p := e.pod(name)
	for path, w := range want {
		var got any
		if strings.HasPrefix(path, "cond:") {
			got = cond(p, strings.TrimPrefix(path, "cond:"))
		} else {
			got = get(p, path)
		}
		if fmt.Sprint(got) != fmt.Sprint(w) {
			e.t.Errorf("at %s: pod %s %s = %v, want %v", e.clk.Now().Sub(clock.Epoch), name, path, got, w)
		}
	}
}

func podYAML(name, body string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n" + body
}

func TestPodStartsAndBecomesReady(t *testing.T) {
	e := newEnv(t, "")
	e.create(podYAML("web", "  containers:\n  - name: nginx\n    image: nginx:1.14.2\n"))
	e.at(0)
	e.expect("web", map[string]any{
		"spec.nodeName": kubelet.NodeName, "status.phase": "Pending", "status.podIP": "10.244.0.2",
		"status.hostIP": kubelet.HostIP, "status.startTime": "2026-01-01T00:00:00Z",
		"cond:PodScheduled": "True", "cond:Ready": "False",
		"status.containerStatuses.0.state.waiting.reason": "ContainerCreating",
	})
	e.at(3 * time.Second)
	e.expect("web", map[string]any{
		"status.phase": "Running", "cond:Ready": "True", "cond:ContainersReady": "True",
		"status.containerStatuses.0.state.running.startedAt": "2026-01-01T00:00:03Z",
		"status.containerStatuses.0.ready":                   true,
		"status.containerStatuses.0.started":                 true,
	})
	// The node is registered.
	if _, err := e.st.Get(e.ctx, schema.GVK{Version: "v1", Kind: "Node"}, "", kubelet.NodeName); err != nil {
		t.Fatal(err)
	}
	// Nothing more is due: the runner stops asking.
	if next, err := e.r.Settle(e.ctx); err != nil || !next.IsZero() {
		t.Fatalf("Settle = %v, %v; want no requeue", next, err)
	}
}

func TestImagePullFailure(t *testing.T) {
	e := newEnv(t, "")
	e.create(podYAML("typo", "  containers:\n  - name: nginx\n    image: nginx:1.161\n"))
	e.at(2 * time.Second)
	e.expect("typo", map[string]any{"status.phase": "Pending", "status.containerStatuses.0.state.waiting.reason": "ErrImagePull"})
	if msg := get(e.pod("typo"), "status.containerStatuses.0.state.waiting.message").(string); !strings.Contains(msg, `"docker.io/library/nginx:1.161"`) {
		t.Errorf("message %q does not name the image", msg)
	}
	e.at(3 * time.Second)
	e.expect("typo", map[string]any{"status.containerStatuses.0.state.waiting.reason": "ImagePullBackOff"})
	// Back-off 10s, then a pull of 2s fails again.
	e.at(14 * time.Second)
	e.expect("typo", map[string]any{"status.containerStatuses.0.state.waiting.reason": "ImagePullBackOff"})
	e.at(15 * time.Second)
	e.expect("typo", map[string]any{"status.containerStatuses.0.state.waiting.reason": "ErrImagePull"})
	// A good image next to it runs.
	e.create(podYAML("good", "  containers:\n  - name: nginx\n    image: docker.io/library/nginx:1.16.1\n"))
	e.at(20 * time.Second)
	e.expect("good", map[string]any{"status.phase": "Running", "status.podIP": "10.244.0.3"})
}

// The status examples of the seed (pod-lifecycle): one container exits 0
// or 1, or is OOM-killed, under each restart policy.
func TestSeedStatusExamples(t *testing.T) {
	profile := `
images:
- image: "exit0:*"
  exit: {after: 5s, code: 0}
- image: "exit1:*"
  exit: {after: 5s, code: 1}
- image: "oom:*"
  exit: {after: 5s, oomKilled: true}
`
	cases := []struct {
		image, policy string
		phase, state  string
		restarted     bool
		reason        string
		wantExit      int64
	}{
		{"exit0:v", "Always", "Running", "waiting", true, "Completed", 0},
		{"exit0:v", "OnFailure", "Succeeded", "terminated", false, "Completed", 0},
		{"exit0:v", "Never", "Succeeded", "terminated", false, "Completed", 0},
		{"exit1:v", "Always", "Running", "waiting", true, "Error", 1},
		{"exit1:v", "OnFailure", "Running", "waiting", true, "Error", 1},
		{"exit1:v", "Never", "Failed", "terminated", false, "Error", 1},
		{"oom:v", "Always", "Running", "waiting", true, "OOMKilled", 137},
		{"oom:v", "OnFailure", "Running", "waiting", true, "OOMKilled", 137},
		{"oom:v", "Never", "Failed", "terminated", false, "OOMKilled", 137},
	}
	for _, c := range cases {
		t.Run(c.image+"/"+c.policy, func(t *testing.T) {
			e := newEnv(t, profile)
			e.create(podYAML("p", "  restartPolicy: "+c.policy+"\n  containers:\n  - name: c\n    image: "+c.image+"\n"))
			e.at(5 * time.Second) // running since 3s
			e.expect("p", map[string]any{"status.phase": "Running", "status.containerStatuses.0.state.running.startedAt": "2026-01-01T00:00:03Z"})
			e.at(8 * time.Second) // exited at 8s
			want := map[string]any{"status.phase": c.phase}
			if c.restarted {
				want["status.containerStatuses.0.state.waiting.reason"] = "CrashLoopBackOff"
				want["status.containerStatuses.0.restartCount"] = 1
				want["status.containerStatuses.0.lastState.terminated.reason"] = c.reason
				want["status.containerStatuses.0.lastState.terminated.exitCode"] = c.wantExit
				want["status.containerStatuses.0.lastState.terminated.finishedAt"] = "2026-01-01T00:00:08Z"
			} else {
				want["status.containerStatuses.0.state.terminated.reason"] = c.reason
				want["status.containerStatuses.0.state.terminated.exitCode"] = c.wantExit
				want["status.containerStatuses.0.state.terminated.startedAt"] = "2026-01-01T00:00:03Z"
				want["status.containerStatuses.0.restartCount"] = 0
				want["cond:Ready"] = "False"
			}
			e.expect("p", want)
			if c.restarted {
				e.at(18 * time.Second) // back-off 10s
				e.expect("p", map[string]any{"status.phase": "Running", "status.containerStatuses.0.state.running.startedAt": "2026-01-01T00:00:18Z"})
			}
		})
	}
}

// Two containers, the first fails (seed): under Never the pod keeps
// Running while the second runs, and fails once the second ends.
func TestSeedTwoContainers(t *testing.T) {
	profile := `
images:
- image: "fail:*"
  exit: {after: 5s, code: 1}
- image: "done:*"
  exit: {after: 20s, code: 0}
`
	for _, c := range []struct{ policy, during, after string }{
		{"Always", "Running", "Running"},
		{"OnFailure", "Running", "Running"},
		{"Never", "Running", "Failed"},
	} {
		t.Run(c.policy, func(t *testing.T) {
			e := newEnv(t, profile)
			e.create(podYAML("p", "  restartPolicy: "+c.policy+"\n  containers:\n  - name: one\n    image: fail:v\n  - name: two\n    image: done:v\n"))
			e.at(10 * time.Second)
			e.expect("p", map[string]any{"status.phase": c.during, "cond:Ready": "False"})
			e.at(25 * time.Second)
			e.expect("p", map[string]any{"status.phase": c.after})
		})
	}
}

// TestNodeSelectorReadsStoredLabels: a pod whose nodeSelector names a
// label the node does not have waits; once the Node object is labelled
// (by the user, between two rounds of the same runner), the pod is bound.
func TestNodeSelectorReadsStoredLabels(t *testing.T) {
	e := newEnv(t, "")
	e.create("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  nodeSelector: {disktype: ssd}\n  containers: [{name: c, image: nginx}]\n")
	e.at(time.Second)
	if got := get(e.pod("p"), "status.conditions.0.reason"); got != "Unschedulable" {
		t.Fatalf("before the label: PodScheduled reason %v, want Unschedulable", got)
	}
	nodeGVK := schema.GVK{Version: "v1", Kind: "Node"}
	node, err := e.st.Get(e.ctx, nodeGVK, "", kubelet.NodeName)
	if err != nil {
		t.Fatal(err)
	}
	node["metadata"].(map[string]any)["labels"].(map[string]any)["disktype"] = "ssd"
	if _, err := e.st.Update(e.ctx, node); err != nil {
		t.Fatal(err)
	}
	e.at(2 * time.Second)
	if got := get(e.pod("p"), "spec.nodeName"); got != kubelet.NodeName {
		t.Fatalf("after the label: nodeName %v, want %s", got, kubelet.NodeName)
	}
}

// TestProfileNodes registers the nodes of the profile's nodes: list as
// Node objects and places pods by their requests and taints.
func TestProfileNodes(t *testing.T) {
	e := newEnv(t, `
nodes:
- name: small
  zone: z1
  labels: {disktype: ssd}
  capacity: {cpu: "1", memory: 2Gi, pods: "5"}
- name: big
  taints: [{key: dedicated, value: db, effect: NoSchedule}]
  capacity: {cpu: "8"}
  allocatable: {cpu: 7500m}
`)
	e.create("apiVersion: v1\nkind: Pod\nmetadata: {name: fits, namespace: default}\nspec:\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]\n")
	e.create("apiVersion: v1\nkind: Pod\nmetadata: {name: toobig, namespace: default}\nspec:\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: \"2\"}}}]\n")
	e.create("apiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: default}\nspec:\n  tolerations: [{key: dedicated, operator: Exists}]\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: \"2\"}}}]\n")
	e.at(time.Minute)
	nodeGVK := schema.GVK{Version: "v1", Kind: "Node"}
	small, err := e.st.Get(e.ctx, nodeGVK, "", "small")
	if err != nil {
		t.Fatal(err)
	}
	if got := get(small, "status.capacity.cpu"); got != "1" {
		t.Errorf("small's cpu capacity %v", got)
	}
	if l, _ := get(small, "metadata.labels").(map[string]any); l["topology.kubernetes.io/zone"] != "z1" || l["disktype"] != "ssd" || l["kubernetes.io/hostname"] != "small" {
		t.Errorf("small's labels %v", l)
	}
	big, err := e.st.Get(e.ctx, nodeGVK, "", "big")
	if err != nil {
		t.Fatal(err)
	}
	if got := get(big, "status.allocatable.cpu"); got != "7500m" {
		t.Errorf("big's allocatable cpu %v, want 7500m", got)
	}
	if got := get(big, "status.addresses.0.address"); got != "172.18.0.3" {
		t.Errorf("big's address %v", got)
	}
	if _, err := e.st.Get(e.ctx, nodeGVK, "", kubelet.NodeName); err == nil {
		t.Errorf("%s registered beside the profile's nodes", kubelet.NodeName)
	}
	for name, want := range map[string]string{"fits": "small", "db": "big"} {
		p := e.pod(name)
		if got := get(p, "spec.nodeName"); got != want {
			t.Errorf("pod %s on %v, want %s", name, got, want)
		}
		if got := get(p, "status.phase"); got != "Running" {
			t.Errorf("pod %s is %v", name, got)
		}
	}
	p := e.pod("toobig")
	want := "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
	if got := get(p, "status.conditions.0.message"); got != want {
		t.Errorf("toobig: %v\nwant %s", got, want)
	}
}

// TestProfileNodesInvalid: a bad node of the profile is refused with its
// path.
func TestProfileNodesInvalid(t *testing.T) {
	_, err := kubelet.ParseProfile([]byte("nodes:\n- name: a\n- name: a\n  taints: [{key: k, effect: Sometimes}]\n  capacity: {cpu: lots}\n"))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{`nodes[1].name: "a": duplicate`, `nodes[1].taints[0].effect: "Sometimes"`, `nodes[1].capacity.cpu: "lots"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
