package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/parallel"
	"github.com/konverge/konverge/merge"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// ReadOptions narrow and lighten the reads of BatchList, BatchGet and
// BatchNames: what the controllers of the embedded cluster read in bulk.
type ReadOptions struct {
	// Namespace limits a list to one namespace ("": every one).
	Namespace string
	// NamePrefix limits a list to the objects whose name starts with it
	// (in one namespace, a range of keys: the Events of an object are
	// named after it).
	NamePrefix string
	// WithoutManagedFields leaves metadata.managedFields out of the
	// objects read (they are not even decoded).
	WithoutManagedFields bool
	// Interner, when set, shares equal values at its paths between the
	// objects read (and those it read before): the objects must then
	// never be changed.
	Interner *value.Interner
}

// CommonPaths are where objects of one kind often hold equal values: the
// pods of one template have the same labels, owner, containers,
// tolerations and service account token volume, and those that started in
// the same second the same conditions (paths for value.NewInterner).
var CommonPaths = []string{
	"metadata.labels", "metadata.annotations", "metadata.ownerReferences",
	"spec.containers", "spec.initContainers", "spec.tolerations", "spec.affinity",
	"spec.securityContext", "spec.volumes.[].projected", "spec.topologySpreadConstraints",
	"status.conditions", "status.hostIPs",
}

// listShared bounds the values a List's interner remembers.
const listShared = 4096

// BatchList lists the objects of a kind as List does, narrowed and
// lightened by o; ok is false when c is not the cluster.Interface of a
// batch (see BatchRevision), and the caller lists otherwise.
func BatchList(ctx context.Context, c cluster.Interface, gvk schema.GVK, o ReadOptions) (l *cluster.List, ok bool, err error) {
	b, ok := c.(*batch)
	if !ok {
		return nil, false, nil
	}
	err = b.do(ctx, func(t *txn) error {
		res, err := t.resource(gvk)
		if err != nil {
			return err
		}
		gk, apiVersion := gkOf(res), gvk.APIVersion()
		l = &cluster.List{Items: []cluster.Object{}, ResourceVersion: strconv.FormatUint(t.rev, 10)}
		return t.scanPrefix(gk, o.Namespace, o.NamePrefix, func(ns, name string, raw []byte) error {
			obj, err := decodeRead(raw, o)
			if err != nil {
				return t.wrap("decode", objKey{gk: gk, namespace: ns, name: name}, err)
			}
			obj["apiVersion"] = apiVersion
			l.Items = append(l.Items, obj)
			return nil
		})
	})
	if err != nil {
		return nil, true, err
	}
	return l, true, nil
}

// BatchGet reads one object as Get does, lightened by o (its Namespace
// and NamePrefix are not used); ok is false when c is not the
// cluster.Interface of a batch.
func BatchGet(ctx context.Context, c cluster.Interface, gvk schema.GVK, namespace, name string, o ReadOptions) (obj cluster.Object, ok bool, err error) {
	b, ok := c.(*batch)
	if !ok {
		return nil, false, nil
	}
	err = b.do(ctx, func(t *txn) error {
		res, k, raw, err := t.stored(gvk, namespace, name)
		if err != nil {
			return err
		}
		if raw == nil {
			return cluster.NewNotFound(res.GroupResource(), name)
		}
		if obj, err = decodeRead(raw, o); err != nil {
			return t.wrap("decode", k, err)
		}
		obj["apiVersion"] = gvk.APIVersion()
		return nil
	})
	return obj, true, err
}

// stored looks up the stored bytes of an object, as Get would read them:
// the kind's resource (an error when it is not served), the object's key
// and its bytes, nil when it does not exist; the bytes are valid only in
// the transaction.
func (t *txn) stored(gvk schema.GVK, namespace, name string) (cluster.Resource, objKey, []byte, error) {
	res, err := t.resource(gvk)
	if err != nil {
		return res, objKey{}, nil, err
	}
	k := objKey{gk: gkOf(res), namespace: requestNamespace(res, namespace), name: name}
	bk, err := t.kindBucket(k.gk, false)
	if err != nil || bk == nil {
		return res, k, nil, err
	}
	return res, k, bk.Get(nameKey(k.namespace, k.name)), nil
}

// BatchNames calls fn with the namespace and name of each object of a kind
// that BatchList would list, in the same order, without reading the
// objects; ok is false when c is not the cluster.Interface of a batch.
func BatchNames(ctx context.Context, c cluster.Interface, gvk schema.GVK, o ReadOptions, fn func(namespace, name string) error) (ok bool, err error) {
	b, ok := c.(*batch)
	if !ok {
		return false, nil
	}
	return true, b.do(ctx, func(t *txn) error {
		res, err := t.resource(gvk)
		if err != nil {
			return err
		}
		return t.scanPrefix(gkOf(res), o.Namespace, o.NamePrefix, func(ns, name string, _ []byte) error {
			return fn(ns, name)
		})
	})
}

