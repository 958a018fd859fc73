package podautoscaler

import (
	"context"
	"fmt"
	"sort"
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

// Component is the source of the controller's Events.
const Component = "horizontal-pod-autoscaler"

// SyncPeriod is how often an HPA is reconciled
// (--horizontal-pod-autoscaler-sync-period).
const SyncPeriod = 15 * time.Second

// HPAGVK is the kind the controller reads and writes (the storage
// version; autoscaling/v1 objects are the same objects).
var HPAGVK = schema.GVK{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}

// The errors of a metrics client when no metrics API is served, as the
// real controller words them.
const (
	resourceMetricsErr = "unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
	customMetricsErr   = "unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
)

// Controller is the HorizontalPodAutoscaler controller. The zero value is
// ready to use.
type Controller struct{}

var _ controller.Controller = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "horizontal-pod-autoscaler" }

// Sync reconciles every HPA whose period is due at now.
func (Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	l, err := c.List(ctx, HPAGVK)
	if err != nil {
		if cluster.IsNotFound(err) {
			return res, nil
		}
		return res, fmt.Errorf("horizontal-pod-autoscaler: list: %w", err)
	}
	all := l.Items
	// In the order they were written, as the work queue has them.
	sort.SliceStable(all, func(i, j int) bool { return rv(all[i]) < rv(all[j]) })
	for _, hpa := range all {
		if kobj.Deleting(hpa) {
			continue
		}
		created := kobj.ParseTime(kobj.Str(hpa, "metadata", "creationTimestamp"))
		slot := created
		if now.After(created) {
			slot = created.Add(now.Sub(created) / SyncPeriod * SyncPeriod)
		}
		next := slot.Add(SyncPeriod)
		res = res.Merge(controller.Result{RequeueAt: next})
		// A change of the spec (a new generation the status has not
		// observed) is reconciled at once, as upstream enqueues it.
		gen, _ := kobj.Int(hpa, "metadata", "generation")
		observed, hasObserved := kobj.Int(hpa, "status", "observedGeneration")
		if !hasObserved || observed >= gen {
			last, err := event.LastRecorded(ctx, c, hpa, Component)
			if err != nil {
				return res, err
			}
			if !last.IsZero() && !last.Before(slot) {
				continue
			}
		}
		r := &reconciler{ctx: ctx, c: c, now: now, hpa: kobj.Copy(hpa), all: all}
		if kobj.Map(hpa, "spec")["metrics"] == nil {
			// Written as autoscaling/v1: the embedded store keeps an
			// object in the version it was written in.
			r.v1 = kobj.Copy(hpa)
			r.v1["apiVersion"] = "autoscaling/v1"
			r.hpa = v2View(r.hpa)
		}
		changed, err := r.reconcile(ctx)
		if err != nil {
			return res, err
		}
		res.Changed = res.Changed || changed
	}
	return res, nil
}

// reconciler reconciles one HPA.
type reconciler struct {
	ctx context.Context
	c   cluster.Interface
	now time.Time
	hpa map[string]any
	all []cluster.Object
	// changed reports a write.
	changed bool
	// v1 is the object as stored when it is an autoscaling/v1 one (hpa
	// is then its autoscaling/v2 view).
	v1 map[string]any
}

// v2View is an autoscaling/v1 HPA seen as autoscaling/v2:
// targetCPUUtilizationPercentage (80 when absent) is a CPU utilization
// metric; the v1 status has no conditions.
func v2View(hpa map[string]any) map[string]any {
	spec := kobj.EnsureMap(hpa, "spec")
	cpu := kobj.IntOr(hpa, 80, "spec", "targetCPUUtilizationPercentage")
	delete(spec, "targetCPUUtilizationPercentage")
	spec["metrics"] = []any{map[string]any{"type": "Resource", "resource": map[string]any{
		"name": "cpu", "target": map[string]any{"type": "Utilization", "averageUtilization": cpu}}}}
	st := kobj.Map(hpa, "status")
	view := map[string]any{"desiredReplicas": kobj.IntOr(hpa, 0, "status", "desiredReplicas"), "currentMetrics": nil}
	for _, k := range []string{"currentReplicas", "lastScaleTime", "observedGeneration"} {
		if v, ok := st[k]; ok {
			view[k] = v
		}
	}
	hpa["status"] = view
	hpa["apiVersion"] = "autoscaling/v2"
	return hpa
}

