package kube_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/konverge/konverge/internal/realcluster"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/kube"
	"github.com/konverge/konverge/schema"
)

var (
	deployGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	rsGVK     = schema.GVK{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	podGVK    = schema.GVK{Version: "v1", Kind: "Pod"}
	crdGVK    = schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
)

// realNamespace connects and makes a namespace of its own for one test,
// deleted at its end.
func realNamespace(t *testing.T, prefix string) (*kube.Cluster, string, context.Context) {
	t.Helper()
	c, err := kube.FromKubeconfig(realcluster.Kubeconfig(t), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ns := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9)
	if _, err := c.Create(ctx, cluster.Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), nsGVK, "", ns) })
	return c, ns, ctx
}

// eventually polls fn every 100ms until it returns true or d passes.
func eventually(d time.Duration, fn func() bool) bool {
	for end := time.Now().Add(d); ; {
		if fn() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func md(obj cluster.Object) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

// TestRealServerStatusAndGrace checks the status subresource (UpdateStatus
// writes only status, Update leaves it alone) and graceful pod deletion
// with a grace period.
func TestRealServerStatusAndGrace(t *testing.T) {
	c, ns, ctx := realNamespace(t, "konverge-status")

	svc, err := c.Create(ctx, cluster.Object{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "lb", "namespace": ns},
		"spec":     map[string]any{"type": "LoadBalancer", "ports": []any{map[string]any{"port": int64(80)}}, "selector": map[string]any{"app": "x"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ingress := map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "192.0.2.7"}}}}
	svc["status"] = ingress
	svc["spec"].(map[string]any)["selector"] = map[string]any{"app": "changed-by-status-write"}
	out, err := c.UpdateStatus(ctx, svc)
	if err != nil {
		t.Fatal(err)
	}
	if got := out["spec"].(map[string]any)["selector"].(map[string]any)["app"]; got != "x" {
		t.Errorf("UpdateStatus changed spec.selector.app to %v", got)
	}
	if _, ok := out["status"].(map[string]any)["loadBalancer"].(map[string]any)["ingress"]; !ok {
		t.Errorf("UpdateStatus did not write status: %v", out["status"])
	}
	out["status"] = map[string]any{}
	out2, err := c.Update(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out2["status"].(map[string]any)["loadBalancer"].(map[string]any)["ingress"]; !ok {
		t.Errorf("Update cleared status: %v", out2["status"])
	}

	// A pod bound to a node waits for its kubelet: deleting it only marks
	// it, unless the grace period is 0.
	if _, err := c.Create(ctx, cluster.Object{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default", "namespace": ns}}); err != nil && !cluster.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pod := cluster.Object{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": ns},
		"spec": map[string]any{"nodeName": "node-that-does-not-exist", "automountServiceAccountToken": false,
			"containers": []any{map[string]any{"name": "c", "image": "nginx:1.14.2"}}},
	}
	if !eventually(10*time.Second, func() bool { _, err = c.Create(ctx, pod); return err == nil || cluster.IsAlreadyExists(err) }) {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, podGVK, ns, "p"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, podGVK, ns, "p")
	if err != nil {
		t.Fatalf("a bound pod went away at once: %v", err)
	}
	if md(got)["deletionTimestamp"] == nil || md(got)["deletionGracePeriodSeconds"] != int64(30) {
		t.Errorf("graceful delete: deletionTimestamp %v, deletionGracePeriodSeconds %v", md(got)["deletionTimestamp"], md(got)["deletionGracePeriodSeconds"])
	}
	if err := c.Delete(ctx, podGVK, ns, "p", cluster.GracePeriod(0)); err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { _, err := c.Get(ctx, podGVK, ns, "p"); return cluster.IsNotFound(err) }) {
		t.Error("pod still there after a delete with grace period 0")
	}
}

// TestRealServerPropagation deletes Deployments with each propagation
// policy; it needs the garbage collector (realcluster.sh up
// --with-controllers) and skips without it.
func TestRealServerPropagation(t *testing.T) {
	c, ns, ctx := realNamespace(t, "konverge-gc")
	deployment := func(name string) cluster.Object {
		return cluster.Object{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{
				"replicas": int64(0),
				"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": name}},
					"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:1.14.2"}}},
				},
			},
		}
	}
	replicaSets := func(app string) []cluster.Object {
		l, err := c.List(ctx, rsGVK, cluster.InNamespace(ns), cluster.MatchingLabels("app="+app))
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	for _, name := range []string{"orphan", "background", "foreground"} {
		if _, err := c.Create(ctx, deployment(name)); err != nil {
			t.Fatal(err)
		}
	}
	if !eventually(20*time.Second, func() bool {
		return len(replicaSets("orphan")) == 1 && len(replicaSets("background")) == 1 && len(replicaSets("foreground")) == 1
	}) {
		t.Skip("no ReplicaSets: kube-controller-manager is not running (realcluster.sh up --with-controllers)")
	}

	if err := c.Delete(ctx, deployGVK, ns, "orphan", cluster.Orphan); err != nil {
		t.Fatal(err)
	}
	if !eventually(20*time.Second, func() bool {
		rs := replicaSets("orphan")
		_, gone := c.Get(ctx, deployGVK, ns, "orphan")
		return cluster.IsNotFound(gone) && len(rs) == 1 && md(rs[0])["ownerReferences"] == nil
	}) {
		t.Errorf("orphan: ReplicaSets %v", replicaSets("orphan"))
	}

	if err := c.Delete(ctx, deployGVK, ns, "background", cluster.Background); err != nil {
		t.Fatal(err)
	}
	if !eventually(20*time.Second, func() bool { return len(replicaSets("background")) == 0 }) {
		t.Errorf("background: ReplicaSets left %v", replicaSets("background"))
	}

	if err := c.Delete(ctx, deployGVK, ns, "foreground", cluster.Foreground); err != nil {
		t.Fatal(err)
	}
	// Until its dependents are gone, the owner stays with the
	// foregroundDeletion finalizer (the collector may be quick enough
	// that it is already gone).
	if d, err := c.Get(ctx, deployGVK, ns, "foreground"); err == nil {
		fins, _ := md(d)["finalizers"].([]any)
		if md(d)["deletionTimestamp"] == nil || len(fins) == 0 || fins[0] != "foregroundDeletion" {
			t.Errorf("foreground: owner %v", md(d))
		}
	}
	if !eventually(20*time.Second, func() bool {
		_, err := c.Get(ctx, deployGVK, ns, "foreground")
		return cluster.IsNotFound(err) && len(replicaSets("foreground")) == 0
	}) {
		t.Errorf("foreground: ReplicaSets left %v", replicaSets("foreground"))
	}
}

