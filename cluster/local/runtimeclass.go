package local

import (
	"fmt"
	"sort"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/value"
)

// The RuntimeClass admission plugin, after kube-apiserver's
// (plugin/pkg/admission/runtimeclass): a pod created with a
// runtimeClassName needs that RuntimeClass; the class's overhead becomes
// the pod's overhead, and its scheduling's node selector and tolerations
// are merged into the pod's.

var runtimeClassGK = groupKind{"node.k8s.io", "RuntimeClass"}

// runtimeClassOf returns the RuntimeClass a pod names (nil when it names
// none), or the plugin's refusal when it does not exist.
func (t *txn) runtimeClassOf(res cluster.Resource, pod map[string]any, name string) (map[string]any, error) {
	spec, _ := pod["spec"].(map[string]any)
	className, ok := spec["runtimeClassName"].(string)
	if !ok {
		return nil, nil
	}
	rc, _, err := t.read(objKey{gk: runtimeClassGK, name: className})
	if err != nil {
		return nil, err
	}
	if rc == nil {
		return nil, admissionForbidden(res, name, fmt.Sprintf("pod rejected: RuntimeClass %q not found", className))
	}
	return rc, nil
}

// admitRuntimeClass is the plugin's mutation of a pod create.
func (t *txn) admitRuntimeClass(res cluster.Resource, pod map[string]any, name string) error {
	rc, err := t.runtimeClassOf(res, pod, name)
	if err != nil || rc == nil {
		return err
	}
	spec, _ := pod["spec"].(map[string]any)
	if fixed, ok := mapAt(rc, "overhead", "podFixed"); ok {
		if cur, ok := spec["overhead"].(map[string]any); ok && len(cur) > 0 && !value.Equal(cur, fixed) {
			return admissionForbidden(res, name, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
		}
		spec["overhead"] = value.DeepCopy(fixed)
	}
	sched, _ := rc["scheduling"].(map[string]any)
	if sched == nil {
		return nil
	}
	if sel, ok := sched["nodeSelector"].(map[string]any); ok {
		podSel, _ := spec["nodeSelector"].(map[string]any)
		if podSel == nil {
			spec["nodeSelector"] = value.DeepCopy(sel)
		} else {
			keys := make([]string, 0, len(sel))
			for k := range sel {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if v, ok := podSel[k]; ok && v != sel[k] {
					return admissionForbidden(res, name, fmt.Sprintf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %v; pod.spec.nodeSelector[%s] = %v", k, sel[k], k, v))
				}
				podSel[k] = sel[k]
			}
		}
	}
	if tols, ok := sched["tolerations"].([]any); ok {
		podTols, _ := spec["tolerations"].([]any)
		merged := mergeTolerations(append(append([]any{}, podTols...), value.DeepCopy(tols).([]any)...))
		if len(merged) > 0 {
			spec["tolerations"] = merged
		}
	}
	return nil
}

// validateRuntimeClass is the plugin's validation of a pod create: its
// overhead is its RuntimeClass's.
func (t *txn) validateRuntimeClass(res cluster.Resource, pod map[string]any, name string) error {
	rc, err := t.runtimeClassOf(res, pod, name)
	if err != nil {
		return err
	}
	spec, _ := pod["spec"].(map[string]any)
	cur, set := spec["overhead"].(map[string]any)
	if fixed, ok := mapAt(rc, "overhead", "podFixed"); ok {
		if !value.Equal(cur, fixed) {
			return admissionForbidden(res, name, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
		}
	} else if set {
		return admissionForbidden(res, name, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
	}
	return nil
}

// mapAt is the object at a path of maps.
func mapAt(obj map[string]any, path ...string) (map[string]any, bool) {
	cur := obj
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// mergeTolerations is tolerations.MergeTolerations: the tolerations in
// order, leaving out each one that another (an earlier one kept, or a
// later different one) tolerates a superset of.
func mergeTolerations(all []any) []any {
	var merged []any
next:
	for i, t := range all {
		for _, t2 := range merged {
			if tolerationSuperset(t2, t) {
				continue next
			}
		}
		for _, t2 := range all[i+1:] {
			if !value.Equal(t, t2) && tolerationSuperset(t2, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// tolerationSuperset reports whether the toleration ss tolerates a
// superset of what t does.
func tolerationSuperset(ssv, tv any) bool {
	if value.Equal(ssv, tv) {
		return true
	}
	ss, _ := ssv.(map[string]any)
	t, _ := tv.(map[string]any)
	ssOp, tOp := str(ss, "operator"), str(t, "operator")
	if str(t, "key") != str(ss, "key") && (str(ss, "key") != "" || ssOp != "Exists") {
		return false
	}
	if str(t, "effect") != str(ss, "effect") && str(ss, "effect") != "" {
		return false
	}
	if str(ss, "effect") == "NoExecute" {
		if s, ok := ss["tolerationSeconds"].(int64); ok {
			tSec, ok := t["tolerationSeconds"].(int64)
			if !ok || tSec > s {
				return false
			}
		}
	}
	switch ssOp {
	case "Equal", "":
		return tOp == "Equal" && str(t, "value") == str(ss, "value")
	case "Exists":
		return true
	}
	return false
}
