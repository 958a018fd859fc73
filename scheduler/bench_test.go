package scheduler

import (
	"fmt"
	"testing"
)

// BenchmarkSchedule1000Nodes30000Pods places 30,000 pods (100m CPU,
// 128Mi each) on 1,000 nodes of 8 CPUs, one after another, each placed
// pod counting for the next decisions: what the embedded cluster's
// scheduler does for a large rollout.
func BenchmarkSchedule1000Nodes30000Pods(b *testing.B) {
	const nodes, pods = 1000, 30000
	var nodeObjs []map[string]any
	for i := range nodes {
		nodeObjs = append(nodeObjs, map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("node-%04d", i), "labels": map[string]any{"topology.kubernetes.io/zone": fmt.Sprintf("z%d", i%3)}},
			"status":   map[string]any{"allocatable": map[string]any{"cpu": "8", "memory": "32Gi", "pods": "110"}},
		})
	}
	podObj := func(i int) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("p-%05d", i), "namespace": "default", "labels": map[string]any{"app": "web"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c",
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}}}}},
		}
	}
	scheduleAll(b, nodeObjs, pods, podObj, nil)
}

// BenchmarkSchedule1000Nodes30000OwnedPods is the same rollout as the
// pods of one ReplicaSet: each decision also scores the default
// topology spreading of the owner's pods over hostnames and zones.
func BenchmarkSchedule1000Nodes30000OwnedPods(b *testing.B) {
	const nodes, pods = 1000, 30000
	var nodeObjs []map[string]any
	for i := range nodes {
		nodeObjs = append(nodeObjs, map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("node-%04d", i), "labels": map[string]any{
				"kubernetes.io/hostname": fmt.Sprintf("node-%04d", i), "topology.kubernetes.io/zone": fmt.Sprintf("z%d", i%3)}},
			"status": map[string]any{"allocatable": map[string]any{"cpu": "8", "memory": "32Gi", "pods": "110"}},
		})
	}
	owner := []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d4f8b7c9f", "uid": "0a1b2c3d", "controller": true}}
	podObj := func(i int) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("p-%05d", i), "namespace": "default", "labels": map[string]any{"app": "web"}, "ownerReferences": owner},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c",
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}}}}},
		}
	}
	scheduleAll(b, nodeObjs, pods, podObj, nil)
}

// BenchmarkSchedule1000Nodes30000ServicePods is the rollout of
// BenchmarkSchedule1000Nodes30000OwnedPods as bare pods of a Service
// app=web: the default spreading counts the pods that carry the
// Service's labels, node by node.
func BenchmarkSchedule1000Nodes30000ServicePods(b *testing.B) {
	const nodes, pods = 1000, 30000
	var nodeObjs []map[string]any
	for i := range nodes {
		nodeObjs = append(nodeObjs, map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("node-%04d", i), "labels": map[string]any{
				"kubernetes.io/hostname": fmt.Sprintf("node-%04d", i), "topology.kubernetes.io/zone": fmt.Sprintf("z%d", i%3)}},
			"status": map[string]any{"allocatable": map[string]any{"cpu": "8", "memory": "32Gi", "pods": "110"}},
		})
	}
	services := []map[string]any{{
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec":     map[string]any{"selector": map[string]any{"app": "web"}},
	}}
	podObj := func(i int) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("p-%05d", i), "namespace": "default", "labels": map[string]any{"app": "web"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c",
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}}}}},
		}
	}
	scheduleAll(b, nodeObjs, pods, podObj, func(c *Cluster) {
		c.SetServices(func(string) []map[string]any { return services })
	})
}

