package podautoscaler_test

import (
	"context"
	"fmt"
	"os"

	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/controller/podautoscaler"
	"github.com/konverge/konverge/schema"
)

// An HPA whose target runs fewer replicas than its minimum scales it up
// at once, through the scale subresource, and says so.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "hpa-example")
	defer os.RemoveAll(dir)
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(dir, local.Options{Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	for _, obj := range []map[string]any{
		{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}},
		{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec": map[string]any{"minReplicas": int64(2), "maxReplicas": int64(5),
				"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}},
	} {
		if _, err := st.Create(ctx, obj); err != nil {
			fmt.Println(err)
			return
		}
	}
	if _, err := (podautoscaler.Controller{}).Sync(ctx, st, clk.Now()); err != nil {
		fmt.Println(err)
		return
	}
	d, _ := st.Get(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, "default", "web")
	fmt.Println("replicas:", d["spec"].(map[string]any)["replicas"])
	h, _ := st.Get(ctx, podautoscaler.HPAGVK, "default", "web")
	for _, c := range h["status"].(map[string]any)["conditions"].([]any) {
		m := c.(map[string]any)
		fmt.Println(m["type"], m["status"], m["reason"])
	}
	// Output:
	// replicas: 2
	// AbleToScale True SucceededRescale
	// ScaledToZero False NotScaledToZero
}
