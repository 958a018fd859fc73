package local

import (
	"context"
	"fmt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/value"
)

var _ cluster.Evicter = (*Store)(nil)

var (
	pdbGK  = groupKind{"policy", "PodDisruptionBudget"}
	podGVK = schema.GVK{Version: "v1", Kind: "Pod"}
)

// The messages of kube-apiserver's eviction subresource, as v1.37.1 words
// them (recorded with kubectl create --raw .../pods/NAME/eviction).
const (
	evictionRefused  = "Cannot evict pod as it would violate the pod's disruption budget."
	evictionManyPDBs = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
)

// maxDisruptedPods is how many evictions a budget may hold that the
// disruption controller has not seen done, before evictions are refused.
const maxDisruptedPods = 2000

// Evict is the pods/eviction subresource: creating a policy/v1 Eviction
// for a pod. See cluster.Evicter.
func (s *Store) Evict(ctx context.Context, namespace, name string, opts ...cluster.DeleteOption) error {
	o := cluster.CollectDelete(opts)
	return s.write(ctx, o.DryRun, func(t *txn) error {
		return t.evict(namespace, name, o)
	})
}

// evict deletes a pod as kube-apiserver's EvictionREST does: at once when
// no disruption budget can object (the pod is not running yet, has ended,
// is already terminating, or no budget selects it); else the one budget
// that selects it must allow a disruption, which the eviction uses up
// (status.disruptionsAllowed one less, the pod in status.disruptedPods
// until the disruption controller sees it gone). An unhealthy pod (not
// Ready) is let go without using the budget when the budget's
// unhealthyPodEvictionPolicy is AlwaysAllow, or, with IfHealthyBudget
// (the default), when the budget has all the healthy pods it wants.
func (t *txn) evict(namespace, name string, o cluster.DeleteOptions) error {
	if namespace == "" {
		namespace = "default"
	}
	k := objKey{gk: podGK, namespace: namespace, name: name}
	rec, err := t.load(k)
	if err != nil {
		return err
	}
	if rec == nil {
		return cluster.NewNotFound("pods", name)
	}
	pod := rec.obj
	status, _ := pod["status"].(map[string]any)
	switch str(status, "phase") {
	case "Pending", "Succeeded", "Failed":
		return t.delete(podGVK, namespace, name, o)
	}
	if isDeleting(pod) {
		return t.delete(podGVK, namespace, name, o)
	}
	pdbs, err := t.budgetsOf(pod)
	if err != nil {
		return err
	}
	switch len(pdbs) {
	case 0:
		return t.delete(podGVK, namespace, name, o)
	case 1:
	default:
		return &cluster.StatusError{Code: 500, Message: evictionManyPDBs}
	}
	pdb := pdbs[0]
	spec, _ := pdb.obj["spec"].(map[string]any)
	pst, _ := pdb.obj["status"].(map[string]any)
	if !podReady(pod) {
		if str(spec, "unhealthyPodEvictionPolicy") == "AlwaysAllow" {
			return t.delete(podGVK, namespace, name, o)
		}
		current, desired := intField(pst, "currentHealthy"), intField(pst, "desiredHealthy")
		if desired > 0 && current >= desired {
			return t.delete(podGVK, namespace, name, o)
		}
	}
	pdbName := metaString(pdb.obj, "name")
	if gen, _ := metadata(pdb.obj)["generation"].(int64); intField(pst, "observedGeneration") < gen {
		e := tooManyRequests(fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName))
		e.RetryAfterSeconds = 10
		return e
	}
	allowed := intField(pst, "disruptionsAllowed")
	disruptedNow, _ := pst["disruptedPods"].(map[string]any)
	switch {
	case allowed < 0:
		return forbiddenByBudget(pdbName, "pdb disruptions allowed is negative",
			"The disruption budget "+pdbName+" does not allow evicting pods currently: pdb disruptions allowed is negative")
	case len(disruptedNow) > maxDisruptedPods:
		return forbiddenByBudget(pdbName, "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"The disruption budget "+pdbName+" does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller")
	case allowed == 0:
		return tooManyRequests(budgetRefusal(pdbName, pst))
	}
	if o.DryRun {
		return t.delete(podGVK, namespace, name, o)
	}
	updated := value.DeepCopyObject(pdb.obj)
	ust, _ := updated["status"].(map[string]any)
	ust["disruptionsAllowed"] = allowed - 1
	if allowed == 1 {
		// The last disruption the budget allowed: its DisruptionAllowed
		// condition turns False at once, as the server does.
		setCondition(ust, "DisruptionAllowed", "False", "InsufficientPods", "", t.now())
		for _, c := range ust["conditions"].([]any) {
			if m, _ := c.(map[string]any); str(m, "type") == "DisruptionAllowed" && ust["observedGeneration"] != nil {
				m["observedGeneration"] = ust["observedGeneration"]
			}
		}
	}
	disrupted, _ := ust["disruptedPods"].(map[string]any)
	if disrupted == nil {
		disrupted = map[string]any{}
		ust["disruptedPods"] = disrupted
	}
	disrupted[name] = t.now()
	pk := objKey{gk: pdbGK, namespace: namespace, name: pdbName}
	if err := t.put(pk, updated, pdb); err != nil {
		return err
	}
	return t.delete(podGVK, namespace, name, o)
}

