package local

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster/local/internal/fieldmgr"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// TestUpdatedManagedMatchesLibrary runs update histories of many objects
// side by side, each round changing every object alike (the same fields,
// by the same manager) with values of its own, at times that move: the
// managedFields that trackUpdate records through the update cache are
// those of k8s.io/apimachinery's FieldManager at every step, and most
// updates come from the cache. The changes cover scalars, lists merged by
// key (containers, their env and ports), atomic lists (args) and atomic
// maps (the selector), fields added and removed, ownership moving between
// thirteen Update managers (beyond the cap of ten) and two server-side
// appliers, writes through the status subresource, and requests whose
// managedFields are stale, reset or do not decode. KONVERGE_TRACK_SEED sets the seed (default 1).
func TestUpdatedManagedMatchesLibrary(t *testing.T) {
	s, clock := openStore(t)
	ctx := context.Background()
	seed := int64(1)
	if n, err := strconv.ParseInt(os.Getenv("KONVERGE_TRACK_SEED"), 10, 64); err == nil {
		seed = n
	}
	round := rand.New(rand.NewSource(seed))
	cmGVK := schema.GVK{Version: "v1", Kind: "ConfigMap"}
	const objects, rounds = 12, 70
	lives := make([]map[string]any, objects)
	rs := make([]*rand.Rand, objects)
	for i := range objects {
		rs[i] = rand.New(rand.NewSource(seed*1000 + int64(i)))
	}
	hits0 := updatedManaged.Hits()
	updates, capped, moved := 0, false, false
	for step := range rounds {
		clock.Advance(time.Duration(round.Intn(3)) * time.Second)
		// Two changes a round, by one manager: objects changed alike
		// share their entries, and those changed otherwise must not.
		changes := [2]int{round.Intn(12), round.Intn(12)}
		manager := fmt.Sprintf("m%d", round.Intn(13))
		applier := ""
		if step > 0 && round.Intn(7) == 0 {
			applier = []string{"kubectl", "gitops"}[round.Intn(2)]
		}
		own := round.Intn(4) != 0
		requestManaged := round.Intn(20)
		// A quarter of the rounds write through the status subresource,
		// as the controllers do, from the stored entries.
		sub := ""
		if step > 0 && applier == "" && round.Intn(4) == 0 {
			sub = "status"
		}
		for i := range objects {
			r := rs[i]
			gvk := deployGVK
			if i%4 == 3 {
				gvk = cmGVK
			}
			res, err := s.Mapper().ResourceFor(gvk)
			if err != nil {
				t.Fatal(err)
			}
			if lives[i] == nil {
				obj := deploymentBase()
				if gvk == cmGVK {
					obj = map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
						"metadata": map[string]any{"name": "web", "namespace": "default"},
						"data":     map[string]any{"version": "1"}}
				}
				metadata(obj)["name"] = fmt.Sprintf("obj-%d", i)
				var out map[string]any
				err := s.update(ctx, func(tx *txn) error {
					tx.request = writeRequest{manager: "creator"}
					out = value.DeepCopyObject(obj)
					return tx.trackUpdate(res, nil, out)
				})
				if err != nil {
					t.Fatal(err)
				}
				md := metadata(out)
				md["uid"] = fmt.Sprintf("u-%d", i)
				md["creationTimestamp"] = "2026-03-01T12:00:00Z"
				lives[i] = out
				continue
			}
			live := lives[i]
			if applier != "" {
				patch := map[string]any{"apiVersion": gvk.APIVersion(), "kind": gvk.Kind, "metadata": map[string]any{"name": metadata(live)["name"]}}
				changeAlike(r, patch, gvk, changes[0], step)
				var out map[string]any
				err := s.update(ctx, func(tx *txn) error {
					var err error
					out, err = tx.applyPatch(res, value.DeepCopyObject(live), patch, applier, "", true)
					return err
				})
				if err != nil {
					t.Fatalf("step %d object %d: apply: %v", step, i, err)
				}
				fieldmgr.SetGVK(out, gvk)
				lives[i] = out
				continue
			}
			// The round's change, kept; the other one, and the same
			// through the other way in (main resource or status), tried on
			// the same object: none may share another's entries.
			for probe := range 3 {
				change := changes[probe%2]
				obj := changeAlike(r, value.DeepCopyObject(live), gvk, change, step)
				if own {
					// A field of the manager's own, which the others leave
					// alone: the manager's entry stays, so more than ten
					// accumulate.
					setField(obj, []string{"metadata", "labels", "by-" + manager}, fmt.Sprintf("%d-%d", step, r.Intn(3)))
				}
				req := writeRequest{manager: manager}
				if gvk == deployGVK {
					// (A ConfigMap has no status subresource.)
					req.subresource = sub
					if probe == 2 {
						req.subresource = map[string]string{"": "status", "status": ""}[sub]
					}
				}
				md := metadata(obj)
				switch requestManaged {
				case 0:
					req.managedFields, req.hasManagedFields = []any{}, true
				case 1:
					req.managedFields, req.hasManagedFields = []any{"not an entry"}, true
				case 2:
					delete(md, "managedFields")
				case 3, 4, 5:
					// Stale times, in an order of their own: the entries of
					// the request are the stored ones, from an hour or a day
					// earlier. (Not in another time zone: the library's
					// FieldManager, as trackLibrary runs it, keeps such a time
					// as written, where TrackFast and kube-apiserver's
					// encoding of metav1.Time write it in UTC.)
					if list, ok := md["managedFields"].([]any); ok && i%2 == 1 {
						for _, x := range list {
							if e, ok := x.(map[string]any); ok {
								tm := time.Date(2026, 3, 1, 11, r.Intn(60), 0, 0, time.UTC)
								e["time"] = tm.Add(-24 * time.Hour * time.Duration(r.Intn(2))).Format(time.RFC3339)
							}
						}
					}
				}
				var cached, lib map[string]any
				err = s.update(ctx, func(tx *txn) error {
					tx.request = req
					cached = value.DeepCopyObject(obj)
					if err := tx.trackUpdate(res, value.DeepCopyObject(live), cached); err != nil {
						return err
					}
					tx.request = req
					lib = value.DeepCopyObject(obj)
					return tx.trackLibrary(res, value.DeepCopyObject(live), lib)
				})
				if err != nil {
					t.Fatalf("step %d object %d (change %d): %v", step, i, change, err)
				}
				a, _ := json.Marshal(metadata(cached)["managedFields"])
				b, _ := json.Marshal(metadata(lib)["managedFields"])
				if string(a) != string(b) {
					t.Fatalf("step %d object %d (%s %q, change %d): cached\n%s\nlibrary\n%s", step, i, manager, req.subresource, change, a, b)
				}
				was, _ := json.Marshal(metadata(live)["managedFields"])
				moved = moved || (strings.Count(string(was), `"manager"`) == strings.Count(string(a), `"manager"`) && string(was) != string(a) && !strings.Contains(string(was), `"`+manager+`"`))
				capped = capped || strings.Contains(string(a), `"ancient-changes"`)
				updates++
				if probe == 0 {
					if req.subresource == "status" {
						cached["spec"] = live["spec"]
					}
					lives[i] = cached
				}
			}
		}
	}
	hits := updatedManaged.Hits() - hits0
	t.Logf("%d updates, %d from the cache", updates, hits)
	if hits < updates/4 {
		t.Errorf("the cache answered %d of %d updates", hits, updates)
	}
	if !capped {
		t.Error("no history reached the cap of update managers")
	}
	if !moved {
		t.Error("no update took fields from another manager")
	}
}

