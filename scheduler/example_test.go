package scheduler_test

import (
	"fmt"

	"github.com/konverge/konverge/scheduler"
)

func ExampleCluster_Schedule() {
	node := func(name, cpu string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": name},
			"status":   map[string]any{"allocatable": map[string]any{"cpu": cpu, "memory": "4Gi", "pods": "110"}},
		}
	}
	c := scheduler.New([]map[string]any{node("small", "1"), node("large", "4")})
	pod := func(name, cpu string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c",
				"resources": map[string]any{"requests": map[string]any{"cpu": cpu}}}}},
		}
	}
	fmt.Println(c.Schedule(pod("web", "2")).Node)
	fmt.Println(c.Schedule(pod("huge", "8")).Message)
	// Output:
	// large
	// 0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.
}

func ExampleCluster_SetVolumes() {
	node := func(name string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": name, "labels": map[string]any{"kubernetes.io/hostname": name}},
			"status":   map[string]any{"allocatable": map[string]any{"cpu": "2", "memory": "4Gi", "pods": "110"}},
		}
	}
	c := scheduler.New([]map[string]any{node("a"), node("b")})
	// A claim bound to a local volume of node b.
	claim := map[string]any{
		"metadata": map[string]any{"name": "data", "namespace": "default",
			"annotations": map[string]any{"pv.kubernetes.io/bind-completed": "yes"}},
		"spec": map[string]any{"volumeName": "disk-b"},
	}
	volume := map[string]any{
		"metadata": map[string]any{"name": "disk-b"},
		"spec": map[string]any{"nodeAffinity": map[string]any{"required": map[string]any{"nodeSelectorTerms": []any{
			map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/hostname", "operator": "In", "values": []any{"b"}}}},
		}}}},
	}
	c.SetVolumes(scheduler.Volumes{
		Claim: func(ns, name string) map[string]any {
			if ns == "default" && name == "data" {
				return claim
			}
			return nil
		},
		Volume: func(name string) map[string]any {
			if name == "disk-b" {
				return volume
			}
			return nil
		},
	})
	pod := func(claimName string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "app", "namespace": "default"},
			"spec": map[string]any{
				"containers": []any{map[string]any{"name": "c"}},
				"volumes":    []any{map[string]any{"name": "d", "persistentVolumeClaim": map[string]any{"claimName": claimName}}},
			},
		}
	}
	fmt.Println(c.Schedule(pod("data")).Node)
	fmt.Println(c.Schedule(pod("other")).Message)
	// Output:
	// b
	// 0/2 nodes are available: persistentvolumeclaim "other" not found. not found
}

func ExampleCluster_SetServices() {
	node := func(name, cpu string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": name, "labels": map[string]any{"kubernetes.io/hostname": name}},
			"status":   map[string]any{"allocatable": map[string]any{"cpu": cpu, "memory": "16Gi", "pods": "110"}},
		}
	}
	c := scheduler.New([]map[string]any{node("big", "16"), node("small", "4")})
	// A Service app=web: its bare pods are spread as a controller's are.
	c.SetServices(func(ns string) []map[string]any {
		return []map[string]any{{
			"metadata": map[string]any{"name": "web", "namespace": ns},
			"spec":     map[string]any{"selector": map[string]any{"app": "web"}},
		}}
	})
	for i := range 3 {
		p := map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("web-%d", i), "namespace": "default", "labels": map[string]any{"app": "web"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c",
				"resources": map[string]any{"requests": map[string]any{"cpu": "500m"}}}}},
		}
		d := c.Schedule(p)
		fmt.Println(p["metadata"].(map[string]any)["name"], d.Node)
		p["spec"].(map[string]any)["nodeName"] = d.Node
		c.SetPod(p)
	}
	// Output:
	// web-0 big
	// web-1 small
	// web-2 big
}
