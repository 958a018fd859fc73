package local

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// TestCreatedManagedMatchesLibrary creates objects of a few shapes with
// values that differ (names, labels' values, images, counts) and some
// shapes that differ only in a list's elements or a map's keys: the
// managedFields that trackUpdate records through the shape cache are
// those of k8s.io/apimachinery's FieldManager for every one, and most
// come from the cache.
func TestCreatedManagedMatchesLibrary(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	cmGVK := schema.GVK{Version: "v1", Kind: "ConfigMap"}
	r := rand.New(rand.NewSource(7))
	hits0 := createdManaged.Hits()
	const n = 300
	for i := range n {
		var obj map[string]any
		gvk := deployGVK
		if i%3 == 0 {
			gvk = cmGVK
			data := map[string]any{"version": fmt.Sprint(r.Intn(100))}
			if r.Intn(3) == 0 {
				data[fmt.Sprintf("k%d", r.Intn(3))] = "v"
			}
			obj = map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "default"}, "data": data}
		} else {
			obj = deploymentBase()
			metadata(obj)["name"] = fmt.Sprintf("web-%d", i)
			if r.Intn(2) == 0 {
				obj = mutate(r, obj)
			}
		}
		res, err := s.Mapper().ResourceFor(gvk)
		if err != nil {
			t.Fatal(err)
		}
		req := writeRequest{manager: []string{"kubectl-client-side-apply", "gitops"}[r.Intn(2)]}
		var cached, lib map[string]any
		err = s.update(ctx, func(tx *txn) error {
			tx.request = req
			cached = value.DeepCopyObject(obj)
			if err := tx.trackUpdate(res, nil, cached); err != nil {
				return err
			}
			tx.request = req
			lib = value.DeepCopyObject(obj)
			return tx.trackLibrary(res, nil, lib)
		})
		if err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		a, _ := json.Marshal(metadata(cached)["managedFields"])
		b, _ := json.Marshal(metadata(lib)["managedFields"])
		if string(a) != string(b) {
			t.Fatalf("object %d: cached\n%s\nlibrary\n%s", i, a, b)
		}
	}
	if hits := createdManaged.Hits() - hits0; hits < n/2 {
		t.Errorf("the cache answered %d of %d creates", hits, n)
	}
}

// TestCreatedManagedShareFieldSets creates ConfigMaps of one shape: their
// managedFields entries are their own (each with its own time) but share
// one fieldsV1 tree, and an update of one (which adds to its field set)
// leaves the others' stored and returned entries as they were.
func TestCreatedManagedShareFieldSets(t *testing.T) {
	s, clock := openStore(t)
	ctx := context.Background()
	doc := func(name, v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: default\ndata:\n  k: \"" + v + "\"\n"
	}
	first := mustCreate(t, s, doc("shared-a", "1"))
	clock.Advance(time.Minute)
	second := mustCreate(t, s, doc("shared-b", "2"))
	entry := func(o map[string]any) map[string]any {
		mf, _ := metadata(o)["managedFields"].([]any)
		if len(mf) != 1 {
			t.Fatalf("%s: managedFields %v, want one entry", metaString(o, "name"), mf)
		}
		return mf[0].(map[string]any)
	}
	ea, eb := entry(first), entry(second)
	fa, ok := ea["fieldsV1"].(map[string]any)
	if !ok {
		t.Fatalf("fieldsV1 is a %T", ea["fieldsV1"])
	}
	if reflect.ValueOf(fa).UnsafePointer() != reflect.ValueOf(eb["fieldsV1"]).UnsafePointer() {
		t.Error("two ConfigMaps of one shape do not share their fieldsV1")
	}
	if ea["time"] == eb["time"] {
		t.Errorf("both entries have the time %v; the second was created a minute later", ea["time"])
	}
	before, _ := json.Marshal(ea)

	// The stored object is decoded anew: an update that adds to its field
	// set changes nothing the others share.
	changed := value.DeepCopyObject(first)
	changed["data"].(map[string]any)["extra"] = "x"
	upd, err := s.Update(ctx, changed, cluster.FieldOwner("kubectl-client-side-apply"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(metadata(upd)["managedFields"]); !strings.Contains(string(got), "f:extra") {
		t.Fatalf("the update's managedFields do not name data.extra: %s", got)
	}
	if after, _ := json.Marshal(ea); string(after) != string(before) {
		t.Errorf("the update changed the entry the create returned:\nbefore %s\nafter  %s", before, after)
	}
	third := mustCreate(t, s, doc("shared-c", "3"))
	stored := mustGet(t, s, gvkConfigMap, "default", "shared-b")
	for _, o := range []map[string]any{third, stored} {
		got, _ := json.Marshal(entry(o)["fieldsV1"])
		want, _ := json.Marshal(fa)
		if string(got) != string(want) || strings.Contains(string(got), "f:extra") {
			t.Errorf("%s: fieldsV1 %s, want %s", metaString(o, "name"), got, want)
		}
	}
}
