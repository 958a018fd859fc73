package nodefit

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

// asJSON is a typed API value as the JSON value the embedded cluster
// holds.
func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func pick[T any](r *rand.Rand, l ...T) T { return l[r.IntN(len(l))] }

// Tolerates answers as v1.Toleration.ToleratesTaint on random pairs.
func TestToleratesAsUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		tol := corev1.Toleration{
			Key:      pick(r, "", "a", "b"),
			Operator: pick(r, corev1.TolerationOperator(""), corev1.TolerationOpEqual, corev1.TolerationOpExists, "Gt"),
			Value:    pick(r, "", "x", "1"),
			Effect:   pick(r, corev1.TaintEffect(""), corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute),
		}
		taint := corev1.Taint{
			Key:    pick(r, "a", "b"),
			Value:  pick(r, "", "x", "2"),
			Effect: pick(r, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute, corev1.TaintEffectPreferNoSchedule),
		}
		want := tol.ToleratesTaint(klog.Background(), &taint, false)
		if got := Tolerates(asJSON(t, tol), asJSON(t, taint)); got != want {
			t.Fatalf("case %d: toleration %+v, taint %+v: got %v, want %v", i, tol, taint, got, want)
		}
	}
}

// TermMatches answers as component-helpers' node selector on random
// terms and nodes.
func TestTermMatchesAsUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ops := []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}
	values := func(op corev1.NodeSelectorOperator) []string {
		switch op {
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			return nil
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			return []string{pick(r, "1", "5", "9")}
		}
		return pick(r, []string{"x"}, []string{"y"}, []string{"x", "y"}, []string{"n1"}, []string{"n1", "n2"})
	}
	matched := 0
	for i := range 5000 {
		var term corev1.NodeSelectorTerm
		for range r.IntN(3) {
			op := pick(r, ops...)
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{Key: pick(r, "k", "l", "n"), Operator: op, Values: values(op)})
		}
		for range r.IntN(2) {
			op := pick(r, corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn)
			term.MatchFields = append(term.MatchFields, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: op, Values: values(op)[:1]})
		}
		labels := map[string]string{}
		for _, k := range []string{"k", "l", "n"} {
			if r.IntN(3) > 0 {
				labels[k] = pick(r, "x", "y", "5", "7")
			}
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: pick(r, "n1", "n2"), Labels: labels}}
		sel, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}})
		if err != nil {
			continue // a term the API server refuses
		}
		want := sel.Match(node)
		if want {
			matched++
		}
		if got := TermMatches(asJSON(t, term), labels, node.Name); got != want {
			t.Fatalf("case %d: term %+v on node %s %v: got %v, want %v", i, term, node.Name, labels, got, want)
		}
	}
	if matched < 100 {
		t.Errorf("only %d of the random terms matched: the test checks too little", matched)
	}
}