func (r *reconciler) event(typ, reason, msg string) error {
	_, err := event.Emit(r.ctx, r.c, event.Event{Involved: r.hpa, Type: typ, Reason: reason, Message: msg, Component: Component, Time: r.now})
	if err == nil {
		r.changed = true
	}
	return err
}

// reconcile is upstream's reconcileAutoscaler.
func (r *reconciler) reconcile(ctx context.Context) (bool, error) {
	hpa := r.hpa
	oldStatus, _ := value.DeepCopy(kobj.Map(hpa, "status")).(map[string]any)

	ref := kobj.Map(hpa, "spec", "scaleTargetRef")
	scale, gvk, err := r.getScale(ctx, kobj.Str(ref, "apiVersion"), kobj.Str(ref, "kind"), kobj.Str(ref, "name"))
	if err != nil {
		if err := r.event(event.Warning, "FailedGetScale", err.Error()); err != nil {
			return r.changed, err
		}
		r.setCondition("AbleToScale", "False", "FailedGetScale", "the HPA controller was unable to get the target's current scale: "+err.Error())
		return r.changed, r.updateStatus(ctx, oldStatus)
	}
	r.setCondition("AbleToScale", "True", "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	current := kobj.IntOr(scale, 0, "spec", "replicas")
	minReplicas := kobj.IntOr(hpa, 1, "spec", "minReplicas")
	maxReplicas := kobj.IntOr(hpa, 0, "spec", "maxReplicas")

	scaledToZero := false
	if c := kobj.Condition(hpa, "ScaledToZero"); c != nil && c["status"] == "True" {
		scaledToZero = true
	}
	hasObjectOrExternal := false
	for _, m := range kobj.Slice(hpa, "spec", "metrics") {
		switch kobj.Str(asMap(m), "type") {
		case "Object", "External":
			hasObjectOrExternal = true
		}
	}

	var desired int64
	var reason string
	rescale := true
	needsMetrics := true
	switch {
	case current == 0:
		canScaleFromZero := scaledToZero && hasObjectOrExternal
		if !((minReplicas != 0 && scaledToZero) || canScaleFromZero) {
			needsMetrics = false
			desired, rescale = 0, false
			r.setCondition("ScalingActive", "False", "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
		}
	case current > maxReplicas:
		reason, desired, needsMetrics = "Current number of replicas above Spec.MaxReplicas", maxReplicas, false
	case current < minReplicas:
		reason, desired, needsMetrics = "Current number of replicas below Spec.MinReplicas", minReplicas, false
	}
	if needsMetrics {
		// No metrics API is served: every metric fails, as the
		// real controller's metrics clients fail.
		statuses, failure, failed := r.computeReplicasForMetrics(ctx, scale)
		if failed {
			r.setStatus(current, kobj.IntOr(hpa, 0, "status", "desiredReplicas"), statuses, false)
			if err := r.updateStatus(ctx, oldStatus); err != nil {
				return r.changed, err
			}
			return r.changed, r.event(event.Warning, "FailedComputeMetricsReplicas", failure)
		}
		rescale = false
	}
	if rescale {
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, desired)
		_, err := r.c.Patch(ctx, gvk, kobj.Namespace(hpa), kobj.Str(ref, "name"), cluster.MergePatchType, []byte(patch), cluster.Subresource("scale"))
		if err != nil {
			if err := r.event(event.Warning, "FailedRescale", fmt.Sprintf("New size: %d; reason: %s; error: %v", desired, reason, err)); err != nil {
				return r.changed, err
			}
			r.setCondition("AbleToScale", "False", "FailedUpdateScale", "the HPA controller was unable to update the target scale: "+err.Error())
			r.setStatus(current, kobj.IntOr(hpa, 0, "status", "desiredReplicas"), nil, false)
			return r.changed, r.updateStatus(ctx, oldStatus)
		}
		r.changed = true
		r.setCondition("AbleToScale", "True", "SucceededRescale", fmt.Sprintf("the HPA controller was able to update the target scale to %d", desired))
		if err := r.event(event.Normal, "SuccessfulRescale", fmt.Sprintf("New size: %d; reason: %s", desired, reason)); err != nil {
			return r.changed, err
		}
		if current > 0 && desired == 0 && minReplicas == 0 && hasObjectOrExternal {
			r.setCondition("ScaledToZero", "True", "ScaledToZero", "the HPA controller scaled the workload to zero")
		} else {
			r.setCondition("ScaledToZero", "False", "NotScaledToZero", "the HPA controller did not scale the workload to zero")
		}
	} else {
		desired = current
	}
	r.setStatus(current, desired, nil, rescale)
	return r.changed, r.updateStatus(ctx, oldStatus)
}

// getScale reads the target's scale subresource: the object's
// spec.replicas and selector (the kinds the embedded API server serves
// with a scale subresource).
func (r *reconciler) getScale(ctx context.Context, apiVersion, kind, name string) (map[string]any, schema.GVK, error) {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group, version = "", apiVersion
	}
	if strings.Contains(version, "/") {
		return nil, schema.GVK{}, fmt.Errorf("unexpected GroupVersion string: %s", apiVersion)
	}
	gvk := schema.GVK{Group: group, Version: version, Kind: kind}
	if _, err := r.c.Mapper().ResourceFor(gvk); err != nil {
		return nil, gvk, fmt.Errorf("no matches for kind %q in group %q", kind, group)
	}
	switch gvk.Group + "/" + kind {
	case "apps/Deployment", "apps/ReplicaSet", "apps/StatefulSet", "/ReplicationController":
	default:
		return r.customScale(ctx, gvk, name)
	}
	obj, err := r.c.Get(ctx, gvk, kobj.Namespace(r.hpa), name)
	if err != nil {
		if se, ok := err.(*cluster.StatusError); ok {
			return nil, gvk, fmt.Errorf("%s", se.Message)
		}
		return nil, gvk, err
	}
	sel := kobj.Map(obj, "spec", "selector")
	if kind == "ReplicationController" {
		sel = map[string]any{"matchLabels": sel}
	}
	scale := map[string]any{"spec": map[string]any{"replicas": kobj.IntOr(obj, 0, "spec", "replicas")}, "status": map[string]any{}}
	if sel != nil {
		if l, err := selector.FromLabelSelector(sel); err == nil {
			scale["status"].(map[string]any)["selector"] = l.String()
		}
	}
	return scale, gvk, nil
}