// budgetsOf returns the PodDisruptionBudgets of the pod's namespace whose
// selector matches its labels (a budget without selector matches none,
// one with an empty selector every pod).
func (t *txn) budgetsOf(pod map[string]any) ([]*record, error) {
	ns := metaString(pod, "namespace")
	keys, err := t.keysIn(pdbGK, ns)
	if err != nil {
		return nil, err
	}
	podLabels := map[string]string{}
	for k, v := range metaMap(pod, "labels") {
		if s, ok := v.(string); ok {
			podLabels[k] = s
		}
	}
	var out []*record
	for _, k := range keys {
		rec, err := t.load(k)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue
		}
		spec, _ := rec.obj["spec"].(map[string]any)
		sel, _ := spec["selector"].(map[string]any)
		labels, err := selector.FromLabelSelector(sel)
		if err != nil || !labels.Matches(podLabels) {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// podReady reports a pod whose Ready condition is True.
func podReady(pod map[string]any) bool {
	status, _ := pod["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); str(m, "type") == "Ready" {
			return str(m, "status") == "True"
		}
	}
	return false
}

func intField(m map[string]any, f string) int64 {
	switch n := m[f].(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

// tooManyRequests is the eviction's 429 with its one DisruptionBudget
// cause.
func tooManyRequests(cause string) *cluster.StatusError {
	return &cluster.StatusError{Code: 429, Reason: cluster.ReasonTooManyRequests, Message: evictionRefused,
		Causes: []cluster.Cause{{Type: "DisruptionBudget", Message: cause}}}
}

// budgetRefusal is the cause of a 429 for a budget that allows no
// disruption: its failed sync, else the healthy pods it lacks, else its
// DisruptionAllowed condition's reason and message.
func budgetRefusal(name string, st map[string]any) string {
	var cond map[string]any
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); str(m, "type") == "DisruptionAllowed" {
			cond = m
		}
	}
	failed := cond != nil && str(cond, "status") == "False" && str(cond, "message") != ""
	current, desired := intField(st, "currentHealthy"), intField(st, "desiredHealthy")
	switch {
	case failed && str(cond, "reason") == "SyncFailed":
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", name, str(cond, "message"))
	case current <= desired:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", name, desired, current)
	case failed:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", name, str(cond, "reason"), str(cond, "message"))
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", name)
}

// forbiddenByBudget is the eviction's 403 for a budget in a state that
// forbids any eviction.
func forbiddenByBudget(name, why, cause string) *cluster.StatusError {
	return &cluster.StatusError{Code: 403, Reason: cluster.ReasonForbidden, Group: "policy", Kind: "poddisruptionbudget", Name: name,
		Message: fmt.Sprintf("poddisruptionbudget.policy %q is forbidden: %s", name, why),
		Causes:  []cluster.Cause{{Type: "DisruptionBudget", Message: cause}}}
}
