package kube_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/internal/realcluster"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/kube"
	"github.com/konverge/konverge/schema"
)

var (
	cmGVK = schema.GVK{Version: "v1", Kind: "ConfigMap"}
	nsGVK = schema.GVK{Version: "v1", Kind: "Namespace"}
)

func configMap(ns, name string, labels map[string]any, data map[string]any) cluster.Object {
	return cluster.Object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
		"data":     data,
	}
}

// TestRealServerContract checks the backend against a real kube-apiserver:
// every verb, the error reasons konverge relies on, selectors, dry runs,
// patch types and watch.
func TestRealServerContract(t *testing.T) {
	c, err := kube.FromKubeconfig(realcluster.Kubeconfig(t), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ns := fmt.Sprintf("konverge-contract-%d", time.Now().UnixNano()%1e9)
	if _, err := c.Create(ctx, cluster.Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
		t.Fatal(err)
	}
	defer c.Delete(context.Background(), nsGVK, "", ns)

	// Mapper: discovery with short names and scope.
	if r, err := c.Mapper().Find("deploy"); err != nil || r.GVK.Kind != "Deployment" || !r.Namespaced || !r.Strategic || !r.Status {
		t.Errorf("Find(deploy) = %+v, %v", r, err)
	}
	if r, err := c.Mapper().Find("ns"); err != nil || r.Namespaced {
		t.Errorf("Find(ns) = %+v, %v", r, err)
	}

	// Only the ConfigMaps of this test: kube-controller-manager adds
	// kube-root-ca.crt to every namespace.
	w, err := c.Watch(ctx, cmGVK, cluster.InNamespace(ns), cluster.MatchingLabels("app"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// Dry run stores nothing.
	if _, err := c.Create(ctx, configMap(ns, "a", map[string]any{"app": "x"}, map[string]any{"k": "v"}), cluster.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, cmGVK, ns, "a"); cluster.ReasonOf(err) != cluster.ReasonNotFound || !cluster.IsNotFound(err) {
		t.Fatalf("after a dry-run create: %v", err)
	}

	a, err := c.Create(ctx, configMap(ns, "a", map[string]any{"app": "x"}, map[string]any{"k": "v"}), cluster.FieldOwner("konverge-test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, configMap(ns, "a", nil, nil)); !cluster.IsAlreadyExists(err) {
		t.Errorf("second create: %v", err)
	}
	if _, err := c.Create(ctx, configMap(ns, "b", map[string]any{"app": "y"}, nil)); err != nil {
		t.Fatal(err)
	}

	// Optimistic concurrency.
	a["data"] = map[string]any{"k": "v2"}
	a2, err := c.Update(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	a["data"] = map[string]any{"k": "stale"}
	if _, err := c.Update(ctx, a); !cluster.IsConflict(err) {
		t.Errorf("stale update: %v", err)
	}

	// Dry-run update, patch and delete change nothing.
	a2["data"] = map[string]any{"k": "dry"}
	if out, err := c.Update(ctx, a2, cluster.DryRunAll); err != nil || out["data"].(map[string]any)["k"] != "dry" {
		t.Errorf("dry-run update: %v %v", out, err)
	}
	if _, err := c.Patch(ctx, cmGVK, ns, "a", cluster.MergePatchType, []byte(`{"data":{"k":"dry"}}`), cluster.DryRunAll); err != nil {
		t.Error(err)
	}
	if err := c.Delete(ctx, cmGVK, ns, "a", cluster.DryRunAll); err != nil {
		t.Error(err)
	}
	if got, err := c.Get(ctx, cmGVK, ns, "a"); err != nil || got["data"].(map[string]any)["k"] != "v2" {
		t.Errorf("after dry runs: %v %v", got, err)
	}

	// NotFound of an object, and of a kind the server does not serve.
	if _, err := c.Get(ctx, cmGVK, ns, "nope"); !cluster.IsNotFound(err) {
		t.Errorf("get nope: %v", err)
	}
	if _, err := c.Get(ctx, schema.GVK{Group: "nowhere.example.com", Version: "v1", Kind: "Nothing"}, ns, "x"); !cluster.IsNotFound(err) {
		t.Errorf("get of an unknown kind: %v", err)
	}

	// Invalid, with causes.
	_, err = c.Create(ctx, configMap(ns, "Not_A_Name", nil, nil))
	var se *cluster.StatusError
	if !cluster.IsInvalid(err) || !asStatus(err, &se) || len(se.Causes) == 0 || se.Causes[0].Field != "metadata.name" {
		t.Errorf("invalid name: %#v", err)
	}

	// Selectors.
	l, err := c.List(ctx, cmGVK, cluster.InNamespace(ns), cluster.MatchingLabels("app in (x)"))
	if err != nil || len(l.Items) != 1 || l.Items[0]["metadata"].(map[string]any)["name"] != "a" {
		t.Errorf("list app in (x): %v %v", l, err)
	}
	l, err = c.List(ctx, cmGVK, cluster.InNamespace(ns), cluster.MatchingFields("metadata.name=b"))
	if err != nil || len(l.Items) != 1 {
		t.Errorf("list metadata.name=b: %v %v", l, err)
	}

	// Patches of every type.
	for _, p := range []struct {
		pt    cluster.PatchType
		patch string
		want  string
	}{
		{cluster.MergePatchType, `{"data":{"m":"1"}}`, "1"},
		{cluster.StrategicMergePatchType, `{"data":{"m":"2"}}`, "2"},
		{cluster.JSONPatchType, `[{"op":"replace","path":"/data/m","value":"3"}]`, "3"},
		{cluster.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"app":"x"}},"data":{"m":"4"}}`, "4"},
	} {
		opts := []cluster.PatchOption{cluster.FieldOwner("konverge-test")}
		if p.pt == cluster.ApplyPatchType {
			// The merge patches above were Updates of the same manager.
			opts = append(opts, cluster.ForceOwnership)
		}
		out, err := c.Patch(ctx, cmGVK, ns, "a", p.pt, []byte(p.patch), opts...)
		if err != nil {
			t.Fatalf("%s: %v", p.pt, err)
		}
		if got := out["data"].(map[string]any)["m"]; got != p.want {
			t.Errorf("%s: data.m = %v", p.pt, got)
		}
	}

	// Server-side apply: another manager's field is a conflict unless forced.
	other := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"m":"5"}}`
	if _, err := c.Patch(ctx, cmGVK, ns, "a", cluster.ApplyPatchType, []byte(other), cluster.FieldOwner("someone-else")); !cluster.IsConflict(err) {
		t.Errorf("apply of a field another manager owns: %v", err)
	}
	if out, err := c.Patch(ctx, cmGVK, ns, "a", cluster.ApplyPatchType, []byte(other), cluster.FieldOwner("someone-else"), cluster.ForceOwnership); err != nil || out["data"].(map[string]any)["m"] != "5" {
		t.Errorf("forced apply: %v %v", out, err)
	}

	// Delete with a precondition that does not hold, then for real.
	if err := c.Delete(ctx, cmGVK, ns, "b", cluster.Preconditions{UID: "00000000-0000-0000-0000-000000000000"}); !cluster.IsConflict(err) {
		t.Errorf("delete with a wrong uid: %v", err)
	}
	if err := c.Delete(ctx, cmGVK, ns, "b"); err != nil {
		t.Fatal(err)
	}

	// The watch saw it all, in order.
	want := []cluster.EventType{cluster.Added, cluster.Added, cluster.Modified, cluster.Modified, cluster.Modified, cluster.Modified, cluster.Modified, cluster.Modified, cluster.Deleted}
	var got []cluster.EventType
	timeout := time.After(30 * time.Second)
	for len(got) < len(want) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %v", got)
			}
			// Only ours: a namespace also gets kube-root-ca.crt.
			if n := ev.Object["metadata"].(map[string]any)["name"]; n == "a" || n == "b" {
				got = append(got, ev.Type)
			}
		case <-timeout:
			t.Fatalf("watch saw only %v", got)
		}
	}
	for i, e := range want {
		if got[i] != e {
			t.Errorf("event %d = %s, want %s (all: %v)", i, got[i], e, got)
		}
	}
}

func asStatus(err error, se **cluster.StatusError) bool {
	s, ok := err.(*cluster.StatusError)
	if ok {
		*se = s
	}
	return ok
}
