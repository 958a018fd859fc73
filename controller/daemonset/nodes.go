package daemonset

import (
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/nodefit"
	"github.com/konverge/konverge/value"
)

// placement is where a DaemonSet's pods may run: its template's nodeName,
// nodeSelector, required node affinity and tolerations (with the ones
// every daemon pod gets).
type placement struct {
	nodeName     string
	nodeSelector map[string]string
	terms        []any // requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms; nil: any node
	hasRequired  bool
	tolerations  []any
}

func newPlacement(ds map[string]any) *placement {
	spec := kobj.Map(ds, "spec", "template", "spec")
	p := &placement{
		nodeName:     kobj.Str(spec, "nodeName"),
		nodeSelector: kobj.StringMap(spec, "nodeSelector"),
		tolerations:  daemonTolerations(spec),
	}
	if req := kobj.Map(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"); req != nil {
		p.hasRequired = true
		p.terms = kobj.Slice(req, "nodeSelectorTerms")
	}
	return p
}

// shouldRun is nodeShouldRunDaemonPod: whether a pod should start on the
// node, and whether one there should go on running.
func (p *placement) shouldRun(node map[string]any) (shouldRun, shouldContinue bool) {
	if p.nodeName != "" && p.nodeName != kobj.Name(node) {
		return false, false
	}
	if !p.fitsAffinity(node) {
		return false, false
	}
	taints := kobj.Slice(node, "spec", "taints")
	if untolerated(taints, p.tolerations, func(effect string) bool { return effect == "NoExecute" || effect == "NoSchedule" }) {
		return false, !untolerated(taints, p.tolerations, func(effect string) bool { return effect == "NoExecute" })
	}
	return true, true
}

func (p *placement) fitsAffinity(node map[string]any) bool {
	labels := kobj.Labels(node)
	for k, v := range p.nodeSelector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	if !p.hasRequired {
		return true
	}
	for _, t := range p.terms {
		tm, _ := t.(map[string]any)
		if nodefit.TermMatches(tm, labels, kobj.Name(node)) {
			return true
		}
	}
	return false
}

// untolerated reports a taint of an effect filter selects that no
// toleration tolerates.
func untolerated(taints, tolerations []any, filter func(effect string) bool) bool {
	for _, t := range taints {
		tm, _ := t.(map[string]any)
		if filter(kobj.Str(tm, "effect")) && !nodefit.Tolerated(tolerations, tm) {
			return true
		}
	}
	return false
}

// daemonTolerations is the pod spec's tolerations with the ones every
// daemon pod gets (AddOrUpdateDaemonPodTolerations), as a new list.
func daemonTolerations(spec map[string]any) []any {
	tols, _ := value.DeepCopy(kobj.Slice(spec, "tolerations")).([]any)
	add := func(key, effect string) {
		want := map[string]any{"key": key, "operator": "Exists", "effect": effect}
		for i, t := range tols {
			tm, _ := t.(map[string]any)
			if kobj.Str(tm, "key") == key && kobj.Str(tm, "effect") == effect && kobj.Str(tm, "operator") == "Exists" && kobj.Str(tm, "value") == "" {
				if !value.Equal(tm, want) {
					tols[i] = want
				}
				return
			}
		}
		tols = append(tols, want)
	}
	add("node.kubernetes.io/not-ready", "NoExecute")
	add("node.kubernetes.io/unreachable", "NoExecute")
	add("node.kubernetes.io/disk-pressure", "NoSchedule")
	add("node.kubernetes.io/memory-pressure", "NoSchedule")
	add("node.kubernetes.io/pid-pressure", "NoSchedule")
	add("node.kubernetes.io/unschedulable", "NoSchedule")
	if b, _ := spec["hostNetwork"].(bool); b {
		add("node.kubernetes.io/network-unavailable", "NoSchedule")
	}
	return tols
}
