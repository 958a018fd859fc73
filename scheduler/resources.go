package scheduler

import "github.com/konverge/konverge/nodefit"

// Default requests that scoring assumes for a container that asks for no
// CPU or memory (kube-scheduler's non-zero requests): 100m and 200 MiB.
const (
	DefaultMilliCPURequest = nodefit.DefaultMilliCPURequest
	DefaultMemoryRequest   = nodefit.DefaultMemoryRequest
)

// Resources is an amount of the resources a pod requests or a node offers.
type Resources = nodefit.Resources
