// Package gc is the garbage collector of the embedded cluster for what the
// store does not collect itself: cluster/local deletes the dependents of an
// object in the transaction that deletes it (background, foreground and
// orphan propagation, foregroundDeletion finalizers), so what is left to a
// controller are objects whose ownerReferences name owners that do not
// exist (an owner deleted before the dependent was written, never there,
// or exported with the dependent from another cluster). As
// kube-controller-manager's garbage collector does, it looks at objects
// of every kind (but core Events, which it ignores):
//
//   - an object whose every ownerReference names a missing owner is
//     deleted (in the background, or as its orphan or foregroundDeletion
//     finalizer says);
//   - an object that still has a live owner loses the references to the
//     missing ones;
//   - a reference is resolved in the dependent's own namespace (or the
//     cluster, for an owner of a cluster-scoped kind) and matches only the
//     object of that name with that uid: an owner in another namespace
//     does not count, and when an object with that uid lives in another
//     namespace the dependent gets a Warning Event OwnerRefInvalidNamespace;
//   - a reference whose kind is not served leaves its dependent alone
//     (kube-controller-manager retries it; it is looked at again when a
//     CustomResourceDefinition changes), and so does a cluster-scoped
//     object's reference to an owner of a namespaced kind.
//
// The work follows the writes: a full Sync reads the objects the store's
// index of owners lists (those with ownerReferences, not every object),
// SyncChanged the objects written since (a deleted owner's dependents are
// the store's business).
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
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

// Component is the source of the collector's Events.
const Component = "garbage-collector-controller"

// Controller is the garbage collector.
type Controller struct{}

var _ controller.Controller = Controller{}

// Name implements controller.Controller.
func (Controller) Name() string { return "garbage-collector" }

// ignored reports the kinds kube-controller-manager's garbage collector
// leaves alone (its default --gc-ignored-resources: core events).
func ignored(group, kind string) bool { return group == "" && kind == "Event" }

// Sync checks every object that has ownerReferences: those the cluster's
// index of owners lists (controller.OwnerIndex), else those of every
// served kind.
func (g Controller) Sync(ctx context.Context, c cluster.Interface, now time.Time) (controller.Result, error) {
	w := newWorld(c, now)
	var keys []controller.Key
	if x, ok := c.(controller.OwnerIndex); ok {
		err := x.Owned(ctx, func(group, kind, namespace, name string) error {
			keys = append(keys, controller.Key{Group: group, Kind: kind, Namespace: namespace, Name: name})
			return nil
		})
		switch {
		case err == nil:
			return w.checkKeys(ctx, keys)
		case !errors.Is(err, errors.ErrUnsupported):
			return w.res, fmt.Errorf("gc: read the owner index: %w", err)
		}
		keys = keys[:0]
	}
	seen := map[groupKind]bool{}
	for _, r := range c.Mapper().Resources() {
		gk := groupKind{r.GVK.Group, r.GVK.Kind}
		if seen[gk] || ignored(gk.Group, gk.Kind) {
			continue
		}
		seen[gk] = true
		l, err := c.List(ctx, r.GVK)
		if err != nil {
			return w.res, fmt.Errorf("gc: list %s: %w", r.GVK.Kind, err)
		}
		for _, o := range l.Items {
			if len(kobj.Slice(o, "metadata", "ownerReferences")) > 0 {
				keys = append(keys, controller.Key{Group: gk.Group, Kind: gk.Kind, Namespace: kobj.Namespace(o), Name: kobj.Name(o)})
			}
		}
	}
	sortKeys(keys)
	return w.checkKeys(ctx, keys)
}

var _ controller.Incremental = Controller{}

// SyncChanged checks the objects written since the last sync. An object
// none of whose owners was deleted since has the owners it had, and the
// store collects the dependents of what it deletes; after a change of the
// served kinds (a CustomResourceDefinition: references that could not be
// resolved may resolve now), it is Sync.
func (g Controller) SyncChanged(ctx context.Context, c cluster.Interface, now time.Time, changed []controller.Key) (controller.Result, error) {
	var keys []controller.Key
	for _, k := range changed {
		if k.Kind == "CustomResourceDefinition" && k.Group == "apiextensions.k8s.io" {
			return g.Sync(ctx, c, now)
		}
		if k.Deleted || ignored(k.Group, k.Kind) {
			continue
		}
		k.Deleted = false
		keys = append(keys, k)
	}
	sortKeys(keys)
	return newWorld(c, now).checkKeys(ctx, keys)
}

