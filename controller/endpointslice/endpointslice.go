package endpointslice

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/dump"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/controller/internal/svcpods"
	"github.com/konverge/konverge/value"
)

// Component is the source of the controller's Events.
const Component = "endpoint-slice-controller"

// The labels of the slices the controller manages.
const (
	LabelServiceName = "kubernetes.io/service-name"
	LabelManagedBy   = "endpointslice.kubernetes.io/managed-by"
	ControllerName   = "endpointslice-controller.k8s.io"
)

// MaxEndpointsPerSlice is how many endpoints one slice holds at most
// (--max-endpoints-per-slice).
const MaxEndpointsPerSlice = 100

// zoneLabel is the node label an endpoint's zone comes from.
const zoneLabel = "topology.kubernetes.io/zone"

// Controller is the EndpointSlice controller. The zero value syncs every
// Service in every sync; New returns one that remembers (an incremental
// controller, one per runner).
type Controller struct {
	m *svcpods.Memory
}

// New returns an incremental EndpointSlice controller: SyncChanged
// skips the Services whose last sync wrote nothing when nothing they read
// (the Service, the pods it selected or selects, its EndpointSlices, the
// Nodes, its Namespace) was written since.
func New() Controller { return Controller{m: &svcpods.Memory{}} }

var _ controller.Incremental = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "endpointslice" }

// Reset forgets what the controller remembers: the next sync is a full
// one.
func (ctl Controller) Reset() {
	if ctl.m != nil {
		ctl.m.Reset()
	}
}

// Sync reconciles the EndpointSlices of every Service once. A write
// that the client rate limit holds back ends the sync without an error:
// the Services after it are synced at the next.
func (ctl Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	svcs, err := c.List(ctx, svcpods.ServiceGVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("endpointslice: list services: %w", err)
	}
	sl, err := c.List(ctx, svcpods.EndpointSliceGVK)
	if err != nil {
		return controller.Result{}, fmt.Errorf("endpointslice: list slices: %w", err)
	}
	return sync(ctx, c, now, svcpods.Start(ctl.m, svcs.Items, sl.Items, kinds))
}

// kinds are the writes that concern the controller.
var kinds = svcpods.Kinds{Own: svcpods.EndpointSliceGVK, Nodes: true}

// SyncChanged implements controller.Incremental: the Services queued
// (see svcpods.Memory) are synced, without listing anything but the
// Nodes; the others would write nothing.
func (ctl Controller) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	if !ctl.m.Valid() {
		return ctl.Sync(ctx, c, now)
	}
	if err := ctl.m.Changed(ctx, c, changed, kinds); err != nil {
		return controller.Result{}, fmt.Errorf("endpointslice: %w", err)
	}
	return sync(ctx, c, now, ctl.m)
}

