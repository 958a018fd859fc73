package local

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/value"
)

// The database layout:
//
//	meta/revision                 the last resourceVersion, uint64 big endian
//	objects/<group>/<Kind>/       one bucket per kind (group "" for core)
//	    <namespace>\x00<name>     the object as compact JSON
//	owners/<uid>\x00<group>/<Kind>\x00<namespace>\x00<name>
//	                              one empty entry per ownerReference
//	allocations/ip/<ip>, allocations/nodeport/<port>
//	                              the Service ("<namespace>/<name>") holding it
//
// Keys sort by namespace and then name, so listing a kind, or a kind in one
// namespace, is a prefix scan that yields the order List promises. meta is
// also where later stages keep their own state (the virtual clock).
var (
	bucketMeta    = []byte("meta")
	bucketObjects = []byte("objects")
	bucketOwners  = []byte("owners")
	keyRevision   = []byte("revision")
	buckets       = [][]byte{bucketMeta, bucketObjects, bucketOwners, bucketAlloc}
)

// maxObjectSize is the largest object the store accepts, etcd's default
// request limit (--max-request-bytes).
const maxObjectSize = 1572864

// groupKind names a kind independently of its version: objects are stored
// once per group and kind, whichever version wrote them.
type groupKind struct{ Group, Kind string }

func (gk groupKind) bucket() []byte { return []byte(gk.Group + "/" + gk.Kind) }

func (gk groupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// objKey identifies a stored object.
type objKey struct {
	gk        groupKind
	namespace string
	name      string
}

// wrap gives an error that is not the API's the object and verb it is
// about: "local: put deployments.apps default/web: ...".
func (t *txn) wrap(verb string, k objKey, err error) error {
	what := k.gk.String()
	for _, r := range t.api.mapper.Resources() {
		if r.GVK.Group == k.gk.Group && r.GVK.Kind == k.gk.Kind {
			what = r.GroupResource()
			break
		}
	}
	if k.namespace != "" {
		return fmt.Errorf("local: %s %s %s/%s: %w", verb, what, k.namespace, k.name, err)
	}
	return fmt.Errorf("local: %s %s %s: %w", verb, what, k.name, err)
}

func nameKey(namespace, name string) []byte {
	k := make([]byte, 0, len(namespace)+1+len(name))
	k = append(k, namespace...)
	k = append(k, 0)
	return append(k, name...)
}

// record is an object read from the database: decoded, the bytes it was
// stored as (a copy that outlives the transaction) and the uids of its
// owners as stored (obj may be changed in place before it is written back).
type record struct {
	obj    map[string]any
	raw    []byte
	owners []string
}

// event is one change, kept as the stored bytes so that every watcher
// decodes its own copy.
type event struct {
	typ cluster.EventType
	key objKey
	rev uint64
	// data is the object after the change; for a deletion, the object as
	// it was last stored.
	data []byte
	// old is the object before a modification.
	old []byte
}

// txn is one bbolt transaction seen as the Kubernetes API: every verb is a
// method that reads and writes through it.
type txn struct {
	s   *Store
	ctx context.Context
	tx  *bolt.Tx
	// api is the served kinds as this transaction sees them: CRDs created
	// or deleted in it change it, and the Store takes it on commit.
	api        *apiState
	apiChanged bool
	// rev is the last revision written (or, read-only, the current one).
	rev      uint64
	revDirty bool
	// metaDirty: a batch wrote to the meta bucket (BatchPutMeta).
	metaDirty bool
	events    []event
	// failed is set when a call of a batch failed half-way: the batch must
	// roll back.
	failed error
	// phases caches the phase of namespaces ("" when missing) for the
	// admission of creates; writes of namespaces reset it.
	phases map[string]string
	// reconciling marks the objects whose deletion is being carried out
	// further up the stack.
	reconciling map[objKey]bool
	// request is who makes the current call, for managedFields.
	request writeRequest
	// quotas caches the quotas and usage of namespaces; quotaDirty lists
	// the namespaces whose quota status finish updates.
	quotas     map[string]*nsQuotas
	quotaDirty map[string]bool
	// repopulate lists the namespaces that lost an object the control
	// plane keeps in every namespace.
	repopulate []string
	// noClock keeps the store's clock out of the commit (the state's own
	// initialization, before the clock is loaded).
	noClock bool
	// validation is the field validation of the current call (see
	// cluster.FieldValidation), patch its patch, if it is one; warnings
	// are what the calls said, delivered after the commit.
	validation string
	patchBody  []byte
	warnings   []string
	// ahead are the objects a batch's caller said it is about to change
	// (batch.Prefetch), decoding on another goroutine; load takes one
	// while the stored bytes are still those it decodes.
	ahead map[objKey]*readAhead
}

func (s *Store) newTxn(ctx context.Context, tx *bolt.Tx, api *apiState) *txn {
	t := &txn{s: s, ctx: ctx, tx: tx, api: api}
	if b := tx.Bucket(bucketMeta); b != nil {
		if v := b.Get(keyRevision); len(v) == 8 {
			t.rev = binary.BigEndian.Uint64(v)
		}
	}
	return t
}

// finish writes what the transaction kept in memory, before the commit:
// the revision and, when it changed, the store's PersistentClock.
func (t *txn) finish() error {
	for len(t.repopulate) > 0 {
		ns := t.repopulate[0]
		t.repopulate = t.repopulate[1:]
		if err := t.populateNamespace(ns); err != nil {
			return err
		}
	}
	if err := t.syncQuotaStatus(); err != nil {
		return err
	}
	if !t.revDirty {
		return nil
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], t.rev)
	meta := t.tx.Bucket(bucketMeta)
	if err := meta.Put(keyRevision, v[:]); err != nil {
		return err
	}
	if pc, ok := t.s.clock.(PersistentClock); ok && !t.noClock {
		key, data, err := pc.Persisted()
		if err != nil {
			return err
		}
		if key != "" && key != string(keyRevision) {
			return meta.Put([]byte(key), data)
		}
	}
	return nil
}

