package sim_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/clock"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/sim"
	"github.com/konverge/konverge/wait"
)

// An embedded cluster in one line, applied to, waited on (the wait
// fast-forwards its virtual clock) and asked whether anything was
// written.
func ExampleOpen() {
	ctx := context.Background()
	c, err := sim.Open("") // a temporary cluster, removed by Close
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	web := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "web", "image": "nginx:1.27"}}},
			},
		},
	}
	a := apply.New(c, apply.Options{})
	results, err := a.Apply(ctx, apply.Objects(web))
	if err != nil {
		log.Fatal(err)
	}
	_, err = wait.ForCurrent(ctx, c, []objref.Ref{results[0].Ref}, wait.Options{
		Timeout: 5 * time.Minute, // of cluster time
		OnEvent: func(e wait.Event) { fmt.Println(c.Clock.Now().Sub(clock.Epoch), e) },
	})
	if err != nil {
		log.Fatal(err)
	}

	before, err := c.Revision(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := a.Apply(ctx, apply.Objects(web)); err != nil {
		log.Fatal(err)
	}
	after, err := c.Revision(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("re-apply wrote anything:", after != before)
	// Output:
	// 0s deployment.apps/web InProgress: Waiting for deployment "web" rollout to finish: 0 of 2 updated replicas are available...
	// 3s deployment.apps/web Current: deployment "web" successfully rolled out
	// re-apply wrote anything: false
}
