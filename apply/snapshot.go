package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/selector"
)

// LiveSource is where a Planner reads live objects: a cluster
// (cluster.Interface is one), a Snapshot, or a tool's own cache of the
// objects it watches.
type LiveSource interface {
	// Get returns the live object, or an error for which
	// cluster.IsNotFound is true when there is none.
	Get(ctx context.Context, gvk schema.GVK, namespace, name string) (map[string]any, error)
	// List returns the objects of a kind, in one namespace
	// (cluster.InNamespace) or all, that match cluster.MatchingLabels.
	// Planning lists a kind when it holds several objects of the input in
	// one namespace, and to find the objects to prune.
	List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error)
}

// Snapshot is a set of live objects held in memory: a LiveSource for
// planning against the objects a tool already holds, without a cluster.
// Objects are found by kind, namespace and name in the version asked for;
// an object held only in another version of its kind (one object read as
// autoscaling/v1 and v2 is one object) is found in that version. Objects
// are not copied; planning does not modify them, and neither may the
// caller once they are Set: to change an object, Set a changed copy (a
// Snapshot reads an object's uid and resourceVersion when it is Set, and
// a Planner with memory takes an object with the same ones as unchanged).
// A Snapshot is safe for concurrent use.
type Snapshot struct {
	mu    sync.RWMutex
	byKey map[snapKey]*snapSlot
	// kinds lists the keys of each group and kind, for List.
	kinds map[groupKind][]snapKey
}

// snapSlot holds one object of a Snapshot, and its identity. Set
// replaces the object of a slot in place; Delete empties the slot (obj
// nil) and forgets it: a Planner with memory holds slots to find the
// objects it planned against again without a lookup.
type snapSlot struct {
	obj     map[string]any
	uid, rv string
}

// snapKey identifies an object in one version of its kind.
type snapKey struct {
	objectKey
	version string
}

// NewSnapshot returns a Snapshot of objs. An object given twice keeps its
// last version.
func NewSnapshot(objs ...map[string]any) *Snapshot {
	s := &Snapshot{byKey: make(map[snapKey]*snapSlot, len(objs)), kinds: map[groupKind][]snapKey{}}
	for _, obj := range objs {
		s.Set(obj)
	}
	return s
}

func snapshotKey(obj map[string]any) snapKey {
	ref := objref.Of(obj)
	return snapKey{objectKey{ref.Group, ref.Kind, ref.Namespace, ref.Name}, ref.Version}
}

// Set adds obj, or replaces the object of the same kind (and version),
// namespace and name.
func (s *Snapshot) Set(obj map[string]any) {
	k := snapshotKey(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	uid, rv := liveIdentity(obj)
	slot := s.byKey[k]
	if slot == nil {
		gk := groupKind{k.group, k.kind}
		s.kinds[gk] = append(s.kinds[gk], k)
		slot = &snapSlot{}
		s.byKey[k] = slot
	}
	*slot = snapSlot{obj: obj, uid: uid, rv: rv}
}

// Delete removes the object of that kind, namespace and name, in every
// version, if any.
func (s *Snapshot) Delete(gvk schema.GVK, namespace, name string) {
	k := objectKey{gvk.Group, gvk.Kind, namespace, name}
	s.mu.Lock()
	defer s.mu.Unlock()
	gk := groupKind{k.group, k.kind}
	s.kinds[gk] = slices.DeleteFunc(s.kinds[gk], func(x snapKey) bool {
		if x.objectKey == k {
			s.byKey[x].obj = nil
			delete(s.byKey, x)
			return true
		}
		return false
	})
}

// Len returns how many objects the snapshot holds (an object held in two
// versions counts twice).
func (s *Snapshot) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.byKey)
}

// Get returns the object, or a NotFound *cluster.StatusError.
func (s *Snapshot) Get(_ context.Context, gvk schema.GVK, namespace, name string) (map[string]any, error) {
	k := objectKey{gvk.Group, gvk.Kind, namespace, name}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if slot, ok := s.byKey[snapKey{k, gvk.Version}]; ok {
		return slot.obj, nil
	}
	for _, x := range s.kinds[groupKind{gvk.Group, gvk.Kind}] {
		if x.objectKey == k {
			return s.byKey[x].obj, nil
		}
	}
	return nil, cluster.NewNotFound(groupResourceOf(gvk), name)
}

