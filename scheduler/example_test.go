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
