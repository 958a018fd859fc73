package deployment

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/selector"
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
	// orphans: the orphans by namespace and label ("key\x00value"; ""
	// holds them all), so that a sync reads the orphans its Deployments'
	// selectors may match, not every orphan of their namespaces.
	orphans map[string]map[string]map[reconcile.Key]bool
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
		orphans:  map[string]map[string]map[reconcile.Key]bool{},
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
// Deployments todo and the orphans their selectors may match.
func (m *memory) replicaSets(todo []map[string]any) []map[string]any {
	seen := map[reconcile.Key]bool{}
	var keys []reconcile.Key
	add := func(k reconcile.Key) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, d := range todo {
		for k := range m.rsByCtrl[kobj.UID(d)] {
			add(k)
		}
		for k := range m.candidates(kobj.Namespace(d), kobj.Map(d, "spec", "selector")) {
			add(k)
		}
	}
	reconcile.SortKeys(keys)
	out := make([]map[string]any, len(keys))
	for i, k := range keys {
		out[i] = m.rsObj[k]
	}
	return out
}

// candidates returns the orphans of namespace ns that a Deployment with
// the selector sel may adopt: those with the label of one of its
// requirements that names values (the fewest), else every orphan of ns
// (claim matches them against the whole selector).
func (m *memory) candidates(ns string, sel map[string]any) map[reconcile.Key]bool {
	byLabel := m.orphans[ns]
	best, found := byLabel[""], false
	try := func(key string, values ...any) {
		var n int
		for _, v := range values {
			s, ok := v.(string)
			if !ok {
				return
			}
			n += len(byLabel[key+"\x00"+s])
		}
		if found && n >= len(best) {
			return
		}
		set := byLabel[key+"\x00"+values[0].(string)]
		if len(values) > 1 {
			set = map[reconcile.Key]bool{}
			for _, v := range values {
				maps.Copy(set, byLabel[key+"\x00"+v.(string)])
			}
		}
		best, found = set, true
	}
	for _, k := range slices.Sorted(maps.Keys(kobj.Map(sel, "matchLabels"))) {
		try(k, kobj.Map(sel, "matchLabels")[k])
	}
	for _, e := range kobj.Slice(sel, "matchExpressions") {
		r, _ := e.(map[string]any)
		if values := kobj.Slice(r, "values"); kobj.Str(r, "operator") == "In" && len(values) > 0 {
			try(kobj.Str(r, "key"), values...)
		}
	}
	return best
}

// indexOrphan adds (or, when !add, removes) the orphan rs to the index.
func (m *memory) indexOrphan(key reconcile.Key, rs map[string]any, add bool) {
	ns := key[0]
	byLabel := m.orphans[ns]
	if byLabel == nil {
		if !add {
			return
		}
		byLabel = map[string]map[reconcile.Key]bool{}
		m.orphans[ns] = byLabel
	}
	label := func(l string) {
		set := byLabel[l]
		if add {
			if set == nil {
				set = map[reconcile.Key]bool{}
				byLabel[l] = set
			}
			set[key] = true
			return
		}
		delete(set, key)
		if len(set) == 0 {
			delete(byLabel, l)
		}
	}
	label("")
	for k, v := range kobj.Map(rs, "metadata", "labels") {
		if s, ok := v.(string); ok {
			label(k + "\x00" + s)
		}
	}
}

// setRS records rs (nil: gone) as key and returns what it replaces.
func (m *memory) setRS(key reconcile.Key, rs map[string]any) (old rsInfo, had bool) {
	old, had = m.rs[key]
	if had && old.ctrl == "" {
		m.indexOrphan(key, m.rsObj[key], false)
	}
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
		if info.ctrl == "" {
			m.indexOrphan(key, rs, true)
		}
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

// adopters queues in d the Deployments that may adopt the orphan rs: those
// of its namespace whose selector matches its labels (or does not parse:
// their sync says so), as upstream's Deployment controller enqueues, for
// a ReplicaSet without a controller, only the Deployments that select it.
// A Deployment that releases every ReplicaSet it makes (its selector
// names a pod-template-hash) then does not make every other Deployment of
// its namespace sync each time.
func (m *memory) adopters(d reconcile.Dirty, rs map[string]any) {
	if rs == nil {
		return
	}
	labels := kobj.Map(rs, "metadata", "labels")
	m.q.InNamespace(kobj.Namespace(rs), func(dep map[string]any) {
		sel, err := selector.FromLabelSelector(kobj.Map(dep, "spec", "selector"))
		if err != nil || sel.MatchesObject(labels) {
			d.Owners[reconcile.KeyOf(dep)] = true
		}
	})
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
			before := m.rsObj[key]
			old, had := m.setRS(key, rs)
			if had {
				if old.ctrl == "" {
					m.adopters(d, before)
				}
				owner(old.ctrl)
			}
			if rs != nil {
				ctrl := kobj.ControllerUID(rs)
				if ctrl == "" {
					m.adopters(d, rs)
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