func decodeRead(raw []byte, o ReadOptions) (map[string]any, error) {
	if o.Interner != nil {
		if o.WithoutManagedFields {
			return o.Interner.DecodeObjectWithout(raw, "metadata", "managedFields")
		}
		return o.Interner.DecodeObjectWithout(raw, "", "")
	}
	if o.WithoutManagedFields {
		return value.DecodeObjectWithout(raw, "metadata", "managedFields")
	}
	return value.DecodeObject(raw)
}

// scanPrefix is scan limited to the names that start with prefix: a range
// of keys in one namespace, a filter over all of them otherwise.
func (t *txn) scanPrefix(gk groupKind, namespace, prefix string, fn func(ns, name string, raw []byte) error) error {
	if prefix == "" {
		return t.scan(gk, namespace, fn)
	}
	b, err := t.kindBucket(gk, false)
	if err != nil || b == nil {
		return err
	}
	if namespace == "" {
		return t.scan(gk, "", func(ns, name string, raw []byte) error {
			if !strings.HasPrefix(name, prefix) {
				return nil
			}
			return fn(ns, name, raw)
		})
	}
	start := nameKey(namespace, prefix)
	c := b.Cursor()
	for k, v := c.Seek(start); k != nil && bytes.HasPrefix(k, start); k, v = c.Next() {
		if err := fn(namespace, string(k[len(namespace)+1:]), v); err != nil {
			return err
		}
	}
	return nil
}

// BatchGetMeta is GetMeta in a batch: the value under key in the meta
// bucket as the batch's transaction sees it (nil when there is none); ok
// is false when c is not the cluster.Interface of a batch.
func BatchGetMeta(ctx context.Context, c cluster.Interface, key string) (v []byte, ok bool, err error) {
	b, ok := c.(*batch)
	if !ok {
		return nil, false, nil
	}
	err = b.do(ctx, func(t *txn) error {
		v = bytes.Clone(t.tx.Bucket(bucketMeta).Get([]byte(key)))
		return nil
	})
	return v, true, err
}

// BatchPutMeta is PutMeta in a batch: the value is stored with the batch's
// other writes (Txn.Wrote reports it); ok is false when c is not the
// cluster.Interface of a batch.
func BatchPutMeta(ctx context.Context, c cluster.Interface, key string, value []byte) (ok bool, err error) {
	b, ok := c.(*batch)
	if !ok {
		return false, nil
	}
	if key == "" || key == string(keyRevision) {
		return true, fmt.Errorf("local: meta key %q is reserved", key)
	}
	return true, b.do(ctx, func(t *txn) error {
		if err := t.tx.Bucket(bucketMeta).Put([]byte(key), value); err != nil {
			return fmt.Errorf("local: put meta %s: %w", key, err)
		}
		t.metaDirty = true
		return nil
	})
}

// GetMany reads the objects of keys as Get would one by one (see
// cluster.ManyGetter). It looks their stored bytes up and copies them on
// the batch's goroutine, as they are now, and decodes the copies on as
// many goroutines as there are CPUs while the batch goes on.
func (b *batch) GetMany(ctx context.Context, keys []cluster.Key, opts ...cluster.ListOption) func() ([]cluster.Object, []error) {
	ro := ReadOptions{WithoutManagedFields: cluster.CollectList(opts).WithoutManagedFields}
	objs := make([]cluster.Object, len(keys))
	errs := make([]error, len(keys))
	raws := make([][]byte, len(keys))
	ks := make([]objKey, len(keys))
	err := b.do(ctx, func(t *txn) error {
		for i, key := range keys {
			res, k, raw, err := t.stored(key.GVK, key.Namespace, key.Name)
			var se *cluster.StatusError
			switch {
			case errors.As(err, &se):
				errs[i] = err
				continue
			case err != nil:
				return err
			}
			t.warnRequest(k.gk)
			if raw == nil {
				errs[i] = cluster.NewNotFound(res.GroupResource(), key.Name)
				continue
			}
			raws[i], ks[i] = bytes.Clone(raw), k
			t.s.decoded.Add(1)
		}
		return nil
	})
	if err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return func() ([]cluster.Object, []error) { return objs, errs }
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		parallel.Chunks(len(keys), 64, func(i int) {
			if raws[i] == nil {
				return
			}
			obj, err := decodeRead(raws[i], ro)
			raws[i] = nil
			if err != nil {
				// A damaged state: the object's read fails (Get's error
				// is the same but for the resource's name).
				k := ks[i]
				name := k.name
				if k.namespace != "" {
					name = k.namespace + "/" + k.name
				}
				errs[i] = fmt.Errorf("local: decode %s %s: %w", k.gk.String(), name, err)
				return
			}
			obj["apiVersion"] = keys[i].GVK.APIVersion()
			objs[i] = obj
		})
	}()
	return func() ([]cluster.Object, []error) {
		<-done
		return objs, errs
	}
}

