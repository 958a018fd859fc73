package kube_test

import (
	"errors"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
)

var pdbGVK = schema.GVK{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}

// TestRealEvict drives the pods/eviction subresource of the real API
// server (with kube-controller-manager, whose disruption controller
// keeps the budget's status) through Evict: the 429 of a budget that
// allows nothing, the 500 of two budgets, a dry run, an eviction.
func TestRealEvict(t *testing.T) {
	c, ns, ctx := realNamespace(t, "evict")
	if err := c.Evict(ctx, ns, "nosuch"); !cluster.IsNotFound(err) || err.Error() != `pods "nosuch" not found` {
		t.Fatalf("Evict of a missing pod: %v", err)
	}
	pod, err := c.Create(ctx, cluster.Object{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": ns, "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"nodeName": "node-x", "containers": []any{map[string]any{"name": "c", "image": "nginx"}}}})
	if err != nil {
		t.Fatal(err)
	}
	pod["status"] = map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	if _, err := c.UpdateStatus(ctx, pod); err != nil {
		t.Fatal(err)
	}
	mkPDB := func(name string) {
		t.Helper()
		if _, err := c.Create(ctx, cluster.Object{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"minAvailable": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	mkPDB("web-pdb")
	if !eventually(30*time.Second, func() bool {
		p, err := c.Get(ctx, pdbGVK, ns, "web-pdb")
		st, _ := p["status"].(map[string]any)
		return err == nil && st["observedGeneration"] == int64(1) && st["currentHealthy"] == int64(1)
	}) {
		t.Fatal("the disruption controller did not observe the budget (is kube-controller-manager running?)")
	}
	for _, opts := range [][]cluster.DeleteOption{nil, {cluster.DryRunAll}} {
		err := c.Evict(ctx, ns, "p", opts...)
		var se *cluster.StatusError
		if !errors.As(err, &se) || se.Code != 429 || !cluster.IsTooManyRequests(err) ||
			se.Message != "Cannot evict pod as it would violate the pod's disruption budget." ||
			len(se.Causes) != 1 || se.Causes[0].Type != "DisruptionBudget" ||
			se.Causes[0].Message != "The disruption budget web-pdb needs 1 healthy pods and has 1 currently" {
			t.Fatalf("Evict under a budget that allows nothing: %+v", err)
		}
	}
	mkPDB("second")
	err = c.Evict(ctx, ns, "p")
	var se *cluster.StatusError
	if !errors.As(err, &se) || se.Code != 500 || se.Reason != "" ||
		se.Message != "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support." {
		t.Fatalf("Evict under two budgets: %+v", err)
	}
	for _, n := range []string{"web-pdb", "second"} {
		if err := c.Delete(ctx, pdbGVK, ns, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Evict(ctx, ns, "p", cluster.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if p, err := c.Get(ctx, podGVK, ns, "p"); err != nil || md(p)["deletionTimestamp"] != nil {
		t.Fatalf("the dry run deleted the pod: %v %v", err, md(p))
	}
	if err := c.Evict(ctx, ns, "p", cluster.GracePeriod(5)); err != nil {
		t.Fatal(err)
	}
	p, err := c.Get(ctx, podGVK, ns, "p")
	if err != nil || md(p)["deletionTimestamp"] == nil || md(p)["deletionGracePeriodSeconds"] != int64(5) {
		t.Fatalf("after the eviction: %v %v", err, md(p))
	}
}
