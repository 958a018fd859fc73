package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/controller/internal/svcpods"
	"github.com/konverge/konverge/value"
)

//lint:file-ignore SA1019 this is the Endpoints controller: core/v1 Endpoints and their subsets are deprecated, but kube-controller-manager v1.37 still writes them, and so does this package.

// Component is the source of the controller's Events.
const Component = "endpoint-controller"

// The label the controller marks its Endpoints with, and its value.
const (
	LabelManagedBy = "endpoints.kubernetes.io/managed-by"
	ControllerName = "endpoint-controller"
)

// MaxCapacity is how many addresses an Endpoints object holds at most.
const MaxCapacity = 1000

// overCapacity is the annotation of a truncated Endpoints object.
const overCapacity = "endpoints.kubernetes.io/over-capacity"

// Controller is the endpoints controller. The zero value syncs every
// Service in every sync; New returns one that remembers (an incremental
// controller, one per runner).
type Controller struct {
	m *svcpods.Memory
}

// New returns an incremental endpoints controller: SyncChanged skips
// the Services whose last sync wrote nothing when nothing they read
// (the Service, the pods it selected or selects, its Endpoints, its
// Namespace) was written since.
func New() Controller { return Controller{m: &svcpods.Memory{}} }

var _ controller.Incremental = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "endpoint" }

// Reset forgets what the controller remembers: the next sync is a full
// one.
func (ctl Controller) Reset() {
	if ctl.m != nil {
		ctl.m.Reset()
	}
}

// Sync reconciles the Endpoints of every Service once. A write that the
// client rate limit holds back ends the sync without an error: the
// Services after it are synced at the next.
func (ctl Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	svcs, err := c.List(ctx, svcpods.ServiceGVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("endpoint: list services: %w", err)
	}
	eps, err := c.List(ctx, svcpods.EndpointsGVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("endpoint: list endpoints: %w", err)
	}
	m := svcpods.Start(ctl.m, svcs.Items, nil, kinds)
	for _, e := range eps.Items {
		if k := reconcile.KeyOf(e); m.Service(k) == nil {
			m.Orphan(k)
		}
	}
	return sync(ctx, c, now, m)
}

// kinds are the writes that concern the controller.
var kinds = svcpods.Kinds{Own: svcpods.EndpointsGVK, ByName: true}

// SyncChanged implements controller.Incremental: the Services queued
// (see svcpods.Memory) are synced, without listing anything; the others
// would write nothing.
func (ctl Controller) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	if !ctl.m.Valid() {
		return ctl.Sync(ctx, c, now)
	}
	if err := ctl.m.Changed(ctx, c, changed, kinds); err != nil {
		return controller.Result{}, fmt.Errorf("endpoint: %w", err)
	}
	return sync(ctx, c, now, ctl.m)
}

// sync syncs the Services m queues, in List order, then deletes the
// Endpoints it managed of Services that are gone.
func sync(ctx context.Context, c cluster.Interface, now time.Time, m *svcpods.Memory) (controller.Result, error) {
	var res controller.Result
	for _, svc := range m.Due() {
		// What a sync reads costs as a List would.
		controller.Read(c, 1)
		if !svcpods.Served(svc) {
			m.Synced(svc, false)
			continue
		}
		pods, err := m.Pods(ctx, c)
		if err != nil {
			return res, fmt.Errorf("endpoint: %w", err)
		}
		ns, name := kobj.Namespace(svc), kobj.Name(svc)
		current, err := controller.GetShared(ctx, c, svcpods.EndpointsGVK, ns, name)
		if err != nil && !cluster.IsNotFound(err) {
			return res, fmt.Errorf("endpoint: get endpoints %s/%s: %w", ns, name, err)
		}
		changed, err := syncService(ctx, c, now, svc, pods.Selected(svc), current)
		m.Synced(svc, changed || err != nil)
		res.Changed = res.Changed || changed
		if controller.IsThrottled(err) {
			// The client waits for a token (the runner wakes the
			// controller then): the Services not reached are synced at
			// the next sync.
			return res, nil
		}
		if err != nil {
			return res, err
		}
	}
	// The Endpoints of Services that are gone go with them.
	for _, k := range m.Orphans() {
		if m.Service(k) != nil {
			m.Adopted(k)
			continue
		}
		e, err := controller.GetShared(ctx, c, svcpods.EndpointsGVK, k[0], k[1])
		if cluster.IsNotFound(err) {
			m.Adopted(k)
			continue
		}
		if err != nil {
			return res, fmt.Errorf("endpoint: get endpoints %s/%s: %w", k[0], k[1], err)
		}
		if kobj.Labels(e)[LabelManagedBy] != ControllerName {
			m.Adopted(k)
			continue
		}
		err = c.Delete(ctx, svcpods.EndpointsGVK, k[0], k[1])
		if controller.IsThrottled(err) {
			return res, nil
		}
		if err != nil && !cluster.IsNotFound(err) {
			if _, ok := err.(*cluster.StatusError); !ok {
				return res, fmt.Errorf("endpoint: delete %s/%s: %w", k[0], k[1], err)
			}
			continue // refused: tried again at the next sync
		}
		m.Adopted(k)
		res.Changed = true
	}
	return res, nil
}

