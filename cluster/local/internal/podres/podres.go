// Package podres answers what a pod asks of a node, for the units of the
// embedded API server that need to know: the LimitRanger plugin's Pod
// limits, the ResourceQuota usage of a pod, and the QoS class the pod
// strategy writes into a new pod's status.
package podres

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
	"github.com/konverge/konverge/quantity"
	"github.com/konverge/konverge/value"
)

// List is a resource list: quantities by resource name.
type List map[string]resource.Quantity

// Totals are a pod's effective requests and limits, as the scheduler
// counts them: its containers and its sidecars (init containers with
// restartPolicy Always) run together; every other init container runs
// alone beside the sidecars started before it, so it counts only where it
// asks more than that. Pod-level resources replace the cpu and memory the
// containers add up to.
func Totals(spec map[string]any) (requests, limits List) {
	return total(spec, "requests"), total(spec, "limits")
}

func total(spec map[string]any, list string) List {
	asked := func(c map[string]any) List {
		return jsonobj.Quantities(jsonobj.Peek(jsonobj.Peek(c, "resources"), list))
	}
	steady := List{}
	for _, c := range jsonobj.ObjectList(spec["containers"]) {
		steady.plus(asked(c))
	}
	// startup is the most the init phase needs at any one time.
	startup, sidecars := List{}, List{}
	for _, c := range jsonobj.ObjectList(spec["initContainers"]) {
		own := asked(c)
		if jsonobj.Str(c, "restartPolicy") == "Always" {
			steady.plus(own)
			sidecars.plus(own)
			startup.atLeast(sidecars)
			continue
		}
		own.plus(sidecars)
		startup.atLeast(own)
	}
	steady.atLeast(startup)
	podLevel := jsonobj.Peek(jsonobj.Peek(spec, "resources"), list)
	for _, name := range []string{"cpu", "memory"} {
		if v, ok := podLevel[name]; ok {
			steady[name] = jsonobj.Quantity(v)
		}
	}
	return steady
}

// plus adds every quantity of more to l.
func (l List) plus(more List) {
	for name, q := range more {
		have, ok := l[name]
		if !ok {
			l[name] = q.DeepCopy()
			continue
		}
		have.Add(q)
		l[name] = have
	}
}

// atLeast raises every quantity of l to the one of floor where that is
// larger.
func (l List) atLeast(floor List) {
	for name, q := range floor {
		if have, ok := l[name]; ok && q.Cmp(have) <= 0 {
			continue
		}
		l[name] = q.DeepCopy()
	}
}

// QOSClass is a pod's quality of service class, from the cpu and memory
// its containers request and limit: BestEffort when none says anything,
// Guaranteed when every container limits both and requests what it
// limits, else Burstable.
func QOSClass(pod map[string]any) string {
	spec := jsonobj.Peek(pod, "spec")
	var containers []map[string]any
	for _, f := range []string{"initContainers", "containers"} {
		containers = append(containers, jsonobj.ObjectList(spec[f])...)
	}
	anything, guaranteed := false, true
	for _, c := range containers {
		res := jsonobj.Peek(c, "resources")
		req, lim := jsonobj.Peek(res, "requests"), jsonobj.Peek(res, "limits")
		for _, name := range []string{"cpu", "memory"} {
			r, hasReq := req[name]
			l, hasLim := lim[name]
			anything = anything || hasReq || hasLim
			if !hasLim || (hasReq && !sameQuantity(r, l)) {
				guaranteed = false
			}
		}
	}
	switch {
	case !anything:
		return "BestEffort"
	case guaranteed:
		return "Guaranteed"
	}
	return "Burstable"
}

// sameQuantity compares two quantities by value ("1Gi" and "1073741824"
// are the same); what does not parse compares as JSON.
func sameQuantity(a, b any) bool {
	qa, errA := parse(a)
	qb, errB := parse(b)
	if errA != nil || errB != nil {
		return value.Equal(a, b)
	}
	return qa.Cmp(qb) == 0
}

func parse(v any) (quantity.Quantity, error) {
	n, err := quantity.Normalize(v)
	if err != nil {
		return quantity.Quantity{}, err
	}
	s, _ := n.(string)
	return quantity.Parse(s)
}
