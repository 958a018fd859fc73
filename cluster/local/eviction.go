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
		return tooManyRequests(fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName))
	}
	allowed := intField(pst, "disruptionsAllowed")
	if allowed <= 0 {
		return tooManyRequests(fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently",
			pdbName, intField(pst, "desiredHealthy"), intField(pst, "currentHealthy")))
	}
	if o.DryRun {
		return t.delete(podGVK, namespace, name, o)
	}
	updated := value.DeepCopyObject(pdb.obj)
	ust, _ := updated["status"].(map[string]any)
	ust["disruptionsAllowed"] = allowed - 1
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
