package deployment_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/deployment"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/controller/replicaset"
)

// randomRun applies seeded random edits to a few Deployments (scale,
// new image, strategy, pause, pods deleted, pods not made ready, time
// passing) and syncs ctl with the ReplicaSet controller after each; it
// returns the state after each step: Deployments' specs, statuses and
// annotations, ReplicaSets' names, replicas and annotations, pods' names
// and readiness, and the Events.
func randomRun(t *testing.T, seed uint64, ctls []controller.Controller, budget bool) []string {
	return randomRunWith(t, seed, ctls, budget, false)
}

// randomRunWith is randomRun; with orphans, a Deployment "e" whose
// selector names a pod-template-hash releases every ReplicaSet it makes,
// and ReplicaSets without a controller come and change their labels, for
// the Deployments of their labels to adopt (a selector of "e" and "f"
// uses matchExpressions).
func randomRunWith(t *testing.T, seed uint64, ctls []controller.Controller, budget, orphans bool) []string {
	e := newEnv(t)
	r := rand.New(rand.NewPCG(seed, 7))
	e.ready = func(p map[string]any) bool { return r.IntN(4) != 0 }
	if budget {
		// Syncs cut short as the client rate limit cuts them.
		n := 0
		e.Budget = func() int { n++; return 1 + n*5%7 }
	}
	names := []string{"a", "b", "c", "d"}
	for _, n := range names[:2] {
		e.create(deploymentObj(n, int64(1+r.IntN(4)), "img:1"))
	}
	if orphans {
		d := deploymentObj("e", 2, "img:1")
		kobj.Map(d, "spec", "selector", "matchLabels")["pod-template-hash"] = "abc"
		kobj.Map(d, "spec", "template", "metadata", "labels")["pod-template-hash"] = "abc"
		e.create(d)
		f := deploymentObj("f", 1, "img:1")
		kobj.Map(f, "spec")["selector"] = map[string]any{"matchExpressions": []any{map[string]any{
			"key": "app", "operator": "In", "values": []any{"f", "x"},
		}}}
		kobj.Map(f, "spec", "template", "metadata")["labels"] = map[string]any{"app": "f"}
		e.create(f)
	}
	orphanLabels := func() map[string]any {
		return map[string]any{"app": []string{"a", "b", "c", "d", "f", "x"}[r.IntN(6)]}
	}
	var states []string
	for step := range 30 {
		n := names[r.IntN(len(names))]
		switch op := r.IntN(8); {
		case orphans && step%3 == 1:
			labels := orphanLabels()
			e.create(map[string]any{
				"apiVersion": "apps/v1", "kind": "ReplicaSet",
				"metadata": map[string]any{"name": fmt.Sprintf("orphan-%d", step), "namespace": "default", "labels": labels},
				"spec": map[string]any{
					"replicas": int64(r.IntN(2)),
					"selector": map[string]any{"matchLabels": labels},
					"template": map[string]any{
						"metadata": map[string]any{"labels": labels},
						"spec":     map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "img:o"}}},
					},
				},
			})
		case orphans && step%3 == 2:
			var bare []string
			for _, rs := range e.replicaSets() {
				if kobj.ControllerUID(rs) == "" {
					bare = append(bare, kobj.Name(rs))
				}
			}
			if len(bare) > 0 {
				labels := orphanLabels()
				e.Modify(kobj.ReplicaSetGVK, "default", bare[r.IntN(len(bare))], func(rs map[string]any) {
					kobj.EnsureMap(rs, "metadata")["labels"] = labels
				})
			}
		case !e.Exists(kobj.DeploymentGVK, "default", n):
			e.create(deploymentObj(n, int64(r.IntN(5)), fmt.Sprintf("img:%d", step)))
		case op == 0:
			e.modify(n, setSpec("replicas", int64(r.IntN(6))))
		case op == 1:
			e.modify(n, setImage(fmt.Sprintf("img:%d", step)))
		case op == 2:
			e.modify(n, setSpec("paused", r.IntN(2) == 0))
		case op == 3:
			e.modify(n, func(d map[string]any) {
				kobj.EnsureMap(d, "spec")["progressDeadlineSeconds"] = int64(5 + r.IntN(20))
			})
		case op == 4:
			if pods := e.pods(); len(pods) > 0 {
				p := pods[r.IntN(len(pods))]
				e.Delete(kobj.PodGVK, "default", kobj.Name(p))
			}
		case op == 5 && step%7 == 0:
			e.Delete(kobj.DeploymentGVK, "default", n)
		default:
			e.Advance(time.Duration(1+r.IntN(20)) * time.Second)
		}
		for range 3 {
			for _, c := range ctls {
				e.Sync(c)
			}
			e.makePodsReady()
		}
		states = append(states, dump(e))
	}
	return states
}