// computeReplicasForMetrics fails every metric of the spec as the real
// controller does without metrics APIs, and returns the metric statuses
// (one empty status per metric) and the error FailedComputeMetricsReplicas
// reports. With a selector it cannot use, the statuses are nil.
func (r *reconciler) computeReplicasForMetrics(ctx context.Context, scale map[string]any) (statuses []any, failure string, failed bool) {
	if msg, ok := r.validateSelector(ctx, kobj.Str(scale, "status", "selector")); !ok {
		return nil, msg, true
	}
	metrics := kobj.Slice(r.hpa, "spec", "metrics")
	if len(metrics) == 0 {
		// Defaulting gives every HPA a metric: nothing to read.
		return nil, "", false
	}
	statuses = make([]any, len(metrics))
	var first, firstCond, firstReason string
	for i, m := range metrics {
		statuses[i] = map[string]any{"type": ""}
		reason, eventMsg, err := metricFailure(asMap(m), kobj.Namespace(r.hpa))
		if err := r.event(event.Warning, reason, eventMsg); err != nil {
			return statuses, err.Error(), true
		}
		if first == "" {
			first, firstCond, firstReason = err, eventMsg, reason
		}
	}
	r.setCondition("ScalingActive", "False", firstReason, "the HPA was unable to compute the replica count: "+firstCond)
	return statuses, fmt.Sprintf("invalid metrics (%d invalid out of %d), first error is: %s", len(metrics), len(metrics), first), true
}

