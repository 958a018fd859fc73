package local

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/konverge/konverge/cluster"
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
		res, err := t.resource(gvk)
		if err != nil {
			return err
		}
		k := objKey{gk: gkOf(res), namespace: requestNamespace(res, namespace), name: name}
		bk, err := t.kindBucket(k.gk, false)
		if err != nil {
			return err
		}
		var raw []byte
		if bk != nil {
			raw = bk.Get(nameKey(k.namespace, k.name))
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
