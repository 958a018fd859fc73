package local

import (
	"context"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

func TestCRDLifecycle(t *testing.T) {
	dir := t.TempDir()
	clock := newTestClock()
	s, err := Open(dir, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	if _, err := s.Mapper().ResourceFor(gvkWidget); !cluster.IsNotFound(err) {
		t.Fatalf("widgets served before their CRD: %v", err)
	}
	created := mustCreate(t, s, crdWidgets)
	// The create returns the CRD before the controllers accept its names;
	// it is established in the same transaction.
	if got, _ := encodeString(created["status"]); got != `{"acceptedNames":{"kind":"","plural":""},"conditions":null,"storedVersions":["v1"]}` {
		t.Errorf("CRD status as created: %s", got)
	}
	crd := mustGet(t, s, gvkCRD, "", "widgets.example.com")
	now := formatTime(clock.Now())
	status, _ := crd["status"].(map[string]any)
	wantStatus := map[string]any{
		"acceptedNames": map[string]any{"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget", "shortNames": []any{"wd"}},
		"conditions": []any{
			map[string]any{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
			map[string]any{"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now},
		},
		"storedVersions": []any{"v1"},
	}
	if !value.Equal(status, wantStatus) {
		got, _ := encodeString(status)
		want, _ := encodeString(wantStatus)
		t.Errorf("CRD status\n%s\nwant\n%s", got, want)
	}
	res, err := s.Mapper().ResourceFor(gvkWidget)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plural != "widgets" || !res.Namespaced || !res.Status || res.Strategic {
		t.Errorf("resource %+v", res)
	}
	if s.Mapper().Schema(gvkWidget) == nil {
		t.Errorf("no schema for widgets")
	}

	w := mustCreate(t, s, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
spec:
  size: 3
  unknown: dropped
  extra: {anything: kept}
status: {ready: true}
`)
	if path(w, "spec.color") != "blue" {
		t.Errorf("default not applied: %v", w["spec"])
	}
	if path(w, "spec.unknown") != nil || path(w, "spec.extra.anything") != "kept" {
		t.Errorf("pruning: %v", w["spec"])
	}
	if w["status"] != nil {
		t.Errorf("status not reset on create: %v", w["status"])
	}
	if path(w, "metadata.generation") != int64(1) {
		t.Errorf("generation %v", path(w, "metadata.generation"))
	}
	_, err = s.Create(ctx, obj(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: bad, namespace: default}, spec: {color: red}}`))
	if !cluster.IsInvalid(err) || !strings.HasPrefix(errText(err), `Widget.example.com "bad" is invalid: spec.size: Required value`) {
		t.Errorf("invalid widget: %v", err)
	}
	// Custom resources bump generation on any change outside metadata
	// and status.
	w["spec"].(map[string]any)["size"] = int64(4)
	w, err = s.Update(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if path(w, "metadata.generation") != int64(2) {
		t.Errorf("generation %v after a spec change", path(w, "metadata.generation"))
	}
	list, err := s.List(ctx, gvkWidget, cluster.MatchingFields("spec.color=blue"))
	if err != nil || len(list.Items) != 1 {
		t.Errorf("selectable field: %v %v", err, list)
	}

	// Reopened, the state serves the CRD again.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustGet(t, s, gvkWidget, "default", "w")
	mustCreate(t, s, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: held, namespace: default, finalizers: [example.com/hold]}, spec: {size: 1}}`)

	// Deleting the CRD deletes its custom resources; one with a finalizer
	// holds the CRD until it goes.
	if err := s.Delete(ctx, gvkCRD, "", "widgets.example.com"); err != nil {
		t.Fatal(err)
	}
	if !isGone(t, s, gvkWidget, "default", "w") {
		t.Errorf("widget w survived its CRD")
	}
	crd = mustGet(t, s, gvkCRD, "", "widgets.example.com")
	if !hasFinalizer(crd, "customresourcecleanup.apiextensions.k8s.io") || metaString(crd, "deletionTimestamp") == "" {
		t.Errorf("CRD not terminating: %v", metadata(crd))
	}
	_, err = s.Create(ctx, obj(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: late, namespace: default}, spec: {size: 1}}`))
	if cluster.ReasonOf(err) != cluster.ReasonMethodNotAllowed {
		t.Errorf("create while the CRD terminates: %v", err)
	}
	removeFinalizers(t, s, gvkWidget, "default", "held")
	if !isGone(t, s, gvkCRD, "", "widgets.example.com") {
		t.Fatalf("CRD stayed after its last custom resource went")
	}
	if _, err := s.Mapper().ResourceFor(gvkWidget); !cluster.IsNotFound(err) {
		t.Errorf("widgets still served: %v", err)
	}
}

func TestCRDClusterScopedInBatch(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	gvk := schema.GVK{Group: "example.com", Version: "v1", Kind: "Gadget"}
	err := s.Batch(ctx, func(c cluster.Interface) error {
		mustCreate(t, c, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Gadget, plural: gadgets}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`)
		// The CRD serves its kind for the rest of the batch.
		g := mustCreate(t, c, `{apiVersion: example.com/v1, kind: Gadget, metadata: {name: g, namespace: ignored}, spec: {any: thing}}`)
		if _, ok := metadata(g)["namespace"]; ok {
			t.Errorf("cluster-scoped custom resource kept its namespace")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g := mustGet(t, s, gvk, "", "g")
	if path(g, "spec.any") != "thing" {
		t.Errorf("preserve-unknown-fields: %v", g["spec"])
	}

	// A rolled-back batch leaves no CRD served.
	other := schema.GVK{Group: "example.com", Version: "v1", Kind: "Thing"}
	_ = s.Batch(ctx, func(c cluster.Interface) error {
		mustCreate(t, c, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Thing, plural: things}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`)
		return context.Canceled
	})
	if _, err := s.Mapper().ResourceFor(other); !cluster.IsNotFound(err) {
		t.Errorf("rolled-back CRD is served: %v", err)
	}
}