// sync syncs the Services m queues, in List order.
func sync(ctx context.Context, c cluster.Interface, now time.Time, m *svcpods.Memory) (controller.Result, error) {
	var res controller.Result
	var nodes map[string]map[string]any
	for _, svc := range m.Due() {
		// What a sync reads costs as a List would.
		controller.Read(c, 1)
		if !svcpods.Served(svc) {
			m.Synced(svc, false)
			continue
		}
		pods, err := m.Pods(ctx, c)
		if err != nil {
			return res, fmt.Errorf("endpointslice: %w", err)
		}
		if nodes == nil {
			nodes = map[string]map[string]any{}
			if nl, err := c.List(ctx, kobj.NodeGVK); err == nil {
				for _, n := range nl.Items {
					nodes[kobj.Name(n)] = n
				}
			}
		}
		var existing []map[string]any
		for _, s := range m.Own(reconcile.KeyOf(svc)) {
			if kobj.Labels(s)[LabelManagedBy] == ControllerName && !kobj.Deleting(s) {
				existing = append(existing, s)
			}
		}
		r := &reconciler{ctx: ctx, c: c, now: now, svc: svc, nodes: nodes}
		r.pods = pods.Selected(svc)
		err = r.reconcile(r.pods, existing)
		if se, ok := err.(*cluster.StatusError); ok {
			msg := fmt.Sprintf("Error updating Endpoint Slices for Service %s/%s: %v", kobj.Namespace(svc), kobj.Name(svc), se)
			_, err = event.Emit(ctx, c, event.Event{Involved: svc, Type: event.Warning, Reason: "FailedToUpdateEndpointSlices", Message: msg, Component: Component, Time: now})
			r.changed = true
		}
		m.Synced(svc, r.changed || err != nil)
		res.Changed = res.Changed || r.changed
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
	return res, nil
}

type reconciler struct {
	ctx     context.Context
	c       cluster.Interface
	now     time.Time
	svc     map[string]any
	nodes   map[string]map[string]any
	pods    []map[string]any // the Service's
	changed bool
}

// desired are the endpoints of one set of ports.
type desired struct {
	ports     []any
	endpoints []map[string]any // in the order pods were listed
	byHash    map[string]map[string]any
}

func (d *desired) pop() map[string]any {
	for len(d.endpoints) > 0 {
		e := d.endpoints[0]
		d.endpoints = d.endpoints[1:]
		if h := endpointHash(e); d.byHash[h] != nil {
			delete(d.byHash, h)
			return e
		}
	}
	return nil
}

// reconcile is upstream's Reconcile for one Service.
func (r *reconciler) reconcile(pods []map[string]any, existing []map[string]any) error {
	types := addressTypes(r.svc)
	var keep []map[string]any
	for _, s := range existing {
		if types[kobj.Str(s, "addressType")] {
			keep = append(keep, s)
		} else if err := r.delete(s); err != nil {
			return err
		}
	}
	for _, at := range []string{"IPv4", "IPv6"} {
		if !types[at] {
			continue
		}
		var mine []map[string]any
		for _, s := range keep {
			if kobj.Str(s, "addressType") == at {
				mine = append(mine, s)
			}
		}
		if err := r.reconcileByAddressType(pods, mine, at); err != nil {
			return err
		}
	}
	return nil
}

func (r *reconciler) reconcileByAddressType(pods, existing []map[string]any, addressType string) error {
	var toCreate, toUpdate, toDelete []map[string]any
	existingByPorts := map[string][]map[string]any{}
	for _, s := range existing {
		if r.ownedBy(s) {
			k := portKey(kobj.Slice(s, "ports"))
			existingByPorts[k] = append(existingByPorts[k], s)
		} else {
			toDelete = append(toDelete, s)
		}
	}
	want := map[string]*desired{}
	var order []string
	publishNotReady := kobj.Bool(r.svc, "spec", "publishNotReadyAddresses")
	// When no port names its target, every pod has the same ports: they
	// are worked out once.
	same := r.podIndependentPorts()
	var samePorts []any
	var sameKey string
	for _, pod := range pods {
		if !svcpods.ShouldPodBeInEndpoints(pod, true) {
			continue
		}
		var ports []any
		var k string
		if same && samePorts != nil {
			ports, k = samePorts, sameKey
		} else {
			ports = r.endpointPorts(pod)
			k = portKey(ports)
			if same {
				samePorts, sameKey = ports, k
			}
		}
		d := want[k]
		if d == nil {
			d = &desired{ports: sortPorts(ports), byHash: map[string]map[string]any{}}
			want[k] = d
			order = append(order, k)
		}
		node := r.nodes[kobj.Str(pod, "spec", "nodeName")]
		if node == nil && !publishNotReady {
			continue
		}
		ep := r.podToEndpoint(pod, node, addressType == "IPv6")
		if len(kobj.Slice(ep, "addresses")) > 0 {
			h := endpointHash(ep)
			if d.byHash[h] == nil {
				d.endpoints = append(d.endpoints, ep)
			}
			d.byHash[h] = ep
		}
	}
	for _, k := range order {
		c, u, del := r.reconcileByPortMapping(existingByPorts[k], want[k], addressType)
		toCreate, toUpdate, toDelete = append(toCreate, c...), append(toUpdate, u...), append(toDelete, del...)
	}
	var stale []string
	for k := range existingByPorts {
		if want[k] == nil {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		toDelete = append(toDelete, existingByPorts[k]...)
	}
	// A Service without endpoints has one placeholder slice.
	if len(existing) == len(toDelete) && len(toCreate) < 1 {
		placeholder := r.newSlice(nil, addressType)
		if len(toDelete) == 1 && isPlaceholder(toDelete[0], placeholder) {
			toDelete = nil
		} else {
			toCreate = append(toCreate, placeholder)
		}
	}
	return r.finalize(toCreate, toUpdate, toDelete, existing)
}

// reconcileByPortMapping is upstream's: existing slices keep the
// endpoints still desired (updated), new ones fill the slices being
// updated first, then one unchanged slice they fit in, then new slices.
func (r *reconciler) reconcileByPortMapping(existing []map[string]any, d *desired, addressType string) (toCreate, toUpdate, toDelete []map[string]any) {
	byName := map[string]map[string]any{}
	var unchanged, update []string
	for _, s := range existing {
		name := kobj.Name(s)
		byName[name] = s
		var kept []any
		updated := false
		for _, e := range kobj.Slice(s, "endpoints") {
			em, _ := e.(map[string]any)
			h := endpointHash(em)
			if got := d.byHash[h]; got != nil {
				kept = append(kept, got)
				if !value.Equal(got, em) {
					updated = true
				}
				delete(d.byHash, h)
			}
		}
		labels, labelsChanged := r.labels(s)
		switch {
		case updated || len(kobj.Slice(s, "endpoints")) != len(kept):
			if len(kept) == 0 {
				toDelete = append(toDelete, s)
				continue
			}
			cp := kobj.Copy(s)
			cp["endpoints"] = kept
			kobj.EnsureMap(cp, "metadata")["labels"] = labels
			byName[name] = cp
			update = append(update, name)
		case labelsChanged:
			cp := kobj.Copy(s)
			kobj.EnsureMap(cp, "metadata")["labels"] = labels
			byName[name] = cp
			update = append(update, name)
		default:
			unchanged = append(unchanged, name)
		}
	}
	remaining := func() int { return len(d.byHash) }
	if remaining() > 0 && len(update) > 0 {
		var fill []map[string]any
		for _, n := range update {
			fill = append(fill, byName[n])
		}
		sort.SliceStable(fill, func(i, j int) bool {
			return len(kobj.Slice(fill[i], "endpoints")) > len(kobj.Slice(fill[j], "endpoints"))
		})
		for _, s := range fill {
			eps := kobj.Slice(s, "endpoints")
			for remaining() > 0 && len(eps) < MaxEndpointsPerSlice {
				eps = append(eps, d.pop())
			}
			s["endpoints"] = eps
		}
	}
	for remaining() > 0 {
		var s map[string]any
		if remaining() < MaxEndpointsPerSlice && len(unchanged) > 0 {
			// The unchanged slice the rest fits in best.
			closest := MaxEndpointsPerSlice
			for _, n := range unchanged {
				diff := MaxEndpointsPerSlice - (remaining() + len(kobj.Slice(byName[n], "endpoints")))
				if diff >= 0 && diff < closest {
					closest, s = diff, byName[n]
					if diff == 0 {
						break
					}
				}
			}
		}
		if s == nil {
			s = r.newSlice(d.ports, addressType)
		} else {
			s = kobj.Copy(s)
			byName[kobj.Name(s)] = s
		}
		eps := kobj.Slice(s, "endpoints")
		for remaining() > 0 && len(eps) < MaxEndpointsPerSlice {
			eps = append(eps, d.pop())
		}
		s["endpoints"] = eps
		if name := kobj.Name(s); name != "" {
			update = append(update, name)
			for i, n := range unchanged {
				if n == name {
					unchanged = append(unchanged[:i], unchanged[i+1:]...)
					break
				}
			}
		} else {
			toCreate = append(toCreate, s)
		}
	}
	for _, n := range update {
		toUpdate = append(toUpdate, byName[n])
	}
	return toCreate, toUpdate, toDelete
}

// finalize is upstream's: creates become updates of slices about to be
// deleted, then the writes, with the trigger-time annotation.
func (r *reconciler) finalize(toCreate, toUpdate, toDelete, existing []map[string]any) error {
	for i := 0; i < len(toDelete); {
		if len(toCreate) == 0 {
			break
		}
		del := toDelete[i]
		s := toCreate[len(toCreate)-1]
		if kobj.Str(del, "addressType") == kobj.Str(s, "addressType") && r.ownedBy(del) {
			// The new slice under the old one's name.
			cp := kobj.Copy(del)
			md := kobj.EnsureMap(cp, "metadata")
			md["labels"] = kobj.Map(s, "metadata", "labels")
			md["ownerReferences"] = kobj.Slice(s, "metadata", "ownerReferences")
			delete(md, "annotations")
			cp["endpoints"], cp["ports"] = s["endpoints"], s["ports"]
			toCreate = toCreate[:len(toCreate)-1]
			toUpdate = append(toUpdate, cp)
			toDelete = append(toDelete[:i], toDelete[i+1:]...)
		} else {
			i++
		}
	}
	var last map[string]any
	if len(existing) > 0 {
		last = existing[0]
	}
	// Any slice's annotation tells when the controller last wrote.
	trigger := svcpods.TriggerTime(r.svc, r.pods, last)
	if !kobj.Deleting(r.svc) {
		for _, s := range toCreate {
			setTrigger(s, trigger)
			if _, err := r.c.Create(r.ctx, emptyToNull(s)); err != nil {
				if se, ok := err.(*cluster.StatusError); ok && se.Code == 403 {
					return nil // a namespace being deleted
				}
				return err
			}
			r.changed = true
		}
	}
	for _, s := range toUpdate {
		setTrigger(s, trigger)
		if _, err := r.c.Update(r.ctx, emptyToNull(s)); err != nil {
			return err
		}
		r.changed = true
	}
	for _, s := range toDelete {
		if err := r.delete(s); err != nil {
			return err
		}
	}
	return nil
}

func (r *reconciler) delete(s map[string]any) error {
	err := r.c.Delete(r.ctx, svcpods.EndpointSliceGVK, kobj.Namespace(s), kobj.Name(s))
	if err != nil && !cluster.IsNotFound(err) {
		return err
	}
	r.changed = true
	return nil
}

func setTrigger(s map[string]any, t time.Time) {
	ann := kobj.EnsureMap(s, "metadata", "annotations")
	if !t.IsZero() {
		ann[svcpods.TriggerTimeAnnotation] = svcpods.FormatTriggerTime(t)
	} else {
		delete(ann, svcpods.TriggerTimeAnnotation)
	}
	if len(ann) == 0 {
		delete(kobj.Map(s, "metadata"), "annotations")
	}
}

// emptyToNull writes empty lists as the API server stores what the
// controller sends (protobuf has no empty list): null.
func emptyToNull(s map[string]any) map[string]any {
	for _, k := range []string{"endpoints", "ports"} {
		if l, _ := s[k].([]any); len(l) == 0 {
			s[k] = nil
		}
	}
	return s
}

func (r *reconciler) ownedBy(s map[string]any) bool {
	for _, o := range kobj.Slice(s, "metadata", "ownerReferences") {
		om, _ := o.(map[string]any)
		if kobj.Str(om, "uid") == kobj.UID(r.svc) && kobj.Str(om, "kind") == "Service" && kobj.Str(om, "apiVersion") == "v1" {
			return true
		}
	}
	return false
}

// labels is upstream's setEndpointSliceLabels: the Service's labels
// (but the reserved ones), the headless label, the service name and the
// manager; changed reports a difference in the Service's labels.
func (r *reconciler) labels(s map[string]any) (map[string]any, bool) {
	reserved := func(k string) bool {
		return k == LabelServiceName || k == LabelManagedBy || k == svcpods.HeadlessLabel
	}
	ep, sv := map[string]any{}, map[string]any{}
	for k, v := range kobj.Labels(s) {
		if !reserved(k) {
			ep[k] = v
		}
	}
	for k, v := range kobj.Labels(r.svc) {
		if !reserved(k) {
			sv[k] = v
		}
	}
	changed := !value.Equal(ep, sv)
	if !svcpods.ServiceIPSet(r.svc) {
		sv[svcpods.HeadlessLabel] = ""
	}
	sv[LabelServiceName] = kobj.Name(r.svc)
	sv[LabelManagedBy] = ControllerName
	return sv, changed
}

func (r *reconciler) newSlice(ports []any, addressType string) map[string]any {
	name := kobj.Name(r.svc)
	prefix := name + "-"
	if len(prefix) > 253 {
		prefix = name
	}
	s := map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata": map[string]any{
			"generateName":    prefix,
			"namespace":       kobj.Namespace(r.svc),
			"ownerReferences": []any{kobj.NewControllerRef(r.svc, svcpods.ServiceGVK)},
		},
		"addressType": addressType,
		"ports":       ports,
		"endpoints":   []any{},
	}
	labels, _ := r.labels(s)
	s["metadata"].(map[string]any)["labels"] = labels
	return s
}