// TestRealServerMapper checks the discovery and OpenAPI v3 side: built-in
// kinds' schemas from the server, and a CRD's kind, which is not strategic
// and whose schema is its openAPIV3Schema.
func TestRealServerMapper(t *testing.T) {
	c, ns, ctx := realNamespace(t, "konverge-mapper")

	start := time.Now()
	typ := c.Mapper().Schema(deployGVK)
	t.Logf("Schema(Deployment) from /openapi/v3: %v", time.Since(start))
	if typ == nil {
		t.Fatal("no schema for Deployment")
	}
	if typ == schema.Builtin().Lookup(deployGVK) {
		t.Error("Deployment's schema is konverge's own, not the server's")
	}
	containers := typ.Fields["spec"].Fields["template"].Fields["spec"].Fields["containers"]
	if containers == nil || containers.MergeKey != "name" {
		t.Errorf("spec.template.spec.containers: %+v", containers)
	}
	if c.Mapper().Schema(schema.GVK{Group: "nowhere.example.com", Version: "v1", Kind: "X"}) != nil {
		t.Error("a schema for a kind the server does not serve")
	}

	group := fmt.Sprintf("g%d.konverge.example.com", time.Now().UnixNano()%1e9)
	crd := cluster.Object{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "shortNames": []any{"gdg"}},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{"type": "object", "properties": map[string]any{
							"items": map[string]any{
								"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"key"},
								"items": map[string]any{"type": "object", "required": []any{"key"}, "properties": map[string]any{
									"key": map[string]any{"type": "string"}, "value": map[string]any{"type": "string"},
								}},
							},
						}},
						"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
					},
				}},
			}},
		},
	}
	if _, err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), crdGVK, "", "gadgets."+group) })

	gadget := schema.GVK{Group: group, Version: "v1", Kind: "Gadget"}
	var c2 *kube.Cluster
	var res cluster.Resource
	var gt *schema.Type
	ok := eventually(30*time.Second, func() bool {
		var err error
		if c2, err = kube.FromKubeconfig(realcluster.Kubeconfig(t), ""); err != nil {
			return false
		}
		if res, err = c2.Mapper().Find("gdg"); err != nil {
			return false
		}
		gt = c2.Mapper().Schema(gadget)
		return gt != nil
	})
	if !ok {
		t.Fatalf("the CRD's kind is not served with a schema after 30s: %+v", res)
	}
	if res.GVK != gadget || !res.Namespaced || res.Strategic || !res.Status || res.Plural != "gadgets" {
		t.Errorf("Find(gdg) = %+v", res)
	}
	items := gt.Fields["spec"].Fields["items"]
	if items == nil || len(items.Keys) != 1 || items.Keys[0] != "key" {
		t.Errorf("spec.items of the CRD's schema: %+v", items)
	}

	obj := cluster.Object{"apiVersion": group + "/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g", "namespace": ns},
		"spec": map[string]any{"items": []any{map[string]any{"key": "a", "value": "1"}}}}
	if _, err := c2.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	_, err := c2.Patch(ctx, gadget, ns, "g", cluster.StrategicMergePatchType, []byte(`{"spec":{}}`))
	if cluster.ReasonOf(err) != cluster.ReasonUnsupportedMedia {
		t.Errorf("strategic merge patch of a custom resource: %v (reason %q)", err, cluster.ReasonOf(err))
	}
	if _, err := c2.Patch(ctx, gadget, ns, "g", cluster.MergePatchType, []byte(`{"spec":{"items":[{"key":"b"}]}}`)); err != nil {
		t.Error(err)
	}
}

