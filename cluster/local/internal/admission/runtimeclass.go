package admission

import (
	"fmt"
	"sort"

	"github.com/konverge/konverge/value"
)

// RuntimeClass: a pod created with a runtimeClassName needs that
// RuntimeClass; the class's overhead becomes the pod's overhead (a pod
// that sets another is refused), and its scheduling's node selector and
// tolerations are merged into the pod's.
type RuntimeClass struct{}

// Name implements Plugin.
func (RuntimeClass) Name() string { return "RuntimeClass" }

// runtimeClassOf returns the RuntimeClass a pod names (nil when it names
// none), or the plugin's refusal when it does not exist.
func runtimeClassOf(s Store, a *Attributes) (map[string]any, error) {
	className, ok := peek(a.Object, "spec")["runtimeClassName"].(string)
	if !ok {
		return nil, nil
	}
	rc, err := s.Get(runtimeClassGK, "", className)
	if err != nil {
		return nil, err
	}
	if rc == nil {
		return nil, a.forbid(fmt.Sprintf("pod rejected: RuntimeClass %q not found", className))
	}
	return rc, nil
}

// Mutate implements Mutator.
func (RuntimeClass) Mutate(s Store, a *Attributes) error {
	if a.Operation != Create || a.Kind() != podGK {
		return nil
	}
	rc, err := runtimeClassOf(s, a)
	if err != nil || rc == nil {
		return err
	}
	spec, _ := a.Object["spec"].(map[string]any)
	if fixed, ok := podFixed(rc); ok {
		if cur, ok := spec["overhead"].(map[string]any); ok && len(cur) > 0 && !value.Equal(cur, fixed) {
			return a.forbid("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
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
					return a.forbid(fmt.Sprintf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %v; pod.spec.nodeSelector[%s] = %v", k, sel[k], k, v))
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

// Validate implements Validator: a created pod's overhead is its
// RuntimeClass's.
func (RuntimeClass) Validate(s Store, a *Attributes) error {
	if a.Operation != Create || a.Kind() != podGK {
		return nil
	}
	rc, err := runtimeClassOf(s, a)
	if err != nil {
		return err
	}
	cur, set := peek(a.Object, "spec")["overhead"].(map[string]any)
	if fixed, ok := podFixed(rc); ok {
		if !value.Equal(cur, fixed) {
			return a.forbid("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
		}
	} else if set {
		return a.forbid("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
	}
	return nil
}

// podFixed is a RuntimeClass's overhead.podFixed; ok is false when it
// has none.
func podFixed(rc map[string]any) (fixed map[string]any, ok bool) {
	fixed, ok = peek(rc, "overhead")["podFixed"].(map[string]any)
	return fixed, ok
}

// mergeTolerations is the tolerations in order, leaving out each one that
// another (an earlier one kept, or a later different one) tolerates a
// superset of.
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
