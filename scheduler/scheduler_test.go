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
		name:  "pinned by name to a full node (a DaemonSet's pod)",
		nodes: []string{"", ""},
		existing: []string{
			`metadata: {name: x, namespace: d}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 1800m}}}]}`,
		},
		pod: `metadata: {name: p, namespace: d}
spec:
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [a]}]}]}}}
  containers: [{name: c, resources: {requests: {cpu: 500m}}}]`,
		msg: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
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

// TestScores checks the scores that pick among feasible nodes:
// PodTopologySpread's (soft constraints and the defaults of an owned
// pod) and InterPodAffinity's (preferred terms, the placed pods' terms),
// each against resource scoring, which alone prefers the big node a.
func TestScores(t *testing.T) {
	big := obj(t, `
metadata: {name: a, labels: {kubernetes.io/hostname: a}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "20"}}`)
	small := obj(t, `
metadata: {name: b, labels: {kubernetes.io/hostname: b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "20"}}`)
	cases := []struct {
		name     string
		existing []string
		services []string
		// controllers, if not nil, are the controllers SetControllers
		// reads.
		controllers []string
		pod         string
		node        string
	}{{
		name: "resources alone",
		existing: []string{
			"metadata: {name: x, namespace: d, labels: {app: s}}\nspec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}",
		},
		pod:  "metadata: {name: p, namespace: d, labels: {app: s}}\nspec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}",
		node: "a",
	}, {
		name: "soft hostname spread",
		existing: []string{
			"metadata: {name: x, namespace: d, labels: {app: s}}\nspec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}",
		},
		pod: `metadata: {name: p, namespace: d, labels: {app: s}}
spec:
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: s}}}]
  containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]`,
		node: "b",
	}, {
		name: "default spreading of an owned pod",
		existing: []string{
			`metadata: {name: x, namespace: d, ownerReferences: [{kind: ReplicaSet, name: rs, uid: u1, controller: true}]}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		},
		pod: `metadata: {name: p, namespace: d, ownerReferences: [{kind: ReplicaSet, name: rs, uid: u1, controller: true}]}
spec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		node: "b",
	}, {
		name: "another owner's pods do not count",
		existing: []string{
			`metadata: {name: x, namespace: d, ownerReferences: [{kind: ReplicaSet, name: rs, uid: u2, controller: true}]}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		},
		pod: `metadata: {name: p, namespace: d, ownerReferences: [{kind: ReplicaSet, name: rs, uid: u1, controller: true}]}
spec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		node: "a",
	}, {
		name: "default spreading of the pods of a Service",
		existing: []string{
			"metadata: {name: x, namespace: d, labels: {app: s}}\nspec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}",
		},
		services: []string{"metadata: {name: s, namespace: d}\nspec: {selector: {app: s}}"},
		pod:      "metadata: {name: p, namespace: d, labels: {app: s}}\nspec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}",
		node:     "b",
	}, {
		name: "a Service without a selector, or of another namespace, spreads nothing",
		existing: []string{
			"metadata: {name: x, namespace: d, labels: {app: s}}\nspec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}",
		},
		services: []string{
			"metadata: {name: s, namespace: e}\nspec: {selector: {app: s}}",
			"metadata: {name: t, namespace: d}\nspec: {ports: [{port: 80}]}",
			"metadata: {name: u, namespace: d}\nspec: {selector: {}}",
		},
		pod:  "metadata: {name: p, namespace: d, labels: {app: s}}\nspec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}",
		node: "a",
	}, {
		name: "a Service narrows what an owned pod's spreading counts",
		existing: []string{
			`metadata: {name: x, namespace: d, labels: {app: s}, ownerReferences: [{kind: ReplicaSet, name: rs, uid: u1, controller: true}]}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		},
		services: []string{"metadata: {name: s, namespace: d}\nspec: {selector: {app: s, v: \"2\"}}"},
		pod: `metadata: {name: p, namespace: d, labels: {app: s, v: "2"}, ownerReferences: [{kind: ReplicaSet, name: rs, uid: u1, controller: true}]}
spec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		node: "a",
	}, {
		name: "a controller's selector counts the bare pods it selects",
		existing: []string{
			"metadata: {name: x, namespace: d, labels: {app: db}}\nspec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}",
		},
		controllers: []string{"kind: StatefulSet\nmetadata: {name: db, namespace: d}\nspec: {selector: {matchLabels: {app: db}}}"},
		pod: `metadata: {name: db-0, namespace: d, labels: {app: db}, ownerReferences: [{kind: StatefulSet, name: db, uid: u1, controller: true}]}
spec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		node: "b",
	}, {
		name: "a ReplicationController's selector counts the pods of another owner",
		existing: []string{
			`metadata: {name: x, namespace: d, labels: {app: rc}, ownerReferences: [{kind: ReplicationController, name: old, uid: u2, controller: true}]}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		},
		controllers: []string{"kind: ReplicationController\nmetadata: {name: rc, namespace: d}\nspec: {selector: {app: rc}}"},
		pod: `metadata: {name: p, namespace: d, labels: {app: rc}, ownerReferences: [{kind: ReplicationController, name: rc, uid: u1, controller: true}]}
spec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		node: "b",
	}, {
		name: "a controller that is not found spreads nothing",
		existing: []string{
			`metadata: {name: x, namespace: d, labels: {app: s}, ownerReferences: [{kind: ReplicaSet, name: rs, uid: u1, controller: true}]}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		},
		controllers: []string{},
		pod: `metadata: {name: p, namespace: d, labels: {app: s}, ownerReferences: [{kind: ReplicaSet, name: rs, uid: u1, controller: true}]}
spec: {containers: [{name: c, resources: {requests: {cpu: 100m, memory: 200Mi}}}]}`,
		node: "a",
	}, {
		name: "preferred anti-affinity",
		existing: []string{
			"metadata: {name: x, namespace: d, labels: {app: x}}\nspec: {nodeName: a, containers: [{name: c}]}",
		},
		pod: `metadata: {name: p, namespace: d}
spec:
  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: x}}}}]}}
  containers: [{name: c}]`,
		node: "b",
	}, {
		name: "a placed pod's preferred affinity draws the pod it names",
		existing: []string{
			`metadata: {name: x, namespace: d}
spec:
  nodeName: b
  affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: cache}}}}]}}
  containers: [{name: c}]`,
		},
		pod:  "metadata: {name: p, namespace: d, labels: {app: cache}}\nspec: {containers: [{name: c}]}",
		node: "b",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New([]map[string]any{big, small})
			for _, p := range tc.existing {
				c.SetPod(obj(t, p))
			}
			var services []map[string]any
			for _, s := range tc.services {
				services = append(services, obj(t, s))
			}
			c.SetServices(func(ns string) []map[string]any {
				var out []map[string]any
				for _, s := range services {
					if md, _ := s["metadata"].(map[string]any); md["namespace"] == ns {
						out = append(out, s)
					}
				}
				return out
			})
			if tc.controllers != nil {
				var ctrls []map[string]any
				for _, s := range tc.controllers {
					ctrls = append(ctrls, obj(t, s))
				}
				c.SetControllers(func(kind, ns, name string) map[string]any {
					for _, o := range ctrls {
						md, _ := o["metadata"].(map[string]any)
						if o["kind"] == kind && md["namespace"] == ns && md["name"] == name {
							return o
						}
					}
					return nil
				})
			}
			if d := c.Schedule(obj(t, tc.pod)); d.Node != tc.node {
				t.Errorf("node %q (%s), want %q", d.Node, d.Message, tc.node)
			}
		})
	}
}

