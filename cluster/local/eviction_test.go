package local

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

var pdbGVK = schema.GVK{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}

// evictionFixture makes pod p (label app=web) bound to a node, in phase
// (Ready unless ready is false), and a budget web-pdb over app=web with
// the given status.
func evictionFixture(t *testing.T, phase string, ready bool, pdbStatus map[string]any, policy string) *Store {
	t.Helper()
	s, _ := openStore(t)
	ctx := context.Background()
	p := mustCreate(t, s, `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, labels: {app: web}}
spec:
  nodeName: node-a
  containers: [{name: c, image: nginx}]
`)
	readyStatus := "True"
	if !ready {
		readyStatus = "False"
	}
	p["status"] = map[string]any{"phase": phase, "conditions": []any{map[string]any{"type": "Ready", "status": readyStatus}}}
	if _, err := s.UpdateStatus(ctx, p); err != nil {
		t.Fatal(err)
	}
	if pdbStatus == nil {
		return s
	}
	doc := `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-pdb, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
`
	if policy != "" {
		doc += "  unhealthyPodEvictionPolicy: " + policy + "\n"
	}
	pdb := mustCreate(t, s, doc)
	pdb["status"] = pdbStatus
	if _, err := s.UpdateStatus(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	return s
}

func budget(allowed, current, desired int64) map[string]any {
	return map[string]any{"observedGeneration": int64(1), "disruptionsAllowed": allowed,
		"currentHealthy": current, "desiredHealthy": desired, "expectedPods": int64(1)}
}

// terminating reports whether the pod is gone or being deleted.
func terminating(t *testing.T, s *Store) bool {
	t.Helper()
	p, err := s.Get(context.Background(), podGVK, "default", "p")
	if cluster.IsNotFound(err) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return isDeleting(p)
}

func wantRefused(t *testing.T, err error, cause string) {
	t.Helper()
	var se *cluster.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want the 429 of a disruption budget", err)
	}
	if se.Code != 429 || se.Reason != cluster.ReasonTooManyRequests || se.Message != evictionRefused ||
		len(se.Causes) != 1 || se.Causes[0].Type != "DisruptionBudget" || se.Causes[0].Message != cause {
		t.Fatalf("err = %+v, want 429 TooManyRequests %q with cause DisruptionBudget %q", se, evictionRefused, cause)
	}
}

func TestEvictWithoutBudget(t *testing.T) {
	s := evictionFixture(t, "Running", true, nil, "")
	if err := s.Evict(context.Background(), "default", "p", cluster.GracePeriod(7)); err != nil {
		t.Fatal(err)
	}
	p := mustGet(t, s, podGVK, "default", "p")
	if !isDeleting(p) || metadata(p)["deletionGracePeriodSeconds"] != int64(7) {
		t.Fatalf("pod after eviction: %v, want it terminating with a grace period of 7 s", metadata(p))
	}
}

func TestEvictNotFound(t *testing.T) {
	s, _ := openStore(t)
	err := s.Evict(context.Background(), "default", "nosuch")
	if !cluster.IsNotFound(err) || err.Error() != `pods "nosuch" not found` {
		t.Fatalf("err = %v", err)
	}
}

func TestEvictRefusedByBudget(t *testing.T) {
	s := evictionFixture(t, "Running", true, budget(0, 2, 2), "")
	err := s.Evict(context.Background(), "default", "p")
	wantRefused(t, err, "The disruption budget web-pdb needs 2 healthy pods and has 2 currently")
	if terminating(t, s) {
		t.Fatal("a refused eviction deleted the pod")
	}
}

func TestEvictUsesUpBudget(t *testing.T) {
	s := evictionFixture(t, "Running", true, budget(1, 2, 1), "")
	if err := s.Evict(context.Background(), "default", "p"); err != nil {
		t.Fatal(err)
	}
	if !terminating(t, s) {
		t.Fatal("the pod was not deleted")
	}
	st, _ := mustGet(t, s, pdbGVK, "default", "web-pdb")["status"].(map[string]any)
	if st["disruptionsAllowed"] != int64(0) {
		t.Errorf("disruptionsAllowed = %v, want 0", st["disruptionsAllowed"])
	}
	dp, _ := st["disruptedPods"].(map[string]any)
	if dp["p"] != "2026-03-01T12:00:00Z" || len(dp) != 1 {
		t.Errorf("disruptedPods = %v, want p at the time of the eviction", dp)
	}
}

