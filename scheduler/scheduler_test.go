package scheduler

import (
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/value"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	o, err := value.DecodeObject(j)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func nodeObj(t *testing.T, name, extra string) map[string]any {
	return obj(t, `
metadata: {name: `+name+`, labels: {kubernetes.io/hostname: `+name+`}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "3"}}
`+extra)
}

// TestSchedule checks the filters' decisions and kube-scheduler's
// messages, one case per filter and their mixes.
func TestSchedule(t *testing.T) {
	cases := []struct {
		name     string
		nodes    []string // extra YAML per node a, b, c (spec: / metadata labels)
		existing []string // pods already bound
		pod      string
		node     string
		msg      string
	}{{
		name:  "fits the least allocated",
		nodes: []string{"", "", ""},
		existing: []string{
			`metadata: {name: x, namespace: d}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}`,
		},
		pod: `metadata: {name: p, namespace: d}
spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}`,
		node: "b",
	}, {
		name:  "insufficient cpu everywhere",
		nodes: []string{"", "", ""},
		pod: `metadata: {name: p, namespace: d}
spec: {containers: [{name: c, resources: {requests: {cpu: "4"}}}]}`,
		msg: "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
	}, {
		name: "taint, unschedulable and cpu",
		nodes: []string{
			"spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}",
			"spec: {unschedulable: true}",
			"",
		},
		existing: []string{
			`metadata: {name: x, namespace: d}
spec: {nodeName: c, containers: [{name: c, resources: {requests: {cpu: "2"}}}]}`,
		},
		pod: `metadata: {name: p, namespace: d}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}`,
		msg: "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
	}, {
		name:  "toleration",
		nodes: []string{"spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}", "spec: {unschedulable: true}"},
		pod: `metadata: {name: p, namespace: d}
spec: {tolerations: [{key: dedicated, operator: Exists}], containers: [{name: c}]}`,
		node: "a",
	}, {
		name:  "node selector",
		nodes: []string{"", "metadata: {name: b, labels: {disktype: ssd}}", ""},
		pod: `metadata: {name: p, namespace: d}
spec: {nodeSelector: {disktype: ssd}, containers: [{name: c}]}`,
		node: "b",
	}, {
		name:  "node selector matches none",
		nodes: []string{"", ""},
		pod: `metadata: {name: p, namespace: d}
spec: {nodeSelector: {disktype: ssd}, containers: [{name: c}]}`,
		msg: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
	}, {
		name:  "required node affinity",
		nodes: []string{"metadata: {name: a, labels: {zone: z1}}", "metadata: {name: b, labels: {zone: z2}}"},
		pod: `metadata: {name: p, namespace: d}
spec:
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: NotIn, values: [z1]}]}]}}}
  containers: [{name: c}]`,
		node: "b",
	}, {
		name:  "host port taken",
		nodes: []string{"", ""},
		existing: []string{
			`metadata: {name: x, namespace: d}
spec: {nodeName: a, containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}]}]}`,
			`metadata: {name: y, namespace: d}
spec: {nodeName: b, containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080, protocol: TCP}]}]}`,
		},
		pod: `metadata: {name: p, namespace: d}
spec: {containers: [{name: c, ports: [{containerPort: 81, hostPort: 8080}]}]}`,
		msg: "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
	}, {
		name:  "too many pods",
		nodes: []string{""},
		existing: []string{
			"metadata: {name: x, namespace: d}\nspec: {nodeName: a, containers: [{name: c}]}",
			"metadata: {name: y, namespace: d}\nspec: {nodeName: a, containers: [{name: c}]}",
			"metadata: {name: z, namespace: d}\nspec: {nodeName: a, containers: [{name: c}]}",
		},
		pod: "metadata: {name: p, namespace: d}\nspec: {containers: [{name: c}]}",
		msg: "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
	}, {
		name:  "finished pods hold nothing",
		nodes: []string{""},
		existing: []string{
			"metadata: {name: x, namespace: d}\nspec: {nodeName: a, containers: [{name: c}]}\nstatus: {phase: Succeeded}",
			"metadata: {name: y, namespace: d}\nspec: {nodeName: a, containers: [{name: c}]}\nstatus: {phase: Failed}",
			"metadata: {name: z, namespace: d}\nspec: {nodeName: a, containers: [{name: c}]}",
		},
		pod:  "metadata: {name: p, namespace: d}\nspec: {containers: [{name: c}]}",
		node: "a",
	}, {
		name:  "required anti-affinity",
		nodes: []string{"", ""},
		existing: []string{
			"metadata: {name: x, namespace: d, labels: {app: web}}\nspec: {nodeName: a, containers: [{name: c}]}",
			"metadata: {name: y, namespace: d, labels: {app: web}}\nspec: {nodeName: b, containers: [{name: c}]}",
		},
		pod: `metadata: {name: p, namespace: d, labels: {app: web}}
spec:
  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}
  containers: [{name: c}]`,
		msg: "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
	}, {
		name:  "existing pod's anti-affinity",
		nodes: []string{"", ""},
		existing: []string{`metadata: {name: x, namespace: d, labels: {app: db}}
spec:
  nodeName: a
  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}
  containers: [{name: c}]`},
		pod:  "metadata: {name: p, namespace: d, labels: {app: web}}\nspec: {containers: [{name: c, resources: {requests: {cpu: 10m}}}]}",
		node: "b",
	}, {
		name:  "pod affinity, first of its kind",
		nodes: []string{"", ""},
		pod: `metadata: {name: p, namespace: d, labels: {app: web}}
spec:
  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}
  containers: [{name: c}]`,
		node: "a",
	}, {
		name:  "pod affinity to a missing pod",
		nodes: []string{"", ""},
		pod: `metadata: {name: p, namespace: d, labels: {app: web}}
spec:
  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: cache}}}]}}
  containers: [{name: c}]`,
		msg: "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
	}, {
		name:  "topology spread",
		nodes: []string{"metadata: {name: a, labels: {zone: z1}}", "metadata: {name: b, labels: {zone: z2}}", "metadata: {name: c, labels: {}}"},
		existing: []string{
			"metadata: {name: x, namespace: d, labels: {app: web}}\nspec: {nodeName: a, containers: [{name: c}]}",
		},
		pod: `metadata: {name: p, namespace: d, labels: {app: web}}
spec:
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]
  containers: [{name: c, resources: {requests: {cpu: 10m}}}]`,
		node: "b",
	}, {
		name:  "topology spread unsatisfiable",
		nodes: []string{"metadata: {name: a, labels: {zone: z1}}", "metadata: {name: b, labels: {zone: z2}, }\nspec: {taints: [{key: k, effect: NoSchedule}]}"},
		existing: []string{
			"metadata: {name: x, namespace: d, labels: {app: web}}\nspec: {nodeName: a, containers: [{name: c}]}",
		},
		pod: `metadata: {name: p, namespace: d, labels: {app: web}}
spec:
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]
  containers: [{name: c}]`,
		msg: "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
	}, {
		name:  "preemption",
		nodes: []string{""},
		existing: []string{
			`metadata: {name: low, namespace: d}
spec: {nodeName: a, priority: 0, containers: [{name: c, resources: {requests: {cpu: 1500m}}}]}`,
		},
		pod: `metadata: {name: p, namespace: d}
spec: {priority: 1000, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}`,
		msg: "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node a, preempting 1 victims",
	}, {
		name:  "preemptionPolicy Never",
		nodes: []string{""},
		existing: []string{
			`metadata: {name: low, namespace: d}
spec: {nodeName: a, priority: 0, containers: [{name: c, resources: {requests: {cpu: 1500m}}}]}`,
		},
		pod: `metadata: {name: p, namespace: d}
spec: {priority: 1000, preemptionPolicy: Never, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}`,
		msg: "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []map[string]any
			for i, extra := range tc.nodes {
				name := string(rune('a' + i))
				n := nodeObj(t, name, "")
				if extra != "" {
					e := obj(t, extra)
					if md, ok := e["metadata"].(map[string]any); ok {
						for k, v := range md["labels"].(map[string]any) {
							n["metadata"].(map[string]any)["labels"].(map[string]any)[k] = v
						}
					}
					if sp, ok := e["spec"]; ok {
						n["spec"] = sp
					}
				}
				nodes = append(nodes, n)
			}
			c := New(nodes)
			for _, p := range tc.existing {
				c.SetPod(obj(t, p))
			}
			d := c.Schedule(obj(t, tc.pod))
			if d.Node != tc.node || d.Message != tc.msg {
				t.Errorf("got node %q message %q\nwant node %q message %q", d.Node, d.Message, tc.node, tc.msg)
			}
		})
	}
}

// TestPodRequests checks the requests of init containers, sidecars and
// overhead.
func TestPodRequests(t *testing.T) {
	spec := obj(t, `
initContainers:
- {name: i, resources: {requests: {cpu: "3"}}}
- {name: s, restartPolicy: Always, resources: {requests: {cpu: 500m, memory: 1Gi}}}
containers:
- {name: a, resources: {requests: {cpu: "1"}}}
- {name: b}
overhead: {cpu: 100m}
`)
	r, cpu, mem := podRequests(spec)
	// max(3, 1 + 0.5) + 0.1
	if r.MilliCPU != 3100 || r.Memory != 1<<30 {
		t.Errorf("requests %+v, want 3100m and 1Gi", r)
	}
	// Non-zero: containers 1 + 0.1 (b) + sidecar 0.5 = 1.6 < init 3 + 0 = 3; + 0.1.
	if cpu != 3100 || mem != 1<<30+2*DefaultMemoryRequest {
		t.Errorf("non-zero %d %d", cpu, mem)
	}
}
