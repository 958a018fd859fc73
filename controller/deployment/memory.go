package deployment

import (
	"context"
	"fmt"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
)

// memory is what New's controller keeps between syncs: the Deployments
// and their work queue (reconcile.Queue: a Deployment leaves it when its
// sync wrote nothing, and is queued again by a write that concerns it or
// when its requeue time comes), the ReplicaSets by controller (so that a
// sync reads those of the Deployments it syncs without listing them all,
// and a write, a deletion included, names the Deployment it concerns),
// and the controller of each pod.
type memory struct {
	// ok: rebuild ran and every sync since was given the writes between.
	ok bool
	q  reconcile.Queue
	// depUID: a Deployment uid's key.
	depUID map[string]reconcile.Key
	// rs: a ReplicaSet's uid and controller uid ("": an orphan).
	rs map[reconcile.Key]rsInfo
	// rsObj: the ReplicaSets; rsByCtrl: their keys by controller uid
	// ("": the orphans).
	rsObj    map[reconcile.Key]map[string]any
	rsByCtrl map[string]map[reconcile.Key]bool
	// rsOwner: a ReplicaSet uid's controller uid.
	rsOwner map[string]string
	// pods: a pod's controller uid (a ReplicaSet's).
	pods map[reconcile.Key]string
}

type rsInfo struct{ uid, ctrl string }

func (m *memory) reset() { *m = memory{} }

// rebuild starts the memory again from every Deployment (all queued),
// ReplicaSet and pod.
func (m *memory) rebuild(deps, rss, pods []map[string]any) {
	*m = memory{
		ok:       true,
		q:        reconcile.Queue{GVK: kobj.DeploymentGVK},
		depUID:   make(map[string]reconcile.Key, len(deps)),
		rs:       make(map[reconcile.Key]rsInfo, len(rss)),
		rsObj:    make(map[reconcile.Key]map[string]any, len(rss)),
		rsByCtrl: map[string]map[reconcile.Key]bool{},
		rsOwner:  make(map[string]string, len(rss)),
		pods:     make(map[reconcile.Key]string, len(pods)),
	}
	m.q.Rebuild(deps)
	for _, d := range deps {
		m.depUID[kobj.UID(d)] = reconcile.KeyOf(d)
	}
	for _, rs := range rss {
		m.setRS(reconcile.KeyOf(rs), rs)
	}
	for _, p := range pods {
		m.setPod(reconcile.KeyOf(p), p)
	}
}

// replicaSets returns, in List order, the ReplicaSets controlled by the
// Deployments of uids and the orphans.
func (m *memory) replicaSets(uids map[string]bool) []map[string]any {
	var keys []reconcile.Key
	for uid := range uids {
		for k := range m.rsByCtrl[uid] {
			keys = append(keys, k)
		}
	}
	for k := range m.rsByCtrl[""] {
		keys = append(keys, k)
	}
	reconcile.SortKeys(keys)
	out := make([]map[string]any, len(keys))
	for i, k := range keys {
		out[i] = m.rsObj[k]
	}
	return out
}

// setRS records rs (nil: gone) as key and returns what it replaces.
func (m *memory) setRS(key reconcile.Key, rs map[string]any) (old rsInfo, had bool) {
	old, had = m.rs[key]
	if had {
		delete(m.rsOwner, old.uid)
		delete(m.rs, key)
		delete(m.rsObj, key)
		delete(m.rsByCtrl[old.ctrl], key)
		if len(m.rsByCtrl[old.ctrl]) == 0 {
			delete(m.rsByCtrl, old.ctrl)
		}
	}
	if rs != nil {
		info := rsInfo{uid: kobj.UID(rs), ctrl: kobj.ControllerUID(rs)}
		m.rs[key] = info
		m.rsOwner[info.uid] = info.ctrl
		m.rsObj[key] = rs
		set := m.rsByCtrl[info.ctrl]
		if set == nil {
			set = map[reconcile.Key]bool{}
			m.rsByCtrl[info.ctrl] = set
		}
		set[key] = true
	}
	return old, had
}