func TestEvictDryRunKeepsBudget(t *testing.T) {
	s := evictionFixture(t, "Running", true, budget(1, 2, 1), "")
	if err := s.Evict(context.Background(), "default", "p", cluster.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if terminating(t, s) {
		t.Fatal("a dry-run eviction deleted the pod")
	}
	st, _ := mustGet(t, s, pdbGVK, "default", "web-pdb")["status"].(map[string]any)
	if st["disruptionsAllowed"] != int64(1) || st["disruptedPods"] != nil {
		t.Errorf("status after a dry run: %v", st)
	}
	s2 := evictionFixture(t, "Running", true, budget(0, 1, 1), "")
	wantRefused(t, s2.Evict(context.Background(), "default", "p", cluster.DryRunAll),
		"The disruption budget web-pdb needs 1 healthy pods and has 1 currently")
}

func TestEvictMoreThanOneBudget(t *testing.T) {
	s := evictionFixture(t, "Running", true, budget(1, 2, 1), "")
	mustCreate(t, s, `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: second, namespace: default}
spec:
  maxUnavailable: 1
  selector: {}
`)
	err := s.Evict(context.Background(), "default", "p")
	var se *cluster.StatusError
	if !errors.As(err, &se) || se.Code != 500 || se.Reason != "" || se.Message != evictionManyPDBs {
		t.Fatalf("err = %+v, want the 500 of two budgets", err)
	}
	if terminating(t, s) {
		t.Fatal("the pod was deleted")
	}
}

func TestEvictIgnoresBudget(t *testing.T) {
	for _, tc := range []struct {
		name, phase, policy string
		ready               bool
		status              map[string]any
	}{
		{"pending", "Pending", "", true, budget(0, 1, 1)},
		{"succeeded", "Succeeded", "", false, budget(0, 1, 1)},
		{"unhealthy, budget met", "Running", "", false, budget(0, 2, 2)},
		{"unhealthy, AlwaysAllow", "Running", "AlwaysAllow", false, budget(0, 1, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := evictionFixture(t, tc.phase, tc.ready, tc.status, tc.policy)
			if err := s.Evict(context.Background(), "default", "p"); err != nil {
				t.Fatal(err)
			}
			if !terminating(t, s) {
				t.Fatal("the pod was not deleted")
			}
			st, _ := mustGet(t, s, pdbGVK, "default", "web-pdb")["status"].(map[string]any)
			if st["disruptionsAllowed"] != int64(0) || st["disruptedPods"] != nil {
				t.Errorf("the budget changed: %v", st)
			}
		})
	}
}

func TestEvictUnhealthyBelowBudget(t *testing.T) {
	s := evictionFixture(t, "Running", false, budget(0, 1, 2), "IfHealthyBudget")
	wantRefused(t, s.Evict(context.Background(), "default", "p"),
		"The disruption budget web-pdb needs 2 healthy pods and has 1 currently")
}

func TestEvictBudgetNotObservedYet(t *testing.T) {
	st := budget(1, 2, 1)
	st["observedGeneration"] = int64(0)
	s := evictionFixture(t, "Running", true, st, "")
	wantRefused(t, s.Evict(context.Background(), "default", "p"),
		"The disruption budget web-pdb is still being processed by the server.")
}

// The cause of a refusal follows the budget's DisruptionAllowed condition
// when the budget has the healthy pods it wants (as recorded from
// kube-apiserver v1.37.1 with hand-written budget statuses).
func TestEvictRefusalCauses(t *testing.T) {
	for _, tc := range []struct{ reason, message, cause string }{
		{"SyncFailed", "boom", "The disruption budget web-pdb does not allow evicting pods currently because it failed sync: boom"},
		{"Other", "why", "The disruption budget web-pdb does not allow evicting pods currently (Other): why"},
		{"Other", "", "The disruption budget web-pdb does not allow evicting pods currently"},
	} {
		st := budget(0, 2, 1)
		st["conditions"] = []any{map[string]any{"type": "DisruptionAllowed", "status": "False", "reason": tc.reason, "message": tc.message,
			"lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": int64(1)}}
		s := evictionFixture(t, "Running", true, st, "")
		wantRefused(t, s.Evict(context.Background(), "default", "p"), tc.cause)
	}
}

// A budget the disruption controller has not observed yet asks the client
// to retry in 10 seconds.
func TestEvictStaleBudgetRetryAfter(t *testing.T) {
	st := budget(1, 2, 1)
	st["observedGeneration"] = int64(0)
	s := evictionFixture(t, "Running", true, st, "")
	var se *cluster.StatusError
	if err := s.Evict(context.Background(), "default", "p"); !errors.As(err, &se) || se.RetryAfterSeconds != 10 {
		t.Fatalf("err = %+v, want a 429 with retryAfterSeconds 10", err)
	}
}

// The eviction that uses up the last disruption turns the budget's
// DisruptionAllowed condition False (InsufficientPods) at once.
func TestEvictLastDisruptionTurnsConditionFalse(t *testing.T) {
	st := budget(1, 2, 1)
	st["conditions"] = []any{map[string]any{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods", "message": "",
		"lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": int64(1)}}
	s := evictionFixture(t, "Running", true, st, "")
	if err := s.Evict(context.Background(), "default", "p"); err != nil {
		t.Fatal(err)
	}
	after, _ := mustGet(t, s, pdbGVK, "default", "web-pdb")["status"].(map[string]any)
	conds, _ := after["conditions"].([]any)
	c, _ := conds[0].(map[string]any)
	if len(conds) != 1 || c["status"] != "False" || c["reason"] != "InsufficientPods" || c["message"] != "" ||
		c["lastTransitionTime"] != "2026-03-01T12:00:00Z" || c["observedGeneration"] != int64(1) {
		t.Fatalf("condition after the last disruption: %v", conds)
	}
}

// A budget holding more evictions than the disruption controller has
// confirmed (over 2,000) forbids any more.
func TestEvictTooManyPending(t *testing.T) {
	st := budget(5, 10, 1)
	pending := map[string]any{}
	for i := range maxDisruptedPods + 1 {
		pending["gone-"+strconv.Itoa(i)] = "2026-03-01T12:00:00Z"
	}
	st["disruptedPods"] = pending
	s := evictionFixture(t, "Running", true, st, "")
	var se *cluster.StatusError
	err := s.Evict(context.Background(), "default", "p")
	if !errors.As(err, &se) || se.Code != 403 || se.Reason != cluster.ReasonForbidden ||
		se.Message != `poddisruptionbudget.policy "web-pdb" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller` {
		t.Fatalf("err = %+v", err)
	}
}
