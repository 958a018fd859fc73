package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// listCache keeps the decoded objects of the kinds the controllers list,
// from one round to the next, so that a List costs no decoding: it is
// valid while the store's revision is the one it has seen, and follows the
// writes the controllers make through it (each moves the revision by one
// per object it changes; any write it cannot account for empties it).
//
// The objects it hands out are shared between the controllers and the
// rounds: controllers must not change listed objects (they copy the one
// they write). They come without metadata.managedFields (see
// dropManagedFields).
type listCache struct {
	// st is the store the cache is of.
	st    *local.Store
	rev   uint64
	kinds map[schema.GVK]*kindCache
	// handed is, when checkShared is set, what List handed out, as it was.
	handed []handedOut
	// feed is the objects written since the cache began following the
	// store (see feed).
	feed feed
	// interner shares the parts of the objects read that are the same in
	// many (see sharedPaths).
	interner *value.Interner
}

// sharedPaths are where the objects the cache holds share equal values
// (see local.CommonPaths): shared values take their memory once (about half
// of a pod's); like every object the cache hands out, nobody changes them.
var sharedPaths = local.CommonPaths

// maxShared bounds the values the interner remembers.
const maxShared = 4096

// share returns obj, an object a write returned, with the values it has
// in common with the cached objects shared (see sharedPaths).
func (lc *listCache) share(obj cluster.Object) cluster.Object {
	if lc.interner == nil {
		lc.interner = value.NewInterner(maxShared, sharedPaths...)
	}
	return lc.interner.Share(obj)
}

func (lc *listCache) readOptions() local.ReadOptions {
	if lc.interner == nil {
		lc.interner = value.NewInterner(maxShared, sharedPaths...)
	}
	return local.ReadOptions{WithoutManagedFields: true, Interner: lc.interner}
}

// feed is the objects the controllers wrote, in the order of the writes,
// while the cache followed every write (from one epoch to the next): what
// the runner hands the incremental controllers.
type feed struct {
	// epoch moves whenever the feed lost track of the writes.
	epoch int
	// base is the position of keys[0] in the epoch.
	base int
	keys []controller.Key
}

// end is the position after the last key.
func (f *feed) end() int { return f.base + len(f.keys) }

// since returns the keys written from position pos on, each once.
func (f *feed) since(pos int) []controller.Key {
	keys := f.keys[pos-f.base:]
	seen := make(map[controller.Key]int, len(keys))
	out := make([]controller.Key, 0, len(keys))
	for _, k := range keys {
		d := k.Deleted
		k.Deleted = false
		if i, ok := seen[k]; ok {
			out[i].Deleted = d
			continue
		}
		seen[k] = len(out)
		k.Deleted = d
		out = append(out, k)
	}
	return out
}

// trim drops the keys before position pos.
func (f *feed) trim(pos int) {
	n := pos - f.base
	if n <= 0 || n < len(f.keys)/2 {
		return
	}
	f.keys = append(f.keys[:0:0], f.keys[n:]...)
	f.base = pos
}

// reset forgets the cached kinds and starts a new epoch of the feed: after
// writes the cache cannot account for.
func (lc *listCache) reset() {
	lc.kinds = nil
	lc.feed = feed{epoch: lc.feed.epoch + 1}
}

// checkShared makes the cache verify, at the start of every round, that
// no controller changed an object it listed (tests set it).
var checkShared = false

type handedOut struct {
	obj cluster.Object
	enc []byte
}

// verify reports an object handed out by List that was changed since.
func (lc *listCache) verify() error {
	defer func() { lc.handed = lc.handed[:0] }()
	for _, h := range lc.handed {
		enc, err := value.Encode(h.obj)
		if err != nil {
			return err
		}
		if string(enc) != string(h.enc) {
			return fmt.Errorf("sim: a controller changed a listed object: was %s, now %s", h.enc, enc)
		}
	}
	return nil
}

func (lc *listCache) hand(items []cluster.Object) {
	if !checkShared {
		return
	}
	for _, obj := range items {
		enc, err := value.Encode(obj)
		if err != nil {
			panic(err)
		}
		lc.handed = append(lc.handed, handedOut{obj, enc})
	}
}

// nsName is an object's place in a kind's list.
type nsName struct{ namespace, name string }

func (k nsName) compare(o nsName) int {
	if c := strings.Compare(k.namespace, o.namespace); c != 0 {
		return c
	}
	return strings.Compare(k.name, o.name)
}

type cacheEntry struct {
	key nsName
	obj cluster.Object // nil: removed
}

