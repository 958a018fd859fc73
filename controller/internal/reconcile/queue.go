package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/schema"
)

// Queue is the work queue of an incremental controller that must not
// list its owners at every sync: the owner objects as it last saw them
// (kept up to date from the writes given to SyncChanged, one read of each
// object written), the owners queued for the next sync, and the requeue
// times of the others. An owner is queued from the full sync that builds
// the queue until a sync of it writes nothing; a write that concerns it
// queues it again, and so does its requeue time when it comes. So a sync
// that the client rate limit cuts short leaves the owners it did not
// reach queued, and the next costs what is queued, not a pass over every
// owner, as upstream's work queue hands out only the keys added to it.
//
// The zero value is not built (OK false): the next sync must be a full
// one, which calls Rebuild.
type Queue struct {
	// OK: Rebuild ran and every sync since was given the writes in
	// between.
	OK bool
	// GVK is the owners' kind.
	GVK  schema.GVK
	objs map[Key]map[string]any
	byNS map[string]map[string]bool
	// queued: to sync at the next sync.
	queued map[Key]bool
	// at: the requeue time of an owner whose last sync wrote nothing.
	at map[Key]time.Time
}

// Reset forgets everything: the next sync is a full one.
func (q *Queue) Reset() { *q = Queue{GVK: q.GVK} }

// Rebuild starts the queue again from every owner (as listed), all
// queued.
func (q *Queue) Rebuild(owners []map[string]any) {
	*q = Queue{
		OK:     true,
		GVK:    q.GVK,
		objs:   make(map[Key]map[string]any, len(owners)),
		byNS:   map[string]map[string]bool{},
		queued: make(map[Key]bool, len(owners)),
		at:     map[Key]time.Time{},
	}
	for _, o := range owners {
		k := KeyOf(o)
		q.put(k, o)
		q.queued[k] = true
	}
}

func (q *Queue) put(k Key, obj map[string]any) {
	if obj == nil {
		if _, ok := q.objs[k]; ok {
			delete(q.objs, k)
			delete(q.byNS[k[0]], k[1])
			if len(q.byNS[k[0]]) == 0 {
				delete(q.byNS, k[0])
			}
		}
		delete(q.queued, k)
		delete(q.at, k)
		return
	}
	if q.objs[k] == nil {
		ns := q.byNS[k[0]]
		if ns == nil {
			ns = map[string]bool{}
			q.byNS[k[0]] = ns
		}
		ns[k[1]] = true
	}
	q.objs[k] = obj
}

// Update reads the owner k names (a key of the queue's kind given to
// SyncChanged) as it is now, queues it, and returns it as the queue knew
// it before (nil: unknown) and as it is (nil: gone).
func (q *Queue) Update(ctx context.Context, c cluster.Interface, k controller.Key) (old, cur map[string]any, err error) {
	key := Key{k.Namespace, k.Name}
	old = q.objs[key]
	if !k.Deleted {
		cur, err = controller.GetShared(ctx, c, q.GVK, k.Namespace, k.Name)
		if err != nil {
			if !cluster.IsNotFound(err) {
				return old, nil, fmt.Errorf("get %s %s/%s: %w", strings.ToLower(q.GVK.Kind), k.Namespace, k.Name, err)
			}
			cur = nil
		}
	}
	q.put(key, cur)
	if cur != nil {
		q.queued[key] = true
	}
	return old, cur, nil
}

// Is reports whether k is of the queue's kind.
func (q *Queue) Is(k controller.Key) bool { return k.Group == q.GVK.Group && k.Kind == q.GVK.Kind }

// Get returns the owner of that key (nil: none).
func (q *Queue) Get(k Key) map[string]any { return q.objs[k] }

// Len is how many owners there are.
func (q *Queue) Len() int { return len(q.objs) }

// InNamespace calls fn with each owner of namespace ns (in no order).
func (q *Queue) InNamespace(ns string, fn func(obj map[string]any)) {
	for name := range q.byNS[ns] {
		fn(q.objs[Key{ns, name}])
	}
}

// Add queues the owner k, if there is one.
func (q *Queue) Add(k Key) {
	if _, ok := q.objs[k]; ok {
		q.queued[k] = true
	}
}

// AddNamespace queues every owner of namespace ns.
func (q *Queue) AddNamespace(ns string) {
	for name := range q.byNS[ns] {
		q.queued[Key{ns, name}] = true
	}
}

// AddAll queues every owner.
func (q *Queue) AddAll() {
	for k := range q.objs {
		q.queued[k] = true
	}
}

// AddDirty queues what d names.
func (q *Queue) AddDirty(d Dirty) {
	if d.All {
		q.AddAll()
		return
	}
	for ns := range d.NS {
		q.AddNamespace(ns)
	}
	for k := range d.Owners {
		q.Add(k)
	}
}

// Due returns, in List order, the owners to sync at now (those queued,
// and those whose requeue time came, which are queued from then on), and
// the earliest requeue time of the others (zero: none).
func (q *Queue) Due(now time.Time) (todo []map[string]any, next time.Time) {
	for k, at := range q.at {
		if !now.Before(at) {
			delete(q.at, k)
			q.queued[k] = true
		} else if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	keys := make([]Key, 0, len(q.queued))
	for k := range q.queued {
		keys = append(keys, k)
	}
	SortKeys(keys)
	todo = make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		todo = append(todo, q.objs[k])
	}
	return todo, next
}

// Synced records the outcome of owner's sync (it makes the queue a
// Recorder): an owner that wrote (or failed) stays queued; one that wrote
// nothing leaves the queue until a write concerns it or its requeue time
// (zero: none) comes.
func (q *Queue) Synced(owner map[string]any, wrote bool, requeue time.Time) {
	if !q.OK {
		return
	}
	k := KeyOf(owner)
	if _, ok := q.objs[k]; !ok {
		return
	}
	if wrote {
		q.queued[k] = true
		delete(q.at, k)
		return
	}
	delete(q.queued, k)
	if requeue.IsZero() {
		delete(q.at, k)
	} else {
		q.at[k] = requeue
	}
}

// SortKeys orders keys as List orders objects: by namespace, then name.
func SortKeys(keys []Key) {
	slices.SortFunc(keys, func(a, b Key) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
}

// ListShared lists every object of gvk for a full sync; the objects may be
// shared with other controllers and must not be changed.
func ListShared(ctx context.Context, c cluster.Interface, gvk schema.GVK) ([]map[string]any, error) {
	l, err := c.List(ctx, gvk)
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", strings.ToLower(gvk.Kind), err)
	}
	return l.Items, nil
}