// setPod records pod's controller (nil: gone) as key and returns the one
// it replaces.
func (m *memory) setPod(key reconcile.Key, pod map[string]any) string {
	old := m.pods[key]
	delete(m.pods, key)
	if pod != nil {
		m.pods[key] = kobj.ControllerUID(pod)
	}
	return old
}

// Synced makes the memory a reconcile.Recorder.
func (m *memory) Synced(owner map[string]any, wrote bool, requeue time.Time) {
	if !m.ok {
		return
	}
	m.q.Synced(owner, wrote, requeue)
}

// pending brings the memory up to date with the writes in changed and
// returns the Deployments (in List order) to sync at now: those the
// writes concern (the Deployment; a ReplicaSet it controls, or an orphan
// of its namespace, before or after the write; a pod of such a
// ReplicaSet; its Events, namespace, quotas and limits), and those whose
// last sync wrote something, failed or was not reached, or whose requeue
// time came. The others' earliest requeue time is in res. The returned
// Deployments stay queued until their sync says otherwise, so that those
// a throttled sync does not reach are synced at the next.
func (m *memory) pending(ctx context.Context, c cluster.Interface, changed []controller.Key, now time.Time) (todo []map[string]any, res controller.Result, err error) {
	d := reconcile.NewDirty()
	owner := func(uid string) {
		if key, ok := m.depUID[uid]; ok {
			d.Owners[key] = true
		}
	}
	// Deployments and ReplicaSets first, so that the pods of a new one
	// find it.
	for _, k := range changed {
		switch {
		case m.q.Is(k):
			old, cur, err := m.q.Update(ctx, c, k)
			if err != nil {
				return nil, res, err
			}
			if old != nil {
				delete(m.depUID, kobj.UID(old))
			}
			if cur != nil {
				m.depUID[kobj.UID(cur)] = reconcile.KeyOf(cur)
			}
		case k.Group == "apps" && k.Kind == "ReplicaSet":
			key := reconcile.Key{k.Namespace, k.Name}
			var rs map[string]any
			if !k.Deleted {
				got, err := controller.GetShared(ctx, c, kobj.ReplicaSetGVK, k.Namespace, k.Name)
				if err != nil && !cluster.IsNotFound(err) {
					return nil, res, fmt.Errorf("get replicaset %s/%s: %w", k.Namespace, k.Name, err)
				}
				rs = got
			}
			old, had := m.setRS(key, rs)
			if had {
				if old.ctrl == "" {
					d.NS[k.Namespace] = true
				}
				owner(old.ctrl)
			}
			if rs != nil {
				ctrl := kobj.ControllerUID(rs)
				if ctrl == "" {
					// An orphan: any Deployment of its namespace may adopt it.
					d.NS[k.Namespace] = true
				}
				owner(ctrl)
			}
		}
	}
	for _, k := range changed {
		switch {
		case m.q.Is(k), k.Group == "apps" && k.Kind == "ReplicaSet":
		case d.Namespaced(k):
		case k.Group == "" && k.Kind == "Pod":
			key := reconcile.Key{k.Namespace, k.Name}
			var pod map[string]any
			if !k.Deleted {
				p, err := controller.GetShared(ctx, c, kobj.PodGVK, k.Namespace, k.Name)
				if err != nil && !cluster.IsNotFound(err) {
					return nil, res, fmt.Errorf("get pod %s/%s: %w", k.Namespace, k.Name, err)
				}
				pod = p
			}
			old := m.setPod(key, pod)
			if old != "" {
				owner(m.rsOwner[old])
			}
			if pod != nil {
				if u := kobj.ControllerUID(pod); u != "" {
					owner(m.rsOwner[u])
				}
			}
		}
	}
	m.q.AddDirty(d)
	todo, next := m.q.Due(now)
	return todo, controller.Result{RequeueAt: next}, nil
}
