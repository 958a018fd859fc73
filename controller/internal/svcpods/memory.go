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

// Memory is what an incremental endpoint controller keeps between syncs:
// the pods as it last looked at them, indexed by label, and the Services
// whose last sync wrote nothing. Such a Service gives the same (no)
// writes until something its sync reads is written: the Service, a pod it
// selected or selects, its own endpoint objects, a Node (the
// EndpointSlice controller reads their zones), its Namespace. The zero
// value remembers nothing: every Service is synced.
type Memory struct {
	// ok: a full sync rebuilt the memory and every sync since was given
	// the writes in between.
	ok bool
	// pods is nil until a sync lists the pods.
	pods *Pods
	// clean holds the Services whose last sync wrote nothing.
	clean reconcile.Clean
	// owner maps "namespace/name" of an endpoint object the controller
	// reads to the name of its Service, as it last looked.
	owner map[string]string
}

// Reset forgets everything: the next sync is a full one.
func (m *Memory) Reset() { *m = Memory{} }

// Valid reports whether a full sync rebuilt the memory since the last
// Reset.
func (m *Memory) Valid() bool { return m != nil && m.ok }

// Start begins a full sync: the memory is rebuilt from what it lists.
func (m *Memory) Start() {
	*m = Memory{ok: true, clean: reconcile.Clean{}, owner: map[string]string{}}
}

// Pods lists the pods once per memory (then follows their writes
// through Dirty), or returns those already indexed.
func (m *Memory) Pods(ctx context.Context, c cluster.Interface) (*Pods, error) {
	if m != nil && m.pods != nil {
		return m.pods, nil
	}
	pods, err := ListPods(ctx, c)
	if err != nil {
		return nil, err
	}
	if m != nil && m.ok {
		m.pods = pods
	}
	return pods, nil
}

// Synced records the outcome of a Service's sync: clean when it wrote
// nothing.
func (m *Memory) Synced(svc map[string]any, wrote bool) {
	if m == nil || !m.ok {
		return
	}
	m.clean.Record(reconcile.KeyOf(svc), wrote, time.Time{})
}

// Owned records that the endpoint object ns/name belongs to Service
// ns/svc as the controller read it (the EndpointSlice controller: by its
// service-name label).
func (m *Memory) Owned(ns, name, svc string) {
	if m != nil && m.ok {
		m.owner[ns+"/"+name] = svc
	}
}

// Forget drops the Services of the memory that are not in svcs (gone).
func (m *Memory) Forget(svcs []map[string]any) {
	if m == nil || !m.ok {
		return
	}
	m.clean.Forget(svcs)
}

// Kinds tells Dirty which writes matter to a controller.
type Kinds struct {
	// Own is the kind of endpoint object the controller writes and reads
	// (Endpoints, named as their Service; EndpointSlices, owned as
	// recorded by Owned).
	Own schema.GVK
	// ByName: an object of kind Own belongs to the Service of its name.
	ByName bool
	// Nodes: a Node write makes every Service dirty.
	Nodes bool
}

// Dirty is what an incremental sync must sync again: Services (the
// owners of the endpoint objects), the Services of a namespace, all.
type Dirty = reconcile.Dirty

// Clean reports whether the Service may be skipped: its last sync wrote
// nothing and nothing it reads was written since.
func (m *Memory) Clean(d Dirty, svc map[string]any) bool {
	if !m.ok {
		return false
	}
	_, skip := m.clean.Skip(d, reconcile.KeyOf(svc), time.Time{})
	return skip
}

// Dirty sorts the writes given to an incremental sync into the Services
// they concern, and brings the pod index up to date with them. svcs are
// the Services of the cluster.
func (m *Memory) Dirty(ctx context.Context, c cluster.Interface, changed []controller.Key, svcs []map[string]any, kinds Kinds) (Dirty, error) {
	d := reconcile.NewDirty()
	var byNS map[string][]map[string]any
	for _, k := range changed {
		switch {
		case k.Group == "" && k.Kind == "Service":
			d.Owners[reconcile.Key{k.Namespace, k.Name}] = true
		case k.Group == "" && k.Kind == "Namespace":
			d.NS[k.Name] = true
		case k.Group == "" && k.Kind == "Node":
			if kinds.Nodes {
				d.All = true
			}
		case k.Group == kinds.Own.Group && k.Kind == kinds.Own.Kind:
			key := k.Namespace + "/" + k.Name
			if kinds.ByName {
				d.Owners[reconcile.Key{k.Namespace, k.Name}] = true
				continue
			}
			if s, ok := m.owner[key]; ok {
				d.Owners[reconcile.Key{k.Namespace, s}] = true
			}
			if k.Deleted {
				delete(m.owner, key)
				continue
			}
			obj, err := controller.GetShared(ctx, c, kinds.Own, k.Namespace, k.Name)
			if cluster.IsNotFound(err) {
				delete(m.owner, key)
				continue
			}
			if err != nil {
				return d, fmt.Errorf("get %s %s: %w", kinds.Own.Kind, key, err)
			}
			if s := kobj.Str(obj, "metadata", "labels", labelServiceName); s != "" {
				d.Owners[reconcile.Key{k.Namespace, s}] = true
				m.owner[key] = s
			} else {
				delete(m.owner, key)
			}
		case k.Group == "" && k.Kind == "Pod":
			if m.pods == nil {
				continue // no Service was synced with pods: none is clean
			}
			var pod map[string]any
			if !k.Deleted {
				p, err := controller.GetShared(ctx, c, kobj.PodGVK, k.Namespace, k.Name)
				if err != nil && !cluster.IsNotFound(err) {
					return d, fmt.Errorf("get pod %s/%s: %w", k.Namespace, k.Name, err)
				}
				pod = p
			}
			old := m.pods.set(k.Namespace, k.Name, pod)
			if byNS == nil {
				byNS = map[string][]map[string]any{}
				for _, s := range svcs {
					if Served(s) {
						byNS[kobj.Namespace(s)] = append(byNS[kobj.Namespace(s)], s)
					}
				}
			}
			for _, s := range byNS[k.Namespace] {
				if selects(s, old) || selects(s, pod) {
					d.Owners[reconcile.Key{k.Namespace, kobj.Name(s)}] = true
				}
			}
		}
	}
	return d, nil
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
