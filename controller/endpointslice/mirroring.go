package endpointslice

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/controller/internal/svcpods"
	"github.com/konverge/konverge/value"
)

//lint:file-ignore SA1019 mirroring reads the subsets of core/v1 Endpoints (deprecated, still served by kube-apiserver v1.37 and mirrored by its controller): that type is what it mirrors.

// MirroringControllerName is the manager label of mirrored slices.
const MirroringControllerName = "endpointslicemirroring-controller.k8s.io"

// MirroringComponent is the source of the mirroring controller's Events.
const MirroringComponent = "endpoint-slice-mirroring-controller"

// MaxEndpointsPerSubset is how many addresses of one subset are mirrored
// at most (--mirroring-max-endpoints-per-subset).
const MaxEndpointsPerSubset = 1000

// The annotations that are not mirrored.
const (
	lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	leaderAnnotation      = "control-plane.alpha.kubernetes.io/leader"
)

// Mirroring is the EndpointSlice mirroring controller, after
// kube-controller-manager 1.37's (pkg/controller/endpointslicemirroring):
// the Endpoints of a Service without a selector (written by its users)
// are mirrored to EndpointSlices owned by the Endpoints, one per address
// family and set of ports, labelled and annotated as the Endpoints (but
// kubectl's last-applied configuration and the trigger time), unless the
// Endpoints are labelled endpointslice.kubernetes.io/skip-mirror: "true".
// The zero value syncs every Endpoints object in every sync; NewMirroring
// returns one that remembers (an incremental controller, one per runner).
type Mirroring struct {
	m *mirrorMemory
}

// NewMirroring returns an incremental mirroring controller: SyncChanged
// syncs only the Endpoints objects queued (see reconcile.Queue) by a
// write of the Endpoints, of the Service of their name, of their
// mirrored slices or of their namespace, or whose last sync wrote
// something or was not reached, without listing anything.
func NewMirroring() Mirroring {
	return Mirroring{m: &mirrorMemory{}}
}

// mirrorMemory is what NewMirroring's controller keeps between syncs: the
// Endpoints objects and their queue, the mirrored slices by Endpoints, and
// the Endpoints names whose mirrored slices may have lost their Endpoints.
type mirrorMemory struct {
	q      reconcile.Queue
	slices svcpods.Groups
	// orphans: the slices of these Endpoints names are deleted unless
	// the Endpoints exist.
	orphans map[reconcile.Key]bool
}

func newMirrorMemory() *mirrorMemory {
	return &mirrorMemory{
		q:      reconcile.Queue{GVK: svcpods.EndpointsGVK},
		slices: svcpods.Groups{GVK: svcpods.EndpointSliceGVK, Of: mirroredBy},
	}
}

// mirroredBy names the Endpoints a slice mirrors, for the slices this
// controller manages.
func mirroredBy(s map[string]any) (string, bool) {
	l := kobj.Labels(s)
	if l[LabelManagedBy] != MirroringControllerName || kobj.Deleting(s) {
		return "", false
	}
	return l[LabelServiceName], true
}

var _ controller.Incremental = Mirroring{}

// Name implements controller.Controller.
func (Mirroring) Name() string { return "endpointslicemirroring" }

// Reset forgets what the controller remembers: the next sync is a full
// one.
func (ctl Mirroring) Reset() {
	if ctl.m != nil {
		*ctl.m = mirrorMemory{}
	}
}

// Sync mirrors every Endpoints object once. A write that the client rate
// limit holds back ends the sync without an error: the Endpoints after
// it are mirrored at the next.
func (ctl Mirroring) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	var res controller.Result
	eps, err := reconcile.ListShared(ctx, c, svcpods.EndpointsGVK)
	if err != nil {
		return res, fmt.Errorf("endpointslicemirroring: %w", err)
	}
	sl, err := reconcile.ListShared(ctx, c, svcpods.EndpointSliceGVK)
	if err != nil {
		return res, fmt.Errorf("endpointslicemirroring: %w", err)
	}
	m := ctl.m
	if m == nil {
		m = &mirrorMemory{}
	}
	*m = *newMirrorMemory()
	m.q.Rebuild(eps)
	m.slices.Rebuild(sl)
	m.orphans = map[reconcile.Key]bool{}
	for _, k := range m.slices.Keys() {
		if m.q.Get(k) == nil {
			m.orphans[k] = true
		}
	}
	return m.run(ctx, c, now)
}

