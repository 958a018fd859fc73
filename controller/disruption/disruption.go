// Package disruption is kube-controller-manager's disruption controller
// for the embedded cluster: it keeps the status of every
// PodDisruptionBudget, which the pods/eviction subresource of the API
// server reads to grant or refuse an eviction.
//
// For each budget it counts the pods its selector picks in its namespace
// (expectedPods), those of them Ready and neither being deleted nor
// recently evicted (currentHealthy), how many must stay healthy
// (desiredHealthy) and so how many may go (disruptionsAllowed, never
// below 0, and 0 when no pod is expected), with the DisruptionAllowed
// condition (SufficientPods or InsufficientPods) and observedGeneration.
//
// An integer minAvailable is compared with the pods found. A percentage,
// and maxUnavailable in either form, is taken of the scale of the pods'
// controllers instead: a Deployment (through its ReplicaSet), a
// ReplicaSet, a ReplicationController, a StatefulSet or any kind with a
// scale subresource, each counted once; percentages round up. Pods
// without a controller add nothing to that scale (a Warning Event
// UnmanagedPods says so); a controller that has no scale (a Job, a
// DaemonSet) makes the budget uncomputable: disruptionsAllowed 0 and the
// condition False with reason SyncFailed and the error, observedGeneration
// unchanged, as upstream's fail-safe.
//
// An eviction puts the pod in status.disruptedPods with its time; the pod
// counts as not healthy until it is being deleted or two minutes pass,
// after which the entry is dropped. (Upstream also warns about a pod not
// deleted in time; here an eviction starts the deletion in the same
// transaction, so that cannot happen.)
//
// Events (NoPods, UnmanagedPods, CalculateExpectedPodCountFailed) come from
// source "controllermanager", as upstream's recorder names itself. Upstream
// says them again whenever it resyncs a budget (any change to one of its
// pods); here they are said when the budget's status is written.
package disruption

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
	"github.com/konverge/konverge/value"
)

// PDBGVK is the kind the controller keeps.
var PDBGVK = schema.GVK{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}

var rcGVK = schema.GVK{Version: "v1", Kind: "ReplicationController"}

// DeletionTimeout is how long an evicted pod counts as disrupted before
// the controller stops waiting for its deletion.
const DeletionTimeout = 2 * time.Minute

const component = "controllermanager"

// Controller keeps the status of PodDisruptionBudgets. The zero value is
// ready to use.
type Controller struct{}

var _ controller.Controller = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "disruption" }

// Sync computes the status of every budget and writes those that changed.
func (Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	if _, err := c.Mapper().ResourceFor(PDBGVK); err != nil {
		return res, nil
	}
	pdbs, err := c.List(ctx, PDBGVK)
	if err != nil {
		return res, fmt.Errorf("disruption: list poddisruptionbudgets: %w", err)
	}
	pods := map[string][]cluster.Object{}
	var errs []error
	for _, pdb := range pdbs.Items {
		if kobj.Deleting(pdb) {
			continue
		}
		ns := kobj.Namespace(pdb)
		if _, ok := pods[ns]; !ok {
			l, err := c.List(ctx, kobj.PodGVK, cluster.InNamespace(ns))
			if err != nil {
				return res, fmt.Errorf("disruption: list pods: %w", err)
			}
			pods[ns] = l.Items
		}
		r, err := syncBudget(ctx, c, pdb, pods[ns], now)
		res = res.Merge(r)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("disruption: %w", errors.Join(errs...))
	}
	return res, nil
}