func TestCRDInvalid(t *testing.T) {
	s, _ := openStore(t)
	_, err := s.Create(context.Background(), obj(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: wrong.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Thing, plural: things}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`))
	if !cluster.IsInvalid(err) || !strings.Contains(errText(err), `metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group`) {
		t.Errorf("got %v", err)
	}
}

func TestCRDVersions(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: tools.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Tool, plural: tools}
  versions:
  - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v0, served: false, storage: false, schema: {openAPIV3Schema: {type: object}}}
`)
	v1 := schema.GVK{Group: "example.com", Version: "v1", Kind: "Tool"}
	v1beta1 := schema.GVK{Group: "example.com", Version: "v1beta1", Kind: "Tool"}
	created := mustCreate(t, s, `{apiVersion: example.com/v1beta1, kind: Tool, metadata: {name: t, namespace: default}, spec: {a: 1}}`)
	if created["apiVersion"] != "example.com/v1beta1" {
		t.Errorf("create returned %v", created["apiVersion"])
	}
	if got := mustGet(t, s, v1, "default", "t"); got["apiVersion"] != "example.com/v1" || path(got, "spec.a") != int64(1) {
		t.Errorf("get v1: %v", got)
	}
	if got := mustGet(t, s, v1beta1, "default", "t"); got["apiVersion"] != "example.com/v1beta1" {
		t.Errorf("get v1beta1: %v", got["apiVersion"])
	}
	// Writing through one version and reading through the other is the
	// same object.
	if _, err := s.Patch(ctx, v1, "default", "t", cluster.MergePatchType, []byte(`{"spec":{"a":2}}`)); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, v1beta1, "default", "t"); path(got, "spec.a") != int64(2) {
		t.Errorf("v1beta1 sees %v", got["spec"])
	}
	// Without a status subresource, status is written like the rest and
	// counts as a change of spec.
	out, err := s.Patch(ctx, v1, "default", "t", cluster.MergePatchType, []byte(`{"status":{"ready":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if path(out, "status.ready") != true || path(out, "metadata.generation") != int64(3) {
		t.Errorf("status %v generation %v", out["status"], path(out, "metadata.generation"))
	}
	if _, err := s.UpdateStatus(ctx, out); !cluster.IsNotFound(err) {
		t.Errorf("UpdateStatus without a status subresource: %v", err)
	}
	if _, err := s.Get(ctx, schema.GVK{Group: "example.com", Version: "v0", Kind: "Tool"}, "default", "t"); !cluster.IsNotFound(err) {
		t.Errorf("unserved version: %v", err)
	}
}

// TestCRDStoredVersionRemoval: a version still in status.storedVersions
// may not leave spec.versions; once a storage migration took it out of
// storedVersions (a status update), it may.
func TestCRDStoredVersionRemoval(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	crd := func(versions ...string) cluster.Object {
		var vs []any
		for i, v := range versions {
			vs = append(vs, map[string]any{"name": v, "served": true, "storage": i == len(versions)-1,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
		}
		return map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "gadgets.example.com"},
			"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
				"names":    map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
				"versions": vs}}
	}
	crdGVK := schema.GVK{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	update := func(o cluster.Object) error {
		live := mustGet(t, s, crdGVK, "", "gadgets.example.com")
		o["metadata"].(map[string]any)["resourceVersion"] = live["metadata"].(map[string]any)["resourceVersion"]
		_, err := s.Update(ctx, o)
		return err
	}
	if _, err := s.Create(ctx, crd("v1")); err != nil {
		t.Fatal(err)
	}
	err := update(crd("v2"))
	want := `CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is invalid: status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions`
	if err == nil || err.Error() != want {
		t.Fatalf("v1 dropped:\n got %v\nwant %s", err, want)
	}
	if err := update(crd("v1", "v2")); err != nil {
		t.Fatal(err)
	}
	live := mustGet(t, s, crdGVK, "", "gadgets.example.com")
	if got, _ := encodeString(live["status"].(map[string]any)["storedVersions"]); got != `["v1","v2"]` {
		t.Fatalf("storedVersions %s", got)
	}
	// The migration is done: v1 leaves storedVersions, then spec.versions.
	live["status"].(map[string]any)["storedVersions"] = []any{"v2"}
	if _, err := s.UpdateStatus(ctx, live); err != nil {
		t.Fatal(err)
	}
	if err := update(crd("v2")); err != nil {
		t.Fatalf("v1 dropped after the migration: %v", err)
	}
}