// BenchmarkSchedule1000Nodes30000ControlledPods is the rollout of
// BenchmarkSchedule1000Nodes30000OwnedPods with the ReplicaSet readable
// (SetControllers), as the embedded cluster runs it: the default
// spreading counts the pods of the ReplicaSet's selector.
func BenchmarkSchedule1000Nodes30000ControlledPods(b *testing.B) {
	const nodes, pods = 1000, 30000
	var nodeObjs []map[string]any
	for i := range nodes {
		nodeObjs = append(nodeObjs, map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("node-%04d", i), "labels": map[string]any{
				"kubernetes.io/hostname": fmt.Sprintf("node-%04d", i), "topology.kubernetes.io/zone": fmt.Sprintf("z%d", i%3)}},
			"status": map[string]any{"allocatable": map[string]any{"cpu": "8", "memory": "32Gi", "pods": "110"}},
		})
	}
	rs := map[string]any{
		"metadata": map[string]any{"name": "web-5d4f8b7c9f", "namespace": "default"},
		"spec":     map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web", "pod-template-hash": "5d4f8b7c9f"}}},
	}
	owner := []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d4f8b7c9f", "uid": "0a1b2c3d", "controller": true}}
	podObj := func(i int) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("p-%05d", i), "namespace": "default",
				"labels": map[string]any{"app": "web", "pod-template-hash": "5d4f8b7c9f"}, "ownerReferences": owner},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c",
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}}}}},
		}
	}
	scheduleAll(b, nodeObjs, pods, podObj, func(c *Cluster) {
		c.SetControllers(func(kind, ns, name string) map[string]any { return rs })
	})
}

// BenchmarkSchedule1000Nodes30000PodsWithClaims is the rollout of
// BenchmarkSchedule1000Nodes30000Pods with a bound claim per pod, its
// volume pinned to a zone: VolumeBinding's PreFilter reads the claim and
// its Filter the volume's node affinity on every node looked at.
func BenchmarkSchedule1000Nodes30000PodsWithClaims(b *testing.B) {
	const nodes, pods = 1000, 30000
	var nodeObjs []map[string]any
	for i := range nodes {
		nodeObjs = append(nodeObjs, map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("node-%04d", i), "labels": map[string]any{"topology.kubernetes.io/zone": fmt.Sprintf("z%d", i%3)}},
			"status":   map[string]any{"allocatable": map[string]any{"cpu": "8", "memory": "32Gi", "pods": "110"}},
		})
	}
	claims := map[string]map[string]any{}
	vols := map[string]map[string]any{}
	for i := range pods {
		name := fmt.Sprintf("data-%05d", i)
		claims[name] = map[string]any{
			"metadata": map[string]any{"name": name, "namespace": "default", "annotations": map[string]any{annBindCompleted: "yes"}},
			"spec":     map[string]any{"volumeName": "pv-" + name},
		}
		vols["pv-"+name] = map[string]any{
			"metadata": map[string]any{"name": "pv-" + name},
			"spec": map[string]any{"nodeAffinity": map[string]any{"required": map[string]any{"nodeSelectorTerms": []any{
				map[string]any{"matchExpressions": []any{map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In", "values": []any{fmt.Sprintf("z%d", i%3)}}}},
			}}}},
		}
	}
	podObj := func(i int) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("p-%05d", i), "namespace": "default", "labels": map[string]any{"app": "web"}},
			"spec": map[string]any{
				"containers": []any{map[string]any{"name": "c",
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}}}},
				"volumes": []any{map[string]any{"name": "d", "persistentVolumeClaim": map[string]any{"claimName": fmt.Sprintf("data-%05d", i)}}},
			},
		}
	}
	scheduleAll(b, nodeObjs, pods, podObj, func(c *Cluster) {
		c.SetVolumes(Volumes{
			Claim:  func(_, name string) map[string]any { return claims[name] },
			Volume: func(name string) map[string]any { return vols[name] },
		})
	})
}

// scheduleAll places pods one by one on a fresh Cluster of nodeObjs
// (prepared by setup, when given) in every round of the benchmark, each
// bound where it was scheduled before the next comes, and reports the
// pods placed per second.
func scheduleAll(b *testing.B, nodeObjs []map[string]any, pods int, podObj func(int) map[string]any, setup func(*Cluster)) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		c := New(nodeObjs)
		if setup != nil {
			setup(c)
		}
		for i := range pods {
			p := podObj(i)
			d := c.Schedule(p)
			if d.Node == "" {
				b.Fatalf("pod %d: %s", i, d.Message)
			}
			p["spec"].(map[string]any)["nodeName"] = d.Node
			c.SetPod(p)
		}
	}
	b.ReportMetric(float64(pods*b.N)/b.Elapsed().Seconds(), "pods/s")
}