// isPlaceholder is upstream's placeholderSliceCompare: no endpoints, no
// ports, the same address type and labels.
func isPlaceholder(s, placeholder map[string]any) bool {
	return len(kobj.Slice(s, "endpoints")) == 0 && len(kobj.Slice(s, "ports")) == 0 &&
		kobj.Str(s, "addressType") == kobj.Str(placeholder, "addressType") &&
		value.Equal(kobj.Map(s, "metadata", "labels"), kobj.Map(placeholder, "metadata", "labels"))
}

// endpointPorts is upstream's getEndpointPorts.
func (r *reconciler) endpointPorts(pod map[string]any) []any {
	ports := kobj.Slice(r.svc, "spec", "ports")
	out := []any{}
	if len(ports) == 0 && kobj.Str(r.svc, "spec", "clusterIP") == "None" {
		return out
	}
	for _, p := range ports {
		sp, _ := p.(map[string]any)
		n, ok := svcpods.FindPort(pod, sp)
		if !ok {
			continue
		}
		proto := kobj.Str(sp, "protocol")
		if proto == "" {
			proto = "TCP"
		}
		ep := map[string]any{"name": kobj.Str(sp, "name"), "port": n, "protocol": proto}
		if ap, ok := sp["appProtocol"].(string); ok {
			ep["appProtocol"] = ap
		}
		out = append(out, ep)
	}
	return out
}

