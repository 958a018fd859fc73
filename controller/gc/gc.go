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
	var res controller.Result
	kinds := g.Kinds
	if kinds == nil {
		kinds = DefaultKinds
	}
	owners := map[schema.GVK]map[string]bool{} // kind -> uids that exist
	// The owner kind of the last reference: most references of a list
	// name the same kind.
	var lastAV, lastKind string
	var lastSet map[string]bool
	exists := func(apiVersion, kind, uid string) (bool, bool, error) {
		if lastSet != nil && apiVersion == lastAV && kind == lastKind {
			return lastSet[uid], true, nil
		}
		gvk := schema.ParseGVK(apiVersion, kind)
		set, ok := owners[gvk]
		if !ok {
			if _, err := c.Mapper().ResourceFor(gvk); err != nil {
				// Not served: the owner's state is unknown; keep.
				owners[gvk] = nil
				return false, false, nil
			}
			l, err := c.List(ctx, gvk)
			if err != nil {
				return false, false, fmt.Errorf("list %s: %w", gvk.Kind, err)
			}
			set = make(map[string]bool, len(l.Items))
			for _, o := range l.Items {
				set[kobj.UID(o)] = true
			}
			owners[gvk] = set
		}
		if set == nil {
			return false, false, nil
		}
		lastAV, lastKind, lastSet = apiVersion, kind, set
		return set[uid], true, nil
	}
	var errs []error
	for _, gvk := range kinds {
		l, err := c.List(ctx, gvk)
		if err != nil {
			return res, fmt.Errorf("gc: list %s: %w", gvk.Kind, err)
		}
		for _, o := range l.Items {
			refs := kobj.Slice(o, "metadata", "ownerReferences")
			if len(refs) == 0 || kobj.Deleting(o) {
				continue
			}
			var gone []string
			live := 0
			for _, r := range refs {
				m, _ := r.(map[string]any)
				av, _ := m["apiVersion"].(string)
				k, _ := m["kind"].(string)
				uid, _ := m["uid"].(string)
				ok, known, err := exists(av, k, uid)
				if err != nil {
					return res, fmt.Errorf("gc: %w", err)
				}
				if ok || !known {
					live++
				} else {
					gone = append(gone, uid)
				}
			}
			if len(gone) == 0 {
				continue
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
					errs = append(errs, fmt.Errorf("gc: update %s %s/%s: %w", gvk.Kind, ns, name, err))
				}
				res.Changed = true
				continue
			}
			err := c.Delete(ctx, gvk, ns, name, cluster.Background, cluster.Preconditions{UID: kobj.UID(o)})
			if err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
				errs = append(errs, fmt.Errorf("gc: delete %s %s/%s: %w", gvk.Kind, ns, name, err))
				continue
			}
			res.Changed = true
		}
	}
	return res, errors.Join(errs...)
}

func contains(s []string, v any) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