// groupKind is a kind without its version.
type groupKind struct{ Group, Kind string }

func sortKeys(keys []controller.Key) {
	slices.SortFunc(keys, func(a, b controller.Key) int {
		for _, d := range []int{strings.Compare(a.Group, b.Group), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace)} {
			if d != 0 {
				return d
			}
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// world is one sync's view of the cluster.
type world struct {
	c   cluster.Interface
	now time.Time
	// kinds maps a group and kind to how it is served (by preferred
	// version), filled on first use.
	kinds map[groupKind]cluster.Resource
	// uids maps the objects of a kind by uid to their namespace, filled
	// when a reference is missing in its dependent's namespace.
	uids map[schema.GVK]map[string]string
	res  controller.Result
	errs []error
}

func newWorld(c cluster.Interface, now time.Time) *world {
	return &world{c: c, now: now}
}

// served returns how a group and kind is served.
func (w *world) served(group, kind string) (cluster.Resource, bool) {
	if w.kinds == nil {
		w.kinds = map[groupKind]cluster.Resource{}
		for _, r := range w.c.Mapper().Resources() {
			gk := groupKind{r.GVK.Group, r.GVK.Kind}
			if _, ok := w.kinds[gk]; !ok {
				w.kinds[gk] = r
			}
		}
	}
	r, ok := w.kinds[groupKind{group, kind}]
	return r, ok
}

func (w *world) checkKeys(ctx context.Context, keys []controller.Key) (controller.Result, error) {
	for _, k := range keys {
		if ignored(k.Group, k.Kind) {
			continue
		}
		r, ok := w.served(k.Group, k.Kind)
		if !ok {
			continue
		}
		o, err := controller.GetShared(ctx, w.c, r.GVK, k.Namespace, k.Name)
		if cluster.IsNotFound(err) {
			continue
		}
		if err != nil {
			return w.res, fmt.Errorf("gc: get %s %s/%s: %w", k.Kind, k.Namespace, k.Name, err)
		}
		if err := w.check(ctx, r, o); err != nil {
			return w.res, err
		}
	}
	return w.res, errors.Join(w.errs...)
}

// refState is what became of the owner a reference names.
type refState int

const (
	ownerLive    refState = iota
	ownerUnknown          // not served
	ownerMissing
	// ownerOutOfScope: a cluster-scoped dependent names an owner of a
	// namespaced kind, which kube-controller-manager gives up on.
	ownerOutOfScope
)

// owner looks up the owner a reference of a dependent in namespace ns
// names.
func (w *world) owner(ctx context.Context, ns string, ref map[string]any) (refState, error) {
	av, _ := ref["apiVersion"].(string)
	kind, _ := ref["kind"].(string)
	name, _ := ref["name"].(string)
	uid, _ := ref["uid"].(string)
	gvk := schema.ParseGVK(av, kind)
	res, err := w.c.Mapper().ResourceFor(gvk)
	if err != nil {
		return ownerUnknown, nil
	}
	if res.Namespaced && ns == "" {
		return ownerOutOfScope, nil
	}
	ons := ns
	if !res.Namespaced {
		ons = ""
	}
	o, err := controller.GetShared(ctx, w.c, res.GVK, ons, name)
	switch {
	case cluster.IsNotFound(err):
		return ownerMissing, nil
	case err != nil:
		return ownerUnknown, fmt.Errorf("gc: get %s %s/%s: %w", kind, ons, name, err)
	case kobj.UID(o) != uid:
		return ownerMissing, nil
	}
	return ownerLive, nil
}

// elsewhere returns the namespace of the object of gvk with uid, when it
// is not ns ("" when there is none).
func (w *world) elsewhere(ctx context.Context, gvk schema.GVK, uid, ns string) (string, error) {
	if w.uids == nil {
		w.uids = map[schema.GVK]map[string]string{}
	}
	set, ok := w.uids[gvk]
	if !ok {
		l, err := w.c.List(ctx, gvk)
		if err != nil {
			return "", fmt.Errorf("gc: list %s: %w", gvk.Kind, err)
		}
		set = make(map[string]string, len(l.Items))
		for _, o := range l.Items {
			set[kobj.UID(o)] = kobj.Namespace(o)
		}
		w.uids[gvk] = set
	}
	if other := set[uid]; other != ns {
		return other, nil
	}
	return "", nil
}

// check collects o, of the kind res, if its owners are gone; the error is
// the store's.
func (w *world) check(ctx context.Context, res cluster.Resource, o cluster.Object) error {
	refs := kobj.Slice(o, "metadata", "ownerReferences")
	if len(refs) == 0 || kobj.Deleting(o) {
		return nil
	}
	ns, name := kobj.Namespace(o), kobj.Name(o)
	var gone []any
	live := 0
	for _, r := range refs {
		m, _ := r.(map[string]any)
		state, err := w.owner(ctx, ns, m)
		if err != nil {
			return err
		}
		if state == ownerMissing || state == ownerOutOfScope {
			if err := w.reportOtherNamespace(ctx, o, res, m); err != nil {
				return err
			}
		}
		if state != ownerMissing {
			live++
			continue
		}
		gone = append(gone, m["uid"])
	}
	if len(gone) == 0 {
		return nil
	}
	if live > 0 {
		next := kobj.Copy(o)
		var kept []any
		for _, r := range refs {
			m, _ := r.(map[string]any)
			if !slices.Contains(gone, m["uid"]) {
				kept = append(kept, r)
			}
		}
		kobj.Map(next, "metadata")["ownerReferences"] = kept
		if _, err := w.c.Update(ctx, next); err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
			w.errs = append(w.errs, fmt.Errorf("gc: update %s %s/%s: %w", res.GVK.Kind, ns, name, err))
		}
		w.res.Changed = true
		return nil
	}
	policy := cluster.Background
	for _, f := range kobj.Slice(o, "metadata", "finalizers") {
		switch f {
		case "orphan":
			policy = cluster.Orphan
		case "foregroundDeletion":
			if policy != cluster.Orphan {
				policy = cluster.Foreground
			}
		}
	}
	err := w.c.Delete(ctx, res.GVK, ns, name, policy, cluster.Preconditions{UID: kobj.UID(o)})
	if err != nil && !cluster.IsNotFound(err) && !cluster.IsConflict(err) {
		w.errs = append(w.errs, fmt.Errorf("gc: delete %s %s/%s: %w", res.GVK.Kind, ns, name, err))
		return nil
	}
	w.res.Changed = true
	return nil
}

// reportOtherNamespace records the Warning Event OwnerRefInvalidNamespace
// about o when the owner its reference ref names (missing in o's
// namespace, or of a namespaced kind when o is cluster-scoped) lives in
// another namespace; once (kube-controller-manager reports a reference
// when it first sees it, and a cluster-scoped dependent stays).
func (w *world) reportOtherNamespace(ctx context.Context, o cluster.Object, res cluster.Resource, ref map[string]any) error {
	ns := kobj.Namespace(o)
	av, _ := ref["apiVersion"].(string)
	kind, _ := ref["kind"].(string)
	name, _ := ref["name"].(string)
	uid, _ := ref["uid"].(string)
	owner, err := w.c.Mapper().ResourceFor(schema.ParseGVK(av, kind))
	if err != nil || !owner.Namespaced {
		return nil
	}
	involved := map[string]any{"apiVersion": res.GVK.APIVersion(), "kind": res.GVK.Kind, "metadata": map[string]any{
		"name": kobj.Name(o), "namespace": ns, "uid": kobj.UID(o)}}
	msg := fmt.Sprintf("ownerRef [%s/%s, namespace: %s, name: %s, uid: %s] does not exist in namespace %q", av, kind, ns, name, uid, ns)
	if done, err := event.RecordedSince(ctx, w.c, involved, "Warning", "OwnerRefInvalidNamespace", msg, Component, time.Time{}); err != nil || done {
		return err
	}
	other, err := w.elsewhere(ctx, owner.GVK, uid, ns)
	if err != nil || other == "" {
		return err
	}
	if err := event.Record(ctx, w.c, w.now, involved, "Warning", "OwnerRefInvalidNamespace", msg, Component); err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	w.res.Changed = true
	return nil
}
