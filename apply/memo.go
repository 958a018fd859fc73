package apply

import (
	"errors"
	"hash/maphash"
	"math"
	"sync"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

// Plans that cost what changed.
//
// A Planner with memory (WithMemory) remembers, for every object of its
// last plan, the digest of the object it was asked to apply, the object as
// it resolved it (kind, namespace, schema), the uid and resourceVersion of
// the live object it planned against, and the change it computed. In the
// next plan, an object whose digest is remembered is not resolved or
// validated again; when its live object has the same uid and
// resourceVersion (or is still absent), it gets the remembered change
// without being merged or predicted again. A sync loop that re-plans an
// unchanged directory pays for reading the manifests and the live objects
// and for one lookup per object, not for planning them.
//
// The digest of an object read from a manifest is manifest.Object.Digest,
// computed from the bytes it was read from; of an object built in code
// (Digest 0), a digest of its content (digestValue).

// WithMemory makes p remember its plans, as described above, and returns
// p. The remembered changes share their maps (Live, Merged, Patch) with
// the plans that computed them: a caller must not modify them. A Planner
// with memory runs one Plan at a time.
//
// The memory is keyed by what decides a change: the object's digest
// (manifest.Object.Digest when it is set: whoever modifies a read object
// must clear it; otherwise a 64-bit hash of its content, seeded at random
// per process), the kind's resolution (resource and schema; custom
// resources whose definition's schema the plan checks them against, or
// whose definition is in the input, are never remembered), the live
// object's uid and resourceVersion, and the Planner's options, which do
// not change. It holds the objects of the last plan only.
func (p *Planner) WithMemory() *Planner {
	if p.memo == nil {
		p.memo = &planMemo{}
	}
	return p
}

// planMemo is a Planner's memory.
type planMemo struct {
	mu sync.Mutex
	// byDigest are the objects of the last plan by digest; byKey the
	// same by object, to find an object given twice.
	byDigest map[uint64]*memoEntry
	byKey    map[objectKey]*memoEntry
	// byPos are the entries of the last plan by position in its input
	// (nil where it had no entry), looked at first: an unchanged input
	// has its objects where they were.
	byPos []*memoEntry
	// spare is the byPos of the plan before the last, reused: Plan fills
	// it with the entries its objects took (memoRound.positions), update
	// with the ones it makes.
	spare []*memoEntry
	kinds map[schema.GVK]*memoKind
	round uint64 // the number of the current (or last) Plan
}

type memoEntry struct {
	// The fields an unchanged object reads come first, in one cache
	// line.
	//
	// taken is the round in which an object of the input took the
	// entry; an entry not taken in a round is forgotten after it.
	taken  uint64
	digest uint64 // it.digest
	kind   *memoKind
	// slot is where the live object was found in snap, when the plan
	// read it from a Snapshot (in the version asked for).
	snap *Snapshot
	slot *snapSlot
	// change is the remembered change, in a block of the changes of one
	// Plan in input order (copied out in order, as they are read).
	change *Change
	// absent is true when the plan was made against no live object;
	// otherwise uid and rv are the live object's.
	absent  bool
	uid, rv string
	// it is the object as it was resolved: its kind, schema and config,
	// with the position and source it had (it.entry is the entry).
	it item
	pl plan
}

// memoKind is a kind as the memory's entries resolved it.
type memoKind struct {
	gvk schema.GVK
	res cluster.Resource
	typ *schema.Type
	// checked is the last round that resolved the kind again; ok whether
	// it resolved the same then.
	checked uint64
	ok      bool
}

// errRetry is what prepareKnown answers when the memory cannot settle the
// input as the plan without it would (an object given twice): the Planner
// prepares the input again without it.
var errRetry = errors.New("apply: plan again without the memory")

// memoRound is one Plan's use of the memory.
type memoRound struct {
	m      *planMemo
	round  uint64
	mapper cluster.Mapper
	// digestOnly computes the digests of the input and takes nothing
	// (the input prepared again after errRetry).
	digestOnly bool
}

// begin starts a round of the memory.
func (m *planMemo) begin(mapper cluster.Mapper) *memoRound {
	m.round++
	return &memoRound{m: m, round: m.round, mapper: mapper}
}

// take returns the remembered item of o, the idx-th object of the input
// read from src, when the memory holds one whose kind resolves as it
// did; nil otherwise. The item is the entry's own when it was at the
// same position and source, a copy otherwise (in slab). d and ok are o's
// digest, computed either way.
func (r *memoRound) take(o manifest.Object, idx int, slab *itemSlab) (it *item, d uint64, ok bool) {
	d, ok = digestOf(o)
	if !ok || r.digestOnly {
		return nil, d, ok
	}
	var e *memoEntry
	if idx < len(r.m.byPos) && r.m.byPos[idx] != nil && r.m.byPos[idx].digest == d {
		e = r.m.byPos[idx]
	} else {
		e = r.m.byDigest[d]
	}
	if e == nil || e.taken == r.round || !r.sameKind(e.kind) {
		return nil, d, ok
	}
	e.taken = r.round
	if e.it.idx == idx && e.it.src == o.Source {
		return &e.it, d, ok
	}
	it = slab.next()
	*it = e.it
	it.idx, it.src = idx, o.Source
	return it, d, ok
}

// positions returns a slice of n nil entries, for the entries of this
// round by position (see planMemo.update).
func (r *memoRound) positions(n int) []*memoEntry {
	m := r.m
	if cap(m.spare) < n {
		m.spare = make([]*memoEntry, n)
	}
	m.spare = m.spare[:n]
	clear(m.spare)
	return m.spare
}

// sameKind reports whether the kind resolves as it did.
func (r *memoRound) sameKind(k *memoKind) bool {
	if k.checked != r.round {
		gvk := k.gvk
		res, err := r.mapper.ResourceFor(gvk)
		k.ok = err == nil && r.mapper.Schema(gvk) == k.typ && sameResource(res, k.res)
		k.checked = r.round
	}
	return k.ok
}

// itemSlab allocates items in chunks: small ones first, so that the few
// objects a remembered plan does not hold cost few items, then up to
// 1024 items at a time.
type itemSlab struct {
	free []item
	left int // items still to come, at most
	made int // items allocated so far
}

func (s *itemSlab) next() *item {
	if len(s.free) == 0 {
		n := max(1, min(s.left, 1024, max(16, s.made)))
		s.free = make([]item, n)
		s.made += n
	}
	it := &s.free[0]
	s.free = s.free[1:]
	s.left--
	return it
}

// takenKey reports whether an object of the input took the entry of the
// object k this round.
func (r *memoRound) takenKey(k objectKey) bool {
	if r.digestOnly {
		return false
	}
	e := r.m.byKey[k]
	return e != nil && e.taken == r.round
}

func sameResource(a, b cluster.Resource) bool {
	return a.GVK == b.GVK && a.Plural == b.Plural && a.Namespaced == b.Namespaced &&
		a.Status == b.Status && a.Strategic == b.Strategic
}

// digestOf returns the digest of an object of the input: its manifest
// digest, or a digest of its content.
func digestOf(o manifest.Object) (uint64, bool) {
	if o.Digest != 0 {
		return mix(o.Digest, 0x5d), true
	}
	return digestValue(o.Obj)
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

// reusable reports whether the remembered plan of it holds for live,
// found in slot (nil when it was not read from a Snapshot): the live
// object is the one it was planned against (same uid and
// resourceVersion, or absent both times), and no custom resource schema
// of this plan applies to its kind.
func (it *item) reusable(live map[string]any, slot *snapSlot, crSchemas map[schema.GVK]map[string]any) bool {
	e := it.entry
	if e == nil || (live == nil) != e.absent || (len(crSchemas) > 0 && crSchemas[it.ref.GVK] != nil) {
		return false
	}
	if live == nil {
		return true
	}
	var uid, rv string
	if slot != nil {
		uid, rv = slot.uid, slot.rv
	} else {
		uid, rv = liveIdentity(live)
	}
	return rv != "" && uid == e.uid && rv == e.rv
}

// update makes the memory hold the plans and changes of one Plan (see
// Planner.Plan: plans[i] is the plan of items[i] computed in it, nil for
// those reused; changes in input order; pos the entries reused, by
// position, from memoRound.positions), and forget the objects that were
// not in it. Entries that were reused stay as they are.
//
// Custom resources checked against their definition's schema (crSchemas)
// are not remembered: the definition can change while they do not.
func (m *planMemo) update(items []*item, plans []*plan, changes []Change, pos []*memoEntry, snap *snapshot, crSchemas map[schema.GVK]map[string]any) {
	if m.byDigest == nil {
		m.byDigest = make(map[uint64]*memoEntry, len(plans))
		m.byKey = make(map[objectKey]*memoEntry, len(plans))
		m.kinds = map[schema.GVK]*memoKind{}
	}
	remember := func(it *item, pl *plan) bool {
		if pl.err != nil || crSchemas[it.ref.GVK] != nil || !it.digestOK || it.crd != nil {
			return false
		}
		return pl.live == nil || objref.ResourceVersion(pl.live) != ""
	}
	n, kept := 0, 0
	for i, it := range items {
		switch {
		case plans[i] == nil:
			kept++
		case remember(it, plans[i]):
			n++
		}
	}
	// The new entries and their changes in one block each, in input
	// order.
	slab := make([]memoEntry, n)
	chg := make([]Change, n)
	m.byPos, m.spare = pos, m.byPos
	for i, it := range items {
		pl := plans[i]
		if pl == nil || !remember(it, pl) {
			continue
		}
		e, c := &slab[0], &chg[0]
		slab, chg = slab[1:], chg[1:]
		*c = changes[it.idx]
		uid, rv := liveIdentity(pl.live)
		*e = memoEntry{it: *it, digest: it.digest, kind: m.kindOf(it), absent: pl.live == nil, uid: uid, rv: rv, pl: *pl, change: c, taken: m.round}
		e.it.entry = e
		e.pl.it = nil
		if snap.from != nil && snap.slots[i] != nil && !snap.other[i] {
			e.snap, e.slot = snap.from, snap.slots[i]
		}
		k := it.key()
		if old := m.byKey[k]; old != nil && old.taken != m.round && m.byDigest[old.it.digest] == old {
			// The object's previous version, forgotten now rather than
			// by a sweep of the memory.
			delete(m.byDigest, old.it.digest)
		}
		m.byDigest[it.digest] = e
		m.byKey[k] = e
		m.byPos[it.idx] = e
		kept++
	}
	if kept == len(m.byDigest) {
		return // every entry was taken or made in this round
	}
	for d, e := range m.byDigest {
		if e.taken != m.round {
			delete(m.byDigest, d)
			if k := e.it.key(); m.byKey[k] == e {
				delete(m.byKey, k)
			}
		}
	}
}

// kindOf returns the memoKind of the kind as it resolved.
func (m *planMemo) kindOf(it *item) *memoKind {
	k := m.kinds[it.ref.GVK]
	if k == nil || k.typ != it.typ || !sameResource(k.res, *it.res) {
		k = &memoKind{gvk: it.ref.GVK, res: *it.res, typ: it.typ, checked: m.round, ok: true}
		m.kinds[it.ref.GVK] = k
	}
	return k
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
