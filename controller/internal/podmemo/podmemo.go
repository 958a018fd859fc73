// Package podmemo is what an incremental workload controller (one that
// implements controller.Incremental and owns pods) keeps between syncs:
// the pods as it last looked at them, by controller and the orphans by
// namespace, and the owners whose last sync wrote nothing, with the
// requeue time that sync returned. Such an owner gives the same (no)
// writes until something its sync reads is written or its requeue time
// comes; Dirty sorts the writes given to a sync into the owners they
// concern.
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
	"github.com/konverge/konverge/selector"
)

// Key is a namespace and a name.
type Key = [2]string

// Memory is the memory of one controller value. The zero value remembers
// nothing (OK false): the next sync must be a full one, which calls
// Rebuild.
type Memory struct {
	// OK: Rebuild ran and every sync since was given the writes in
	// between.
	OK      bool
	pods    map[Key]map[string]any
	byOwner map[string]map[Key]bool
	orphans map[string]map[Key]bool
	clean   map[Key]time.Time
}

// Reset forgets everything.
func (m *Memory) Reset() { *m = Memory{} }

// Rebuild starts the memory again from every pod.
func (m *Memory) Rebuild(pods []map[string]any) {
	*m = Memory{
		OK:      true,
		pods:    make(map[Key]map[string]any, len(pods)),
		byOwner: map[string]map[Key]bool{},
		orphans: map[string]map[Key]bool{},
		clean:   map[Key]time.Time{},
	}
	for _, p := range pods {
		m.set(Key{kobj.Namespace(p), kobj.Name(p)}, p)
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

// Taken reports a pod of that namespace and name.
func (m *Memory) Taken(k Key) bool { _, ok := m.pods[k]; return ok }

// Kinds tells Dirty which writes matter to a controller.
type Kinds struct {
	// Group and Kind of the owners.
	Group, Kind string
	// Nodes: a Node write concerns every owner.
	Nodes bool
	// Claims: a PersistentVolumeClaim write concerns every owner of its
	// namespace.
	Claims bool
}

// Dirty names the owners writes concern, and the namespaces all of whose
// owners they concern.
type Dirty struct {
	all    bool
	owners map[Key]bool
	ns     map[string]bool
}

// Dirty sorts the writes given to an incremental sync into the owners
// they concern (an owner; a pod or ControllerRevision it controls, or an
// orphan its selector matches, before or after the write; its Events,
// named <owner>.<hex>; its namespace, quotas and limits; with
// kinds.Nodes, any Node; with kinds.Claims, the claims of its namespace),
// and brings the memory's pods up to date.
func (m *Memory) Dirty(ctx context.Context, c cluster.Interface, changed []controller.Key, owners []map[string]any, kinds Kinds) (Dirty, error) {
	d := Dirty{owners: map[Key]bool{}, ns: map[string]bool{}}
	var byUID map[string]Key
	var byNS map[string][]map[string]any
	var sels map[Key]*selector.Labels
	index := func() {
		if byUID != nil {
			return
		}
		byUID = make(map[string]Key, len(owners))
		byNS = map[string][]map[string]any{}
		sels = map[Key]*selector.Labels{}
		for _, o := range owners {
			key := Key{kobj.Namespace(o), kobj.Name(o)}
			byUID[kobj.UID(o)] = key
			byNS[key[0]] = append(byNS[key[0]], o)
		}
	}
	concern := func(obj map[string]any) {
		if obj == nil {
			return
		}
		if uid := kobj.ControllerUID(obj); uid != "" {
			if key, ok := byUID[uid]; ok {
				d.owners[key] = true
			}
			return
		}
		labels := kobj.Labels(obj)
		for _, o := range byNS[kobj.Namespace(obj)] {
			key := Key{kobj.Namespace(o), kobj.Name(o)}
			sel, ok := sels[key]
			if !ok {
				if s, err := selector.FromLabelSelector(kobj.Map(o, "spec", "selector")); err == nil {
					sel = &s
				}
				sels[key] = sel
			}
			if sel != nil && sel.Matches(labels) {
				d.owners[key] = true
			}
		}
	}
	for _, k := range changed {
		switch {
		case k.Group == kinds.Group && k.Kind == kinds.Kind:
			d.owners[Key{k.Namespace, k.Name}] = true
		case k.Group == "" && k.Kind == "Namespace":
			d.ns[k.Name] = true
		case k.Group == "" && (k.Kind == "ResourceQuota" || k.Kind == "LimitRange"):
			d.ns[k.Namespace] = true
		case k.Group == "" && k.Kind == "Node":
			if kinds.Nodes {
				d.all = true
			}
		case k.Group == "" && k.Kind == "PersistentVolumeClaim":
			if kinds.Claims {
				d.ns[k.Namespace] = true
			}
		case k.Group == "apps" && k.Kind == "ControllerRevision":
			// Rare: every owner of the namespace.
			d.ns[k.Namespace] = true
		case k.Kind == "Event" && (k.Group == "" || k.Group == "events.k8s.io"):
			// Named <involved object>.<hex time>: an owner's Events tell
			// its back-off after a refused write.
			if i := strings.LastIndexByte(k.Name, '.'); i > 0 {
				d.owners[Key{k.Namespace, k.Name[:i]}] = true
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
			if len(owners) == 0 {
				continue
			}
			index()
			concern(old)
			concern(pod)
		}
	}
	return d, nil
}

// Skip reports whether owner may be left alone at now: its last sync
// wrote nothing, no write since concerns it and its requeue time (merge
// it into the Result) has not come.
func (m *Memory) Skip(d Dirty, owner map[string]any, now time.Time) (requeue time.Time, skip bool) {
	key := Key{kobj.Namespace(owner), kobj.Name(owner)}
	at, ok := m.clean[key]
	if !ok || d.all || d.ns[key[0]] || d.owners[key] || (!at.IsZero() && !now.Before(at)) {
		return time.Time{}, false
	}
	return at, true
}

// Synced records the outcome of owner's sync: clean, with its requeue
// time, when it wrote nothing and did not fail.
func (m *Memory) Synced(owner map[string]any, wrote bool, requeue time.Time) {
	if !m.OK {
		return
	}
	key := Key{kobj.Namespace(owner), kobj.Name(owner)}
	if wrote {
		delete(m.clean, key)
	} else {
		m.clean[key] = requeue
	}
}

// Forget drops the owners of the memory that are not in owners (gone).
func (m *Memory) Forget(owners []map[string]any) {
	if len(m.clean) == 0 {
		return
	}
	live := make(map[Key]bool, len(owners))
	for _, o := range owners {
		live[Key{kobj.Namespace(o), kobj.Name(o)}] = true
	}
	for k := range m.clean {
		if !live[k] {
			delete(m.clean, k)
		}
	}
}

// Pending is the start of an incremental sync of owners (every object of
// kinds.Kind): the owners that a write since their last sync concerns,
// or whose requeue time came (the others' requeue times are in res), and
// the memory of owners that are gone is dropped.
func (m *Memory) Pending(ctx context.Context, c cluster.Interface, changed []controller.Key, owners []map[string]any, kinds Kinds, now time.Time) (todo []map[string]any, res controller.Result, err error) {
	if len(owners) == 0 {
		m.Reset()
		return nil, res, nil
	}
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