// validateSelector is upstream's validateAndParseSelector: the target's
// selector must be set and its pods controlled by this HPA only.
func (r *reconciler) validateSelector(ctx context.Context, sel string) (string, bool) {
	if sel == "" {
		msg := "selector is required"
		_ = r.event(event.Warning, "SelectorRequired", msg)
		r.setCondition("ScalingActive", "False", "InvalidSelector", "the HPA target's scale is missing a selector")
		return msg, false
	}
	parsed, err := selector.ParseLabels(sel)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		_ = r.event(event.Warning, "InvalidSelector", msg)
		r.setCondition("ScalingActive", "False", "InvalidSelector", msg)
		return msg, false
	}
	ns := kobj.Namespace(r.hpa)
	pods, err := r.c.List(ctx, kobj.PodGVK, cluster.InNamespace(ns))
	if err != nil {
		return err.Error(), false
	}
	var mine []map[string]string
	for _, p := range pods.Items {
		if l := kobj.Labels(p); parsed.Matches(l) {
			mine = append(mine, l)
		}
	}
	if len(mine) == 0 {
		return "", true
	}
	// Other HPAs of the namespace whose targets select any of these pods.
	var selecting []string
	for _, other := range r.all {
		if kobj.Namespace(other) != ns || kobj.Deleting(other) {
			continue
		}
		var s selector.Labels
		if kobj.UID(other) == kobj.UID(r.hpa) {
			s = parsed
		} else {
			ref := kobj.Map(other, "spec", "scaleTargetRef")
			scale, _, err := r.getScale(ctx, kobj.Str(ref, "apiVersion"), kobj.Str(ref, "kind"), kobj.Str(ref, "name"))
			if err != nil || kobj.Str(scale, "status", "selector") == "" {
				continue
			}
			if s, err = selector.ParseLabels(kobj.Str(scale, "status", "selector")); err != nil {
				continue
			}
		}
		for _, l := range mine {
			if s.Matches(l) {
				selecting = append(selecting, ns+"/"+kobj.Name(other))
				break
			}
		}
	}
	if len(selecting) > 1 {
		// The real controller names them in the order of a map.
		sort.Strings(selecting)
		if len(selecting) > 2 {
			selecting = selecting[:2]
		}
		msg := fmt.Sprintf("pods by selector %s are controlled by more than one HPA (e.g. [%s])", sel, strings.Join(selecting, " "))
		_ = r.event(event.Warning, "AmbiguousSelector", msg)
		r.setCondition("ScalingActive", "False", "AmbiguousSelector", msg)
		return msg, false
	}
	return "", true
}

