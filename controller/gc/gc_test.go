package gc_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/gc"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/schema"
)

func pod(name string, refs ...any) map[string]any {
	md := map[string]any{"name": name, "namespace": "default"}
	if len(refs) > 0 {
		md["ownerReferences"] = refs
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": md,
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
	}
}

func ref(kind, name, uid string) map[string]any {
	return map[string]any{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid, "controller": true}
}

func TestOrphansCollected(t *testing.T) {
	ctx := context.Background()
	clk := &ctrltest.Clock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := ctrltest.Open(t, clk)
	rs, err := s.Create(ctx, map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": "live", "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "x"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []map[string]any{
		pod("orphan", ref("ReplicaSet", "gone", "00000000-dead")),
		pod("owned", ref("ReplicaSet", "live", kobj.UID(rs))),
		pod("half", ref("ReplicaSet", "live", kobj.UID(rs)), map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "gone", "uid": "00000000-beef"}),
		pod("free"),
	} {
		if _, err := s.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	r, err := gc.Controller{}.Sync(ctx, s, clk.T)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed {
		t.Error("Changed false after collecting")
	}
	if _, err := s.Get(ctx, kobj.PodGVK, "default", "orphan"); !cluster.IsNotFound(err) {
		t.Errorf("orphan pod not collected: %v", err)
	}
	for _, n := range []string{"owned", "half", "free"} {
		if _, err := s.Get(ctx, kobj.PodGVK, "default", n); err != nil {
			t.Errorf("pod %s: %v", n, err)
		}
	}
	half, _ := s.Get(ctx, kobj.PodGVK, "default", "half")
	if refs := kobj.Slice(half, "metadata", "ownerReferences"); len(refs) != 1 {
		t.Errorf("half pod keeps %d ownerReferences, want 1", len(refs))
	}
	if r, err := (gc.Controller{}).Sync(ctx, s, clk.T); err != nil || r.Changed {
		t.Errorf("second sync: changed=%v err=%v", r.Changed, err)
	}
}

func configMap(ns, name string, refs ...any) map[string]any {
	md := map[string]any{"name": name, "namespace": ns}
	if len(refs) > 0 {
		md["ownerReferences"] = refs
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}
}

// listCounter counts the Lists of each kind; it hides the store's index
// of owners (indexed shows it).
type listCounter struct {
	cluster.Interface
	lists map[string]int
}

func (l *listCounter) List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	l.lists[gvk.Kind]++
	return l.Interface.List(ctx, gvk, opts...)
}

type indexed struct{ *listCounter }

func (i indexed) Owned(ctx context.Context, fn func(group, kind, namespace, name string) error) error {
	return i.Interface.(controller.OwnerIndex).Owned(ctx, fn)
}

