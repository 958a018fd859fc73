package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
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

// Plans and results never show a Secret's values unless asked: Live,
// Merged, Patch and Object are masked (the last-applied annotation in
// them too), in what fmt prints and what encoding/json writes; Unmasked
// returns the plaintext. ApplyPlan applies the plaintext a plan keeps.
func ExampleChange_Unmasked() {
	ctx := context.Background()
	c, done := openEmbedded()
	defer done()
	secret := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "db", "namespace": "default"},
		"stringData": map[string]any{"password": "hunter22"},
	}
	a := apply.New(c, apply.Options{})
	plan, err := a.Plan(ctx, apply.Objects(secret))
	if err != nil {
		log.Fatal(err)
	}
	ch := plan.Changes[0]
	js, err := json.Marshal(plan)
	if err != nil {
		log.Fatal(err)
	}
	printed := fmt.Sprintf("%+v %+v %v %s", plan, ch, ch.Merged, js)
	fmt.Println(ch.Merged["data"], strings.Contains(printed, "hunter22"), strings.Contains(printed, "aHVudGVyMjI="))
	fmt.Println(ch.Unmasked().Merged["data"])

	results, err := a.ApplyPlan(ctx, plan)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(results[0], results[0].Object["data"], results[0].Unmasked().Object["data"])
	// Output:
	// map[password:***] false false
	// map[password:aHVudGVyMjI=]
	// secret/db created map[password:***] map[password:aHVudGVyMjI=]
}

// Result.Drift tells a write that changed the object from one that did
// not: re-applying a Secret written with stringData sends a patch
// (kubectl prints "configured") that changes nothing.
func ExampleResult_Drift() {
	ctx := context.Background()
	c, done := openEmbedded()
	defer done()
	secret := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "db", "namespace": "default"},
		"stringData": map[string]any{"password": "hunter22"},
	}
	a := apply.New(c, apply.Options{})
	for i := 0; i < 2; i++ {
		results, err := a.Apply(ctx, apply.Objects(secret))
		if err != nil {
			log.Fatal(err)
		}
		r := results[0]
		fmt.Println(r, "drift:", r.Drift, "changed:", r.Changed())
	}
	// Output:
	// secret/db created drift: true changed: true
	// secret/db configured drift: false changed: false
}

// A plan refuses what applying refuses, with the same errors: the API
// server's validation runs on the objects the plan predicts, here without
// a cluster.
func ExamplePlanner_Plan_validation() {
	ctx := context.Background()
	objs, err := manifest.Parse(ctx, "web.yaml", []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: frontend}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
---
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: default}
data: {password: "not base64!"}
`))
	if err != nil {
		log.Fatal(err)
	}
	_, err = apply.NewPlanner(apply.NewSnapshot(), nil, apply.Options{}).Plan(ctx, objs)
	var errs apply.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			var se *cluster.StatusError
			errors.As(e, &se)
			fmt.Printf("%s: %s\n", se.Reason, e)
		}
	}
	// Output:
	// Invalid: apply: web.yaml#1 (line 1) deployment.apps/web: Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: {"app":"frontend"}: `selector` does not match template `labels`
	// BadRequest: apply: web.yaml#2 (line 10) secret/db: Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3
}

// One field-path type, value.Path, in one spelling: a server-side apply
// conflict's field, a plan's drift, an object error's field, and an
// ignore rule all use it, and Pointer gives the JSON pointer.
func Example_fieldPaths() {
	ctx := context.Background()
	c, done := openEmbedded()
	defer done()
	cm := func(color string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "settings", "namespace": "default",
				"labels": map[string]any{"app.kubernetes.io/name": color}},
			"data": map[string]any{"color": color}}
	}
	gitops := apply.New(c, apply.Options{ServerSide: true, FieldManager: "gitops"})
	if _, err := gitops.Apply(ctx, apply.Objects(cm("blue"))); err != nil {
		log.Fatal(err)
	}
	_, err := apply.New(c, apply.Options{ServerSide: true, FieldManager: "human"}).Apply(ctx, apply.Objects(cm("red")))
	var conflict *apply.ConflictError
	if errors.As(err, &conflict) {
		for _, f := range conflict.Conflicts {
			ptr, _ := f.Path().Pointer()
			fmt.Println("conflict:", f.Path(), ptr)
		}
	}

	plan, err := gitops.Plan(ctx, apply.Objects(cm("green")))
	if err != nil {
		log.Fatal(err)
	}
	var rule apply.IgnoreRule
	for _, p := range plan.Changes[0].Paths {
		ptr, _ := p.Pointer()
		fmt.Println("drift:", p, ptr)
		rule.Paths = append(rule.Paths, p.String()) // a drift path is a rule's path
	}
	ignoring := apply.New(c, apply.Options{ServerSide: true, FieldManager: "gitops", Ignore: []apply.IgnoreRule{rule}})
	if plan, err = ignoring.Plan(ctx, apply.Objects(cm("green"))); err != nil {
		log.Fatal(err)
	}
	fmt.Println("drift with the rule:", plan.HasDrift())

	bad := map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "default"},
		"data":     map[string]any{"password": "not base64!"}}
	_, err = gitops.Plan(ctx, apply.Objects(bad))
	var oe *apply.ObjectError
	if errors.As(err, &oe) {
		fmt.Println("error at:", oe.Path)
	}
	// Output:
	// conflict: data.color /data/color
	// conflict: metadata.labels[app.kubernetes.io/name] /metadata/labels/app.kubernetes.io~1name
	// drift: data.color /data/color
	// drift: metadata.labels[app.kubernetes.io/name] /metadata/labels/app.kubernetes.io~1name
	// drift with the rule: false
	// error at: data.password
}