// TestRealServerMetadataOnly: a create or patch with cluster.MetadataOnly
// gets the object's metadata alone, under the object's apiVersion and
// kind; its errors are those of the whole answer.
func TestRealServerMetadataOnly(t *testing.T) {
	c, ns, ctx := realNamespace(t, "konverge-metaonly")
	cm := configMap(ns, "cm", nil, map[string]any{"k": "v"})
	out, err := c.Create(ctx, cm, cluster.DryRunAll, cluster.FieldOwner("kubectl-client-side-apply"), cluster.MetadataOnly)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := out["metadata"].(map[string]any)
	if out["apiVersion"] != "v1" || out["kind"] != "ConfigMap" || md["name"] != "cm" || md["uid"] == nil || md["managedFields"] == nil || out["data"] != nil {
		t.Errorf("dry-run create, metadata only: %v", out)
	}
	if _, err := c.Get(ctx, cmGVK, ns, "cm"); !cluster.IsNotFound(err) {
		t.Errorf("after a dry run: Get = %v, want NotFound", err)
	}
	if _, err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	out, err = c.Patch(ctx, cmGVK, ns, "cm", cluster.MergePatchType, []byte(`{"data":{"k":"w"}}`), cluster.DryRunAll, cluster.MetadataOnly)
	md, _ = out["metadata"].(map[string]any)
	if err != nil || out["kind"] != "ConfigMap" || md["resourceVersion"] == nil || out["data"] != nil {
		t.Errorf("dry-run patch, metadata only: %v, %v", out, err)
	}
	full, err := c.Patch(ctx, cmGVK, ns, "cm", cluster.MergePatchType, []byte(`{"data":{"k":"w"}}`), cluster.DryRunAll)
	if err != nil || full["data"] == nil {
		t.Errorf("dry-run patch: %v, %v", full, err)
	}

	bad := configMap(ns, "Bad_Name", nil, nil)
	_, errMeta := c.Create(ctx, bad, cluster.DryRunAll, cluster.MetadataOnly)
	_, errFull := c.Create(ctx, bad, cluster.DryRunAll)
	if !cluster.IsInvalid(errMeta) || fmt.Sprint(errMeta) != fmt.Sprint(errFull) {
		t.Errorf("invalid create, metadata only: %v; whole: %v", errMeta, errFull)
	}
	var se, sf *cluster.StatusError
	if errors.As(errMeta, &se) && errors.As(errFull, &sf) && fmt.Sprint(se.Causes) != fmt.Sprint(sf.Causes) {
		t.Errorf("causes %v, want %v", se.Causes, sf.Causes)
	}
	unknown := configMap(ns, "cm2", nil, nil)
	unknown["bogus"] = 1
	_, errMeta = c.Create(ctx, unknown, cluster.DryRunAll, cluster.FieldValidationStrict, cluster.MetadataOnly)
	_, errFull = c.Create(ctx, unknown, cluster.DryRunAll, cluster.FieldValidationStrict)
	if errMeta == nil || fmt.Sprint(errMeta) != fmt.Sprint(errFull) {
		t.Errorf("unknown field, metadata only: %v; whole: %v", errMeta, errFull)
	}
}