// PodRequests answers as component-helpers' PodRequests (pod-level
// resources on) on random pods, and counts the defaults of the
// containers that ask for nothing.
func TestPodRequestsAsUpstream(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	always := corev1.ContainerRestartPolicyAlways
	list := func() corev1.ResourceList {
		l := corev1.ResourceList{}
		if r.IntN(3) > 0 {
			l[corev1.ResourceCPU] = resource.MustParse(pick(r, "100m", "250m", "1", "1500m"))
		}
		if r.IntN(3) > 0 {
			l[corev1.ResourceMemory] = resource.MustParse(pick(r, "64Mi", "1Gi", "300M"))
		}
		if r.IntN(4) == 0 {
			l[corev1.ResourceEphemeralStorage] = resource.MustParse(pick(r, "1Gi", "10Gi"))
		}
		if r.IntN(4) == 0 {
			l["example.com/gpu"] = resource.MustParse(pick(r, "1", "2"))
		}
		return l
	}
	for i := range 3000 {
		var pod corev1.Pod
		for j := range 1 + r.IntN(3) {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprint("c", j), Resources: corev1.ResourceRequirements{Requests: list()}})
		}
		for j := range r.IntN(4) {
			c := corev1.Container{Name: fmt.Sprint("i", j), Resources: corev1.ResourceRequirements{Requests: list()}}
			if r.IntN(2) == 0 {
				c.RestartPolicy = &always
			}
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
		}
		if r.IntN(4) == 0 {
			pod.Spec.Overhead = list()
		}
		if r.IntN(4) == 0 {
			l := list()
			delete(l, corev1.ResourceEphemeralStorage)
			delete(l, "example.com/gpu")
			pod.Spec.Resources = &corev1.ResourceRequirements{Requests: l}
		}
		want := resourcehelper.PodRequests(&pod, resourcehelper.PodResourcesOptions{})
		got, nonZeroCPU, nonZeroMem := PodRequests(asJSON(t, pod.Spec))
		check := func(name string, got int64, q resource.Quantity, milli bool) {
			w := q.Value()
			if milli {
				w = q.MilliValue()
			}
			if got != w {
				t.Fatalf("case %d: %s: got %d, want %d\npod spec %+v", i, name, got, w, pod.Spec)
			}
		}
		check("cpu", got.MilliCPU, want[corev1.ResourceCPU], true)
		check("memory", got.Memory, want[corev1.ResourceMemory], false)
		check("ephemeral-storage", got.EphemeralStorage, want[corev1.ResourceEphemeralStorage], false)
		check("example.com/gpu", got.Scalar["example.com/gpu"], want["example.com/gpu"], false)
		if nonZeroCPU < got.MilliCPU || nonZeroMem < got.Memory {
			t.Fatalf("case %d: non-zero requests %d/%d below the requests %d/%d", i, nonZeroCPU, nonZeroMem, got.MilliCPU, got.Memory)
		}
	}
	// A container asking for nothing counts 100m and 200 MiB for scoring.
	_, cpu, mem := PodRequests(map[string]any{"containers": []any{map[string]any{"name": "c"}}})
	if cpu != DefaultMilliCPURequest || mem != DefaultMemoryRequest {
		t.Errorf("empty container: non-zero %d/%d, want %d/%d", cpu, mem, DefaultMilliCPURequest, DefaultMemoryRequest)
	}
}

func TestParseResources(t *testing.T) {
	r, pods := ParseResources(map[string]any{
		"cpu": 0.5, "memory": "1Gi", "ephemeral-storage": int64(1000), "pods": "110",
		"hugepages-2Mi": "4Mi", "example.com/fpga": "2", "kubernetes.io/other": "1", "bad": "nope",
	})
	want := Resources{MilliCPU: 500, Memory: 1 << 30, EphemeralStorage: 1000,
		Scalar: map[string]int64{"hugepages-2Mi": 4 << 20, "example.com/fpga": 2}}
	if fmt.Sprint(r) != fmt.Sprint(want) || pods != 110 {
		t.Errorf("got %+v pods %d, want %+v pods 110", r, pods, want)
	}
}

// A hand case: init containers, a sidecar, a container asking for
// nothing, and overhead.
func TestPodRequestsSidecarAndInit(t *testing.T) {
	var spec map[string]any
	if err := yaml.Unmarshal([]byte(`
initContainers:
- {name: i, resources: {requests: {cpu: "3"}}}
- {name: s, restartPolicy: Always, resources: {requests: {cpu: 500m, memory: 1Gi}}}
containers:
- {name: a, resources: {requests: {cpu: "1"}}}
- {name: b}
overhead: {cpu: 100m}
`), &spec); err != nil {
		t.Fatal(err)
	}
	r, cpu, mem := PodRequests(spec)
	// max(3, 1 + 0.5) + 0.1
	if r.MilliCPU != 3100 || r.Memory != 1<<30 {
		t.Errorf("requests %+v, want 3100m and 1Gi", r)
	}
	// Non-zero: containers 1 + 0.1 (b) + sidecar 0.5 = 1.6 < init 3 + 0 = 3; + 0.1.
	if cpu != 3100 || mem != 1<<30+2*DefaultMemoryRequest {
		t.Errorf("non-zero %d %d", cpu, mem)
	}
}
