// Package podmemo is the cache of an incremental controller that owns
// pods (DaemonSet, StatefulSet, Job; see package reconcile for the
// scaffold it is part of): the pods as the controller last looked at
// them, by controller and the orphans by namespace, and the owners whose
// last sync wrote nothing, with the requeue time that sync returned. Such
// an owner gives the same (no) writes until something its sync reads is
// written or its requeue time comes; Dirty sorts the writes given to a
// sync into the owners they concern. Owners puts it together into a
// controller's Sync and SyncChanged.
package podmemo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
)

// Key is a namespace and a name.
type Key = reconcile.Key

// Memory is the memory of one controller value. The zero value remembers
// nothing (OK false): the next sync must be a full one, which calls
// Rebuild.
type Memory struct {
	// OK: Rebuild ran and every sync since was given the writes in
	// between.
	OK bool
	// Mark, when set, picks the pods that Marked returns (the Job
	// controller's: those with its tracking finalizer). Reset and Rebuild
	// keep it.
	Mark    func(pod map[string]any) bool
	pods    map[Key]map[string]any
	byOwner map[string]map[Key]bool
	orphans map[string]map[Key]bool
	marked  map[Key]bool
	clean   reconcile.Clean
}

// Reset forgets everything.
func (m *Memory) Reset() { *m = Memory{Mark: m.Mark} }

// Rebuild starts the memory again from every pod.
func (m *Memory) Rebuild(pods []map[string]any) {
	*m = Memory{
		OK:      true,
		Mark:    m.Mark,
		pods:    make(map[Key]map[string]any, len(pods)),
		byOwner: map[string]map[Key]bool{},
		orphans: map[string]map[Key]bool{},
		marked:  map[Key]bool{},
		clean:   reconcile.Clean{},
	}
	for _, p := range pods {
		m.set(reconcile.KeyOf(p), p)
	}
}

// set puts pod (nil: none) as key and returns the pod it replaces.
func (m *Memory) set(key Key, pod map[string]any) map[string]any {
	old := m.pods[key]
	if old != nil {
		if uid := kobj.ControllerUID(old); uid != "" {
			drop(m.byOwner, uid, key)
		} else {
			drop(m.orphans, key[0], key)
		}
		delete(m.marked, key)
		delete(m.pods, key)
	}
	if pod == nil {
		return old
	}
	m.pods[key] = pod
	if uid := kobj.ControllerUID(pod); uid != "" {
		add(m.byOwner, uid, key)
	} else {
		add(m.orphans, key[0], key)
	}
	if m.Mark != nil && m.Mark(pod) {
		m.marked[key] = true
	}
	return old
}

func add(m map[string]map[Key]bool, k string, key Key) {
	s := m[k]
	if s == nil {
		s = map[Key]bool{}
		m[k] = s
	}
	s[key] = true
}

func drop(m map[string]map[Key]bool, k string, key Key) {
	delete(m[k], key)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}

// sorted returns the pods of keys in List order.
func (m *Memory) sorted(keys map[Key]bool) []map[string]any {
	ks := make([]Key, 0, len(keys))
	for k := range keys {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b Key) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	out := make([]map[string]any, len(ks))
	for i, k := range ks {
		out[i] = m.pods[k]
	}
	return out
}

// Candidates returns, in List order, the pods that owners may claim:
// theirs and the orphans of their namespaces.
func (m *Memory) Candidates(owners []map[string]any) []map[string]any {
	keys := map[Key]bool{}
	nss := map[string]bool{}
	for _, o := range owners {
		for k := range m.byOwner[kobj.UID(o)] {
			keys[k] = true
		}
		if ns := kobj.Namespace(o); !nss[ns] {
			nss[ns] = true
			for k := range m.orphans[ns] {
				keys[k] = true
			}
		}
	}
	return m.sorted(keys)
}

// All returns every pod of the memory, in no order.
func (m *Memory) All() []map[string]any {
	out := make([]map[string]any, 0, len(m.pods))
	for _, p := range m.pods {
		out = append(out, p)
	}
	return out
}

// Len is how many pods the memory holds.
func (m *Memory) Len() int { return len(m.pods) }

// Marked returns, in List order, the pods that Mark picks.
func (m *Memory) Marked() []map[string]any { return m.sorted(m.marked) }

// Taken reports a pod of that namespace and name.
func (m *Memory) Taken(k Key) bool { _, ok := m.pods[k]; return ok }

// Names are the pod names a sync may not give a new pod: those Taken
// reports and those the sync created.
type Names struct {
	Taken func(Key) bool
	added map[Key]bool
}

// Has reports a name taken.
func (n *Names) Has(k Key) bool { return n.added[k] || n.Taken(k) }

