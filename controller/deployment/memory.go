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

// memory is what New's controller keeps between syncs: the controller of
// each ReplicaSet and pod as it last saw them (so that a write, a deletion
// included, names the Deployment it concerns), and the Deployments whose
// last sync wrote nothing, with their requeue times.
type memory struct {
	// ok: rebuild ran and every sync since was given the writes between.
	ok bool
	// rs: a ReplicaSet's uid and controller uid ("": an orphan).
	rs map[reconcile.Key]rsInfo
	// rsOwner: a ReplicaSet uid's controller uid.
	rsOwner map[string]string
	// pods: a pod's controller uid (a ReplicaSet's).
	pods  map[reconcile.Key]string
	clean reconcile.Clean
}

type rsInfo struct{ uid, ctrl string }

func (m *memory) reset() { *m = memory{} }

// rebuild starts the memory again from every ReplicaSet and pod.
func (m *memory) rebuild(rss, pods []map[string]any) {
	*m = memory{
		ok:      true,
		rs:      make(map[reconcile.Key]rsInfo, len(rss)),
		rsOwner: make(map[string]string, len(rss)),
		pods:    make(map[reconcile.Key]string, len(pods)),
		clean:   reconcile.Clean{},
	}
	for _, rs := range rss {
		m.setRS(reconcile.KeyOf(rs), rs)
	}
	for _, p := range pods {
		m.setPod(reconcile.KeyOf(p), p)
	}
}

// setRS records rs (nil: gone) as key and returns what it replaces.
func (m *memory) setRS(key reconcile.Key, rs map[string]any) (old rsInfo, had bool) {
	old, had = m.rs[key]
	if had {
		delete(m.rsOwner, old.uid)
		delete(m.rs, key)
	}
	if rs != nil {
		info := rsInfo{uid: kobj.UID(rs), ctrl: kobj.ControllerUID(rs)}
		m.rs[key] = info
		m.rsOwner[info.uid] = info.ctrl
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
	m.clean.Record(reconcile.KeyOf(owner), wrote, requeue)
}

// pending brings the memory up to date with the writes in changed and
// returns the Deployments (of all, in List order) to sync at now: those
// the writes concern (the Deployment; a ReplicaSet it controls, or an
// orphan of its namespace, before or after the write; a pod of such a
// ReplicaSet; its Events, namespace, quotas and limits), and those whose
// last sync wrote something, failed or was not reached, or whose requeue
// time came. The others' requeue times are in res. The returned
// Deployments count as not clean until their sync says otherwise, so
// that those a throttled sync does not reach are synced at the next.
func (m *memory) pending(ctx context.Context, c cluster.Interface, changed []controller.Key, all []map[string]any, now time.Time) (todo []map[string]any, res controller.Result, err error) {
	d := reconcile.NewDirty()
	byUID := make(map[string]reconcile.Key, len(all))
	for _, o := range all {
		byUID[kobj.UID(o)] = reconcile.KeyOf(o)
	}
	owner := func(uid string) {
		if key, ok := byUID[uid]; ok {
			d.Owners[key] = true
		}
	}
	// ReplicaSets first, so that the pods of a new one find it.
	for _, k := range changed {
		if k.Group != "apps" || k.Kind != "ReplicaSet" {
			continue
		}
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
	for _, k := range changed {
		switch {
		case k.Group == "apps" && k.Kind == "ReplicaSet":
		case k.Group == "apps" && k.Kind == "Deployment":
			d.Owners[reconcile.Key{k.Namespace, k.Name}] = true
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
	for _, o := range all {
		key := reconcile.KeyOf(o)
		if at, skip := m.clean.Skip(d, key, now); skip {
			res = res.Merge(controller.Result{RequeueAt: at})
			continue
		}
		todo = append(todo, o)
		delete(m.clean, key)
	}
	m.clean.Forget(all)
	return todo, res, nil
}