// metricFailure is how reading metric m fails without metrics APIs: the
// Event's reason and message (also the ScalingActive condition's cause)
// and the error that FailedComputeMetricsReplicas quotes.
func metricFailure(m map[string]any, ns string) (reason, eventMsg, err string) {
	switch kobj.Str(m, "type") {
	case "Resource", "ContainerResource":
		src := kobj.Map(m, "resource")
		reason = "FailedGetResourceMetric"
		if kobj.Str(m, "type") == "ContainerResource" {
			src = kobj.Map(m, "containerResource")
			reason = "FailedGetContainerResourceMetric"
		}
		name := kobj.Str(src, "name")
		target := kobj.Map(src, "target")
		switch {
		case target["averageValue"] != nil:
			eventMsg = fmt.Sprintf("failed to get %s usage: unable to get metrics for resource %s: %s", name, name, resourceMetricsErr)
		case target["averageUtilization"] != nil:
			eventMsg = fmt.Sprintf("failed to get %s utilization: unable to get metrics for resource %s: %s", name, name, resourceMetricsErr)
		default:
			eventMsg = "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set"
		}
		if kobj.Str(m, "type") == "ContainerResource" {
			return reason, eventMsg, fmt.Sprintf("failed to get %s container metric value: %s", kobj.Str(src, "container"), eventMsg)
		}
		return reason, eventMsg, fmt.Sprintf("failed to get %s resource metric value: %s", name, eventMsg)
	case "Pods":
		eventMsg = fmt.Sprintf("unable to get metric %s: %s", kobj.Str(m, "pods", "metric", "name"), customMetricsErr)
		return "FailedGetPodsMetric", eventMsg, "failed to get pods metric value: " + eventMsg
	case "Object":
		src := kobj.Map(m, "object")
		metric := kobj.Str(src, "metric", "name")
		obj := kobj.Map(src, "describedObject")
		eventMsg = fmt.Sprintf("unable to get metric %s on %s %s/%s: %s", metric, kobj.Str(obj, "kind"), ns, kobj.Str(obj, "name"), customMetricsErr)
		target := kobj.Map(src, "target")
		switch {
		case kobj.Str(target, "type") == "Value" && target["value"] != nil:
			return "FailedGetObjectMetric", eventMsg, "failed to get object metric value: " + eventMsg
		case kobj.Str(target, "type") == "AverageValue" && target["averageValue"] != nil:
			return "FailedGetObjectMetric", eventMsg, fmt.Sprintf("failed to get object metric value: failed to get %s object metric: %s", metric, eventMsg)
		}
		eventMsg = "invalid object metric source: neither a value target nor an average value target was set"
		return "FailedGetObjectMetric", eventMsg, "failed to get object metric value: " + eventMsg
	case "External":
		src := kobj.Map(m, "external")
		metric := kobj.Str(src, "metric", "name")
		eventMsg = fmt.Sprintf("unable to get external metric %s/%s/%s: unable to fetch metrics from external metrics API: the server could not find the requested resource (get %s.external.metrics.k8s.io)",
			ns, metric, kobj.GoSelector(kobj.Map(src, "metric", "selector")), metric)
		target := kobj.Map(src, "target")
		switch {
		case target["averageValue"] != nil:
			return "FailedGetExternalMetric", eventMsg, fmt.Sprintf("failed to get %s external metric value: failed to get %s external metric: %s", metric, metric, eventMsg)
		case target["value"] != nil:
			return "FailedGetExternalMetric", eventMsg, fmt.Sprintf("failed to get %s external metric value: failed to get external metric %s: %s", metric, metric, eventMsg)
		}
		eventMsg = "invalid external metric source: neither a value target nor an average value target was set"
		return "FailedGetExternalMetric", eventMsg, fmt.Sprintf("failed to get %s external metric value: %s", metric, eventMsg)
	}
	eventMsg = fmt.Sprintf("unknown metric source type %q", kobj.Str(m, "type"))
	return "InvalidMetricSourceType", eventMsg, eventMsg
}

// setCondition is upstream's setCondition: the condition's time moves
// only when its status changes.
func (r *reconciler) setCondition(typ, status, reason, msg string) {
	st := kobj.EnsureMap(r.hpa, "status")
	conds, _ := st["conditions"].([]any)
	var c map[string]any
	for _, x := range conds {
		if m := asMap(x); m["type"] == typ {
			c = m
			break
		}
	}
	if c == nil {
		c = map[string]any{"type": typ}
		conds = append(conds, c)
		st["conditions"] = conds
	}
	if c["status"] != status {
		c["lastTransitionTime"] = kobj.FormatTime(r.now)
	}
	c["status"] = status
	c["reason"] = reason
	c["message"] = msg
}

// setStatus is upstream's setStatus.
func (r *reconciler) setStatus(current, desired int64, metrics []any, rescale bool) {
	old := kobj.Map(r.hpa, "status")
	st := map[string]any{"desiredReplicas": desired, "currentMetrics": nil}
	if metrics != nil {
		st["currentMetrics"] = metrics
	}
	if current != 0 {
		st["currentReplicas"] = current
	}
	if v, ok := old["lastScaleTime"]; ok {
		st["lastScaleTime"] = v
	}
	if v, ok := old["conditions"]; ok {
		st["conditions"] = v
	}
	if g, ok := kobj.Int(r.hpa, "metadata", "generation"); ok {
		st["observedGeneration"] = g
	}
	if rescale {
		st["lastScaleTime"] = kobj.FormatTime(r.now)
	}
	r.hpa["status"] = st
}

