package podautoscaler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller/podautoscaler"
	"github.com/konverge/konverge/schema"
)

// An HPA written as autoscaling/v1 is read as its v2 view (a CPU
// utilization metric) and gets a v1 status; the metric fails as without a
// metrics server, and a second sync in the same period does nothing.
func TestV1HPA(t *testing.T) {
	ctx := context.Background()
	clk := clock.New(clock.Manual, clock.Epoch)
	var warnings []string
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk, Warnings: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, obj := range []map[string]any{
		{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec": map[string]any{"replicas": int64(3), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}},
		{"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec": map[string]any{"maxReplicas": int64(5), "targetCPUUtilizationPercentage": int64(60),
				"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}},
	} {
		if _, err := st.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := (podautoscaler.Controller{}).Sync(ctx, st, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	h, err := st.Get(ctx, schema.GVK{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"}, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	status := h["status"].(map[string]any)
	if status["currentReplicas"] != int64(3) || status["desiredReplicas"] != int64(0) || status["conditions"] != nil {
		t.Errorf("v1 status: %v", status)
	}
	if _, ok := h["spec"].(map[string]any)["metrics"]; ok {
		t.Errorf("the v2 view was written: %v", h["spec"])
	}
	evs, err := st.List(ctx, schema.GVK{Version: "v1", Kind: "Event"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs.Items {
		got = append(got, e["reason"].(string)+": "+e["message"].(string)+" x"+strings.TrimSpace(strings.Repeat("I", int(e["count"].(int64)))))
	}
	want := []string{
		"FailedGetResourceMetric: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io) xI",
		"FailedComputeMetricsReplicas: invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io) xI",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
}

// A new minReplicas is acted on at once, not at the next period.
func TestSpecChangeReconciledAtOnce(t *testing.T) {
	ctx := context.Background()
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(t.TempDir(), local.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deploy := schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	for _, obj := range []map[string]any{
		{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}},
		{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec": map[string]any{"minReplicas": int64(2), "maxReplicas": int64(5),
				"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}},
	} {
		if _, err := st.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	replicas := func() any {
		d, err := st.Get(ctx, deploy, "default", "web")
		if err != nil {
			t.Fatal(err)
		}
		return d["spec"].(map[string]any)["replicas"]
	}
	sync := func() {
		if _, err := (podautoscaler.Controller{}).Sync(ctx, st, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	sync()
	clk.Set(clk.Now().Add(3 * time.Second))
	sync() // within the period: nothing
	if r := replicas(); r != int64(2) {
		t.Fatalf("replicas %v, want 2", r)
	}
	if _, err := st.Patch(ctx, podautoscaler.HPAGVK, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"minReplicas":4}}`)); err != nil {
		t.Fatal(err)
	}
	sync()
	if r := replicas(); r != int64(4) {
		t.Errorf("replicas %v after minReplicas 4, want 4 at once", r)
	}
}
