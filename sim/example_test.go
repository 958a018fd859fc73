package sim_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/sim"
)

// A test applies a Deployment to an embedded cluster on a manual clock and
// lets the controllers and the simulated kubelet roll it out, in cluster
// time, without sleeping.
func ExampleRunner_RunUntil() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(dir, local.Options{Clock: clk})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	ctx := context.Background()

	deploy := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web"},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "nginx", "image": "nginx:1.16.1"},
				}},
			},
		},
	}
	if _, err := apply.New(st, apply.Options{}).Apply(ctx, apply.Objects(deploy)); err != nil {
		panic(err)
	}

	r := sim.New(st, clk, sim.Controllers(kubelet.DefaultProfile())...)
	gvk := schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	available := func() (bool, error) {
		d, err := st.Get(ctx, gvk, "default", "web")
		if err != nil {
			return false, err
		}
		status, _ := d["status"].(map[string]any)
		return status["availableReplicas"] == int64(3), nil
	}
	met, err := r.RunUntil(ctx, available, 10*time.Minute)
	if err != nil {
		panic(err)
	}
	fmt.Println("available:", met, "after", clk.Now().Sub(clock.Epoch))
	// Output:
	// available: true after 3s
}
