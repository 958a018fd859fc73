package job

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

// memory is what an incremental Job controller keeps between syncs: the
// pods as it last looked at them (by controller and the orphans by
// namespace, those with the tracking finalizer), and the Jobs whose last
// sync wrote nothing, with the requeue time that sync returned.
type memory struct {
	// ok: a full sync rebuilt the memory and every sync since was given
	// the writes in between.
	ok      bool
	pods    map[[2]string]map[string]any
	byOwner map[string]map[[2]string]bool
	orphans map[string]map[[2]string]bool
	fin     map[[2]string]bool
	clean   map[[2]string]time.Time
}

// rebuild starts the memory again from every pod.
func (m *memory) rebuild(pods []map[string]any) {
	*m = memory{
		ok:      true,
		pods:    make(map[[2]string]map[string]any, len(pods)),
		byOwner: map[string]map[[2]string]bool{},
		orphans: map[string]map[[2]string]bool{},
		fin:     map[[2]string]bool{},
		clean:   map[[2]string]time.Time{},
	}
	for _, p := range pods {
		m.set([2]string{kobj.Namespace(p), kobj.Name(p)}, p)
	}
}

// set puts pod (nil: none) as key and returns the pod it replaces.
func (m *memory) set(key [2]string, pod map[string]any) map[string]any {
	old := m.pods[key]
	if old != nil {
		if uid := kobj.ControllerUID(old); uid != "" {
			delete(m.byOwner[uid], key)
			if len(m.byOwner[uid]) == 0 {
				delete(m.byOwner, uid)
			}
		} else {
			delete(m.orphans[key[0]], key)
			if len(m.orphans[key[0]]) == 0 {
				delete(m.orphans, key[0])
			}
		}
		delete(m.fin, key)
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
	if hasFinalizer(pod) {
		m.fin[key] = true
	}
	return old
}

func add(m map[string]map[[2]string]bool, k string, key [2]string) {
	s := m[k]
	if s == nil {
		s = map[[2]string]bool{}
		m[k] = s
	}
	s[key] = true
}

// sorted returns the pods of keys in the order of a List.
func (m *memory) sorted(keys map[[2]string]bool) []map[string]any {
	ks := make([][2]string, 0, len(keys))
	for k := range keys {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b [2]string) int {
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

// finalized returns the pods with the tracking finalizer, in List order.
func (m *memory) finalized() []map[string]any { return m.sorted(m.fin) }

// candidates returns, in List order, the pods the Jobs may claim: theirs
// and the orphans of their namespaces.
func (m *memory) candidates(jobs []map[string]any) []map[string]any {
	keys := map[[2]string]bool{}
	nss := map[string]bool{}
	for _, j := range jobs {
		for k := range m.byOwner[kobj.UID(j)] {
			keys[k] = true
		}
		if ns := kobj.Namespace(j); !nss[ns] {
			nss[ns] = true
			for k := range m.orphans[ns] {
				keys[k] = true
			}
		}
	}
	return m.sorted(keys)
}

// dirtySet names the Jobs writes concern, and the namespaces all of whose
// Jobs they concern.
type dirtySet struct {
	jobs map[[2]string]bool
	ns   map[string]bool
}

// dirty sorts the writes given to an incremental sync into the Jobs they
// concern, and brings the memory's pods up to date with them.
func (m *memory) dirty(ctx context.Context, c cluster.Interface, changed []controller.Key, jobs []map[string]any) (dirtySet, error) {
	d := dirtySet{jobs: map[[2]string]bool{}, ns: map[string]bool{}}
	var byUID map[string][2]string
	var byNS map[string][]map[string]any
	var sels map[[2]string]*selector.Labels
	index := func() {
		if byUID != nil {
			return
		}
		byUID = make(map[string][2]string, len(jobs))
		byNS = map[string][]map[string]any{}
		sels = map[[2]string]*selector.Labels{}
		for _, j := range jobs {
			key := [2]string{kobj.Namespace(j), kobj.Name(j)}
			byUID[kobj.UID(j)] = key
			byNS[key[0]] = append(byNS[key[0]], j)
		}
	}
	// concern marks the Jobs that may claim pod: its controller, or those
	// of its namespace whose selector matches an orphan.
	concern := func(pod map[string]any) {
		if pod == nil {
			return
		}
		if uid := kobj.ControllerUID(pod); uid != "" {
			if key, ok := byUID[uid]; ok {
				d.jobs[key] = true
			}
			return
		}
		labels := kobj.Labels(pod)
		for _, j := range byNS[kobj.Namespace(pod)] {
			key := [2]string{kobj.Namespace(j), kobj.Name(j)}
			sel, ok := sels[key]
			if !ok {
				if s, err := selector.FromLabelSelector(kobj.Map(j, "spec", "selector")); err == nil {
					sel = &s
				}
				sels[key] = sel
			}
			if sel != nil && sel.Matches(labels) {
				d.jobs[key] = true
			}
		}
	}
	for _, k := range changed {
		switch {
		case k.Group == "batch" && k.Kind == "Job":
			d.jobs[[2]string{k.Namespace, k.Name}] = true
		case k.Group == "" && k.Kind == "Namespace":
			d.ns[k.Name] = true
		case k.Group == "" && (k.Kind == "ResourceQuota" || k.Kind == "LimitRange"):
			d.ns[k.Namespace] = true
		case k.Kind == "Event" && (k.Group == "" || k.Group == "events.k8s.io"):
			// Named <involved object>.<hex time>: the Events of a Job
			// tell its back-off after a refused creation.
			if i := strings.LastIndexByte(k.Name, '.'); i > 0 {
				d.jobs[[2]string{k.Namespace, k.Name[:i]}] = true
			}
		case k.Group == "" && k.Kind == "Pod":
			key := [2]string{k.Namespace, k.Name}
			var pod map[string]any
			if !k.Deleted {
				p, err := controller.GetShared(ctx, c, kobj.PodGVK, k.Namespace, k.Name)
				if err != nil && !cluster.IsNotFound(err) {
					return d, fmt.Errorf("get pod %s/%s: %w", k.Namespace, k.Name, err)
				}
				pod = p
			}
			old := m.set(key, pod)
			if len(jobs) == 0 {
				continue
			}
			index()
			concern(old)
			concern(pod)
		}
	}
	return d, nil
}

// names are the pod names taken: those of the pods the memory holds and
// those a sync created.
type names struct {
	taken map[[2]string]map[string]any
	added map[[2]string]bool
}

func (n *names) has(k [2]string) bool {
	if n.added[k] {
		return true
	}
	_, ok := n.taken[k]
	return ok
}

func (n *names) add(k [2]string) {
	if n.added == nil {
		n.added = map[[2]string]bool{}
	}
	n.added[k] = true
}
