package svcpods

import (
	"context"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/schema"
)

// Memory is what an endpoint controller keeps between syncs: the
// Services and their work queue (reconcile.Queue), the pods as it last
// looked at them, indexed by label, and its own endpoint objects by
// Service. A Service leaves the queue when its sync wrote nothing, and
// is queued again by a write of something its sync reads: the Service,
// a pod it selected or selects, its own endpoint objects, a Node (the
// EndpointSlice controller reads their zones), its Namespace. So a sync
// lists nothing but at the start of a memory (Start), and a sync that
// the client rate limit cuts short goes on from the Services not
// reached. A nil Memory (the controllers' zero value) remembers nothing:
// every sync is a full one.
type Memory struct {
	// ok: a full sync rebuilt the memory and every sync since was given
	// the writes in between.
	ok bool
	// pods is nil until a sync lists the pods.
	pods *Pods
	// svcs are the Services.
	svcs reconcile.Queue
	// own are the endpoint objects of kind Kinds.Own by Service (the
	// EndpointSlice controller: by their service-name label); nil for
	// objects named as their Service.
	own *Groups
	// orphans: endpoint objects (by their Service's key) that may have
	// lost their Service.
	orphans map[reconcile.Key]bool
}

// Reset forgets everything: the next sync is a full one.
func (m *Memory) Reset() {
	if m != nil {
		*m = Memory{}
	}
}

// Valid reports whether a full sync rebuilt the memory since the last
// Reset.
func (m *Memory) Valid() bool { return m != nil && m.ok }

// Start begins a full sync, with every Service (as listed) and, for
// kinds.Own objects that are not named as their Service, every such
// object: the memory is rebuilt from them (on a nil Memory, a memory of
// this sync alone).
func Start(m *Memory, svcs, own []map[string]any, kinds Kinds) *Memory {
	if m == nil {
		m = &Memory{}
	}
	*m = Memory{ok: true, svcs: reconcile.Queue{GVK: ServiceGVK}, orphans: map[reconcile.Key]bool{}}
	m.svcs.Rebuild(svcs)
	if !kinds.ByName {
		m.own = &Groups{GVK: kinds.Own, Of: func(obj map[string]any) (string, bool) {
			s := kobj.Str(obj, "metadata", "labels", labelServiceName)
			return s, s != ""
		}}
		m.own.Rebuild(own)
	}
	return m
}

// Pods lists the pods once per memory (then follows their writes
// through Changed), or returns those already indexed.
func (m *Memory) Pods(ctx context.Context, c cluster.Interface) (*Pods, error) {
	if m.pods != nil {
		return m.pods, nil
	}
	pods, err := ListPods(ctx, c)
	if err != nil {
		return nil, err
	}
	m.pods = pods
	return pods, nil
}

// Due returns, in List order, the Services to sync: those queued.
func (m *Memory) Due() []map[string]any {
	todo, _ := m.svcs.Due(time.Time{})
	return todo
}

// Service returns the Service of that key (nil: none).
func (m *Memory) Service(k reconcile.Key) map[string]any { return m.svcs.Get(k) }

// Own returns the endpoint objects of the Service of that key that the
// memory indexes (List order).
func (m *Memory) Own(k reconcile.Key) []map[string]any { return m.own.Objects(k) }

// Synced records the outcome of a Service's sync: it leaves the queue
// when it wrote nothing.
func (m *Memory) Synced(svc map[string]any, wrote bool) {
	m.svcs.Synced(svc, wrote, time.Time{})
}

// Orphan marks the endpoint objects of the Service of that key as
// possibly without their Service; Orphans returns those marked, in List
// order, and Adopted unmarks one.
func (m *Memory) Orphan(k reconcile.Key) { m.orphans[k] = true }

// Orphans returns the keys Orphan marked, in List order.
func (m *Memory) Orphans() []reconcile.Key {
	keys := make([]reconcile.Key, 0, len(m.orphans))
	for k := range m.orphans {
		keys = append(keys, k)
	}
	reconcile.SortKeys(keys)
	return keys
}

// Adopted unmarks k (see Orphan): its objects were deleted, or it has a
// Service.
func (m *Memory) Adopted(k reconcile.Key) { delete(m.orphans, k) }

// Kinds tells Changed which writes matter to a controller.
type Kinds struct {
	// Own is the kind of endpoint object the controller writes and reads
	// (Endpoints, named as their Service; EndpointSlices, by their
	// service-name label).
	Own schema.GVK
	// ByName: an object of kind Own belongs to the Service of its name.
	ByName bool
	// Nodes: a Node write queues every Service.
	Nodes bool
}

// Changed brings the memory up to date with the writes given to an
// incremental sync and queues the Services they concern: a Service
// written, the Service of an endpoint object written (which may have lost
// its Service: see Orphans), a Service that selected or selects a pod
// written, every Service of a Namespace written, every Service when a
// Node is written (kinds.Nodes).
func (m *Memory) Changed(ctx context.Context, c cluster.Interface, changed []controller.Key, kinds Kinds) error {
	for _, k := range changed {
		key := reconcile.Key{k.Namespace, k.Name}
		switch {
		case m.svcs.Is(k):
			_, cur, err := m.svcs.Update(ctx, c, k)
			if err != nil {
				return err
			}
			if cur == nil {
				m.orphans[key] = true
			}
		case k.Group == "" && k.Kind == "Namespace":
			m.svcs.AddNamespace(k.Name)
		case k.Group == "" && k.Kind == "Node":
			if kinds.Nodes {
				m.svcs.AddAll()
			}
		case k.Group == kinds.Own.Group && k.Kind == kinds.Own.Kind:
			if kinds.ByName {
				m.svcs.Add(key)
				m.orphans[key] = true
				continue
			}
			left, joined, err := m.own.Update(ctx, c, k)
			if err != nil {
				return err
			}
			for _, g := range []reconcile.Key{left, joined} {
				if g != (reconcile.Key{}) {
					m.svcs.Add(g)
					m.orphans[g] = true
				}
			}
		case k.Group == "" && k.Kind == "Pod":
			if m.pods == nil {
				continue // no Service was synced with pods: all are queued
			}
			var pod map[string]any
			if !k.Deleted {
				p, err := controller.GetShared(ctx, c, kobj.PodGVK, k.Namespace, k.Name)
				if err != nil && !cluster.IsNotFound(err) {
					return fmt.Errorf("get pod %s/%s: %w", k.Namespace, k.Name, err)
				}
				pod = p
			}
			old := m.pods.set(k.Namespace, k.Name, pod)
			m.svcs.InNamespace(k.Namespace, func(s map[string]any) {
				if Served(s) && (selects(s, old) || selects(s, pod)) {
					m.svcs.Add(reconcile.KeyOf(s))
				}
			})
		}
	}
	return nil
}

// labelServiceName is the label of an EndpointSlice naming its Service.
const labelServiceName = "kubernetes.io/service-name"

// selects reports whether the Service's selector (every label equal)
// selects the pod (nil: none).
func selects(svc, pod map[string]any) bool {
	if pod == nil {
		return false
	}
	l := kobj.Map(pod, "metadata", "labels")
	for k, v := range kobj.Map(svc, "spec", "selector") {
		if got, has := l[k]; !has || got != v {
			return false
		}
	}
	return true
}
