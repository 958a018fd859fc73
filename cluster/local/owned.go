package local

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/konverge/konverge/cluster"
)

// ownedKey names an object that has ownerReferences: its group and kind
// (not its version: the store keeps one per kind), namespace and name.
type ownedKey struct {
	group, kind, namespace, name string
}

// Owned calls fn with the group, kind, namespace and name of every stored
// object that has ownerReferences, each once, in that order, from the
// store's index of owners (the objects are not read): what a garbage
// collector that starts afresh looks at.
func (s *Store) Owned(ctx context.Context, fn func(group, kind, namespace, name string) error) error {
	var keys []ownedKey
	if err := s.view(ctx, func(t *txn) error {
		keys = t.owned()
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := fn(k.group, k.kind, k.namespace, k.name); err != nil {
			return err
		}
	}
	return nil
}

// BatchOwned is Owned in a batch; ok is false when c is not the
// cluster.Interface of a batch.
func BatchOwned(ctx context.Context, c cluster.Interface, fn func(group, kind, namespace, name string) error) (ok bool, err error) {
	b, ok := c.(*batch)
	if !ok {
		return false, nil
	}
	var keys []ownedKey
	if err := b.do(ctx, func(t *txn) error {
		keys = t.owned()
		return nil
	}); err != nil {
		return true, err
	}
	for _, k := range keys {
		if err := fn(k.group, k.kind, k.namespace, k.name); err != nil {
			return true, err
		}
	}
	return true, nil
}

// owned lists the objects of the owner index (uid, then the dependent's
// key), each once, in key order.
func (t *txn) owned() []ownedKey {
	seen := map[string]bool{}
	var out []ownedKey
	c := t.tx.Bucket(bucketOwners).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			continue
		}
		suffix := string(k[i+1:])
		if seen[suffix] {
			continue
		}
		seen[suffix] = true
		parts := strings.SplitN(suffix, "\x00", 3)
		if len(parts) != 3 {
			continue
		}
		group, kind, _ := strings.Cut(parts[0], "/")
		out = append(out, ownedKey{group: group, kind: kind, namespace: parts[1], name: parts[2]})
	}
	slices.SortFunc(out, func(a, b ownedKey) int {
		for _, d := range []int{strings.Compare(a.group, b.group), strings.Compare(a.kind, b.kind), strings.Compare(a.namespace, b.namespace)} {
			if d != 0 {
				return d
			}
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}
