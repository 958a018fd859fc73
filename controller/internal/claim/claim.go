// Package claim is the controller-reference manager the workload
// controllers of the embedded cluster share (upstream's
// BaseControllerRefManager.ClaimObject): which of the candidate objects a
// controller owns, adopting orphans it matches and releasing owned ones it
// no longer matches.
//
// It keeps no state; objects are JSON values as cluster.Interface serves
// them, and the ones it hands back are the listed ones or the results of
// its writes.
package claim

import (
	"context"
	"fmt"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

// Objects returns the objects of candidates that owner (of kind gvk)
// controls after claiming: candidates are the objects whose controller is
// owner and the orphans of owner's namespace. An owned object match
// rejects is released (unless owner is being deleted); an orphan it
// accepts is adopted (unless owner or the orphan is being deleted).
// changed reports a write.
func Objects(ctx context.Context, c cluster.Interface, owner map[string]any, gvk schema.GVK, candidates []map[string]any, match func(map[string]any) bool) (claimed []map[string]any, changed bool, err error) {
	uid := kobj.UID(owner)
	deleting := kobj.Deleting(owner)
	for _, obj := range candidates {
		ref := kobj.ControllerRef(obj)
		if ref != nil {
			if ref["uid"] != uid {
				continue
			}
			if match(obj) {
				claimed = append(claimed, obj)
				continue
			}
			if deleting {
				continue
			}
			if err := Release(ctx, c, obj, uid); err != nil {
				return claimed, changed, err
			}
			changed = true
			continue
		}
		if deleting || !match(obj) || kobj.Deleting(obj) || kobj.Namespace(obj) != kobj.Namespace(owner) {
			continue
		}
		adopted, err := Adopt(ctx, c, obj, owner, gvk)
		if err != nil {
			if cluster.IsNotFound(err) || cluster.IsConflict(err) {
				changed = true
				continue
			}
			return claimed, changed, err
		}
		changed = true
		claimed = append(claimed, adopted)
	}
	return claimed, changed, nil
}

// Adopt adds owner as the controller of obj and returns the stored result.
func Adopt(ctx context.Context, c cluster.Interface, obj, owner map[string]any, gvk schema.GVK) (map[string]any, error) {
	next := kobj.Copy(obj)
	md := kobj.EnsureMap(next, "metadata")
	refs, _ := md["ownerReferences"].([]any)
	md["ownerReferences"] = append(append([]any{}, refs...), kobj.NewControllerRef(owner, gvk))
	out, err := c.Update(ctx, next)
	if err != nil {
		return nil, fmt.Errorf("adopt %s %s: %w", kobj.Str(obj, "kind"), kobj.Name(obj), err)
	}
	return out, nil
}

// Release removes the owner reference of uid from obj.
func Release(ctx context.Context, c cluster.Interface, obj map[string]any, uid string) error {
	next := kobj.Copy(obj)
	md := kobj.EnsureMap(next, "metadata")
	refs, _ := md["ownerReferences"].([]any)
	var kept []any
	for _, r := range refs {
		if m, _ := r.(map[string]any); m["uid"] != uid {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		delete(md, "ownerReferences")
	} else {
		md["ownerReferences"] = kept
	}
	if _, err := c.Update(ctx, next); err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
		return fmt.Errorf("release %s %s: %w", kobj.Str(obj, "kind"), kobj.Name(obj), err)
	}
	return nil
}

// Index is the objects of one List by controller uid, and the orphans
// (not being deleted) by namespace.
type Index struct {
	byOwner map[string][]map[string]any
	orphans map[string][]map[string]any
}

// NewIndex indexes objs.
func NewIndex(objs []cluster.Object) *Index {
	idx := &Index{byOwner: map[string][]map[string]any{}, orphans: map[string][]map[string]any{}}
	for _, o := range objs {
		if uid := kobj.ControllerUID(o); uid != "" {
			idx.byOwner[uid] = append(idx.byOwner[uid], o)
		} else if !kobj.Deleting(o) {
			ns := kobj.Namespace(o)
			idx.orphans[ns] = append(idx.orphans[ns], o)
		}
	}
	return idx
}

// Owned returns the objects whose controller has uid.
func (idx *Index) Owned(uid string) []map[string]any { return idx.byOwner[uid] }

// Candidates returns what Objects may claim for owner: its objects and the
// orphans of its namespace.
func (idx *Index) Candidates(owner map[string]any) []map[string]any {
	owned := idx.byOwner[kobj.UID(owner)]
	orphans := idx.orphans[kobj.Namespace(owner)]
	out := make([]map[string]any, 0, len(owned)+len(orphans))
	return append(append(out, owned...), orphans...)
}

// Forget removes an adopted object from the orphans, so that a second
// owner does not adopt it in the same sync.
func (idx *Index) Forget(obj map[string]any) {
	ns := kobj.Namespace(obj)
	list := idx.orphans[ns]
	for i, o := range list {
		if kobj.Name(o) == kobj.Name(obj) {
			idx.orphans[ns] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// Add indexes an object created in this sync.
func (idx *Index) Add(obj map[string]any) {
	if uid := kobj.ControllerUID(obj); uid != "" {
		idx.byOwner[uid] = append(idx.byOwner[uid], obj)
	}
}

// Refresh reads an object written in this sync again (dropping it when it
// is gone).
func (idx *Index) Refresh(ctx context.Context, c cluster.Interface, obj map[string]any) {
	uid := kobj.ControllerUID(obj)
	list := idx.byOwner[uid]
	for i, o := range list {
		if kobj.Name(o) != kobj.Name(obj) || kobj.Namespace(o) != kobj.Namespace(obj) {
			continue
		}
		gvk := kobj.PodGVK
		if av, k := kobj.Str(obj, "apiVersion"), kobj.Str(obj, "kind"); k != "" {
			gvk.Kind = k
			gvk.Group, gvk.Version = "", av
			if g, v, ok := strings.Cut(av, "/"); ok {
				gvk.Group, gvk.Version = g, v
			}
		}
		fresh, err := c.Get(ctx, gvk, kobj.Namespace(obj), kobj.Name(obj))
		if err != nil {
			idx.byOwner[uid] = append(list[:i:i], list[i+1:]...)
			return
		}
		out := append(list[:0:0], list...)
		out[i] = fresh
		idx.byOwner[uid] = out
		return
	}
}
