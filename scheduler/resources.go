package scheduler

import (
	"strings"

	"github.com/konverge/konverge/quantity"
)

// Default requests that scoring assumes for a container that asks for no
// CPU or memory (kube-scheduler's non-zero requests): 100m and 200 MiB.
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 << 20
)

// Resources is an amount of the resources a pod requests or a node offers.
type Resources struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// Scalar holds the other resources (extended resources, hugepages)
	// by name.
	Scalar map[string]int64
}

func (r *Resources) add(o Resources) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	for k, v := range o.Scalar {
		if r.Scalar == nil {
			r.Scalar = map[string]int64{}
		}
		r.Scalar[k] += v
	}
}

func (r *Resources) sub(o Resources) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	for k, v := range o.Scalar {
		if r.Scalar != nil {
			r.Scalar[k] -= v
		}
	}
}

// max raises every amount of r to o's where o's is larger.
func (r *Resources) max(o Resources) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	for k, v := range o.Scalar {
		if r.Scalar == nil {
			r.Scalar = map[string]int64{}
		}
		r.Scalar[k] = max(r.Scalar[k], v)
	}
}

// parseResources reads a resource list ({cpu: "500m", memory: "1Gi"}):
// pods is returned apart. Amounts that do not parse count as zero (the
// API server refused them before they got here).
func parseResources(m map[string]any) (r Resources, pods int64) {
	for name, v := range m {
		s, ok := v.(string)
		if !ok {
			switch n := v.(type) {
			case int64:
				s = itoa(n)
			case float64:
				s = itoa(int64(n))
			default:
				continue
			}
		}
		q, err := quantity.Parse(s)
		if err != nil {
			continue
		}
		switch name {
		case "cpu":
			r.MilliCPU = q.MilliValue()
		case "memory":
			r.Memory = q.Value()
		case "ephemeral-storage":
			r.EphemeralStorage = q.Value()
		case "pods":
			pods = q.Value()
		default:
			if isScalar(name) {
				if r.Scalar == nil {
					r.Scalar = map[string]int64{}
				}
				r.Scalar[name] = q.Value()
			}
		}
	}
	return r, pods
}

// isScalar reports the resources kube-scheduler counts besides cpu,
// memory and ephemeral storage: extended resources (a domain-prefixed
// name outside kubernetes.io), hugepages and attachable volumes.
func isScalar(name string) bool {
	if strings.HasPrefix(name, "hugepages-") || strings.HasPrefix(name, "attachable-volumes-") {
		return true
	}
	if !strings.Contains(name, "/") {
		return false
	}
	if strings.HasPrefix(name, "requests.") {
		return false
	}
	domain, _, _ := strings.Cut(name, "/")
	return domain != "kubernetes.io" && !strings.HasSuffix(domain, ".kubernetes.io")
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// podRequests is what a pod asks of a node, as kube-scheduler computes
// it: the pod-level resources when the pod sets them, else the larger of
// the regular containers' sum (with the restartable init containers,
// sidecars, that run beside them) and what each init container needs
// while it runs (itself plus the sidecars started before it); plus the
// pod's overhead. nonZero is the same with 100m CPU and 200 MiB memory
// for every container that asks for none, for scoring.
func podRequests(spec map[string]any) (req Resources, nonZeroCPU, nonZeroMem int64) {
	type amounts struct {
		r        Resources
		cpu, mem int64
	}
	containerReq := func(c map[string]any) amounts {
		rm, _ := mapAt(c, "resources", "requests")
		r, _ := parseResources(rm)
		a := amounts{r: r, cpu: r.MilliCPU, mem: r.Memory}
		if a.cpu == 0 {
			a.cpu = DefaultMilliCPURequest
		}
		if a.mem == 0 {
			a.mem = DefaultMemoryRequest
		}
		return a
	}
	var sum amounts
	for _, c := range list(spec, "containers") {
		a := containerReq(c)
		sum.r.add(a.r)
		sum.cpu += a.cpu
		sum.mem += a.mem
	}
	var sidecars, initMax amounts
	for _, c := range list(spec, "initContainers") {
		a := containerReq(c)
		if str(c, "restartPolicy") == "Always" {
			sidecars.r.add(a.r)
			sidecars.cpu += a.cpu
			sidecars.mem += a.mem
			// A sidecar starting counts with those before it.
			cur := sidecars
			initMax.r.max(cur.r)
			initMax.cpu = max(initMax.cpu, cur.cpu)
			initMax.mem = max(initMax.mem, cur.mem)
			continue
		}
		cur := a
		cur.r.add(sidecars.r)
		cur.cpu += sidecars.cpu
		cur.mem += sidecars.mem
		initMax.r.max(cur.r)
		initMax.cpu = max(initMax.cpu, cur.cpu)
		initMax.mem = max(initMax.mem, cur.mem)
	}
	sum.r.add(sidecars.r)
	sum.cpu += sidecars.cpu
	sum.mem += sidecars.mem
	sum.r.max(initMax.r)
	sum.cpu = max(sum.cpu, initMax.cpu)
	sum.mem = max(sum.mem, initMax.mem)
	if pl, ok := mapAt(spec, "resources", "requests"); ok && len(pl) > 0 {
		r, _ := parseResources(pl)
		if r.MilliCPU > 0 {
			sum.r.MilliCPU, sum.cpu = r.MilliCPU, r.MilliCPU
		}
		if r.Memory > 0 {
			sum.r.Memory, sum.mem = r.Memory, r.Memory
		}
	}
	if oh, ok := spec["overhead"].(map[string]any); ok {
		r, _ := parseResources(oh)
		sum.r.add(r)
		sum.cpu += r.MilliCPU
		sum.mem += r.Memory
	}
	return sum.r, sum.cpu, sum.mem
}
