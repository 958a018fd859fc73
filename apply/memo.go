package apply

import (
	"context"
	"hash/maphash"
	"math"
	"sync"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

// Plans that cost what changed.
//
// A Planner with memory (WithMemory) remembers, for every object of its
// last plan, the digest of the object it was asked to apply, the uid and
// resourceVersion of the live object it planned against, and the change it
// computed. In the next plan, an object whose manifest has the same digest
// and whose live object has the same uid and resourceVersion (or is still
// absent) gets the remembered change without being validated, merged or
// predicted again: a sync loop that re-plans an unchanged directory pays
// for reading the manifests and the live objects, not for planning them.

// WithMemory makes p remember its plans, as described above, and returns
// p. The remembered changes share their maps (Live, Merged, Patch) with
// the plans that computed them: a caller must not modify them. A Planner
// with memory runs one Plan at a time.
//
// The memory is keyed by what decides a change: the manifest's digest (a
// 64-bit hash of its content, seeded at random per process), the kind's
// resolution (resource and schema; custom resources whose definition's
// schema the plan checks them against, or whose definition is in the
// input, are never remembered), the live object's uid and
// resourceVersion, and the Planner's options, which do not change. It
// holds the objects of the last plan only.
func (p *Planner) WithMemory() *Planner {
	if p.memo == nil {
		p.memo = &planMemo{}
	}
	return p
}

// planMemo is a Planner's memory.
type planMemo struct {
	mu      sync.Mutex
	entries map[objectKey]*memoEntry
	round   uint64 // the number of the last update
}

type memoEntry struct {
	digest  uint64
	res     cluster.Resource
	typ     *schema.Type
	uid, rv string
	pl      plan
	change  Change
	round   uint64 // the update that last used the entry
}

// known reports whether the memory holds the object of it, as it is: its
// validation can be skipped, for it passed before. It computes it's
// digest; it is called concurrently for different items, while the memory
// does not change.
func (m *planMemo) known(it *item) bool {
	if m == nil {
		return false
	}
	m.digest(it)
	e := m.entries[it.key()]
	return e != nil && m.matches(e, it)
}

func (m *planMemo) digest(it *item) {
	if !it.digested {
		it.digest, it.digestOK = digestValue(it.config)
		it.digested = true
	}
}

func (m *planMemo) matches(e *memoEntry, it *item) bool {
	return it.digestOK && it.crd == nil && e.digest == it.digest && e.typ == it.typ && sameResource(e.res, it.res)
}

func sameResource(a, b cluster.Resource) bool {
	return a.GVK == b.GVK && a.Plural == b.Plural && a.Namespaced == b.Namespaced &&
		a.Status == b.Status && a.Strategic == b.Strategic
}

// liveIdentity returns the uid and resourceVersion of a live object ("",
// "" for none).
func liveIdentity(live map[string]any) (uid, rv string) {
	if live == nil {
		return "", ""
	}
	md := objref.Metadata(live)
	uid, _ = md["uid"].(string)
	rv, _ = md["resourceVersion"].(string)
	return uid, rv
}

// readAndPlanMemo is readAndPlan that takes the plans of the objects the
// memory holds, unchanged and against the same live objects, from it:
// reused[i] reports those, whose Change is the remembered one.
func (r *run) readAndPlanMemo(ctx context.Context, c cluster.Reader, items []*item, workers int, m *planMemo) (plans []plan, reused []bool) {
	snap := readLive(ctx, c, items, workers)
	plans = make([]plan, len(items))
	reused = make([]bool, len(items))
	var todo []*item
	var todoLive []map[string]any
	var todoAt []int
	for i, it := range items {
		if err := snap.err[i]; err != nil {
			plans[i] = plan{it: it, err: err}
			continue
		}
		m.digest(it)
		if e := m.entries[it.key()]; e != nil && m.matches(e, it) && e.live(snap.live[i]) {
			pl := e.pl
			pl.it = it
			plans[i], reused[i] = pl, true
			continue
		}
		todo = append(todo, it)
		todoLive = append(todoLive, snap.live[i])
		todoAt = append(todoAt, i)
	}
	for j, pl := range r.plans(todo, todoLive) {
		plans[todoAt[j]] = pl
	}
	return plans, reused
}

// live reports whether live is the object the entry was planned against.
func (e *memoEntry) live(live map[string]any) bool {
	uid, rv := liveIdentity(live)
	if (live == nil) != (e.pl.live == nil) {
		return false
	}
	return uid == e.uid && rv == e.rv && (live == nil || rv != "")
}

// remembered returns the remembered change of a reused plan, with the
// source of the object as given this time.
func (m *planMemo) remembered(it *item) Change {
	c := m.entries[it.key()].change
	c.Source = it.src
	return c
}

// update makes the memory hold the plans and changes of one Plan, and
// forget the objects that were not in it. Entries that were reused stay
// as they are.
//
// Custom resources checked against their definition's schema (crSchemas)
// are not remembered: the definition can change while they do not.
func (m *planMemo) update(plans []plan, reused []bool, changes []*Change, crSchemas map[schema.GVK]map[string]any) {
	if m.entries == nil {
		m.entries = make(map[objectKey]*memoEntry, len(plans))
	}
	m.round++
	for i, pl := range plans {
		it := pl.it
		if pl.err != nil || changes[i] == nil || crSchemas[it.ref.GVK] != nil {
			continue
		}
		k := it.key()
		if reused != nil && reused[i] {
			m.entries[k].round = m.round
			continue
		}
		if !it.digested || !it.digestOK || it.crd != nil {
			continue
		}
		uid, rv := liveIdentity(pl.live)
		if pl.live != nil && rv == "" {
			continue
		}
		e := &memoEntry{digest: it.digest, res: it.res, typ: it.typ, uid: uid, rv: rv, pl: pl, change: *changes[i], round: m.round}
		e.pl.it = nil
		m.entries[k] = e
	}
	for k, e := range m.entries {
		if e.round != m.round {
			delete(m.entries, k)
		}
	}
}

// seed keys the digests of this process.
var seed = maphash.MakeSeed()

// digestValue returns a 64-bit digest of a JSON value (see package value):
// equal values have equal digests, the members of an object counted in any
// order. ok is false for a value of another Go type.
func digestValue(v any) (d uint64, ok bool) {
	switch x := v.(type) {
	case nil:
		return 0x9e3779b97f4a7c15, true
	case bool:
		if x {
			return mix(1, 0x51), true
		}
		return mix(0, 0x51), true
	case string:
		return mix(maphash.String(seed, x), 0x52), true
	case int64:
		return mix(uint64(x), 0x53), true
	case float64:
		return mix(math.Float64bits(x), 0x54), true
	case map[string]any:
		var sum uint64
		for k, e := range x {
			de, ok := digestValue(e)
			if !ok {
				return 0, false
			}
			sum += mix(maphash.String(seed, k), de)
		}
		return mix(sum, 0x55+uint64(len(x))<<8), true
	case []any:
		h := uint64(0x56)
		for _, e := range x {
			de, ok := digestValue(e)
			if !ok {
				return 0, false
			}
			h = mix(h, de)
		}
		return mix(h, 0x57+uint64(len(x))<<8), true
	}
	return 0, false
}

// mix combines two 64-bit values into one (splitmix64's finalizer over
// their combination).
func mix(a, b uint64) uint64 {
	z := a ^ (b*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
