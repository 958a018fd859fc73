package diff_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/diff"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/sim"
)

// A tool keeps one apply.Options and gives it to Plan, Apply and Diff
// alike. Entry.Live and Entry.Merged are the objects as the server returns
// them, resourceVersion, generation and status included.
func ExampleOptions() {
	ctx := context.Background()
	c, err := sim.Open("")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	web := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web"},
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
	opts := apply.Options{Namespace: "shop", Ignore: []apply.IgnoreRule{
		{Group: "apps", Kind: "Deployment", Paths: []string{"spec.replicas"}}}}
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop"}}
	if _, err := apply.New(c, opts).Apply(ctx, apply.Objects(ns, web)); err != nil {
		log.Fatal(err)
	}
	if err := c.Runner.Advance(ctx, time.Minute); err != nil { // the controllers write status
		log.Fatal(err)
	}

	web["spec"].(map[string]any)["replicas"] = int64(5) // ignored
	web["spec"].(map[string]any)["minReadySeconds"] = int64(10)
	report, err := diff.New(c, diff.Options{Options: opts}).Run(ctx, apply.Objects(ns, web))
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range report.Entries {
		md := objref.Metadata(e.Live)
		fmt.Println(e.Name(), e.Action, "resourceVersion:", md["resourceVersion"] != nil,
			"generation:", md["generation"], "status:", e.Live["status"] != nil)
	}
	fmt.Println(report.Entries[0].Merged["spec"].(map[string]any)["replicas"])
	// Output:
	// apps.v1.Deployment.shop.web update resourceVersion: true generation: 1 status: true
	// v1.Namespace..shop none resourceVersion: true generation: <nil> status: true
	// 2
}
