package nodefit_test

import (
	"fmt"

	"github.com/konverge/konverge/nodefit"
)

// A pod's requests, a node's taint and its labels: does the pod fit?
func Example() {
	spec := map[string]any{
		"containers": []any{
			map[string]any{"name": "app", "resources": map[string]any{"requests": map[string]any{"cpu": "1500m", "memory": "1Gi"}}},
			map[string]any{"name": "log"}, // asks for nothing
		},
		"tolerations": []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}},
	}
	req, nonZeroCPU, _ := nodefit.PodRequests(spec)
	fmt.Println("requests:", req.MilliCPU, "millicores,", req.Memory>>20, "MiB; for scoring", nonZeroCPU, "millicores")

	taint := map[string]any{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
	fmt.Println("tolerates the taint:", nodefit.Tolerated(spec["tolerations"].([]any), taint))

	term := map[string]any{"matchExpressions": []any{
		map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In", "values": []any{"a", "b"}},
	}}
	fmt.Println("zone c matches:", nodefit.TermMatches(term, map[string]string{"topology.kubernetes.io/zone": "c"}, "node-1"))
	// Output:
	// requests: 1500 millicores, 1024 MiB; for scoring 1600 millicores
	// tolerates the taint: true
	// zone c matches: false
}
