package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/schema"
)

// Code written against cluster.Interface works with every backend: the
// embedded cluster here, a real API server (cluster/kube) elsewhere.
// Errors are *cluster.StatusError with the API server's reasons.
func ExampleInterface() {
	dir, _ := os.MkdirTemp("", "konverge-example")
	defer os.RemoveAll(dir)
	st, err := local.Open(dir, local.Options{})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	var c cluster.Interface = st
	ctx := context.Background()

	cm := cluster.Object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"data":     map[string]any{"color": "blue"},
	}
	// A server dry run validates and defaults without storing.
	if _, err := c.Create(ctx, cm, cluster.DryRunAll); err != nil {
		panic(err)
	}
	gvk := schema.GVK{Version: "v1", Kind: "ConfigMap"}
	_, err = c.Get(ctx, gvk, "default", "settings")
	fmt.Println("after the dry run:", cluster.IsNotFound(err))

	if _, err := c.Create(ctx, cm, cluster.FieldOwner("my-tool")); err != nil {
		panic(err)
	}
	_, err = c.Create(ctx, cm)
	var se *cluster.StatusError
	fmt.Println(errors.As(err, &se), se.Code, se.Reason, cluster.IsAlreadyExists(err))

	patched, err := c.Patch(ctx, gvk, "default", "settings", cluster.MergePatchType, []byte(`{"data":{"color":"green"}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(patched["data"])

	l, err := c.List(ctx, gvk, cluster.InNamespace("default"), cluster.MatchingLabels("app=web"))
	if err != nil {
		panic(err)
	}
	fmt.Println(len(l.Items), "with app=web")
	// Output:
	// after the dry run: true
	// true 409 AlreadyExists true
	// map[color:green]
	// 1 with app=web
}

// Options of the verbs are values that say which verbs they apply to.
func ExampleCollectList() {
	o := cluster.CollectList([]cluster.ListOption{cluster.InNamespace("web"), cluster.MatchingLabels("tier in (front,back)")})
	fmt.Printf("%q %q\n", o.Namespace, o.LabelSelector)
	// Output:
	// "web" "tier in (front,back)"
}