// kindCache is the objects of one kind, in List order once tidy.
type kindCache struct {
	entries []cacheEntry
	index   map[nsName]int
	// stale objects are read again before the next List.
	stale map[nsName]bool
	// untidy: entries holds removed or unsorted entries; the first sorted
	// were in order at the last tidy.
	untidy bool
	sorted int
	// byUID, once built (for Events), finds the objects by the uid their
	// involvedObject names.
	byUID map[string]map[nsName]bool
}

// involvedUID is what byUID indexes an Event by.
func involvedUID(obj cluster.Object) string {
	io, _ := obj["involvedObject"].(map[string]any)
	uid, _ := io["uid"].(string)
	return uid
}

func (kc *kindCache) unindex(k nsName, obj cluster.Object) {
	if kc.byUID == nil || obj == nil {
		return
	}
	uid := involvedUID(obj)
	delete(kc.byUID[uid], k)
	if len(kc.byUID[uid]) == 0 {
		delete(kc.byUID, uid)
	}
}

func (kc *kindCache) reindex(k nsName, obj cluster.Object) {
	if kc.byUID == nil || obj == nil {
		return
	}
	uid := involvedUID(obj)
	m := kc.byUID[uid]
	if m == nil {
		m = map[nsName]bool{}
		kc.byUID[uid] = m
	}
	m[k] = true
}

func keyOf(obj cluster.Object) nsName {
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	return nsName{ns, name}
}

func (kc *kindCache) set(k nsName, obj cluster.Object) {
	if i, ok := kc.index[k]; ok {
		kc.unindex(k, kc.entries[i].obj)
		kc.reindex(k, obj)
		kc.entries[i].obj = obj
		if obj == nil {
			kc.untidy = true
		}
		return
	}
	if obj == nil {
		return
	}
	kc.reindex(k, obj)
	kc.index[k] = len(kc.entries)
	if n := len(kc.entries); n > 0 && kc.entries[n-1].key.compare(k) >= 0 {
		kc.untidy = true
	}
	kc.entries = append(kc.entries, cacheEntry{key: k, obj: obj})
}

func (kc *kindCache) tidy() {
	if !kc.untidy {
		return
	}
	// The entries up to sorted were in order at the last tidy: only those
	// appended since are sorted, then merged in.
	kept := kc.entries[:0]
	head := 0
	for i, e := range kc.entries {
		if e.obj != nil {
			kept = append(kept, e)
			if i < kc.sorted {
				head++
			}
		}
	}
	clear(kc.entries[len(kept):])
	cmp := func(a, b cacheEntry) int { return a.key.compare(b.key) }
	tail := kept[head:]
	slices.SortFunc(tail, cmp)
	if head > 0 && len(tail) > 0 && cmp(kept[head-1], tail[0]) > 0 {
		merged := make([]cacheEntry, 0, len(kept))
		a, b := kept[:head], tail
		for len(a) > 0 && len(b) > 0 {
			if cmp(a[0], b[0]) <= 0 {
				merged, a = append(merged, a[0]), a[1:]
			} else {
				merged, b = append(merged, b[0]), b[1:]
			}
		}
		merged = append(append(merged, a...), b...)
		kept = merged
	}
	kc.entries = kept
	clear(kc.index)
	for i, e := range kept {
		kc.index[e.key] = i
	}
	kc.untidy = false
	kc.sorted = len(kept)
}

// begin starts a round on c, the interface of a batch of st, and
// returns the interface the controllers get.
func (lc *listCache) begin(st *local.Store, c cluster.Interface) cluster.Interface {
	rev, ok := local.BatchRevision(c)
	if !ok {
		lc.reset()
		return c
	}
	if rev != lc.rev || st != lc.st {
		lc.reset()
		lc.rev, lc.st = rev, st
	}
	return &cachedCluster{Interface: c, lc: lc}
}

// cachedCluster serves option-less Lists from a listCache and accounts
// for the writes made through it.
type cachedCluster struct {
	cluster.Interface
	lc *listCache
}

var eventGVK = schema.GVK{Version: "v1", Kind: "Event"}