// Add takes a name.
func (n *Names) Add(k Key) {
	if n.added == nil {
		n.added = map[Key]bool{}
	}
	n.added[k] = true
}

// Kinds tells Dirty which writes matter to a controller.
type Kinds struct {
	// Group and Kind of the owners.
	Group, Kind string
	// Nodes: a Node write concerns every owner.
	Nodes bool
	// Claims: a PersistentVolumeClaim write concerns every owner of its
	// namespace.
	Claims bool
	// Revisions: a ControllerRevision write concerns every owner of its
	// namespace.
	Revisions bool
}

// Dirty sorts the writes given to an incremental sync into the owners
// they concern (an owner; a pod it controls, or an orphan its selector
// matches, before or after the write; its Events, its namespace, quotas
// and limits (reconcile.Dirty.Namespaced); with kinds.Revisions, the
// ControllerRevisions of its namespace; with kinds.Nodes, any Node; with
// kinds.Claims, the claims of its namespace), and brings the memory's
// pods up to date.
func (m *Memory) Dirty(ctx context.Context, c cluster.Interface, changed []controller.Key, owners []map[string]any, kinds Kinds) (reconcile.Dirty, error) {
	var byUID map[string]Key
	var byNS map[string][]map[string]any
	index := func() {
		if byUID != nil {
			return
		}
		byUID = make(map[string]Key, len(owners))
		byNS = map[string][]map[string]any{}
		for _, o := range owners {
			key := reconcile.KeyOf(o)
			byUID[kobj.UID(o)] = key
			byNS[key[0]] = append(byNS[key[0]], o)
		}
	}
	return m.DirtyBy(ctx, c, changed, kinds, Lookup{
		Any: len(owners) > 0,
		UID: func(uid string) (Key, bool) {
			index()
			k, ok := byUID[uid]
			return k, ok
		},
		InNamespace: func(ns string, fn func(owner map[string]any)) {
			index()
			for _, o := range byNS[ns] {
				fn(o)
			}
		},
	})
}

// Lookup finds the owners for DirtyBy.
type Lookup struct {
	// Any: there are owners at all.
	Any bool
	// UID finds an owner by its uid.
	UID func(uid string) (Key, bool)
	// InNamespace calls fn with each owner of a namespace.
	InNamespace func(ns string, fn func(owner map[string]any))
}

// DirtyBy is Dirty for a controller that keeps its owners itself
// (reconcile.Queue) rather than listing them: own finds them.
func (m *Memory) DirtyBy(ctx context.Context, c cluster.Interface, changed []controller.Key, kinds Kinds, own Lookup) (reconcile.Dirty, error) {
	d := reconcile.NewDirty()
	sels := map[Key]*selector.Labels{}
	// concern marks the owners that may claim obj: its controller, or
	// those of its namespace whose selector matches an orphan.
	concern := func(obj map[string]any) {
		if obj == nil {
			return
		}
		if uid := kobj.ControllerUID(obj); uid != "" {
			if key, ok := own.UID(uid); ok {
				d.Owners[key] = true
			}
			return
		}
		labels := kobj.Labels(obj)
		own.InNamespace(kobj.Namespace(obj), func(o map[string]any) {
			key := reconcile.KeyOf(o)
			sel, ok := sels[key]
			if !ok {
				if s, err := selector.FromLabelSelector(kobj.Map(o, "spec", "selector")); err == nil {
					sel = &s
				}
				sels[key] = sel
			}
			if sel != nil && sel.Matches(labels) {
				d.Owners[key] = true
			}
		})
	}
	for _, k := range changed {
		switch {
		case k.Group == kinds.Group && k.Kind == kinds.Kind:
			d.Owners[Key{k.Namespace, k.Name}] = true
		case d.Namespaced(k):
		case k.Group == "" && k.Kind == "Node":
			if kinds.Nodes {
				d.All = true
			}
		case k.Group == "" && k.Kind == "PersistentVolumeClaim":
			if kinds.Claims {
				d.NS[k.Namespace] = true
			}
		case k.Group == "apps" && k.Kind == "ControllerRevision":
			// Rare: every owner of the namespace.
			if kinds.Revisions {
				d.NS[k.Namespace] = true
			}
		case k.Group == "" && k.Kind == "Pod":
			key := Key{k.Namespace, k.Name}
			var pod map[string]any
			if !k.Deleted {
				p, err := controller.GetShared(ctx, c, kobj.PodGVK, k.Namespace, k.Name)
				if err != nil && !cluster.IsNotFound(err) {
					return d, fmt.Errorf("get pod %s/%s: %w", k.Namespace, k.Name, err)
				}
				pod = p
			}
			old := m.set(key, pod)
			if !own.Any {
				continue
			}
			concern(old)
			concern(pod)
		}
	}
	return d, nil
}