// syncService is upstream's syncService for a Service that exists.
func syncService(ctx context.Context, c cluster.Interface, now time.Time, svc map[string]any, pods []map[string]any, current map[string]any) (bool, error) {
	publishNotReady := kobj.Bool(svc, "spec", "publishNotReadyAddresses")
	ports := kobj.Slice(svc, "spec", "ports")
	// One appProtocol pointer per Service port, as upstream's ports
	// point into the Service: ports are map keys in repackSubsets.
	appProtocols := make([]*string, len(ports))
	for i, p := range ports {
		pm, _ := p.(map[string]any)
		if ap, ok := pm["appProtocol"].(string); ok {
			appProtocols[i] = &ap
		}
	}
	var subsets []corev1.EndpointSubset
	for _, pod := range pods {
		if !svcpods.ShouldPodBeInEndpoints(pod, publishNotReady) {
			continue
		}
		ips := svcpods.PodIPs(pod, svcpods.IPv6(svc, pod))
		if len(ips) == 0 {
			continue
		}
		nodeName := kobj.Str(pod, "spec", "nodeName")
		epa := corev1.EndpointAddress{
			IP:       ips[0],
			NodeName: &nodeName,
			TargetRef: &corev1.ObjectReference{
				Kind: "Pod", Namespace: kobj.Namespace(pod), Name: kobj.Name(pod), UID: types.UID(kobj.UID(pod)),
			},
		}
		if svcpods.ShouldSetHostname(pod, svc) {
			epa.Hostname = kobj.Str(pod, "spec", "hostname")
		}
		ready := publishNotReady || svcpods.Ready(pod)
		if len(ports) == 0 {
			if kobj.Str(svc, "spec", "clusterIP") == "None" {
				subsets = addSubset(subsets, epa, []corev1.EndpointPort{}, ready)
			}
			continue
		}
		// Upstream adds a subset per port; one subset of all the pod's
		// ports gives RepackSubsets the same (address, port) pairs in
		// the same order, with one copy of the address.
		var epps []corev1.EndpointPort
		for i, p := range ports {
			sp, _ := p.(map[string]any)
			n, ok := svcpods.FindPort(pod, sp)
			if !ok {
				continue
			}
			proto := kobj.Str(sp, "protocol")
			if proto == "" {
				proto = "TCP"
			}
			epps = append(epps, corev1.EndpointPort{Name: kobj.Str(sp, "name"), Port: int32(n), Protocol: corev1.Protocol(proto), AppProtocol: appProtocols[i]})
		}
		if len(epps) > 0 {
			subsets = addSubset(subsets, epa, epps, ready)
		}
	}
	subsets = svcpods.RepackSubsets(subsets)
	want, err := toValue(subsets)
	if err != nil {
		return false, fmt.Errorf("endpoint: %w", err)
	}

	labels := map[string]any{}
	for k, v := range kobj.Labels(svc) {
		labels[k] = v
	}
	if svcpods.ServiceIPSet(svc) {
		delete(labels, svcpods.HeadlessLabel)
	} else {
		labels[svcpods.HeadlessLabel] = ""
	}
	labels[LabelManagedBy] = ControllerName

	if current != nil && value.Equal(normalizeSubsets(current["subsets"]), want) &&
		value.Equal(kobj.Map(current, "metadata", "labels"), labels) && capacityAnnotationCorrect(current) {
		return false, nil
	}
	trigger := svcpods.TriggerTime(svc, pods, current)
	var obj map[string]any
	if current == nil {
		obj = map[string]any{"apiVersion": "v1", "kind": "Endpoints", "metadata": map[string]any{
			"name": kobj.Name(svc), "namespace": kobj.Namespace(svc)}}
	} else {
		obj = kobj.Copy(current)
	}
	md := kobj.EnsureMap(obj, "metadata")
	md["labels"] = labels
	ann := kobj.EnsureMap(obj, "metadata", "annotations")
	if !trigger.IsZero() {
		ann[svcpods.TriggerTimeAnnotation] = svcpods.FormatTriggerTime(trigger)
	} else {
		delete(ann, svcpods.TriggerTimeAnnotation)
	}
	if truncate(want) {
		ann[overCapacity] = "truncated"
	} else {
		delete(ann, overCapacity)
	}
	if len(ann) == 0 {
		delete(md, "annotations")
	}
	if len(want) > 0 {
		obj["subsets"] = want
	} else {
		delete(obj, "subsets")
	}
	if current != nil && sameButTrigger(obj, current) {
		// Upstream compares the subsets before truncating them: an
		// Endpoints object over capacity is written again in each of
		// its syncs, which follow changes. This controller syncs in every
		// round: the same truncated addresses are no change (and the
		// trigger time, which a controller without memory cannot tell
		// apart, is left as it is).
		return false, nil
	}
	if current == nil {
		_, err = c.Create(ctx, obj)
	} else {
		_, err = c.Update(ctx, obj)
	}
	if err != nil {
		se, ok := err.(*cluster.StatusError)
		if !ok {
			return false, fmt.Errorf("endpoint: write %s/%s: %w", kobj.Namespace(svc), kobj.Name(svc), err)
		}
		if current == nil && se.Code == 403 {
			return false, nil // a namespace being deleted
		}
		reason, msg := "FailedToUpdateEndpoint", fmt.Sprintf("Failed to update endpoint %s/%s: %v", kobj.Namespace(svc), kobj.Name(svc), err)
		if current == nil {
			reason, msg = "FailedToCreateEndpoint", fmt.Sprintf("Failed to create endpoint for service %s/%s: %v", kobj.Namespace(svc), kobj.Name(svc), err)
		}
		_, err := event.Emit(ctx, c, event.Event{Involved: obj, Type: event.Warning, Reason: reason, Message: msg, Component: Component, Time: now})
		return true, err
	}
	return true, nil
}

