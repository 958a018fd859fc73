// Package gc is the garbage collector of the embedded cluster for what the
// store does not collect itself: cluster/local deletes the dependents of an
// object in the transaction that deletes it (background, foreground and
// orphan propagation, foregroundDeletion finalizers), so what is left to a
// controller are objects whose every ownerReference names an owner that does
// not exist (an owner deleted before the dependent was written, or never
// there). Those are deleted in the background, as kube-controller-manager's
// garbage collector does; references to missing owners of an object that
// still has a live owner are removed.
package gc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

// Controller is the garbage collector. Kinds lists the kinds whose objects
// it checks as dependents; nil means DefaultKinds (ReplicaSets and Pods, the
// kinds the embedded cluster's controllers create with ownerReferences).
type Controller struct {
	Kinds []schema.GVK
}

var _ controller.Controller = Controller{}

// DefaultKinds are the dependents checked when Kinds is nil.
var DefaultKinds = []schema.GVK{kobj.ReplicaSetGVK, kobj.PodGVK}

// Name implements controller.Controller.
func (Controller) Name() string { return "garbage-collector" }

// Sync deletes the objects whose owners are all gone: one List per
// dependent kind, and one per owner kind named by a reference.
func (g Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	w := newWorld(c)
	for _, gvk := range g.kinds() {
		l, err := c.List(ctx, gvk)
		if err != nil {
			return w.res, fmt.Errorf("gc: list %s: %w", gvk.Kind, err)
		}
		for _, o := range l.Items {
			if err := w.check(ctx, gvk, o); err != nil {
				return w.res, err
			}
		}
	}
	return w.res, errors.Join(w.errs...)
}

var _ controller.Incremental = Controller{}

// SyncChanged checks the dependents written since the last sync: an
// object none of whose owners was deleted since has the owners it had.
// After a deletion (an owner may be gone) or a change of the served kinds
// (a CustomResourceDefinition), it is Sync.
func (g Controller) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	kinds := g.kinds()
	byKind := make([][]cluster.Object, len(kinds))
	for _, k := range changed {
		if k.Deleted || k.Kind == "CustomResourceDefinition" {
			return g.Sync(ctx, c, now)
		}
		for i, gvk := range kinds {
			if gvk.Group != k.Group || gvk.Kind != k.Kind {
				continue
			}
			o, err := controller.GetShared(ctx, c, gvk, k.Namespace, k.Name)
			if cluster.IsNotFound(err) {
				return g.Sync(ctx, c, now)
			}
			if err != nil {
				return controller.Result{}, fmt.Errorf("gc: get %s %s/%s: %w", gvk.Kind, k.Namespace, k.Name, err)
			}
			byKind[i] = append(byKind[i], o)
		}
	}
	w := newWorld(c)
	for i, gvk := range kinds {
		objs := byKind[i]
		// In List order, as Sync.
		slices.SortFunc(objs, func(a, b cluster.Object) int {
			if d := strings.Compare(kobj.Namespace(a), kobj.Namespace(b)); d != 0 {
				return d
			}
			return strings.Compare(kobj.Name(a), kobj.Name(b))
		})
		for _, o := range objs {
			if err := w.check(ctx, gvk, o); err != nil {
				return w.res, err
			}
		}
	}
	return w.res, errors.Join(w.errs...)
}

func (g Controller) kinds() []schema.GVK {
	if g.Kinds == nil {
		return DefaultKinds
	}
	return g.Kinds
}

// world is one sync's view of the owners.
type world struct {
	c      cluster.Interface
	owners map[schema.GVK]map[string]bool // kind -> uids that exist
	// The owner kind of the last reference: most references of a list
	// name the same kind.
	lastAV, lastKind string
	lastSet          map[string]bool
	res              controller.Result
	errs             []error
}

func newWorld(c cluster.Interface) *world {
	return &world{c: c, owners: map[schema.GVK]map[string]bool{}}
}

func (w *world) exists(ctx context.Context, apiVersion, kind, uid string) (bool, bool, error) {
	if w.lastSet != nil && apiVersion == w.lastAV && kind == w.lastKind {
		return w.lastSet[uid], true, nil
	}
	gvk := schema.ParseGVK(apiVersion, kind)
	set, ok := w.owners[gvk]
	if !ok {
		if _, err := w.c.Mapper().ResourceFor(gvk); err != nil {
			// Not served: the owner's state is unknown; keep.
			w.owners[gvk] = nil
			return false, false, nil
		}
		l, err := w.c.List(ctx, gvk)
		if err != nil {
			return false, false, fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		set = make(map[string]bool, len(l.Items))
		for _, o := range l.Items {
			set[kobj.UID(o)] = true
		}
		w.owners[gvk] = set
	}
	if set == nil {
		return false, false, nil
	}
	w.lastAV, w.lastKind, w.lastSet = apiVersion, kind, set
	return set[uid], true, nil
}

// check collects o if its owners are gone; the error is the store's.
func (w *world) check(ctx context.Context, gvk schema.GVK, o cluster.Object) error {
	c := w.c
	refs := kobj.Slice(o, "metadata", "ownerReferences")
	if len(refs) == 0 || kobj.Deleting(o) {
		return nil
	}
	var gone []string
	live := 0
	for _, r := range refs {
		m, _ := r.(map[string]any)
		av, _ := m["apiVersion"].(string)
		k, _ := m["kind"].(string)
		uid, _ := m["uid"].(string)
		ok, known, err := w.exists(ctx, av, k, uid)
		if err != nil {
			return fmt.Errorf("gc: %w", err)
		}
		if ok || !known {
			live++
		} else {
			gone = append(gone, uid)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	ns, name := kobj.Namespace(o), kobj.Name(o)
	if live > 0 {
		next := kobj.Copy(o)
		var kept []any
		for _, r := range refs {
			m, _ := r.(map[string]any)
			if !contains(gone, m["uid"]) {
				kept = append(kept, r)
			}
		}
		kobj.Map(next, "metadata")["ownerReferences"] = kept
		if _, err := c.Update(ctx, next); err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
			w.errs = append(w.errs, fmt.Errorf("gc: update %s %s/%s: %w", gvk.Kind, ns, name, err))
		}
		w.res.Changed = true
		return nil
	}
	err := c.Delete(ctx, gvk, ns, name, cluster.Background, cluster.Preconditions{UID: kobj.UID(o)})
	if err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
		w.errs = append(w.errs, fmt.Errorf("gc: delete %s %s/%s: %w", gvk.Kind, ns, name, err))
		return nil
	}
	w.res.Changed = true
	return nil
}

func contains(s []string, v any) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
