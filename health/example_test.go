package health_test

import (
	"fmt"

	"github.com/konverge/konverge/health"
)

func ExampleAssess() {
	deploy := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "generation": int64(2)},
		"spec":     map[string]any{"replicas": int64(3)},
		"status": map[string]any{"observedGeneration": int64(2), "replicas": int64(3),
			"updatedReplicas": int64(3), "availableReplicas": int64(1)},
	}
	fmt.Println(health.Assess(deploy))

	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}}}}
	r := health.Assess(job)
	fmt.Println(r.Status, r.Reason)
	// Output:
	// InProgress: Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...
	// Failed BackoffLimitExceeded
}