// TestEveryKind: objects of any kind whose owners are missing go, those
// with a live owner left lose the missing references; an owner of that
// uid in another namespace does not count and is reported once; a
// cluster-scoped object naming a namespaced owner stays, and so do Events. A full sync
// reads the objects with owners from the store's index, listing no kind
// in full (but the owner's kind of a reference to another namespace),
// and lists every kind without the index, to the same effect.
func TestEveryKind(t *testing.T) {
	for _, withIndex := range []bool{true, false} {
		t.Run(map[bool]string{true: "index", false: "lists"}[withIndex], func(t *testing.T) {
			ctx := context.Background()
			clk := &ctrltest.Clock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			s := ctrltest.Open(t, clk)
			if _, err := s.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "other"}}); err != nil {
				t.Fatal(err)
			}
			keeper, err := s.Create(ctx, configMap("default", "keeper"))
			if err != nil {
				t.Fatal(err)
			}
			elsewhere, err := s.Create(ctx, configMap("other", "owner"))
			if err != nil {
				t.Fatal(err)
			}
			cmRef := func(name, uid string) map[string]any {
				return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid}
			}
			for i := 0; i < 20; i++ {
				if _, err := s.Create(ctx, configMap("default", fmt.Sprintf("plain-%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			for _, o := range []map[string]any{
				configMap("default", "dangling", ref("Deployment", "gone", "00000000-0001")),
				configMap("default", "half", cmRef("keeper", kobj.UID(keeper)), ref("Deployment", "gone", "00000000-0002")),
				configMap("default", "cross", cmRef("owner", kobj.UID(elsewhere))),
				configMap("default", "unserved", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "00000000-0003"}),
				{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "default",
					"ownerReferences": []any{cmRef("gone", "00000000-0004")}}},
				{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "scoped",
					"ownerReferences": []any{cmRef("owner", kobj.UID(elsewhere))}}},
				{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": "ev", "namespace": "default",
					"ownerReferences": []any{cmRef("gone", "00000000-0006")}},
					"involvedObject": map[string]any{"kind": "ConfigMap", "name": "gone", "namespace": "default"}, "reason": "Exported"},
				{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "gone",
					"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "Namespace", "name": "gone", "uid": "00000000-0005"}}}},
			} {
				if _, err := s.Create(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			lc := &listCounter{Interface: s, lists: map[string]int{}}
			var c cluster.Interface = lc
			if withIndex {
				c = indexed{lc}
			}
			for round := 0; round < 2; round++ {
				r, err := gc.Controller{}.Sync(ctx, c, clk.T)
				if err != nil {
					t.Fatal(err)
				}
				if r.Changed != (round == 0) {
					t.Errorf("round %d: changed %v", round, r.Changed)
				}
			}
			cmGVK := schema.GVK{Version: "v1", Kind: "ConfigMap"}
			crGVK := schema.GVK{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
			for _, k := range []struct {
				gvk       schema.GVK
				ns, name  string
				want      bool
				wantOwner int
			}{
				{cmGVK, "default", "dangling", false, 0},
				{cmGVK, "default", "cross", false, 0},
				{cmGVK, "default", "half", true, 1},
				{cmGVK, "default", "unserved", true, 1},
				{schema.GVK{Version: "v1", Kind: "Secret"}, "default", "s", false, 0},
				{crGVK, "", "scoped", true, 1},
				{crGVK, "", "gone", false, 0},
				// Events are not the collector's.
				{schema.GVK{Version: "v1", Kind: "Event"}, "default", "ev", true, 1},
			} {
				o, err := s.Get(ctx, k.gvk, k.ns, k.name)
				switch {
				case k.want && err != nil:
					t.Errorf("%s %s: %v", k.gvk.Kind, k.name, err)
				case !k.want && !cluster.IsNotFound(err):
					t.Errorf("%s %s not collected: %v", k.gvk.Kind, k.name, err)
				case k.want && len(kobj.Slice(o, "metadata", "ownerReferences")) != k.wantOwner:
					t.Errorf("%s %s: ownerReferences %v", k.gvk.Kind, k.name, kobj.Slice(o, "metadata", "ownerReferences"))
				}
			}
			events, err := s.List(ctx, schema.GVK{Version: "v1", Kind: "Event"}, cluster.InNamespace("default"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range events.Items {
				if kobj.Str(e, "reason") != "OwnerRefInvalidNamespace" {
					continue
				}
				got = append(got, fmt.Sprintf("%s %s %s/%s %d: %s", kobj.Str(e, "type"), kobj.Str(e, "reason"),
					kobj.Str(e, "involvedObject", "kind"), kobj.Str(e, "involvedObject", "name"), kobj.IntOr(e, 0, "count"), kobj.Str(e, "message")))
			}
			uid := kobj.UID(elsewhere)
			want := []string{
				"Warning OwnerRefInvalidNamespace ConfigMap/cross 1: ownerRef [v1/ConfigMap, namespace: default, name: owner, uid: " + uid + `] does not exist in namespace "default"`,
				"Warning OwnerRefInvalidNamespace ClusterRole/scoped 1: ownerRef [v1/ConfigMap, namespace: , name: owner, uid: " + uid + `] does not exist in namespace ""`,
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if withIndex && lc.lists["ConfigMap"] > 1 {
				// Once, for the uid of the owner in another namespace.
				t.Errorf("ConfigMaps listed %d times in two syncs with the index", lc.lists["ConfigMap"])
			}
			if withIndex && (lc.lists["Secret"] > 0 || lc.lists["ClusterRole"] > 0) {
				t.Errorf("kinds listed with the index: %v", lc.lists)
			}
		})
	}
}
