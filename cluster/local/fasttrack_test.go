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
	"github.com/konverge/konverge/value"
)

// TrackFast records the same managedFields as k8s.io/apimachinery's
// FieldManager (trackLibrary) over generated histories of a Deployment:
// creates, updates by fourteen managers (beyond the cap of ten), through
// the status subresource, with requests that carry managedFields, reset
// them or carry ones that do not decode, and server-side applies between
// them. KONVERGE_TRACK_STEPS sets the number of steps (default 400),
// KONVERGE_TRACK_SEED the seed of the history (default 1).
func TestTrackFastMatchesFieldManager(t *testing.T) {
	steps := 400
	if n, err := strconv.Atoi(os.Getenv("KONVERGE_TRACK_STEPS")); err == nil && n > 0 {
		steps = n
	}
	s, clock := openStore(t)
	ctx := context.Background()
	res, err := s.Mapper().ResourceFor(deployGVK)
	if err != nil {
		t.Fatal(err)
	}
	seed := int64(1)
	if n, err := strconv.ParseInt(os.Getenv("KONVERGE_TRACK_SEED"), 10, 64); err == nil {
		seed = n
	}
	r := rand.New(rand.NewSource(seed))
	var live map[string]any // nil: not created yet
	capped := false
	for step := 0; step < steps; step++ {
		clock.Advance(time.Duration(r.Intn(3)) * time.Second)
		if live != nil && r.Intn(8) == 0 {
			// A server-side apply by one of two appliers, through the
			// library, so that Apply entries exist.
			applier := []string{"kubectl", "gitops"}[r.Intn(2)]
			patch := mutate(r, map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}})
			var out map[string]any
			err := s.update(ctx, func(tx *txn) error {
				var err error
				out, err = tx.applyPatch(res, value.DeepCopyObject(live), patch, applier, "", true)
				return err
			})
			if err != nil {
				t.Fatalf("step %d: apply: %v", step, err)
			}
			fieldmgr.SetGVK(out, deployGVK)
			live = out
			continue
		}
		sub := ""
		if live != nil && r.Intn(4) == 0 {
			sub = "status"
		}
		var obj map[string]any
		if live == nil {
			obj = mutate(r, deploymentBase())
		} else {
			obj = mutate(r, value.DeepCopyObject(live))
		}
		req := writeRequest{manager: fmt.Sprintf("m%d", r.Intn(14)), subresource: sub}
		if r.Intn(2) == 0 {
			// A field of the manager's own, which the others leave alone:
			// the manager's entry stays, so more than ten accumulate.
			setField(obj, []string{"metadata", "labels", "by-" + req.manager}, strconv.Itoa(step))
		}
		md := metadata(obj)
		switch r.Intn(120) {
		case 0:
			req.managedFields, req.hasManagedFields = []any{}, true
		case 1:
			req.managedFields, req.hasManagedFields = []any{map[string]any{}}, true
		case 2:
			req.managedFields, req.hasManagedFields = []any{"not an entry"}, true
		case 3, 4, 5, 6, 7, 8:
			delete(md, "managedFields")
		}
		var fast, lib map[string]any
		err := s.update(ctx, func(tx *txn) error {
			var liveArg map[string]any
			if live != nil {
				liveArg = value.DeepCopyObject(live)
			}
			tx.request = req
			fast = value.DeepCopyObject(obj)
			if err := tx.trackUpdate(res, liveArg, fast); err != nil {
				return err
			}
			tx.request = req
			lib = value.DeepCopyObject(obj)
			if live != nil {
				liveArg = value.DeepCopyObject(live)
			}
			return tx.trackLibrary(res, liveArg, lib)
		})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		a, _ := json.Marshal(metadata(fast)["managedFields"])
		b, _ := json.Marshal(metadata(lib)["managedFields"])
		capped = capped || strings.Contains(string(a), `"ancient-changes"`)
		if string(a) != string(b) {
			t.Fatalf("step %d (%s, subresource %q, request managedFields %v): fast\n%s\nlibrary\n%s", step, req.manager, sub, req.managedFields, a, b)
		}
		if live == nil {
			md := metadata(fast)
			md["uid"] = "u-1"
			md["creationTimestamp"] = "2026-03-01T12:00:00Z"
		} else if sub == "status" {
			fast["spec"] = live["spec"]
		}
		live = fast
	}
	if !capped {
		t.Error("no history reached the cap of update managers")
	}
}

func deploymentBase() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": "nginx"},
				}},
			},
		},
	}
}

// mutate changes a few fields of a Deployment at random.
func mutate(r *rand.Rand, obj map[string]any) map[string]any {
	for n := r.Intn(4); n >= 0; n-- {
		switch r.Intn(9) {
		case 0:
			setField(obj, []string{"spec", "replicas"}, int64(r.Intn(5)))
		case 1:
			setField(obj, []string{"metadata", "labels", fmt.Sprintf("l%d", r.Intn(4))}, fmt.Sprint(r.Intn(3)))
		case 2:
			md := metadata(obj)
			if labels, ok := md["labels"].(map[string]any); ok {
				delete(labels, fmt.Sprintf("l%d", r.Intn(4)))
			}
		case 3:
			setField(obj, []string{"metadata", "annotations", fmt.Sprintf("a%d", r.Intn(3))}, fmt.Sprint(r.Intn(3)))
		case 4:
			c := map[string]any{"name": "app", "image": fmt.Sprintf("nginx:%d", r.Intn(3))}
			if r.Intn(2) == 0 {
				c["env"] = []any{map[string]any{"name": fmt.Sprintf("E%d", r.Intn(3)), "value": "x"}}
			}
			containers := []any{c}
			if r.Intn(3) == 0 {
				containers = append(containers, map[string]any{"name": "side", "image": "envoy"})
			}
			setField(obj, []string{"spec", "template", "spec", "containers"}, containers)
		case 5:
			setField(obj, []string{"status", "replicas"}, int64(r.Intn(3)))
		case 6:
			setField(obj, []string{"spec", "minReadySeconds"}, int64(r.Intn(3)))
		case 7:
			// An atomic struct (a LabelSelector) with one of its keys changed.
			setField(obj, []string{"spec", "selector", "matchLabels", fmt.Sprintf("s%d", r.Intn(2))}, fmt.Sprint(r.Intn(2)))
		case 8:
			setField(obj, []string{"spec", "template", "metadata", "annotations"}, map[string]any{fmt.Sprintf("t%d", r.Intn(2)): nil})
		}
	}
	return obj
}