// SyncChanged implements controller.Incremental.
func (ctl Mirroring) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	m := ctl.m
	if m == nil || !m.q.OK {
		return ctl.Sync(ctx, c, now)
	}
	d := reconcile.NewDirty()
	for _, k := range changed {
		key := reconcile.Key{k.Namespace, k.Name}
		switch {
		case m.q.Is(k):
			_, cur, err := m.q.Update(ctx, c, k)
			if err != nil {
				return controller.Result{}, fmt.Errorf("endpointslicemirroring: %w", err)
			}
			if cur == nil {
				m.orphans[key] = true
			}
		case k.Group == "" && k.Kind == "Service":
			d.Owners[key] = true
		case m.slices.Is(k):
			left, joined, err := m.slices.Update(ctx, c, k)
			if err != nil {
				return controller.Result{}, fmt.Errorf("endpointslicemirroring: %w", err)
			}
			for _, g := range []reconcile.Key{left, joined} {
				if g == (reconcile.Key{}) {
					continue
				}
				d.Owners[g] = true
				if m.q.Get(g) == nil {
					m.orphans[g] = true
				}
			}
		case d.Namespaced(k):
		}
	}
	m.q.AddDirty(d)
	return m.run(ctx, c, now)
}

// run mirrors the Endpoints queued, then deletes the slices of
// Endpoints that are gone.
func (m *mirrorMemory) run(ctx context.Context, c cluster.Interface, now time.Time) (res controller.Result, _ error) {
	todo, _ := m.q.Due(now)
	mr := &mirror{ctx: ctx, c: c, now: now}
	defer func() { res.Changed = mr.changed }()
	for _, ep := range todo {
		// What a sync reads costs as a List would.
		controller.Read(c, 1)
		key := reconcile.KeyOf(ep)
		before := mr.writes
		svc, err := controller.GetShared(ctx, c, svcpods.ServiceGVK, key[0], key[1])
		if err != nil && !cluster.IsNotFound(err) {
			return res, fmt.Errorf("endpointslicemirroring: get service %s/%s: %w", key[0], key[1], err)
		}
		_, hasSelector := kobj.Map(svc, "spec")["selector"].(map[string]any)
		_, leader := kobj.Map(ep, "metadata", "annotations")[leaderAnnotation]
		if svc == nil || hasSelector || leader || kobj.Labels(ep)["endpointslice.kubernetes.io/skip-mirror"] == "true" {
			err = mr.deleteAll(m.slices.Objects(key))
		} else if err = mr.reconcile(ep, m.slices.Objects(key)); err != nil {
			if _, ok := err.(*cluster.StatusError); ok {
				// Refused: tried again at the next sync.
				mr.writes++
				err = nil
			}
		}
		m.q.Synced(ep, mr.writes != before || err != nil, time.Time{})
		if controller.IsThrottled(err) {
			// The client waits for a token: the rest at the next sync.
			return res, nil
		}
		if err != nil {
			return res, err
		}
	}
	keys := make([]reconcile.Key, 0, len(m.orphans))
	for k := range m.orphans {
		keys = append(keys, k)
	}
	reconcile.SortKeys(keys)
	for _, k := range keys {
		if m.q.Get(k) == nil {
			if err := mr.deleteAll(m.slices.Objects(k)); err != nil {
				if controller.IsThrottled(err) {
					return res, nil
				}
				return res, err
			}
		}
		delete(m.orphans, k)
	}
	return res, nil
}

type mirror struct {
	ctx     context.Context
	c       cluster.Interface
	now     time.Time
	changed bool
	// writes counts the writes sent.
	writes int
}

func (m *mirror) deleteAll(slices []map[string]any) error {
	for _, s := range slices {
		err := m.c.Delete(m.ctx, svcpods.EndpointSliceGVK, kobj.Namespace(s), kobj.Name(s))
		if err != nil && !cluster.IsNotFound(err) {
			if _, ok := err.(*cluster.StatusError); !ok {
				return err
			}
			continue
		}
		m.changed = true
		m.writes++
	}
	return nil
}

// group is the desired endpoints of one address family and set of ports.
type group struct {
	addressType string
	ports       []any
	endpoints   []any
}

