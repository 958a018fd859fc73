// Command wait applies a Deployment to the embedded cluster and waits
// until it is healthy, printing each change of its health. The embedded
// cluster's controllers run on a virtual clock that the wait
// fast-forwards; on a real cluster, leave Driver nil to poll.
package main

import (
	"context"
	"fmt"
	"log"
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

func main() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "konverge")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	clk := clock.New(clock.Manual, clock.Epoch)
	c, err := local.Open(dir, local.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	controllers := sim.New(c, clk, sim.Controllers(kubelet.DefaultProfile())...)

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
		Timeout: 5 * time.Minute,
		Driver:  controllers,
		OnEvent: func(e wait.Event) { fmt.Println(clk.Now().Sub(clock.Epoch), e) },
	})
	if err != nil {
		log.Fatal(err) // *wait.TimeoutError or *wait.FailedError, naming the objects
	}
}
