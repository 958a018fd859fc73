package kubelet_test

import (
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/schema"
)

const admissionNodes = `
nodes:
- name: small
  labels: {disktype: hdd}
  capacity: {cpu: "2", memory: 1Gi, pods: "3", example.com/gpu: "1"}
- name: tainted
  taints: [{key: maintenance, effect: NoExecute}, {key: dedicated, value: db, effect: NoSchedule}]
`

func boundPod(name, node, body string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default}\nspec:\n  nodeName: " + node + "\n" + body
}

// TestAdmissionRejects: pods bound to a node by hand are checked by the
// kubelet as v1.37.1 checks them (lifecycle/predicate.go): the first
// failed check gives the reason, the message is "Pod was rejected: "
// and the kubelet's words, a Warning Event carries both.
func TestAdmissionRejects(t *testing.T) {
	e := newEnv(t, admissionNodes)
	ctr := func(res string) string {
		return "  containers: [{name: c, image: nginx, resources: {requests: {" + res + "}}}]\n"
	}
	e.create(boundPod("first", "small", ctr(`cpu: 100m`)))
	e.at(0)
	e.create(boundPod("cpu", "small", ctr(`cpu: "4"`)))
	e.create(boundPod("mem", "small", ctr(`memory: 2Gi`)))
	e.create(boundPod("gpu", "small", "  containers: [{name: c, image: nginx, resources: {requests: {example.com/gpu: \"2\"}, limits: {example.com/gpu: \"2\"}}}]\n"))
	e.create(boundPod("unknownres", "small", "  containers: [{name: c, image: nginx, resources: {requests: {example.org/fpga: \"2\"}, limits: {example.org/fpga: \"2\"}}}]\n"))
	e.create(boundPod("selector", "small", "  nodeSelector: {disktype: ssd}\n"+ctr(`cpu: 100m`)))
	e.create(boundPod("affinity", "small", "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [other]}]}]}}}\n"+ctr(`cpu: 100m`)))
	e.create(boundPod("noexec", "tainted", ctr(`cpu: 100m`)))
	e.create(boundPod("tolerates", "tainted", "  tolerations: [{key: maintenance, operator: Exists, effect: NoExecute}]\n"+ctr(`cpu: 100m`)))
	e.create(boundPod("windows", "tainted", "  os: {name: windows}\n  tolerations: [{operator: Exists}]\n"+ctr(`cpu: 100m`)))
	e.at(time.Minute)
	want := map[string][2]string{
		"cpu":      {"OutOfcpu", "Node didn't have enough resource: cpu, requested: 4000, used: 100, capacity: 2000"},
		"mem":      {"OutOfmemory", "Node didn't have enough resource: memory, requested: 2147483648, used: 0, capacity: 1073741824"},
		"gpu":      {"OutOfexample.com/gpu", "Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, capacity: 1"},
		"selector": {"NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		"affinity": {"NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		"noexec":   {"TaintToleration", "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"},
		"windows":  {"PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS"},
	}
	for name, w := range want {
		e.expect(name, map[string]any{"status.phase": "Failed", "status.reason": w[0], "status.message": "Pod was rejected: " + w[1]})
		if cs := get(e.pod(name), "status.containerStatuses"); cs != nil {
			t.Errorf("%s: rejected pod has container statuses %v", name, cs)
		}
		if got := e.events(name); !strings.Contains(got, "Warning "+w[0]+" "+w[1]+" (kubelet") {
			t.Errorf("%s: events\n%s\nwant the Warning %s", name, got, w[0])
		}
	}
	// Admitted: the pod that came first, the one asking for an extended
	// resource its node does not know, the one tolerating the taint.
	for _, name := range []string{"first", "unknownres", "tolerates"} {
		e.expect(name, map[string]any{"status.phase": "Running"})
	}
	// A third pod on small fills its pods (3: first, unknownres, this).
	e.create(boundPod("third", "small", ctr("")))
	e.at(time.Minute + time.Second)
	e.create(boundPod("fourth", "small", ctr("")))
	e.at(2 * time.Minute)
	e.expect("third", map[string]any{"status.phase": "Running"})
	e.expect("fourth", map[string]any{"status.reason": "OutOfpods",
		"status.message": "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"})
	// Nothing changes a rejected pod afterwards; deleted, it goes at once.
	rv := get(e.pod("cpu"), "metadata.resourceVersion")
	e.at(time.Hour)
	if got := get(e.pod("cpu"), "metadata.resourceVersion"); got != rv {
		t.Errorf("rejected pod rewritten: resourceVersion %v, was %v", got, rv)
	}
	if err := e.st.Delete(e.ctx, podGVK, "default", "cpu"); err != nil {
		t.Fatal(err)
	}
	e.at(time.Hour + time.Second)
	if _, err := e.st.Get(e.ctx, podGVK, "default", "cpu"); err == nil {
		t.Errorf("deleted rejected pod still there")
	}
}

// TestAdmissionHostPorts: a host port an admitted pod holds rejects the
// next pod asking for it on the same node.
func TestAdmissionHostPorts(t *testing.T) {
	e := newEnv(t, "")
	port := "  containers: [{name: c, image: nginx, ports: [{containerPort: 80, hostPort: 8080}]}]\n"
	e.create(boundPod("a", "konverge-node", port))
	e.at(0)
	e.create(boundPod("b", "konverge-node", port))
	e.at(time.Minute)
	e.expect("a", map[string]any{"status.phase": "Running"})
	e.expect("b", map[string]any{"status.phase": "Failed", "status.reason": "NodePorts",
		"status.message": "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"})
}

// events lists the Events about a pod: "Type Reason Message (component
// on host)" lines.
func (e *env) events(name string) string {
	e.t.Helper()
	l, err := e.st.List(e.ctx, schema.GVK{Version: "v1", Kind: "Event"})
	if err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	for _, ev := range l.Items {
		if get(ev, "involvedObject.name") != name {
			continue
		}
		b.WriteString(get(ev, "type").(string) + " " + get(ev, "reason").(string) + " " + get(ev, "message").(string) +
			" (" + str(get(ev, "source.component")) + " on " + str(get(ev, "source.host")) + ")\n")
	}
	return b.String()
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