// readAhead is an object read for batch.Prefetch: a copy of its stored
// bytes, and, once done is closed, the object they decode to and, for a
// merge patch it was told, the patched object as txn.patch makes it.
type readAhead struct {
	raw  []byte
	obj  map[string]any
	err  error
	done chan struct{}
	// The patch told, and what it is applied with: the object's
	// apiVersion in the request and the merge schema.
	pt         cluster.PatchType
	patch      []byte
	apiVersion string
	schema     *schema.Type
	patched    map[string]any
}

// Prefetch prepares the writes the caller is about to make (see
// cluster.Prefetcher): it copies the stored bytes of their objects on the
// batch's goroutine and, in order on another one while the batch goes on,
// decodes the copies and applies the JSON merge or strategic merge
// patches among the writes (of kinds no CRD defines, whose schemas hold
// still). A later write of one of the objects (Patch, Update) takes the
// decoded object when the stored bytes are still the ones copied, and a
// Patch the patched object too when its request is the one told; each
// decodes and patches itself otherwise.
func (b *batch) Prefetch(ctx context.Context, writes []cluster.Upcoming) {
	_ = b.do(ctx, func(t *txn) error {
		var queue []*readAhead
		for _, w := range writes {
			res, k, raw, err := t.stored(w.GVK, w.Namespace, w.Name)
			if err != nil || raw == nil {
				continue
			}
			a := &readAhead{raw: bytes.Clone(raw), done: make(chan struct{})}
			mergePatch := w.PatchType == cluster.MergePatchType || (w.PatchType == cluster.StrategicMergePatchType && res.Strategic)
			if w.Patch != nil && mergePatch && t.crdVersion(res) == nil {
				a.pt, a.patch, a.apiVersion = w.PatchType, w.Patch, w.GVK.APIVersion()
				a.schema = t.api.mapper.Schema(w.GVK)
			}
			if t.ahead == nil {
				t.ahead = make(map[objKey]*readAhead, len(writes))
			}
			t.ahead[k] = a
			queue = append(queue, a)
		}
		if len(queue) > 0 {
			// The copies are the goroutine's own: it outlives the batch
			// harmlessly.
			go func() {
				for _, a := range queue {
					a.prepare()
					close(a.done)
				}
			}()
		}
		return nil
	})
}

// prepare decodes the object and applies the patch told, as txn.patch
// does (a failure leaves patched nil: the patch then fails as it would).
func (a *readAhead) prepare() {
	a.obj, a.err = value.DecodeObject(a.raw)
	if a.err != nil || a.patch == nil {
		return
	}
	p, err := value.DecodeObject(a.patch)
	if err != nil {
		return
	}
	var merged map[string]any
	if a.pt == cluster.MergePatchType {
		merged = merge.MergePatch(patchLive(a.obj, a.apiVersion), p)
	} else if merged, err = merge.Apply(patchLive(a.obj, a.apiVersion), p, a.schema); err != nil {
		return
	}
	a.patched = copyForUpdate(merged)
}

// loadAhead is load's record from an object read ahead, or nil when the
// object changed since (or is gone, or did not decode: load then reads it
// as it reads any other).
func (t *txn) loadAhead(k objKey, a *readAhead) *record {
	bk, err := t.kindBucket(k.gk, false)
	if err != nil || bk == nil {
		return nil
	}
	raw := bk.Get(nameKey(k.namespace, k.name))
	if raw == nil || !bytes.Equal(raw, a.raw) {
		return nil
	}
	<-a.done
	if a.err != nil {
		return nil
	}
	t.s.decoded.Add(1)
	t.s.readAhead.Add(1)
	return &record{obj: a.obj, raw: a.raw, owners: ownerUIDs(a.obj)}
}

// loadPatched is load for a patch: the stored object, and the patched
// object when it was prepared ahead for this very request (nil
// otherwise: the caller patches).
func (t *txn) loadPatched(k objKey, gvk schema.GVK, pt cluster.PatchType, data []byte) (*record, map[string]any, error) {
	a, ok := t.ahead[k]
	if !ok {
		rec, err := t.load(k)
		return rec, nil, err
	}
	delete(t.ahead, k)
	rec := t.loadAhead(k, a)
	if rec == nil {
		rec, err := t.load(k)
		return rec, nil, err
	}
	if a.patched != nil && a.pt == pt && a.apiVersion == gvk.APIVersion() && a.schema == t.api.mapper.Schema(gvk) && bytes.Equal(a.patch, data) {
		t.s.patchedAhead.Add(1)
		return rec, a.patched, nil
	}
	return rec, nil, nil
}
