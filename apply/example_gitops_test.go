package apply_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"slices"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/manifest"
)

// openEmbedded opens an embedded cluster in a temporary directory; the
// returned function closes and removes it.
func openEmbedded() (*local.Store, func()) {
	dir, err := os.MkdirTemp("", "konverge")
	if err != nil {
		log.Fatal(err)
	}
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); os.RemoveAll(dir) }
}

// specKeysAdded returns the fields of b's spec that a's spec does not
// have, sorted.
func specKeysAdded(a, b map[string]any) []string {
	as, _ := a["spec"].(map[string]any)
	bs, _ := b["spec"].(map[string]any)
	var out []string
	for k := range bs {
		if _, ok := as[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// The Merged object of a create is the configuration with the server's
// defaults; what the server's registry strategies and allocators add on a
// create is not predicted (see Change.Merged). Once created, the live
// object carries those fields and a plan keeps them: no drift.
func ExampleChange_created() {
	ctx := context.Background()
	c, done := openEmbedded()
	defer done()
	objs, err := manifest.Parse(ctx, "shop.yaml", []byte(`apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`))
	if err != nil {
		log.Fatal(err)
	}
	a := apply.New(c, apply.Options{})
	plan, err := a.Plan(ctx, objs)
	if err != nil {
		log.Fatal(err)
	}
	results, err := a.ApplyPlan(ctx, plan)
	if err != nil {
		log.Fatal(err)
	}
	for i, ch := range plan.Changes {
		fmt.Println(ch, "stored spec adds", specKeysAdded(ch.Merged, results[i].Object))
	}
	again, err := a.Plan(ctx, objs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("drift after apply:", again.HasDrift())
	// Output:
	// namespace/shop created stored spec adds [finalizers]
	// service/web created stored spec adds [clusterIP clusterIPs ipFamilies ipFamilyPolicy]
	// drift after apply: false
}