func dump(e *env) string {
	var b strings.Builder
	for _, d := range e.List(kobj.DeploymentGVK, "default") {
		fmt.Fprintf(&b, "deploy %s %v %v %v\n", kobj.Name(d), d["spec"], d["status"], kobj.Map(d, "metadata", "annotations"))
	}
	for _, rs := range e.replicaSets() {
		fmt.Fprintf(&b, "rs %s %v %v\n", kobj.Name(rs), kobj.Map(rs, "spec")["replicas"], kobj.Map(rs, "metadata", "annotations"))
	}
	var pods []string
	for _, p := range e.pods() {
		ok, _ := kobj.PodReady(p)
		pods = append(pods, fmt.Sprintf("pod %s %v %v", kobj.Name(p), ok, kobj.Deleting(p)))
	}
	sort.Strings(pods)
	b.WriteString(strings.Join(pods, "\n"))
	b.WriteString("\n" + strings.Join(e.Events("default"), "\n"))
	return b.String()
}

// SyncChanged makes the writes Sync makes: the same random edits leave
// the same Deployments, ReplicaSets, pods and Events after every step,
// and a full sync finds nothing left to write.
func TestIncrementalSameWrites(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			full := randomRun(t, seed, []controller.Controller{deployment.Controller{}, replicaset.Controller{}}, false)
			inc := randomRun(t, seed, []controller.Controller{deployment.New(), replicaset.Controller{}}, false)
			for i := range full {
				if full[i] != inc[i] {
					t.Fatalf("step %d: incremental and full syncs differ:\nfull:\n%s\nincremental:\n%s", i, full[i], inc[i])
				}
			}
		})
	}
}

// The same with both the Deployment and the ReplicaSet controllers
// incremental, and every sync cut short by a budget of writes, as the
// client rate limit cuts them: the Deployments and ReplicaSets not
// reached are synced at the next sync, as a full sync would.
func TestIncrementalSameWritesThrottled(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			full := randomRun(t, seed, []controller.Controller{deployment.Controller{}, replicaset.Controller{}}, true)
			inc := randomRun(t, seed, []controller.Controller{deployment.New(), replicaset.New()}, true)
			for i := range full {
				if full[i] != inc[i] {
					t.Fatalf("step %d: incremental and full syncs differ:\nfull:\n%s\nincremental:\n%s", i, full[i], inc[i])
				}
			}
		})
	}
}

// The same with ReplicaSets that no Deployment controls: a Deployment
// that releases every ReplicaSet it makes, bare ReplicaSets that come
// and change labels: an incremental sync queues and hands over only the
// Deployments and orphans that a selector matches, with the same writes.
func TestIncrementalSameWritesOrphans(t *testing.T) {
	for seed := range uint64(3) {
		for _, budget := range []bool{false, true} {
			t.Run(fmt.Sprint(seed, budget), func(t *testing.T) {
				full := randomRunWith(t, seed, []controller.Controller{deployment.Controller{}, replicaset.Controller{}}, budget, true)
				inc := randomRunWith(t, seed, []controller.Controller{deployment.New(), replicaset.New()}, budget, true)
				for i := range full {
					if full[i] != inc[i] {
						t.Fatalf("step %d: incremental and full syncs differ:\nfull:\n%s\nincremental:\n%s", i, full[i], inc[i])
					}
				}
				if !strings.Contains(full[len(full)-1], "rs e-") || !strings.Contains(strings.Join(full, ""), "orphan-") {
					t.Fatalf("the run made no released or bare ReplicaSets:\n%s", full[len(full)-1])
				}
			})
		}
	}
}