// Skip reports whether owner may be left alone at now: its last sync
// wrote nothing, no write since concerns it and its requeue time (merge
// it into the Result) has not come.
func (m *Memory) Skip(d reconcile.Dirty, owner map[string]any, now time.Time) (requeue time.Time, skip bool) {
	return m.clean.Skip(d, reconcile.KeyOf(owner), now)
}

// Synced records the outcome of owner's sync: clean, with its requeue
// time, when it wrote nothing and did not fail. It makes the memory a
// reconcile.Recorder.
func (m *Memory) Synced(owner map[string]any, wrote bool, requeue time.Time) {
	if !m.OK {
		return
	}
	m.clean.Record(reconcile.KeyOf(owner), wrote, requeue)
}

// Forget drops the owners of the memory that are not in owners (gone).
func (m *Memory) Forget(owners []map[string]any) { m.clean.Forget(owners) }

// Pending is the start of an incremental sync of owners (every object of
// kinds.Kind): the owners that a write since their last sync concerns,
// or whose requeue time came (the others' requeue times are in res), and
// the memory of owners that are gone is dropped.
func (m *Memory) Pending(ctx context.Context, c cluster.Interface, changed []controller.Key, owners []map[string]any, kinds Kinds, now time.Time) (todo []map[string]any, res controller.Result, err error) {
	d, err := m.Dirty(ctx, c, changed, owners, kinds)
	if err != nil {
		return nil, res, err
	}
	for _, o := range owners {
		if at, skip := m.Skip(d, o, now); skip {
			res = res.Merge(controller.Result{RequeueAt: at})
			continue
		}
		todo = append(todo, o)
	}
	m.Forget(owners)
	return todo, res, nil
}

// Owners is the Sync and SyncChanged of an incremental controller whose
// owners claim pods, around its reconcile step.
type Owners struct {
	// Name prefixes the errors ("daemonset").
	Name string
	// GVK is the owners' kind; Kinds says which writes concern them.
	GVK   schema.GVK
	Kinds Kinds
	// Sweep: Sync runs in every sync, even without owners to sync (the
	// Job controller sweeps the pods its memory marks); otherwise a sync
	// without owners forgets the pods.
	Sweep bool
	// Sync syncs todo (every owner of all, or those a write concerns)
	// with the pods they may claim (every pod, or the memory's
	// Candidates), and tells m each owner's outcome (a reconcile.Loop
	// with Memory m).
	Sync func(ctx context.Context, c cluster.Interface, now time.Time, m *Memory, all, todo, pods []map[string]any) (controller.Result, error)
}

// Full syncs every owner and rebuilds m (nil: a memory of this sync
// alone) from every pod.
func (o Owners) Full(ctx context.Context, c cluster.Interface, now time.Time, m *Memory) (controller.Result, error) {
	var res controller.Result
	if m == nil {
		m = &Memory{}
	}
	owners, err := o.list(ctx, c)
	if err != nil {
		return res, err
	}
	if len(owners) == 0 && !o.Sweep {
		m.Reset()
		return res, nil
	}
	pods, err := c.List(ctx, kobj.PodGVK)
	if err != nil {
		return res, fmt.Errorf("%s: list pods: %w", o.Name, err)
	}
	m.Rebuild(pods.Items)
	return o.Sync(ctx, c, now, m, owners, owners, pods.Items)
}

// Changed syncs the owners that the writes in changed concern, and those
// whose last sync wrote something or whose requeue time came, with the
// pods they may claim; without a memory rebuilt since its last Reset, it
// is Full.
func (o Owners) Changed(ctx context.Context, c cluster.Interface, now time.Time, m *Memory, changed []controller.Key) (controller.Result, error) {
	if m == nil || !m.OK {
		return o.Full(ctx, c, now, m)
	}
	owners, err := o.list(ctx, c)
	if err != nil {
		return controller.Result{}, err
	}
	if len(owners) == 0 && !o.Sweep {
		m.Reset()
		return controller.Result{}, nil
	}
	todo, res, err := m.Pending(ctx, c, changed, owners, o.Kinds, now)
	if err != nil {
		return res, fmt.Errorf("%s: %w", o.Name, err)
	}
	if len(todo) == 0 && !o.Sweep {
		return res, nil
	}
	out, err := o.Sync(ctx, c, now, m, owners, todo, m.Candidates(todo))
	return res.Merge(out), err
}

func (o Owners) list(ctx context.Context, c cluster.Interface) ([]map[string]any, error) {
	l, err := c.List(ctx, o.GVK)
	if err != nil {
		return nil, fmt.Errorf("%s: list %ss: %w", o.Name, strings.ToLower(o.GVK.Kind), err)
	}
	return l.Items, nil
}
