package apply_test

import (
	"context"
	"fmt"
	"os"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/schema"
)

// A tool that keeps its own cache of live objects plans against it,
// without a cluster: a Snapshot of the objects and the kinds of a
// default kube-apiserver.
func ExamplePlanner_Plan() {
	live := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "settings", "namespace": "default", "uid": "1b4c5d40-0000-4000-8000-000000000001",
			"annotations": map[string]any{
				"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","data":{"color":"blue"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"settings","namespace":"default"}}` + "\n",
			},
		},
		"data": map[string]any{"color": "red"}, // changed behind apply's back
	}
	config := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings"},
		"data":     map[string]any{"color": "blue"},
	}
	limits := map[string]any{
		"apiVersion": "v1", "kind": "LimitRange",
		"metadata": map[string]any{"name": "limits"},
		"spec": map[string]any{"limits": []any{map[string]any{
			"type": "Container", "default": map[string]any{"cpu": "0.5"}}}},
	}
	mapper := kinds.NewMapper(kinds.Builtin(), schema.Builtin())
	p, err := apply.NewPlanner(apply.NewSnapshot(live), mapper, apply.Options{}).
		Plan(context.Background(), apply.Objects(config, limits))
	if err != nil {
		panic(err)
	}
	for _, c := range p.Changes {
		fmt.Println(c, "drift:", c.Drift, c.Paths)
	}
	fmt.Println(p.Changes[0].Patch["data"])
	// What the server will store: its canonical quantity and its defaults.
	fmt.Println(p.Changes[1].Merged["spec"])
	// Output:
	// configmap/settings configured drift: true [data.color]
	// limitrange/limits created drift: true []
	// map[color:blue]
	// map[limits:[map[default:map[cpu:500m] defaultRequest:map[cpu:500m] type:Container]]]
}

// Show a plan, ask, then apply exactly what was shown.
func ExampleApplier_ApplyPlan() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()

	secret := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "creds"},
		"stringData": map[string]any{"password": "s3cr3t"},
	}
	a := apply.New(c, apply.Options{})
	for i := 0; i < 2; i++ {
		p, err := a.Plan(ctx, apply.Objects(secret))
		if err != nil {
			panic(err)
		}
		for _, ch := range p.Masked().Changes {
			// kubectl prints "configured" for a Secret written with
			// stringData on every apply, although nothing changes.
			fmt.Println("plan:", ch, "drift:", ch.Drift, ch.Merged["data"])
		}
		if !p.HasDrift() {
			continue // nothing to ask about
		}
		results, err := a.ApplyPlan(ctx, p)
		if err != nil {
			panic(err)
		}
		fmt.Println("applied:", results[0])
	}
	// Output:
	// plan: secret/creds created drift: true map[password:***]
	// applied: secret/creds created
	// plan: secret/creds configured drift: false map[password:***]
}

// Leave the replicas of a Deployment that an autoscaler scales alone: the
// plan reports no drift, and apply neither resets nor removes them.
func ExampleIgnoreRule() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	c, err := local.Open(dir, local.Options{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()

	deploy := map[string]any{
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
	if _, err := apply.New(c, apply.Options{}).Apply(ctx, apply.Objects(deploy)); err != nil {
		panic(err)
	}
	// The autoscaler scales it to 5.
	gvk := schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	if _, err := c.Patch(ctx, gvk, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":5}}`)); err != nil {
		panic(err)
	}

	plain, _ := apply.New(c, apply.Options{}).Plan(ctx, apply.Objects(deploy))
	fmt.Println(plain.Changes[0], plain.Changes[0].Paths)

	hpa := apply.IgnoreRule{Group: "apps", Kind: "Deployment", Paths: []string{"spec.replicas"}}
	a := apply.New(c, apply.Options{Ignore: []apply.IgnoreRule{hpa}})
	p, _ := a.Plan(ctx, apply.Objects(deploy))
	fmt.Println(p.Changes[0], "drift:", p.Changes[0].Drift)
	if _, err := a.Apply(ctx, apply.Objects(deploy)); err != nil {
		panic(err)
	}
	live, _ := c.Get(ctx, gvk, "default", "web")
	fmt.Println("replicas:", live["spec"].(map[string]any)["replicas"])
	// Output:
	// deployment.apps/web configured [spec.replicas]
	// deployment.apps/web unchanged drift: false
	// replicas: 5
}

// A sync loop keeps one Planner that remembers: the second plan of an
// unchanged input against unchanged live objects takes the changes of
// the first instead of computing them again.
func ExamplePlanner_WithMemory() {
	live := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "settings", "namespace": "default",
			"uid": "1b4c5d40-0000-4000-8000-000000000002", "resourceVersion": "7",
			"annotations": map[string]any{
				"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","data":{"color":"blue"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"settings","namespace":"default"}}` + "\n",
			},
		},
		"data": map[string]any{"color": "red"},
	}
	config := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings"},
		"data":     map[string]any{"color": "blue"},
	}
	snap := apply.NewSnapshot(live)
	planner := apply.NewPlanner(snap, kinds.NewMapper(kinds.Builtin(), schema.Builtin()), apply.Options{}).WithMemory()
	for round := 1; round <= 3; round++ {
		if round == 3 {
			// The live object moves: a new resourceVersion, planned again.
			moved := map[string]any{}
			for k, v := range live {
				moved[k] = v
			}
			md := map[string]any{}
			for k, v := range live["metadata"].(map[string]any) {
				md[k] = v
			}
			md["resourceVersion"] = "8"
			moved["metadata"], moved["data"] = md, map[string]any{"color": "blue"}
			snap.Set(moved)
		}
		p, err := planner.Plan(context.Background(), apply.Objects(config))
		if err != nil {
			panic(err)
		}
		fmt.Println(round, p.Changes[0], "drift:", p.Changes[0].Drift)
	}
	// Output:
	// 1 configmap/settings configured drift: true
	// 2 configmap/settings configured drift: true
	// 3 configmap/settings unchanged drift: false
}