// sameButTrigger reports whether two Endpoints objects are equal but for
// their trigger-time annotation.
func sameButTrigger(a, b map[string]any) bool {
	ta, tb := kobj.Annotation(a, svcpods.TriggerTimeAnnotation), kobj.Annotation(b, svcpods.TriggerTimeAnnotation)
	if ta == tb {
		return value.Equal(a, b)
	}
	strip := func(o map[string]any) map[string]any {
		cp := kobj.Copy(o)
		md := kobj.EnsureMap(cp, "metadata")
		ann := kobj.Map(cp, "metadata", "annotations")
		delete(ann, svcpods.TriggerTimeAnnotation)
		if len(ann) == 0 {
			delete(md, "annotations")
		}
		return cp
	}
	return value.Equal(strip(a), strip(b))
}

// addSubset adds a subset of one address and its ports.
func addSubset(subsets []corev1.EndpointSubset, epa corev1.EndpointAddress, ports []corev1.EndpointPort, ready bool) []corev1.EndpointSubset {
	if ready {
		return append(subsets, corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{epa}, Ports: ports})
	}
	return append(subsets, corev1.EndpointSubset{NotReadyAddresses: []corev1.EndpointAddress{epa}, Ports: ports})
}

// toValue is the subsets as the API server stores them.
func toValue(subsets []corev1.EndpointSubset) ([]any, error) {
	if len(subsets) == 0 {
		return []any{}, nil
	}
	data, err := json.Marshal(subsets)
	if err != nil {
		return nil, err
	}
	v, err := value.Decode(data)
	if err != nil {
		return nil, err
	}
	l, _ := v.([]any)
	return l, nil
}

// normalizeSubsets is stored subsets without the pods' resourceVersions
// (upstream compares them so), an absent list as empty.
func normalizeSubsets(v any) []any {
	l, _ := value.DeepCopy(v).([]any)
	if l == nil {
		return []any{}
	}
	for _, s := range l {
		sm, _ := s.(map[string]any)
		for _, k := range []string{"addresses", "notReadyAddresses"} {
			for _, a := range kobj.Slice(sm, k) {
				if ref := kobj.Map(a.(map[string]any), "targetRef"); ref != nil {
					delete(ref, "resourceVersion")
				}
			}
		}
	}
	return l
}

func capacityAnnotationCorrect(ep map[string]any) bool {
	n := 0
	for _, s := range kobj.Slice(ep, "subsets") {
		sm, _ := s.(map[string]any)
		n += len(kobj.Slice(sm, "addresses")) + len(kobj.Slice(sm, "notReadyAddresses"))
	}
	_, has := kobj.Map(ep, "metadata", "annotations")[overCapacity]
	return has == (n > MaxCapacity)
}

// truncate is upstream's truncateEndpoints on stored subsets: beyond
// MaxCapacity addresses, each subset keeps its share (rounded up) of the
// ready addresses, or of the not-ready ones when the ready ones fit.
func truncate(subsets []any) bool {
	totalReady, totalNotReady := 0, 0
	for _, s := range subsets {
		sm, _ := s.(map[string]any)
		totalReady += len(kobj.Slice(sm, "addresses"))
		totalNotReady += len(kobj.Slice(sm, "notReadyAddresses"))
	}
	if totalReady+totalNotReady <= MaxCapacity {
		return false
	}
	truncateReady := false
	max, numTotal := MaxCapacity-totalReady, totalNotReady
	if totalReady > MaxCapacity {
		truncateReady, max, numTotal = true, MaxCapacity, totalReady
	}
	canBeAdded := max
	for _, s := range subsets {
		sm, _ := s.(map[string]any)
		key := "notReadyAddresses"
		if truncateReady {
			key = "addresses"
		}
		in := kobj.Slice(sm, key)
		toBeAdded := int(math.Ceil(float64(len(in)) / float64(numTotal) * float64(max)))
		if toBeAdded > canBeAdded {
			toBeAdded = canBeAdded
		}
		if toBeAdded < len(in) {
			in = in[:toBeAdded]
		}
		if len(in) > 0 {
			sm[key] = in
		} else {
			delete(sm, key)
		}
		if truncateReady {
			delete(sm, "notReadyAddresses")
		}
		canBeAdded -= len(in)
	}
	return true
}