// podIndependentPorts reports whether no port of the Service names its
// target port: then endpointPorts is the same for every pod.
func (r *reconciler) podIndependentPorts() bool {
	for _, p := range kobj.Slice(r.svc, "spec", "ports") {
		pm, _ := p.(map[string]any)
		if _, ok := pm["targetPort"].(string); ok {
			return false
		}
	}
	return true
}

// podToEndpoint is upstream's.
func (r *reconciler) podToEndpoint(pod, node map[string]any, v6 bool) map[string]any {
	serving := svcpods.Ready(pod)
	terminating := kobj.Deleting(pod)
	ready := kobj.Bool(r.svc, "spec", "publishNotReadyAddresses") || (serving && !terminating)
	addrs := []any{}
	for _, ip := range svcpods.PodIPs(pod, v6) {
		addrs = append(addrs, ip)
	}
	ep := map[string]any{
		"addresses":  addrs,
		"conditions": map[string]any{"ready": ready, "serving": serving, "terminating": terminating},
		"targetRef":  map[string]any{"kind": "Pod", "namespace": kobj.Namespace(pod), "name": kobj.Name(pod), "uid": kobj.UID(pod)},
	}
	if n := kobj.Str(pod, "spec", "nodeName"); n != "" {
		ep["nodeName"] = n
	}
	if z := kobj.Labels(node)[zoneLabel]; z != "" {
		ep["zone"] = z
	}
	if svcpods.ShouldSetHostname(pod, r.svc) {
		ep["hostname"] = kobj.Str(pod, "spec", "hostname")
	}
	return ep
}