// now is the time to stamp, as the API server writes it.
func (t *txn) now() string { return formatTime(t.s.clock.Now()) }

func formatTime(tm time.Time) string { return tm.UTC().Truncate(time.Second).Format(time.RFC3339) }

// kindBucket returns the bucket of a kind, creating it when create is set
// (and the transaction can write); nil when it does not exist.
func (t *txn) kindBucket(gk groupKind, create bool) (*bolt.Bucket, error) {
	objs := t.tx.Bucket(bucketObjects)
	if b := objs.Bucket(gk.bucket()); b != nil || !create {
		return b, nil
	}
	return objs.CreateBucket(gk.bucket())
}

// load reads an object to change it; nil when it does not exist.
func (t *txn) load(k objKey) (*record, error) {
	if a, ok := t.ahead[k]; ok {
		delete(t.ahead, k)
		if rec := t.loadAhead(k, a); rec != nil {
			return rec, nil
		}
	}
	obj, raw, err := t.read(k)
	if obj == nil || err != nil {
		return nil, err
	}
	return &record{obj: obj, raw: bytes.Clone(raw), owners: ownerUIDs(obj)}, nil
}

// read decodes an object; raw is valid only in the transaction. obj is nil
// when it does not exist.
func (t *txn) read(k objKey) (obj map[string]any, raw []byte, err error) {
	b, err := t.kindBucket(k.gk, false)
	if err != nil || b == nil {
		return nil, nil, err
	}
	raw = b.Get(nameKey(k.namespace, k.name))
	if raw == nil {
		return nil, nil, nil
	}
	if obj, err = value.DecodeObject(raw); err != nil {
		return nil, nil, t.wrap("decode", k, err)
	}
	t.s.decoded.Add(1)
	return obj, raw, nil
}

// exists reports whether an object is stored, without decoding it.
func (t *txn) exists(k objKey) bool {
	b, _ := t.kindBucket(k.gk, false)
	return b != nil && b.Get(nameKey(k.namespace, k.name)) != nil
}

// namespacePhase returns the status.phase of a namespace, "" when it does
// not exist.
func (t *txn) namespacePhase(name string) (string, error) {
	if phase, ok := t.phases[name]; ok {
		return phase, nil
	}
	rec, err := t.load(objKey{gk: namespaceGK, name: name})
	if err != nil {
		return "", err
	}
	phase := ""
	if rec != nil {
		status, _ := rec.obj["status"].(map[string]any)
		if phase = str(status, "phase"); phase == "" {
			phase = "Active"
		}
	}
	if t.phases == nil {
		t.phases = map[string]string{}
	}
	t.phases[name] = phase
	return phase, nil
}

// put stores obj (new, or replacing old) under the next revision, which
// becomes its resourceVersion, keeps the owner index and records the
// event.
func (t *txn) put(k objKey, obj map[string]any, old *record) error {
	metadata(obj)["resourceVersion"] = strconv.FormatUint(t.rev+1, 10)
	data, err := value.Encode(obj)
	if err != nil {
		return t.wrap("put", k, err)
	}
	return t.putEncoded(k, obj, old, data)
}

