package replicaset_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/internal/ctrltest"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/replicaset"
)

// rsStep is one random edit of what the ReplicaSet controller reads:
// ReplicaSets (created with a selector of their own or one they share,
// scaled, given minReadySeconds, deleted), their pods (deleted, made
// ready), orphans a selector matches, and time passing.
func rsStep(e *ctrltest.Env, r *rand.Rand, i int) {
	e.TB.Helper()
	name := fmt.Sprintf("rs%d", r.IntN(3))
	switch op := r.IntN(9); {
	case !e.Exists(kobj.ReplicaSetGVK, "default", name):
		rs := newRS(name, int64(r.IntN(6)))
		if r.IntN(3) == 0 {
			// A selector that orphans of other ReplicaSets match.
			kobj.Map(rs, "spec", "selector", "matchLabels")["app"] = "shared"
			kobj.Map(rs, "spec", "template", "metadata", "labels")["app"] = "shared"
		}
		e.Create(rs)
	case op == 0:
		e.Modify(kobj.ReplicaSetGVK, "default", name, func(rs map[string]any) {
			kobj.EnsureMap(rs, "spec")["replicas"] = int64(r.IntN(7))
		})
	case op == 1:
		e.Modify(kobj.ReplicaSetGVK, "default", name, func(rs map[string]any) {
			kobj.EnsureMap(rs, "spec")["minReadySeconds"] = int64(r.IntN(3) * 5)
		})
	case op == 2 && i%5 == 0:
		e.Delete(kobj.ReplicaSetGVK, "default", name)
	case op == 3:
		if ps := pods(e); len(ps) > 0 {
			e.Delete(kobj.PodGVK, "default", kobj.Name(ps[r.IntN(len(ps))]))
		}
	case op == 4:
		e.Create(map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": fmt.Sprintf("orphan-%d", i), "namespace": "default",
				"labels": map[string]any{"app": []string{"shared", "rs0", "other"}[r.IntN(3)]}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}})
	case op == 5 || op == 6:
		for _, p := range pods(e) {
			if ok, _ := kobj.PodReady(p); !ok && !kobj.Deleting(p) && r.IntN(2) == 0 {
				makeReady(e, p)
			}
		}
	default:
		e.Advance(time.Duration(1+r.IntN(10)) * time.Second)
	}
}

// rsDump is what the controller wrote: the ReplicaSets' statuses, the
// pods with their controller and readiness, the Events.
func rsDump(e *ctrltest.Env) string {
	var lines []string
	for _, rs := range e.List(kobj.ReplicaSetGVK, "default") {
		lines = append(lines, fmt.Sprintf("rs %s %v", kobj.Name(rs), rs["status"]))
	}
	for _, p := range pods(e) {
		ctrl := ""
		if ref := kobj.ControllerRef(p); ref != nil {
			ctrl = kobj.Str(ref, "name")
		}
		ok, _ := kobj.PodReady(p)
		lines = append(lines, fmt.Sprintf("pod %s %s %v %v", kobj.Name(p), ctrl, ok, kobj.Deleting(p)))
	}
	evs := e.Events("default")
	sort.Strings(evs)
	lines = append(lines, evs...)
	return strings.Join(lines, "\n")
}

// SyncChanged makes the writes Sync makes: seeded random edits, with
// syncs cut short by a budget of writes as the client rate limit cuts
// them, leave the same ReplicaSets, pods and Events after every step, and
// a full sync finds nothing left to write.
func TestIncrementalSameWrites(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctrltest.SameWrites(t, seed, 50,
				func() []controller.Controller { return []controller.Controller{replicaset.Controller{}} },
				func() []controller.Controller { return []controller.Controller{replicaset.New()} },
				rsStep, rsDump)
		})
	}
}