// TestNamespaceSelector checks a pod affinity term's namespaceSelector
// against the namespaces' labels.
func TestNamespaceSelector(t *testing.T) {
	c := New([]map[string]any{nodeObj(t, "a", ""), nodeObj(t, "b", "")})
	c.SetPod(obj(t, "metadata: {name: db, namespace: data, labels: {app: db}}\nspec: {nodeName: b, containers: [{name: c}]}"))
	pod := obj(t, `metadata: {name: p, namespace: web}
spec:
  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, namespaceSelector: {matchLabels: {team: data}}, labelSelector: {matchLabels: {app: db}}}]}}
  containers: [{name: c}]`)
	if d := c.Schedule(pod); d.Node != "" {
		t.Errorf("without namespace labels: placed on %q", d.Node)
	}
	c.SetNamespaceLabels(func(ns string) map[string]string {
		if ns == "data" {
			return map[string]string{"team": "data"}
		}
		return nil
	})
	if d := c.Schedule(pod); d.Node != "b" {
		t.Errorf("node %q (%s), want b", d.Node, d.Message)
	}
}

// TestPreemptionBudgets checks that preemption spares the pods a
// PodDisruptionBudget protects: of two victims of the same priority,
// the older would be spared; with a budget protecting the newer, the
// older goes.
func TestPreemptionBudgets(t *testing.T) {
	setup := func() *Cluster {
		c := New([]map[string]any{nodeObj(t, "a", "")})
		c.SetPod(obj(t, `metadata: {name: old, namespace: d, labels: {app: old}}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 800m}}}]}
status: {startTime: "2026-01-01T00:00:00Z"}`))
		c.SetPod(obj(t, `metadata: {name: new, namespace: d, labels: {app: new}}
spec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: 800m}}}]}
status: {startTime: "2026-01-01T00:01:00Z"}`))
		return c
	}
	pod := obj(t, "metadata: {name: p, namespace: d}\nspec: {priority: 1000, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}")
	c := setup()
	if d := c.Schedule(pod); len(d.Victims) != 1 || d.Victims[0] != "d/new" {
		t.Errorf("without a budget: victims %v, want [d/new]", d.Victims)
	}
	c = setup()
	pdb := obj(t, `metadata: {name: keep, namespace: d}
spec: {minAvailable: 1, selector: {matchLabels: {app: new}}}
status: {disruptionsAllowed: 0}`)
	c.SetDisruptionBudgets(func() []map[string]any { return []map[string]any{pdb} })
	if d := c.Schedule(pod); len(d.Victims) != 1 || d.Victims[0] != "d/old" {
		t.Errorf("with a budget on new: victims %v, want [d/old]", d.Victims)
	}
	pdb["status"] = map[string]any{"disruptionsAllowed": int64(1)}
	c = setup()
	c.SetDisruptionBudgets(func() []map[string]any { return []map[string]any{pdb} })
	if d := c.Schedule(pod); len(d.Victims) != 1 || d.Victims[0] != "d/new" {
		t.Errorf("with a budget that allows one disruption: victims %v, want [d/new]", d.Victims)
	}
}

// TestNominatedNodeFirst checks that a pod nominated by an earlier
// preemption goes to that node when it fits there, as kube-scheduler
// tries it before the others.
func TestNominatedNodeFirst(t *testing.T) {
	c := New([]map[string]any{nodeObj(t, "a", ""), nodeObj(t, "b", "")})
	c.SetPod(obj(t, "metadata: {name: x, namespace: d}\nspec: {nodeName: a, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}"))
	pod := obj(t, "metadata: {name: p, namespace: d}\nspec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}")
	if d := c.Schedule(pod); d.Node != "b" {
		t.Fatalf("not nominated: node %q, want the emptier b", d.Node)
	}
	pod["status"] = map[string]any{"nominatedNodeName": "a"}
	if d := c.Schedule(pod); d.Node != "a" {
		t.Errorf("nominated a: node %q", d.Node)
	}
}
