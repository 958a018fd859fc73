// Command wait applies a Deployment to the embedded cluster and waits
// until it is healthy, printing each change of its health. sim.Open binds
// the store, its controllers and a virtual clock that the wait
// fast-forwards; on a real cluster, wait.ForCurrent polls.
package main

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

func main() {
	ctx := context.Background()
	c, err := sim.Open("") // a temporary embedded cluster; Close removes it
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	web := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web"},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "web", "image": "nginx:1.27"},
				}},
			},
		},
	}
	results, err := apply.New(c, apply.Options{}).Apply(ctx, apply.Objects(web))
	if err != nil {
		log.Fatal(err)
	}
	refs := []objref.Ref{results[0].Ref}
	_, err = wait.ForCurrent(ctx, c, refs, wait.Options{
		Timeout: 5 * time.Minute, // of cluster time
		OnEvent: func(e wait.Event) { fmt.Println(c.Clock.Now().Sub(clock.Epoch), e) },
	})
	if err != nil {
		log.Fatal(err) // *wait.TimeoutError or *wait.FailedError, naming the objects
	}
	rev, err := c.Revision(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := apply.New(c, apply.Options{}).Apply(ctx, apply.Objects(web)); err != nil {
		log.Fatal(err)
	}
	again, err := c.Revision(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("a second apply wrote:", again != rev)
}