// EventsAbout returns the Events of namespace named after the object name
// whose involvedObject.uid is uid (see event.Index): from the cache's index
// of Events by involvedObject.uid when the cache holds the Events, else
// from the store's range of keys of names that start with "<name>.",
// without their managed fields (as the cache keeps objects), in name
// order either way.
func (c *cachedCluster) EventsAbout(ctx context.Context, namespace, name, uid string) ([]cluster.Object, error) {
	prefix := name + "."
	if c.lc.kinds[eventGVK] == nil {
		l, ok, err := local.BatchList(ctx, c.Interface, eventGVK, local.ReadOptions{Namespace: namespace, NamePrefix: prefix, WithoutManagedFields: true})
		if err != nil {
			return nil, err
		}
		if ok {
			out := l.Items[:0]
			for _, e := range l.Items {
				if involvedUID(e) == uid {
					out = append(out, e)
				}
			}
			return out, nil
		}
	}
	kc, err := c.fresh(ctx, eventGVK)
	if err != nil || kc == nil {
		l, err := c.List(ctx, eventGVK)
		if err != nil {
			return nil, err
		}
		var out []cluster.Object
		for _, e := range l.Items {
			if k := keyOf(e); k.namespace == namespace && strings.HasPrefix(k.name, prefix) && involvedUID(e) == uid {
				out = append(out, e)
			}
		}
		return out, nil
	}
	if kc.byUID == nil {
		kc.byUID = map[string]map[nsName]bool{}
		for _, e := range kc.entries {
			kc.reindex(e.key, e.obj)
		}
	}
	var out []cluster.Object
	for k := range kc.byUID[uid] {
		if k.namespace != namespace || !strings.HasPrefix(k.name, prefix) {
			continue
		}
		if i, ok := kc.index[k]; ok && kc.entries[i].obj != nil {
			out = append(out, kc.entries[i].obj)
		}
	}
	// In a fixed order, so that the same state gives the same writes.
	slices.SortFunc(out, func(a, b cluster.Object) int { return keyOf(a).compare(keyOf(b)) })
	c.lc.hand(out)
	return out, nil
}

// EventNames calls fn with the namespace and name of every Event (see
// event.Index), from the store's keys.
func (c *cachedCluster) EventNames(ctx context.Context, fn func(namespace, name string) error) error {
	ok, err := local.BatchNames(ctx, c.Interface, eventGVK, local.ReadOptions{}, fn)
	if ok {
		return err
	}
	return listNames(ctx, c, fn)
}

// GetMeta reads the store's meta bucket in the batch (see
// local.BatchGetMeta): what a controller keeps with the cluster.
func (c *cachedCluster) GetMeta(ctx context.Context, key string) ([]byte, error) {
	v, ok, err := local.BatchGetMeta(ctx, c.Interface, key)
	if !ok {
		return nil, errNoMeta
	}
	return v, err
}

// PutMeta writes the store's meta bucket in the batch (see
// local.BatchPutMeta).
func (c *cachedCluster) PutMeta(ctx context.Context, key string, value []byte) error {
	ok, err := local.BatchPutMeta(ctx, c.Interface, key, value)
	if !ok {
		return errNoMeta
	}
	return err
}

var errNoMeta = errors.New("sim: the cluster keeps no meta data")

// listNames calls fn with the namespace and name of every Event, from a
// List.
func listNames(ctx context.Context, c cluster.Interface, fn func(namespace, name string) error) error {
	l, err := c.List(ctx, eventGVK)
	if err != nil {
		return err
	}
	for _, e := range l.Items {
		k := keyOf(e)
		if err := fn(k.namespace, k.name); err != nil {
			return err
		}
	}
	return nil
}

// GetShared returns an object of a cached kind without a copy (see
// controller.SharedGetter); it caches the kind first.
func (c *cachedCluster) GetShared(ctx context.Context, gvk schema.GVK, namespace, name string) (cluster.Object, error) {
	kc, err := c.fresh(ctx, gvk)
	if err != nil {
		return nil, err
	}
	if kc == nil {
		return c.Interface.Get(ctx, gvk, namespace, name)
	}
	if i, ok := kc.index[nsName{namespace, name}]; ok && kc.entries[i].obj != nil {
		obj := kc.entries[i].obj
		c.lc.hand([]cluster.Object{obj})
		return obj, nil
	}
	// Not in the cache: gone (the store says so in its words).
	return c.Interface.Get(ctx, gvk, namespace, name)
}

// fresh returns the cache of a kind with its stale objects read again;
// nil when the kind is not cached yet.
func (c *cachedCluster) fresh(ctx context.Context, gvk schema.GVK) (*kindCache, error) {
	kc := c.lc.kinds[gvk]
	if kc == nil {
		if _, err := c.List(ctx, gvk); err != nil {
			return nil, err
		}
		if kc = c.lc.kinds[gvk]; kc == nil {
			return nil, nil
		}
	}
	for k := range kc.stale {
		obj, err := c.getLean(ctx, gvk, k.namespace, k.name)
		switch {
		case err == nil:
			kc.set(k, obj)
		case cluster.IsNotFound(err):
			kc.set(k, nil)
		default:
			return nil, err
		}
	}
	clear(kc.stale)
	return kc, nil
}