// syncBudget brings one budget's status up to date.
func syncBudget(ctx context.Context, c cluster.Interface, pdb cluster.Object, nsPods []cluster.Object, now time.Time) (controller.Result, error) {
	var res controller.Result
	var events []evt
	pods, err := selected(pdb, nsPods)
	if err != nil {
		return res, nil
	}
	if len(pods) == 0 {
		events = append(events, evt{pdb, event.Normal, "NoPods", "No matching pods found"})
	}
	expected, desired, unmanaged, err := expectedCount(ctx, c, pdb, pods)
	if err != nil {
		events = append(events, evt{pdb, event.Warning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: " + err.Error()})
		return failSafe(ctx, c, pdb, err, events, now)
	}
	if len(unmanaged) > 0 {
		events = append(events, evt{pdb, event.Warning, "UnmanagedPods", fmt.Sprintf("Pods selected by this "+
			"PodDisruptionBudget (selector: %s) were found to be unmanaged. As a result, the status of the PDB cannot "+
			"be calculated correctly, which may result in undefined behavior. To account for these pods please set "+
			"\".spec.minAvailable\" field of the PDB to an integer value.", kobj.GoSelector(kobj.Map(pdb, "spec", "selector")))})
	}
	disrupted, recheck := disruptedPods(pdb, pods, now)
	res.RequeueAt = recheck
	healthy := int64(0)
	for _, p := range pods {
		if kobj.Deleting(p) {
			continue
		}
		if _, ok := disrupted[kobj.Name(p)]; ok {
			continue
		}
		if ok, _ := kobj.PodReady(p); ok {
			healthy++
		}
	}
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	gen, _ := kobj.Int(pdb, "metadata", "generation")
	st := map[string]any{
		"currentHealthy":     healthy,
		"desiredHealthy":     desired,
		"expectedPods":       expected,
		"disruptionsAllowed": allowed,
		"observedGeneration": gen,
	}
	if len(disrupted) > 0 {
		dp := make(map[string]any, len(disrupted))
		for k, v := range disrupted {
			dp[k] = v
		}
		st["disruptedPods"] = dp
	}
	old := kobj.Map(pdb, "status")
	conds, _ := value.DeepCopy(old["conditions"]).([]any)
	if allowed > 0 {
		conds = setCondition(conds, "True", "SufficientPods", "", gen, now)
	} else {
		conds = setCondition(conds, "False", "InsufficientPods", "", gen, now)
	}
	st["conditions"] = conds
	w, err := writeStatus(ctx, c, pdb, st, events, now)
	return res.Merge(w), err
}

// evt is an Event to say when the status is written.
type evt struct {
	about                cluster.Object
	typ, reason, message string
}

// failSafe is upstream's answer to a budget it cannot compute: no
// disruption allowed, and the condition says why.
func failSafe(ctx context.Context, c cluster.Interface, pdb cluster.Object, cause error, events []evt, now time.Time) (controller.Result, error) {
	st, _ := value.DeepCopy(kobj.Map(pdb, "status")).(map[string]any)
	if st == nil {
		st = map[string]any{}
	}
	st["disruptionsAllowed"] = int64(0)
	if _, ok := st["currentHealthy"]; !ok {
		st["currentHealthy"] = int64(0)
	}
	for _, f := range []string{"desiredHealthy", "expectedPods"} {
		if _, ok := st[f]; !ok {
			st[f] = int64(0)
		}
	}
	obs, _ := kobj.Int(pdb, "status", "observedGeneration")
	conds, _ := st["conditions"].([]any)
	st["conditions"] = setCondition(conds, "False", "SyncFailed", cause.Error(), obs, now)
	return writeStatus(ctx, c, pdb, st, events, now)
}

// writeStatus writes st as the budget's status when it differs, then the
// events.
func writeStatus(ctx context.Context, c cluster.Interface, pdb cluster.Object, st map[string]any, events []evt, now time.Time) (controller.Result, error) {
	var res controller.Result
	if value.Equal(st, kobj.Map(pdb, "status")) {
		return res, nil
	}
	upd := kobj.Copy(pdb)
	upd["status"] = st
	if _, err := c.UpdateStatus(ctx, upd); err != nil {
		if cluster.IsConflict(err) || cluster.IsNotFound(err) {
			res.Changed = true
			return res, nil
		}
		return res, fmt.Errorf("update poddisruptionbudget %s/%s: %w", kobj.Namespace(pdb), kobj.Name(pdb), err)
	}
	res.Changed = true
	for _, e := range events {
		if err := event.Record(ctx, c, now, e.about, e.typ, e.reason, e.message, component); err != nil {
			return res, err
		}
	}
	return res, nil
}

// setCondition sets the DisruptionAllowed condition, its
// lastTransitionTime moving only when its status changes (as
// apimachinery's SetStatusCondition).
func setCondition(conds []any, status, reason, message string, gen int64, now time.Time) []any {
	n := map[string]any{"type": "DisruptionAllowed", "status": status, "reason": reason, "message": message,
		"observedGeneration": gen, "lastTransitionTime": kobj.FormatTime(now)}
	for i, c := range conds {
		m, _ := c.(map[string]any)
		if kobj.Str(m, "type") != "DisruptionAllowed" {
			continue
		}
		if kobj.Str(m, "status") == status {
			if lt, ok := m["lastTransitionTime"]; ok {
				n["lastTransitionTime"] = lt
			}
		}
		conds[i] = n
		return conds
	}
	return append(conds, n)
}

// selected returns the pods of the namespace the budget's selector
// matches (none without a selector, all with an empty one).
func selected(pdb cluster.Object, pods []cluster.Object) ([]cluster.Object, error) {
	sel, err := selector.FromLabelSelector(kobj.Map(pdb, "spec", "selector"))
	if err != nil {
		return nil, err
	}
	var out []cluster.Object
	for _, p := range pods {
		if sel.Matches(kobj.Labels(p)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// expectedCount is upstream's getExpectedPodCount: how many pods the
// budget expects and how many of them must be healthy, and the pods
// without a controller when the scale of controllers was used.
func expectedCount(ctx context.Context, c cluster.Interface, pdb cluster.Object, pods []cluster.Object) (expected, desired int64, unmanaged []string, err error) {
	spec := kobj.Map(pdb, "spec")
	if mu, ok := spec["maxUnavailable"]; ok && mu != nil {
		expected, unmanaged, err = expectedScale(ctx, c, pods)
		if err != nil {
			return 0, 0, nil, err
		}
		n, err := scaled(mu, expected)
		if err != nil {
			return 0, 0, nil, err
		}
		desired = expected - n
		if desired < 0 {
			desired = 0
		}
		return expected, desired, unmanaged, nil
	}
	ma, ok := spec["minAvailable"]
	if !ok || ma == nil {
		return 0, 0, nil, nil
	}
	if n, isInt := ma.(int64); isInt {
		return int64(len(pods)), n, nil, nil
	}
	expected, unmanaged, err = expectedScale(ctx, c, pods)
	if err != nil {
		return 0, 0, nil, err
	}
	desired, err = scaled(ma, expected)
	if err != nil {
		return 0, 0, nil, err
	}
	return expected, desired, unmanaged, nil
}

// scaled is an int-or-percent of total, a percentage rounded up.
func scaled(v any, total int64) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		return int64(x), nil
	case string:
		p, ok := strings.CutSuffix(x, "%")
		n, err := strconv.Atoi(p)
		if !ok || err != nil {
			return 0, fmt.Errorf("invalid value for IntOrString: invalid value %q", x)
		}
		return int64(math.Ceil(float64(n) * float64(total) / 100)), nil
	}
	return 0, fmt.Errorf("invalid type: neither int nor percentage")
}

// expectedScale sums the scale of the pods' controllers, each once.
func expectedScale(ctx context.Context, c cluster.Interface, pods []cluster.Object) (int64, []string, error) {
	scales := map[string]int64{}
	seen := map[string]bool{}
	var unmanaged []string
	for _, p := range pods {
		ref := kobj.ControllerRef(p)
		if ref == nil {
			unmanaged = append(unmanaged, kobj.Name(p))
			continue
		}
		uid := kobj.Str(ref, "uid")
		if seen[uid] {
			continue
		}
		seen[uid] = true
		owner, n, found, err := scaleOf(ctx, c, ref, kobj.Namespace(p))
		if err != nil {
			return 0, nil, err
		}
		if !found {
			return 0, nil, fmt.Errorf("found no controllers for pod %q", kobj.Name(p))
		}
		scales[owner] = n
	}
	var sum int64
	for _, n := range scales {
		sum += n
	}
	return sum, unmanaged, nil
}

// scaleOf finds the controller a pod's controllerRef names, as upstream's
// finders in their order: a ReplicaSet's Deployment, the ReplicaSet, a
// ReplicationController, a StatefulSet, then any kind's scale
// subresource. It returns the uid whose scale counts and the scale.
func scaleOf(ctx context.Context, c cluster.Interface, ref map[string]any, ns string) (uid string, n int64, found bool, err error) {
	kind, group := kobj.Str(ref, "kind"), schema.ParseGVK(kobj.Str(ref, "apiVersion"), "").Group
	get := func(gvk schema.GVK, name, wantUID string) (cluster.Object, error) {
		o, err := controller.GetShared(ctx, c, gvk, ns, name)
		if cluster.IsNotFound(err) || (err == nil && kobj.UID(o) != wantUID) {
			return nil, nil
		}
		return o, err
	}
	replicas := func(o cluster.Object) int64 { return kobj.IntOr(o, 1, "spec", "replicas") }
	name, refUID := kobj.Str(ref, "name"), kobj.Str(ref, "uid")
	switch {
	case kind == "ReplicaSet" && (group == "apps" || group == "extensions"):
		rs, err := get(kobj.ReplicaSetGVK, name, refUID)
		if err != nil || rs == nil {
			return "", 0, false, err
		}
		if dref := kobj.ControllerRef(rs); dref != nil && kobj.Str(dref, "kind") == "Deployment" {
			d, err := get(kobj.DeploymentGVK, kobj.Str(dref, "name"), kobj.Str(dref, "uid"))
			if err != nil || d == nil {
				return "", 0, false, err
			}
			return kobj.UID(d), replicas(d), true, nil
		}
		return kobj.UID(rs), replicas(rs), true, nil
	case kind == "ReplicationController" && group == "":
		rc, err := get(rcGVK, name, refUID)
		if err != nil || rc == nil {
			return "", 0, false, err
		}
		return kobj.UID(rc), replicas(rc), true, nil
	case kind == "StatefulSet" && group == "apps":
		ss, err := get(kobj.StatefulSetGVK, name, refUID)
		if err != nil || ss == nil {
			return "", 0, false, err
		}
		return kobj.UID(ss), replicas(ss), true, nil
	}
	gvk := schema.ParseGVK(kobj.Str(ref, "apiVersion"), kind)
	res, err := c.Mapper().ResourceFor(gvk)
	if err != nil {
		return "", 0, false, err
	}
	sr, ok := c.(cluster.SubresourceReader)
	if !ok || !scalable(ctx, c, sr, res) {
		return "", 0, false, fmt.Errorf("%s does not implement the scale subresource", res.GroupResource())
	}
	scale, err := sr.GetSubresource(ctx, gvk, ns, name, "scale")
	if cluster.IsNotFound(err) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	if kobj.UID(scale) != refUID {
		return "", 0, false, nil
	}
	return refUID, kobj.IntOr(scale, 0, "spec", "replicas"), true, nil
}

// scalable reports a kind served with a scale subresource: the built-in
// ones the finders above do not cover have none; a custom resource has
// one when its CustomResourceDefinition's version says so.
func scalable(ctx context.Context, c cluster.Interface, sr cluster.SubresourceReader, res cluster.Resource) bool {
	if res.Strategic {
		return false
	}
	crd, err := c.Get(ctx, schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", res.Plural+"."+res.GVK.Group)
	if err != nil {
		return false
	}
	for _, v := range kobj.Slice(crd, "spec", "versions") {
		m, _ := v.(map[string]any)
		if kobj.Str(m, "name") == res.GVK.Version {
			return kobj.Map(m, "subresources", "scale") != nil
		}
	}
	return false
}

// disruptedPods returns the budget's disrupted pods that still count
// (evicted less than DeletionTimeout ago and not yet being deleted), the
// and the time the next of them stops counting.
func disruptedPods(pdb cluster.Object, pods []cluster.Object, now time.Time) (map[string]string, time.Time) {
	recorded := kobj.Map(pdb, "status", "disruptedPods")
	if len(recorded) == 0 {
		return nil, time.Time{}
	}
	out := map[string]string{}
	var recheck time.Time
	for _, p := range pods {
		if kobj.Deleting(p) {
			continue
		}
		at, ok := recorded[kobj.Name(p)].(string)
		if !ok {
			continue
		}
		due := kobj.ParseTime(at).Add(DeletionTimeout)
		if due.Before(now) {
			continue
		}
		out[kobj.Name(p)] = at
		if recheck.IsZero() || due.Before(recheck) {
			recheck = due
		}
	}
	if !recheck.IsZero() {
		recheck = recheck.Add(time.Second)
	}
	return out, recheck
}
