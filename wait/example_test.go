package wait_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kubelet"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/sim"
	"github.com/konverge/konverge/wait"
)

func deployment(name, image string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": image},
				}},
			},
		},
	}
}

// Apply, then wait until everything is Current. On the embedded cluster the
// simulation's RunUntil drives time, so the wait takes no wall time; on a
// real cluster, leave Driver nil (poll every second).
func ExampleForCurrent() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	clk := clock.New(clock.Manual, clock.Epoch)
	st, err := local.Open(dir, local.Options{Clock: clk})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	ctx := context.Background()

	results, err := apply.New(st, apply.Options{}).Apply(ctx, apply.Objects(deployment("web", "nginx:1.27")))
	if err != nil {
		panic(err)
	}
	var refs []objref.Ref
	for _, r := range results {
		refs = append(refs, r.Ref)
	}
	runner := sim.New(st, clk, sim.Controllers(kubelet.DefaultProfile())...)
	_, err = wait.ForCurrent(ctx, st, refs, wait.Options{
		Timeout: 5 * time.Minute,
		Driver:  runner,
		OnEvent: func(e wait.Event) { fmt.Println(e) },
	})
	fmt.Println("err:", err, "after", clk.Now().Sub(clock.Epoch))
	// Output:
	// deployment.apps/web InProgress: Waiting for deployment "web" rollout to finish: 0 of 2 updated replicas are available...
	// deployment.apps/web Current: deployment "web" successfully rolled out
	// err: <nil> after 3s
}