func (c *cachedCluster) List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	if len(opts) > 0 {
		return c.Interface.List(ctx, gvk, opts...)
	}
	lc := c.lc
	kc := lc.kinds[gvk]
	if kc == nil {
		l, err := c.listLean(ctx, gvk)
		if err != nil {
			return nil, err
		}
		kc = &kindCache{entries: make([]cacheEntry, len(l.Items)), index: make(map[nsName]int, len(l.Items))}
		for i, obj := range l.Items {
			k := keyOf(obj)
			kc.entries[i] = cacheEntry{key: k, obj: obj}
			kc.index[k] = i
		}
		if lc.kinds == nil {
			lc.kinds = map[schema.GVK]*kindCache{}
		}
		lc.kinds[gvk] = kc
		// The caller gets the list's own slice; the objects are shared.
		lc.hand(l.Items)
		return l, nil
	}
	for k := range kc.stale {
		obj, err := c.getLean(ctx, gvk, k.namespace, k.name)
		switch {
		case err == nil:
			kc.set(k, obj)
		case cluster.IsNotFound(err):
			kc.set(k, nil)
		default:
			return nil, err
		}
	}
	clear(kc.stale)
	kc.tidy()
	out := &cluster.List{Items: make([]cluster.Object, len(kc.entries)), ResourceVersion: strconv.FormatUint(lc.rev, 10)}
	for i, e := range kc.entries {
		out.Items[i] = e.obj
	}
	lc.hand(out.Items)
	return out, nil
}

// listLean lists a kind from the store without the objects' managed
// fields (not even decoded: a list of pods costs a third less).
func (c *cachedCluster) listLean(ctx context.Context, gvk schema.GVK) (*cluster.List, error) {
	l, ok, err := local.BatchList(ctx, c.Interface, gvk, c.lc.readOptions())
	if ok {
		return l, err
	}
	if l, err = c.Interface.List(ctx, gvk); err != nil {
		return nil, err
	}
	for _, obj := range l.Items {
		dropManagedFields(obj)
	}
	return l, nil
}

// getLean reads an object from the store without its managed fields.
func (c *cachedCluster) getLean(ctx context.Context, gvk schema.GVK, namespace, name string) (cluster.Object, error) {
	obj, ok, err := local.BatchGet(ctx, c.Interface, gvk, namespace, name, c.lc.readOptions())
	if ok {
		return obj, err
	}
	if obj, err = c.Interface.Get(ctx, gvk, namespace, name); err != nil {
		return nil, err
	}
	dropManagedFields(obj)
	return obj, nil
}

// wrote accounts for one write to the object k of a kind (kind "": not
// known) whose result, when known, is obj (which the store may still have
// changed no further: its resourceVersion must be the revision's).
func (c *cachedCluster) wrote(group, kind string, k nsName, obj cluster.Object, known bool) {
	lc := c.lc
	rev, ok := local.BatchRevision(c.Interface)
	switch {
	case !ok:
		lc.reset()
		return
	case rev == lc.rev:
		return // nothing changed
	}
	// The batch tells which objects changed (several for a cascading
	// deletion).
	changes, ok := local.BatchChanges(c.Interface, lc.rev)
	if !ok {
		lc.reset()
		lc.rev = rev
		return
	}
	for _, ch := range changes {
		lc.feed.keys = append(lc.feed.keys, controller.Key{Group: ch.Group, Kind: ch.Kind, Namespace: ch.Namespace, Name: ch.Name, Deleted: ch.Deleted})
	}
	switch {
	case lc.kinds == nil:
		lc.rev = rev
		return
	case rev != lc.rev+1 || kind == "":
		// Several objects, or one the request does not name.
		for _, ch := range changes {
			lc.staleAll(ch.Group, ch.Kind, nsName{ch.Namespace, ch.Name})
		}
		lc.rev = rev
		return
	}
	lc.rev = rev
	if known && obj != nil {
		md, _ := obj["metadata"].(map[string]any)
		if rv, _ := md["resourceVersion"].(string); rv != strconv.FormatUint(rev, 10) {
			known = false
		}
	}
	if known {
		k = keyOf(obj)
		// An update that removed the last finalizer of an object being
		// deleted returns it as it went: the cache must read it again.
		if md, _ := obj["metadata"].(map[string]any); md["deletionTimestamp"] != nil {
			if fs, _ := md["finalizers"].([]any); len(fs) == 0 {
				known = false
			}
		}
	}
	for gvk, kc := range lc.kinds {
		if gvk.Group != group || gvk.Kind != kind {
			continue
		}
		if k.namespace == "" && !known {
			// Written without a namespace: which object changed may be
			// the one of the request's default namespace.
			delete(lc.kinds, gvk)
			continue
		}
		if !known || obj["apiVersion"] != gvk.APIVersion() {
			if kc.stale == nil {
				kc.stale = map[nsName]bool{}
			}
			kc.stale[k] = true
			continue
		}
		delete(kc.stale, k)
		// The caller has obj too: it must not change it either (nor the
		// copy the cache keeps, which shares all but the metadata).
		kept := lc.share(withoutManagedFields(obj))
		kc.set(k, kept)
		lc.hand([]cluster.Object{kept})
	}
}