// endpointHash identifies an endpoint across syncs, as upstream's
// hashEndpoint: its addresses, hostname and pod.
func endpointHash(e map[string]any) string {
	var addrs []string
	for _, a := range kobj.Slice(e, "addresses") {
		s, _ := a.(string)
		addrs = append(addrs, s)
	}
	sort.Strings(addrs)
	return strings.Join(addrs, ",") + "|" + kobj.Str(e, "hostname") + "|" + kobj.Str(e, "targetRef", "namespace") + "/" + kobj.Str(e, "targetRef", "name")
}

// addressTypes is upstream's getAddressTypesForService.
func addressTypes(svc map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, f := range kobj.Slice(svc, "spec", "ipFamilies") {
		switch f {
		case "IPv4":
			out["IPv4"] = true
		case "IPv6":
			out["IPv6"] = true
		}
	}
	if len(out) > 0 {
		return out
	}
	if svcpods.ServiceIPSet(svc) {
		if strings.Contains(kobj.Str(svc, "spec", "clusterIP"), ":") {
			return map[string]bool{"IPv6": true}
		}
		return map[string]bool{"IPv4": true}
	}
	return map[string]bool{"IPv4": true, "IPv6": true}
}

// portKey identifies a set of ports whatever their order.
func portKey(ports []any) string {
	keys := make([]string, 0, len(ports))
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		keys = append(keys, onePortKey(pm))
	}
	sort.Strings(keys)
	return strings.Join(keys, ";")
}