// changeAlike makes change number change to obj at step, with values of
// r's: the same fields in every object, for the same change. Scalars take
// values of their own, lists (whose elements name fields) the step's.
func changeAlike(r *rand.Rand, obj map[string]any, gvk schema.GVK, change, step int) map[string]any {
	v := func() string { return fmt.Sprintf("%d-%d", step, r.Intn(1000)) }
	if gvk.Kind == "ConfigMap" {
		switch change % 4 {
		case 0:
			setField(obj, []string{"data", "version"}, v())
		case 1:
			setField(obj, []string{"data", fmt.Sprintf("k%d", step%3)}, v())
		case 2:
			if data, ok := obj["data"].(map[string]any); ok {
				delete(data, fmt.Sprintf("k%d", (step+1)%3))
			}
		case 3:
			setField(obj, []string{"metadata", "annotations", "note"}, v())
		}
		return obj
	}
	container := func() map[string]any {
		spec, _ := obj["spec"].(map[string]any)
		tpl, _ := spec["template"].(map[string]any)
		ps, _ := tpl["spec"].(map[string]any)
		cs, _ := ps["containers"].([]any)
		if len(cs) == 0 {
			return nil
		}
		c, _ := cs[0].(map[string]any)
		return c
	}
	switch change {
	case 0:
		setField(obj, []string{"spec", "replicas"}, int64(1000*step+r.Intn(50)))
	case 1:
		setField(obj, []string{"metadata", "labels", "l1"}, v())
	case 2:
		setField(obj, []string{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}, fmt.Sprintf(`{"v":"%s"}`, v()))
	case 3:
		// A change inside a list merged by key: the image of a container.
		if c := container(); c != nil {
			c["image"] = fmt.Sprintf("nginx:1.%d", step)
		}
	case 4:
		// An atomic list.
		if c := container(); c != nil {
			c["args"] = []any{"--level", strconv.Itoa(step)}
		}
	case 5:
		// A list inside a list: env, added or changed.
		if c := container(); c != nil {
			c["env"] = []any{map[string]any{"name": "MODE", "value": strconv.Itoa(step)}}
		}
	case 6:
		// A field removed.
		if labels, ok := metadata(obj)["labels"].(map[string]any); ok {
			delete(labels, "l1")
		}
		if c := container(); c != nil {
			delete(c, "args")
		}
	case 7:
		// An atomic map: the selector's labels.
		setField(obj, []string{"spec", "selector", "matchLabels", "s"}, v())
		setField(obj, []string{"spec", "template", "metadata", "labels", "s"}, v())
	case 8:
		setField(obj, []string{"spec", "template", "spec", "nodeSelector", "zone"}, v())
	case 9:
		setField(obj, []string{"status", "replicas"}, int64(1000*step+r.Intn(3)))
	case 10:
		setField(obj, []string{"spec", "minReadySeconds"}, int64(1000*step+r.Intn(100)))
		setField(obj, []string{"spec", "template", "spec", "terminationGracePeriodSeconds"}, int64(1000*step+r.Intn(100)))
	case 11:
		// A port added to, or changed in, a list merged by key.
		if c := container(); c != nil {
			c["ports"] = []any{map[string]any{"containerPort": int64(80 + step%2), "protocol": "TCP"}}
		}
	}
	return obj
}