// staleAll marks the object k of a kind stale in the cache of every
// version of the kind.
func (lc *listCache) staleAll(group, kind string, k nsName) {
	for gvk, kc := range lc.kinds {
		if gvk.Group != group || gvk.Kind != kind {
			continue
		}
		if kc.stale == nil {
			kc.stale = map[nsName]bool{}
		}
		kc.stale[k] = true
	}
}

func (c *cachedCluster) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	out, err := c.Interface.Create(ctx, obj, opts...)
	gvk := gvkOf(obj)
	switch {
	case gvk.Group == "" && gvk.Kind == "Binding":
		// Binding a pod changes the pod.
		c.wrote("", "Pod", keyOf(obj), nil, false)
	case err != nil && keyOf(obj).name == "":
		c.wrote("", "", nsName{}, nil, false)
	default:
		c.wrote(gvk.Group, gvk.Kind, keyOf(obj), out, err == nil)
	}
	return out, err
}

func (c *cachedCluster) Update(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	out, err := c.Interface.Update(ctx, obj, opts...)
	gvk := gvkOf(obj)
	c.wrote(gvk.Group, gvk.Kind, keyOf(obj), out, err == nil)
	return out, err
}

func (c *cachedCluster) UpdateStatus(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	out, err := c.Interface.UpdateStatus(ctx, obj, opts...)
	gvk := gvkOf(obj)
	c.wrote(gvk.Group, gvk.Kind, keyOf(obj), out, err == nil)
	return out, err
}

func (c *cachedCluster) Patch(ctx context.Context, gvk schema.GVK, namespace, name string, pt cluster.PatchType, patch []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	out, err := c.Interface.Patch(ctx, gvk, namespace, name, pt, patch, opts...)
	c.wrote(gvk.Group, gvk.Kind, nsName{namespace, name}, out, err == nil)
	return out, err
}

func (c *cachedCluster) Delete(ctx context.Context, gvk schema.GVK, namespace, name string, opts ...cluster.DeleteOption) error {
	err := c.Interface.Delete(ctx, gvk, namespace, name, opts...)
	c.wrote(gvk.Group, gvk.Kind, nsName{namespace, name}, nil, false)
	return err
}

// dropManagedFields removes metadata.managedFields from an object read
// for the cache: no controller reads them, a write without them keeps the
// stored ones (as kube-apiserver does), and they are a large part of a
// decoded pod (every kubelet status update adds to them).
func dropManagedFields(obj cluster.Object) {
	if md, _ := obj["metadata"].(map[string]any); md != nil {
		delete(md, "managedFields")
	}
}

// withoutManagedFields is obj without metadata.managedFields, sharing the
// rest (obj itself is left as it is).
func withoutManagedFields(obj cluster.Object) cluster.Object {
	md, _ := obj["metadata"].(map[string]any)
	if _, ok := md["managedFields"]; !ok {
		return obj
	}
	out := make(cluster.Object, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	m := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			m[k] = v
		}
	}
	out["metadata"] = m
	return out
}

func gvkOf(obj cluster.Object) schema.GVK {
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group, version, ok := strings.Cut(av, "/")
	if !ok {
		group, version = "", av
	}
	return schema.GVK{Group: group, Version: version, Kind: kind}
}

// Owned lists the objects with ownerReferences from the store's index of
// owners, in the batch (see controller.OwnerIndex).
func (c *cachedCluster) Owned(ctx context.Context, fn func(group, kind, namespace, name string) error) error {
	ok, err := local.BatchOwned(ctx, c.Interface, fn)
	if !ok {
		return errNoOwnerIndex
	}
	return err
}

var errNoOwnerIndex = fmt.Errorf("sim: the cluster keeps no index of owners: %w", errors.ErrUnsupported)