// lookup reads the objects of items as Get finds them, into sn: the
// object (nil for none) and the slot it was found in, which holds its
// identity. The next lookup of an item through its memory's entry
// (memoEntry.slot) reads a slot found in the version asked for without a
// search.
func (s *Snapshot) lookup(items []*item, sn *snapshot) {
	sn.slots = make([]*snapSlot, len(items))
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, it := range items {
		if e := it.entry; e != nil && e.snap == s && e.slot != nil && e.slot.obj != nil {
			sn.live[i], sn.slots[i] = e.slot.obj, e.slot
			continue
		}
		k := it.key()
		if slot, ok := s.byKey[snapKey{k, it.ref.Version}]; ok {
			sn.live[i], sn.slots[i] = slot.obj, slot
			continue
		}
		for _, x := range s.kinds[groupKind{k.group, k.kind}] {
			if x.objectKey == k {
				slot := s.byKey[x]
				sn.live[i], sn.slots[i] = slot.obj, slot
				if sn.other == nil {
					sn.other = map[int]bool{}
				}
				sn.other[i] = true
				break
			}
		}
	}
}

// List returns the objects of a kind that match the options (namespace,
// label selector, and field selectors on any field), ordered by namespace
// and name: each in the version asked for when the snapshot holds it in
// that version, once.
func (s *Snapshot) List(_ context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	o := cluster.CollectList(opts)
	labels, err := selector.ParseLabels(o.LabelSelector)
	if err != nil {
		return nil, cluster.NewBadRequest(err.Error())
	}
	fields, err := selector.ParseFields(o.FieldSelector)
	if err != nil {
		return nil, cluster.NewBadRequest(err.Error())
	}
	s.mu.RLock()
	keys := s.kinds[groupKind{gvk.Group, gvk.Kind}]
	// One key per object: the version asked for, or the first held.
	pick := make(map[objectKey]snapKey, len(keys))
	var order []objectKey
	for _, k := range keys {
		if o.Namespace != "" && k.namespace != o.Namespace {
			continue
		}
		prev, seen := pick[k.objectKey]
		if !seen {
			order = append(order, k.objectKey)
		}
		if !seen || (prev.version != gvk.Version && k.version == gvk.Version) {
			pick[k.objectKey] = k
		}
	}
	out := &cluster.List{}
	for _, ok := range order {
		obj := s.byKey[pick[ok]].obj
		if (!labels.Empty() && !labels.Matches(objref.Labels(obj))) || (!fields.Empty() && !fields.Matches(obj)) {
			continue
		}
		out.Items = append(out.Items, obj)
	}
	s.mu.RUnlock()
	// order holds each kind's keys as they were set: sort the keys, not
	// the objects, which would look up their names at every comparison.
	idx := make([]int, len(out.Items))
	names := make([]objectKey, len(out.Items))
	for i, obj := range out.Items {
		idx[i] = i
		names[i] = objectKey{namespace: objref.Namespace(obj), name: objref.Name(obj)}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := strings.Compare(names[a].namespace, names[b].namespace); c != 0 {
			return c
		}
		return strings.Compare(names[a].name, names[b].name)
	})
	sorted := make([]cluster.Object, len(idx))
	for i, j := range idx {
		sorted[i] = out.Items[j]
	}
	out.Items = sorted
	return out, nil
}

// groupResourceOf guesses the resource name of a kind for NotFound
// messages ("deployments.apps").
func groupResourceOf(gvk schema.GVK) string {
	r := strings.ToLower(gvk.Kind) + "s"
	if gvk.Group != "" {
		r += "." + gvk.Group
	}
	return r
}

// errNoWatch is what a LiveSource answers a Watch.
var errNoWatch = errors.New("apply: a live source cannot be watched")

// sourceReader makes a LiveSource a cluster.Reader (which prune takes);
// Watch is never called by planning.
type sourceReader struct{ LiveSource }

func (sourceReader) Watch(context.Context, schema.GVK, ...cluster.ListOption) (cluster.Watcher, error) {
	return nil, errNoWatch
}

// readerOf returns src as a cluster.Reader.
func readerOf(src LiveSource) cluster.Reader {
	if r, ok := src.(cluster.Reader); ok {
		return r
	}
	return sourceReader{src}
}

var _ LiveSource = (*Snapshot)(nil)
var _ LiveSource = (cluster.Interface)(nil)

// String describes the snapshot: "snapshot of 12 objects".
func (s *Snapshot) String() string { return fmt.Sprintf("snapshot of %d objects", s.Len()) }
