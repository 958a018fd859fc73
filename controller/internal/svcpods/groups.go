package svcpods

import (
	"context"
	"fmt"
	"sort"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/reconcile"
	"github.com/konverge/konverge/schema"
)

// Groups is an index of the endpoint objects a controller reads (its
// EndpointSlices) by the Service they belong to, kept up to date from
// the writes given to SyncChanged, so that a sync reads a Service's
// objects without listing them all.
type Groups struct {
	// GVK is the kind of the objects.
	GVK schema.GVK
	// Of names the Service (its name) an object belongs to, and whether
	// the controller counts it at all.
	Of func(obj map[string]any) (svc string, ok bool)
	// of: an object's group, by its key.
	of     map[reconcile.Key]reconcile.Key
	groups map[reconcile.Key]map[string]map[string]any
}

// Rebuild starts the index again from every object (as listed).
func (g *Groups) Rebuild(objs []map[string]any) {
	g.of = map[reconcile.Key]reconcile.Key{}
	g.groups = map[reconcile.Key]map[string]map[string]any{}
	for _, o := range objs {
		g.set(reconcile.KeyOf(o), o)
	}
}

// set puts obj (nil: none) as key, and returns the groups it left and
// joined (zero: none).
func (g *Groups) set(key reconcile.Key, obj map[string]any) (left, joined reconcile.Key) {
	if old, ok := g.of[key]; ok {
		delete(g.of, key)
		delete(g.groups[old], key[1])
		if len(g.groups[old]) == 0 {
			delete(g.groups, old)
		}
		left = old
	}
	if obj == nil {
		return left, joined
	}
	svc, ok := g.Of(obj)
	if !ok {
		return left, joined
	}
	joined = reconcile.Key{key[0], svc}
	g.of[key] = joined
	m := g.groups[joined]
	if m == nil {
		m = map[string]map[string]any{}
		g.groups[joined] = m
	}
	m[key[1]] = obj
	return left, joined
}

// Update reads the object k names (a key of the index's kind) as it is
// now and returns the groups (Services) it left and joined (zero: none).
func (g *Groups) Update(ctx context.Context, c cluster.Interface, k controller.Key) (left, joined reconcile.Key, err error) {
	var obj map[string]any
	if !k.Deleted {
		obj, err = controller.GetShared(ctx, c, g.GVK, k.Namespace, k.Name)
		if err != nil {
			if !cluster.IsNotFound(err) {
				return left, joined, fmt.Errorf("get %s %s/%s: %w", g.GVK.Kind, k.Namespace, k.Name, err)
			}
			obj = nil
		}
	}
	left, joined = g.set(reconcile.Key{k.Namespace, k.Name}, obj)
	return left, joined, nil
}

// Is reports whether k is of the index's kind.
func (g *Groups) Is(k controller.Key) bool { return k.Group == g.GVK.Group && k.Kind == g.GVK.Kind }

// Objects returns the objects of the Service svc, by name (List order).
func (g *Groups) Objects(svc reconcile.Key) []map[string]any {
	m := g.groups[svc]
	if len(m) == 0 {
		return nil
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]map[string]any, len(names))
	for i, n := range names {
		out[i] = m[n]
	}
	return out
}

// Keys returns the Services that have objects, in List order.
func (g *Groups) Keys() []reconcile.Key {
	out := make([]reconcile.Key, 0, len(g.groups))
	for k := range g.groups {
		out = append(out, k)
	}
	reconcile.SortKeys(out)
	return out
}

// LabelServiceName is the label of an EndpointSlice naming its Service.
const LabelServiceName = labelServiceName