// putEncoded is put of obj encoded as data, whose resourceVersion is the
// next revision already.
func (t *txn) putEncoded(k objKey, obj map[string]any, old *record, data []byte) error {
	rev := t.rev + 1
	if len(data) > maxObjectSize {
		return &cluster.StatusError{Code: 413, Reason: cluster.ReasonRequestTooLarge, Kind: k.gk.String(), Name: k.name,
			Message: fmt.Sprintf("Request entity too large: limit is %d", maxObjectSize)}
	}
	b, err := t.kindBucket(k.gk, true)
	if err != nil {
		return t.wrap("put", k, err)
	}
	if err := b.Put(nameKey(k.namespace, k.name), data); err != nil {
		return t.wrap("put", k, err)
	}
	var before []string
	var oldObj map[string]any
	if old != nil {
		before, oldObj = old.owners, old.obj
	}
	t.quotaChanged(k, oldObj, obj)
	if err := t.indexOwners(k, before, ownerUIDs(obj)); err != nil {
		return err
	}
	t.rev, t.revDirty = rev, true
	switch k.gk {
	case namespaceGK:
		delete(t.phases, k.name)
	case crdGK:
		// The CRD serves its kinds, as changed, from now on.
		t.setCRD(value.DeepCopyObject(obj))
	case serviceGK:
		var oldObj map[string]any
		if old != nil {
			oldObj = old.obj
		}
		if err := t.indexAllocations(k, oldObj, obj); err != nil {
			return err
		}
	}
	ev := event{typ: cluster.Added, key: k, rev: rev, data: data}
	if old != nil {
		ev.typ, ev.old = cluster.Modified, old.raw
	}
	t.events = append(t.events, ev)
	return nil
}

// remove deletes a stored object under the next revision; data is the
// object as it goes (what watchers see in the DELETED event).
func (t *txn) remove(k objKey, old *record, data []byte) error {
	b, err := t.kindBucket(k.gk, false)
	if err != nil || b == nil {
		return err
	}
	if err := b.Delete(nameKey(k.namespace, k.name)); err != nil {
		return t.wrap("delete", k, err)
	}
	if err := t.indexOwners(k, old.owners, nil); err != nil {
		return err
	}
	t.quotaChanged(k, old.obj, nil)
	if controlPlaneOwned(k) {
		t.repopulate = append(t.repopulate, k.namespace)
	}
	t.rev++
	t.revDirty = true
	switch k.gk {
	case namespaceGK:
		delete(t.phases, k.name)
	case crdGK:
		t.dropCRD(k.name)
	case serviceGK:
		if err := t.indexAllocations(k, old.obj, nil); err != nil {
			return err
		}
	}
	t.events = append(t.events, event{typ: cluster.Deleted, key: k, rev: t.rev, data: data})
	return nil
}

// indexOwners updates the owner index for an object whose owners go from
// before to after.
func (t *txn) indexOwners(k objKey, before, after []string) error {
	if len(before) == 0 && len(after) == 0 {
		return nil
	}
	b := t.tx.Bucket(bucketOwners)
	suffix := ownerSuffix(k)
	for _, uid := range before {
		if !containsString(after, uid) {
			if err := b.Delete(append([]byte(uid), suffix...)); err != nil {
				return t.wrap("index owners of", k, err)
			}
		}
	}
	for _, uid := range after {
		if !containsString(before, uid) {
			if err := b.Put(append([]byte(uid), suffix...), nil); err != nil {
				return t.wrap("index owners of", k, err)
			}
		}
	}
	return nil
}

func ownerSuffix(k objKey) []byte {
	s := make([]byte, 0, 3+len(k.gk.Group)+len(k.gk.Kind)+len(k.namespace)+len(k.name)+1)
	s = append(s, 0)
	s = append(s, k.gk.bucket()...)
	s = append(s, 0)
	s = append(s, k.namespace...)
	s = append(s, 0)
	return append(s, k.name...)
}

// dependents returns the objects with an ownerReference to uid.
func (t *txn) dependents(uid string) []objKey {
	var out []objKey
	t.eachDependent(uid, func(k objKey) bool {
		out = append(out, k)
		return true
	})
	return out
}

// eachDependent calls fn with the objects whose ownerReferences name uid,
// in key order, while fn returns true.
func (t *txn) eachDependent(uid string, fn func(objKey) bool) {
	if uid == "" {
		return
	}
	prefix := append([]byte(uid), 0)
	c := t.tx.Bucket(bucketOwners).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		parts := strings.SplitN(string(k[len(prefix):]), "\x00", 3)
		if len(parts) != 3 {
			continue
		}
		group, kind, _ := strings.Cut(parts[0], "/")
		if !fn(objKey{gk: groupKind{group, kind}, namespace: parts[1], name: parts[2]}) {
			return
		}
	}
}

// scan calls fn for every object of a kind in namespace (all when ""), in
// key order; fn gets the raw bytes, valid only during the call.
func (t *txn) scan(gk groupKind, namespace string, fn func(ns, name string, raw []byte) error) error {
	b, err := t.kindBucket(gk, false)
	if err != nil || b == nil {
		return err
	}
	var prefix []byte
	if namespace != "" {
		prefix = nameKey(namespace, "")
	}
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		ns, name, _ := strings.Cut(string(k), "\x00")
		if err := fn(ns, name, v); err != nil {
			return err
		}
	}
	return nil
}

// kinds lists the kinds that have a bucket.
func (t *txn) kinds() []groupKind {
	var out []groupKind
	_ = t.tx.Bucket(bucketObjects).ForEachBucket(func(k []byte) error {
		group, kind, _ := strings.Cut(string(k), "/")
		out = append(out, groupKind{group, kind})
		return nil
	})
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
