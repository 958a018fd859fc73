// Package nodefit holds the rules by which a pod fits a node, which
// kube-scheduler, the kubelet's admission, the DaemonSet controller and
// the taint eviction of the node lifecycle controller all apply alike: a
// toleration against a taint, a node selector term against a node's labels
// and name, and what a pod's containers ask of a node's resources.
//
// The objects are JSON values (map[string]any), as the embedded cluster's
// controllers hold them.
package nodefit

import (
	"strconv"
	"strings"

	"github.com/konverge/konverge/quantity"
)

// Requests that kube-scheduler's scoring assumes for a container that asks
// for no CPU or memory: 100m and 200 MiB.
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 << 20
)

// Resources is an amount of the resources a pod requests or a node offers.
type Resources struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// Scalar holds the other counted resources (extended resources,
	// hugepages, attachable volumes) by name.
	Scalar map[string]int64
}

// Add adds o to r.
func (r *Resources) Add(o Resources) {
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

// Sub takes o from r (scalar resources r does not hold stay absent).
func (r *Resources) Sub(o Resources) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	for k, v := range o.Scalar {
		if r.Scalar != nil {
			r.Scalar[k] -= v
		}
	}
}

// Raise lifts every amount of r to o's where o's is larger.
func (r *Resources) Raise(o Resources) {
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

// ParseResources reads a resource list ({cpu: "500m", memory: "1Gi"});
// the pods count is returned apart. Amounts that do not parse count as
// nothing: the API server refused them before they got here.
func ParseResources(m map[string]any) (r Resources, pods int64) {
	for name, v := range m {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case int64:
			s = strconv.FormatInt(x, 10)
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			continue
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
			if Scalar(name) {
				if r.Scalar == nil {
					r.Scalar = map[string]int64{}
				}
				r.Scalar[name] = q.Value()
			}
		}
	}
	return r, pods
}

// Scalar reports the resources counted besides cpu, memory and
// ephemeral storage: extended resources, hugepages and attachable
// volumes.
func Scalar(name string) bool {
	if strings.HasPrefix(name, "hugepages-") || strings.HasPrefix(name, "attachable-volumes-") {
		return true
	}
	return Extended(name)
}

// Extended reports an extended resource: a name with a domain other than
// kubernetes.io's (and not a quota's requests.* name).
func Extended(name string) bool {
	domain, _, ok := strings.Cut(name, "/")
	if !ok || strings.HasPrefix(name, "requests.") {
		return false
	}
	return domain != "kubernetes.io" && !strings.HasSuffix(domain, ".kubernetes.io")
}

// PodRequests is what a pod asks of a node: the larger of the regular
// containers' sum (with the restartable init containers, sidecars, that
// run beside them) and what each init container needs while it runs
// (itself plus the sidecars started before it); the pod-level cpu and
// memory requests instead when the pod sets them; plus the pod's
// overhead. nonZeroCPU and nonZeroMem count 100m and 200 MiB for every
// container that asks for none, as kube-scheduler's scoring does.
func PodRequests(spec map[string]any) (req Resources, nonZeroCPU, nonZeroMem int64) {
	type asked struct {
		r        Resources
		cpu, mem int64
	}
	add := func(a *asked, b asked) {
		a.r.Add(b.r)
		a.cpu += b.cpu
		a.mem += b.mem
	}
	raise := func(a *asked, b asked) {
		a.r.Raise(b.r)
		a.cpu = max(a.cpu, b.cpu)
		a.mem = max(a.mem, b.mem)
	}
	container := func(c map[string]any) asked {
		r, _ := ParseResources(mapAt(mapAt(c, "resources"), "requests"))
		a := asked{r: r, cpu: r.MilliCPU, mem: r.Memory}
		if a.cpu == 0 {
			a.cpu = DefaultMilliCPURequest
		}
		if a.mem == 0 {
			a.mem = DefaultMemoryRequest
		}
		return a
	}
	var sum, sidecars, initPeak asked
	for _, c := range maps(spec["containers"]) {
		add(&sum, container(c))
	}
	for _, c := range maps(spec["initContainers"]) {
		a := container(c)
		if s, _ := c["restartPolicy"].(string); s == "Always" {
			// A sidecar starting counts with those before it.
			add(&sidecars, a)
			raise(&initPeak, sidecars)
			continue
		}
		add(&a, sidecars)
		raise(&initPeak, a)
	}
	add(&sum, sidecars)
	raise(&sum, initPeak)
	if pl := mapAt(mapAt(spec, "resources"), "requests"); len(pl) > 0 {
		r, _ := ParseResources(pl)
		if r.MilliCPU > 0 {
			sum.r.MilliCPU, sum.cpu = r.MilliCPU, r.MilliCPU
		}
		if r.Memory > 0 {
			sum.r.Memory, sum.mem = r.Memory, r.Memory
		}
	}
	if oh := mapAt(spec, "overhead"); len(oh) > 0 {
		r, _ := ParseResources(oh)
		add(&sum, asked{r: r, cpu: r.MilliCPU, mem: r.Memory})
	}
	return sum.r, sum.cpu, sum.mem
}

func mapAt(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

// maps is a JSON list's objects.
func maps(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