// portFields are the fields of an EndpointPort.
var portFields = [...]string{"name", "port", "protocol", "appProtocol"}

// onePortKey identifies one port: its fields, each quoted or absent
// ("-"); its JSON when it has fields an EndpointPort has not.
func onePortKey(pm map[string]any) string {
	var b strings.Builder
	n := 0
	for _, f := range portFields {
		v, ok := pm[f]
		if !ok {
			b.WriteString("-,")
			continue
		}
		n++
		switch x := v.(type) {
		case string:
			b.WriteString(strconv.Quote(x))
		case int64:
			b.WriteString(strconv.FormatInt(x, 10))
		default:
			j, _ := json.Marshal(x)
			b.Write(j)
		}
		b.WriteByte(',')
	}
	if n != len(pm) {
		j, _ := json.Marshal(pm)
		return string(j)
	}
	return b.String()
}

// sortPorts orders ports as upstream's NewPortMapKey leaves them: by the
// hash of their Go value.
func sortPorts(ports []any) []any {
	type keyed struct {
		h string
		p any
	}
	ks := make([]keyed, len(ports))
	for i, p := range ports {
		pm, _ := p.(map[string]any)
		var dp discoveryv1.EndpointPort
		b, _ := json.Marshal(pm)
		_ = json.Unmarshal(b, &dp)
		h := fnv.New128a()
		fmt.Fprintf(h, "%v", dump.ForHash(dp))
		ks[i] = keyed{hex.EncodeToString(h.Sum(nil)), p}
	}
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].h < ks[j].h })
	out := make([]any, len(ks))
	for i, k := range ks {
		out[i] = k.p
	}
	return out
}
