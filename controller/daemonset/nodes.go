package daemonset

import (
	"strconv"

	"github.com/konverge/konverge/controller/internal/kobj"
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
		if termMatches(tm, node, labels) {
			return true
		}
	}
	return false
}

// termMatches reports a node selector term that matches: a term with no
// requirement matches nothing.
func termMatches(term, node map[string]any, labels map[string]string) bool {
	exprs, fields := kobj.Slice(term, "matchExpressions"), kobj.Slice(term, "matchFields")
	if len(exprs) == 0 && len(fields) == 0 {
		return false
	}
	for _, e := range exprs {
		em, _ := e.(map[string]any)
		v, has := labels[kobj.Str(em, "key")]
		if !requirementMatches(em, v, has) {
			return false
		}
	}
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		if kobj.Str(fm, "key") != "metadata.name" {
			return false
		}
		op := kobj.Str(fm, "operator")
		if op != "In" && op != "NotIn" {
			return false
		}
		if !requirementMatches(fm, kobj.Name(node), true) {
			return false
		}
	}
	return true
}

func requirementMatches(req map[string]any, v string, has bool) bool {
	vals := kobj.Slice(req, "values")
	in := func() bool {
		for _, x := range vals {
			if x == v {
				return true
			}
		}
		return false
	}
	switch kobj.Str(req, "operator") {
	case "In":
		return has && in()
	case "NotIn":
		return !has || !in()
	case "Exists":
		return has
	case "DoesNotExist":
		return !has
	case "Gt", "Lt":
		if !has || len(vals) != 1 {
			return false
		}
		got, err1 := strconv.ParseInt(v, 10, 64)
		s, _ := vals[0].(string)
		want, err2 := strconv.ParseInt(s, 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if kobj.Str(req, "operator") == "Gt" {
			return got > want
		}
		return got < want
	}
	return false
}

// untolerated reports a taint of an effect filter selects that no
// toleration tolerates.
func untolerated(taints, tolerations []any, filter func(effect string) bool) bool {
	for _, t := range taints {
		tm, _ := t.(map[string]any)
		if !filter(kobj.Str(tm, "effect")) {
			continue
		}
		tolerated := false
		for _, tol := range tolerations {
			if tolerates(tol.(map[string]any), tm) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return true
		}
	}
	return false
}

// tolerates is Toleration.ToleratesTaint.
func tolerates(tol, taint map[string]any) bool {
	if e := kobj.Str(tol, "effect"); e != "" && e != kobj.Str(taint, "effect") {
		return false
	}
	if k := kobj.Str(tol, "key"); k != "" && k != kobj.Str(taint, "key") {
		return false
	}
	switch kobj.Str(tol, "operator") {
	case "Exists":
		return true
	case "", "Equal":
		return kobj.Str(tol, "value") == kobj.Str(taint, "value")
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