// reconcile is upstream's reconcile of one Endpoints object.
func (m *mirror) reconcile(ep map[string]any, existing []map[string]any) error {
	var subsets []corev1.EndpointSubset
	if raw, ok := ep["subsets"]; ok {
		data, err := json.Marshal(raw)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &subsets); err != nil {
			return nil // not what the API server stores
		}
	}
	subsets = svcpods.RepackSubsets(subsets)
	groups := map[string]*group{}
	var order []string
	invalid, skipped := 0, 0
	for _, ss := range subsets {
		var ports []any
		for _, p := range ss.Ports {
			pm := map[string]any{"name": p.Name, "port": int64(p.Port), "protocol": string(p.Protocol)}
			if p.AppProtocol != nil {
				pm["appProtocol"] = *p.AppProtocol
			}
			ports = append(ports, pm)
		}
		added := 0
		add := func(a corev1.EndpointAddress, ready bool) {
			if added >= MaxEndpointsPerSubset {
				return
			}
			ip := net.ParseIP(a.IP)
			if ip == nil {
				invalid++
				return
			}
			at := "IPv4"
			if ip.To4() == nil {
				at = "IPv6"
			}
			e := map[string]any{"addresses": []any{ip.String()}, "conditions": map[string]any{"ready": ready}}
			if a.TargetRef != nil {
				ref := map[string]any{}
				b, _ := json.Marshal(a.TargetRef)
				_ = json.Unmarshal(b, &ref)
				e["targetRef"] = ref
			}
			if a.NodeName != nil {
				e["nodeName"] = *a.NodeName
			}
			if a.Hostname != "" {
				e["hostname"] = a.Hostname
			}
			k := at + " " + portKey(ports)
			g := groups[k]
			if g == nil {
				g = &group{addressType: at, ports: sortPorts(ports)}
				groups[k] = g
				order = append(order, k)
			}
			g.endpoints = append(g.endpoints, e)
			added++
		}
		for _, a := range ss.Addresses {
			add(a, true)
		}
		for _, a := range ss.NotReadyAddresses {
			add(a, false)
		}
		skipped += len(ss.Addresses) + len(ss.NotReadyAddresses) - added
	}
	if invalid > 0 {
		m.event(ep, "InvalidIPAddress", fmt.Sprintf("Skipped %d invalid IP addresses when mirroring to EndpointSlices", invalid))
	}
	if skipped > invalid {
		m.event(ep, "TooManyAddressesToMirror", fmt.Sprintf("A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped", MaxEndpointsPerSubset, skipped))
	}

	byKey := map[string][]map[string]any{}
	for _, s := range existing {
		k := kobj.Str(s, "addressType") + " " + portKey(kobj.Slice(s, "ports"))
		byKey[k] = append(byKey[k], s)
	}
	labels := map[string]any{}
	for k, v := range kobj.Labels(ep) {
		labels[k] = v
	}
	labels[LabelServiceName] = kobj.Name(ep)
	labels[LabelManagedBy] = MirroringControllerName
	annotations := map[string]any{}
	for k, v := range kobj.Map(ep, "metadata", "annotations") {
		if k != svcpods.TriggerTimeAnnotation && k != lastAppliedAnnotation {
			annotations[k] = v
		}
	}
	for _, k := range order {
		g := groups[k]
		olds := byKey[k]
		delete(byKey, k)
		if len(olds) > 0 {
			if err := m.deleteAll(olds[1:]); err != nil {
				return err
			}
			old := olds[0]
			if sameEndpoints(kobj.Slice(old, "endpoints"), g.endpoints) &&
				value.Equal(kobj.Map(old, "metadata", "labels"), labels) &&
				value.Equal(nonNil(kobj.Map(old, "metadata", "annotations")), annotations) {
				continue
			}
		}
		s := map[string]any{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata": map[string]any{
				"namespace":       kobj.Namespace(ep),
				"labels":          labels,
				"ownerReferences": []any{kobj.NewControllerRef(ep, svcpods.EndpointsGVK)},
			},
			"addressType": g.addressType,
			"ports":       g.ports,
			"endpoints":   g.endpoints,
		}
		if len(annotations) > 0 {
			s["metadata"].(map[string]any)["annotations"] = annotations
		}
		var err error
		if len(olds) > 0 {
			md := s["metadata"].(map[string]any)
			md["name"] = kobj.Name(olds[0])
			// A new object under the old name: without its
			// generateName, as upstream's update.
			md["resourceVersion"] = kobj.Str(olds[0], "metadata", "resourceVersion")
			_, err = m.c.Update(m.ctx, emptyToNull(s))
		} else {
			s["metadata"].(map[string]any)["generateName"] = kobj.Name(ep) + "-"
			_, err = m.c.Create(m.ctx, emptyToNull(s))
		}
		if err != nil {
			return err
		}
		m.changed = true
		m.writes++
	}
	var stale []string
	for k := range byKey {
		stale = append(stale, k)
	}
	sort.Strings(stale)
	for _, k := range stale {
		if err := m.deleteAll(byKey[k]); err != nil {
			return err
		}
	}
	return nil
}

func (m *mirror) event(ep map[string]any, reason, msg string) {
	if _, err := event.Emit(m.ctx, m.c, event.Event{Involved: ep, Type: event.Warning, Reason: reason, Message: msg, Component: MirroringComponent, Time: m.now}); err == nil {
		m.changed = true
		m.writes++
	} else if controller.IsThrottled(err) {
		// Not sent: the Endpoints stay queued, to be mirrored again.
		m.writes++
	}
}

// sameEndpoints compares endpoints whatever their order.
func sameEndpoints(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(l []any) string {
		var ks []string
		for _, e := range l {
			d, _ := json.Marshal(e)
			ks = append(ks, string(d))
		}
		sort.Strings(ks)
		return strings.Join(ks, "\n")
	}
	return key(a) == key(b)
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