// updateStatus writes the status when it changed.
func (r *reconciler) updateStatus(ctx context.Context, old map[string]any) error {
	if value.Equal(old, kobj.Map(r.hpa, "status")) {
		return nil
	}
	obj := r.hpa
	if r.v1 != nil {
		// The v1 status: what v2 says but conditions and metrics.
		obj = kobj.Copy(r.v1)
		st := map[string]any{}
		for _, k := range []string{"currentReplicas", "desiredReplicas", "lastScaleTime", "observedGeneration"} {
			if v, ok := kobj.Map(r.hpa, "status")[k]; ok {
				st[k] = v
			}
		}
		if value.Equal(st, kobj.Map(r.v1, "status")) {
			return nil
		}
		obj["status"] = st
	}
	if _, err := r.c.UpdateStatus(ctx, obj); err != nil {
		if _, ok := err.(*cluster.StatusError); ok {
			return nil // a conflict or a deleted HPA: the next period
		}
		return fmt.Errorf("horizontal-pod-autoscaler: update status of %s/%s: %w", kobj.Namespace(r.hpa), kobj.Name(r.hpa), err)
	}
	r.changed = true
	return nil
}

func rv(o map[string]any) uint64 {
	n, _ := strconv.ParseUint(kobj.Str(o, "metadata", "resourceVersion"), 10, 64)
	return n
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

var crdGVK = schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// customScale reads the Scale of a custom resource as the API server
// serves it: the replicas and selector where its CRD's scale subresource
// says (an error as the API server's when the CRD has none or the spec
// replicas are missing).
func (r *reconciler) customScale(ctx context.Context, gvk schema.GVK, name string) (map[string]any, schema.GVK, error) {
	res, err := r.c.Mapper().ResourceFor(gvk)
	if err != nil || gvk.Group == "" {
		return nil, gvk, fmt.Errorf("the server could not find the requested resource")
	}
	crd, err := r.c.Get(ctx, crdGVK, "", res.Plural+"."+gvk.Group)
	if err != nil {
		return nil, gvk, fmt.Errorf("the server could not find the requested resource")
	}
	var sc map[string]any
	for _, v := range kobj.Slice(crd, "spec", "versions") {
		vm, _ := v.(map[string]any)
		if kobj.Str(vm, "name") == gvk.Version {
			sc = kobj.Map(vm, "subresources", "scale")
		}
	}
	if sc == nil {
		return nil, gvk, fmt.Errorf("%s.%s %q not found", res.Plural, gvk.Group, name)
	}
	obj, err := r.c.Get(ctx, gvk, kobj.Namespace(r.hpa), name)
	if err != nil {
		if se, ok := err.(*cluster.StatusError); ok {
			return nil, gvk, fmt.Errorf("%s", se.Message)
		}
		return nil, gvk, err
	}
	at := func(p string) any {
		var cur any = obj
		for _, f := range strings.Split(strings.TrimPrefix(p, "."), ".") {
			m, _ := cur.(map[string]any)
			cur = m[f]
		}
		return cur
	}
	replicas, ok := at(kobj.Str(sc, "specReplicasPath")).(int64)
	if !ok {
		//lint:ignore ST1005 kube-apiserver's InternalError text, which the controller's Event carries as is
		return nil, gvk, fmt.Errorf("Internal error occurred: the spec replicas field %q does not exist", kobj.Str(sc, "specReplicasPath"))
	}
	scale := map[string]any{"spec": map[string]any{"replicas": replicas}, "status": map[string]any{}}
	if p := kobj.Str(sc, "labelSelectorPath"); p != "" {
		if sel, _ := at(p).(string); sel != "" {
			scale["status"].(map[string]any)["selector"] = sel
		}
	}
	return scale, gvk, nil
}
