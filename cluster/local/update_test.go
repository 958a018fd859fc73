package local

import (
	"context"
	"testing"
	"time"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

func TestUpdateConflict(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	first := value.DeepCopyObject(d)
	second := value.DeepCopyObject(d)
	first["spec"].(map[string]any)["replicas"] = int64(2)
	if _, err := s.Update(ctx, first); err != nil {
		t.Fatal(err)
	}
	second["spec"].(map[string]any)["replicas"] = int64(3)
	_, err := s.Update(ctx, second)
	want := `Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again`
	if !cluster.IsConflict(err) || err.Error() != want {
		t.Fatalf("stale update: %v, want %s", err, want)
	}
	// Without a resourceVersion the update is unconditional.
	delete(metadata(second), "resourceVersion")
	out, err := s.Update(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if path(out, "spec.replicas") != int64(3) {
		t.Errorf("replicas %v", path(out, "spec.replicas"))
	}
	// Missing objects are NotFound.
	gone := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: none, namespace: default}}`)
	if _, err := s.Update(ctx, gone); !cluster.IsNotFound(err) || err.Error() != `configmaps "none" not found` {
		t.Errorf("update of a missing object: %v", err)
	}
}

func TestUpdateGeneration(t *testing.T) {
	cases := []struct {
		name    string
		gvk     schema.GVK
		doc     string
		edit    func(o map[string]any)
		wantGen any // generation after the update (nil: none)
	}{
		{"deployment spec change bumps", gvkDeployment, deploymentWeb,
			func(o map[string]any) { o["spec"].(map[string]any)["replicas"] = int64(5) }, int64(2)},
		{"deployment label change does not", gvkDeployment, deploymentWeb,
			func(o map[string]any) { metadata(o)["labels"] = map[string]any{"app": "web", "tier": "x"} }, int64(1)},
		{"deployment annotation change bumps", gvkDeployment, deploymentWeb,
			func(o map[string]any) { metadata(o)["annotations"] = map[string]any{"a": "b"} }, int64(2)},
		{"deployment status change (ignored) does not", gvkDeployment, deploymentWeb,
			func(o map[string]any) { o["status"] = map[string]any{"replicas": int64(4)} }, int64(1)},
		{"replicaset annotation change does not", gvkReplicaSet, `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`, func(o map[string]any) { metadata(o)["annotations"] = map[string]any{"a": "b"} }, int64(1)},
		{"configmap has none", gvkConfigMap, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}, data: {a: b}}`,
			func(o map[string]any) { o["data"] = map[string]any{"a": "c"} }, nil},
		{"default filled by the server is no change", gvkDeployment, deploymentWeb,
			func(o map[string]any) { delete(o["spec"].(map[string]any), "revisionHistoryLimit") }, int64(1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openStore(t)
			created := mustCreate(t, s, c.doc)
			c.edit(created)
			out, err := s.Update(context.Background(), created)
			if err != nil {
				t.Fatal(err)
			}
			if g := metadata(out)["generation"]; g != c.wantGen {
				t.Errorf("generation %v, want %v", g, c.wantGen)
			}
			if g := metadata(mustGet(t, s, c.gvk, "default", metaString(out, "name")))["generation"]; g != c.wantGen {
				t.Errorf("stored generation %v, want %v", g, c.wantGen)
			}
		})
	}
}

func TestUpdateNoOp(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	w, err := s.Watch(ctx, gvkDeployment)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The manifest as written, without the server's defaults, changes
	// nothing.
	again := obj(t, deploymentWeb)
	metadata(again)["resourceVersion"] = metaString(d, "resourceVersion")
	out, err := s.Update(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if !value.Equal(out, d) {
		t.Errorf("no-op update returned\n%v\nwant the stored object\n%v", out, d)
	}
	list, _ := s.List(ctx, gvkDeployment)
	if list.ResourceVersion != metaString(d, "resourceVersion") {
		t.Errorf("store revision moved to %s on a no-op update (object at %s)", list.ResourceVersion, metaString(d, "resourceVersion"))
	}
	// The next real change is the first event.
	mustCreate(t, s, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: other, namespace: default}, spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: x}]}}}}`)
	select {
	case ev := <-w.ResultChan():
		if ev.Type != cluster.Added || metaString(ev.Object, "name") != "other" {
			t.Errorf("first event %s %s, want ADDED other", ev.Type, metaString(ev.Object, "name"))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
}

func TestUpdateKeepsServerFields(t *testing.T) {
	s, clock := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	if _, err := s.UpdateStatus(ctx, withStatus(d, map[string]any{"replicas": int64(3)})); err != nil {
		t.Fatal(err)
	}
	d = mustGet(t, s, gvkDeployment, "default", "web")
	clock.Advance(time.Hour)
	edit := value.DeepCopyObject(d)
	md := metadata(edit)
	delete(md, "uid")
	md["creationTimestamp"] = "2000-01-01T00:00:00Z"
	md["generation"] = int64(40)
	edit["status"] = map[string]any{"replicas": int64(9)}
	edit["spec"].(map[string]any)["paused"] = true
	out, err := s.Update(ctx, edit)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"metadata.uid", "metadata.creationTimestamp", "status"} {
		if !value.Equal(path(out, f), path(d, f)) {
			t.Errorf("%s changed: %v -> %v", f, path(d, f), path(out, f))
		}
	}
	if g := path(out, "metadata.generation"); g != int64(2) {
		t.Errorf("generation %v, want 2 (clients cannot set it)", g)
	}
}

func withStatus(o map[string]any, status map[string]any) map[string]any {
	c := value.DeepCopyObject(o)
	c["status"] = status
	return c
}

func TestUpdateStatus(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	edit := value.DeepCopyObject(d)
	edit["status"] = map[string]any{"replicas": int64(2), "observedGeneration": int64(1)}
	edit["spec"].(map[string]any)["replicas"] = int64(8)
	metadata(edit)["labels"] = map[string]any{"changed": "yes"}
	out, err := s.UpdateStatus(ctx, edit)
	if err != nil {
		t.Fatal(err)
	}
	if path(out, "status.replicas") != int64(2) {
		t.Errorf("status not updated: %v", out["status"])
	}
	if path(out, "spec.replicas") != int64(1) || path(out, "metadata.labels.app") != "web" {
		t.Errorf("UpdateStatus changed more than status: %v %v", path(out, "spec.replicas"), path(out, "metadata.labels"))
	}
	if path(out, "metadata.generation") != int64(1) {
		t.Errorf("generation %v", path(out, "metadata.generation"))
	}
	if metaString(out, "resourceVersion") == metaString(d, "resourceVersion") {
		t.Errorf("resourceVersion did not move")
	}
	cm := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}`)
	if _, err := s.UpdateStatus(ctx, cm); !cluster.IsNotFound(err) {
		t.Errorf("UpdateStatus of a kind without status: %v", err)
	}
}

func TestUpdateMetadataRules(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	cm := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default, finalizers: [example.com/x]}}`)

	set := value.DeepCopyObject(cm)
	metadata(set)["deletionTimestamp"] = "2026-03-01T12:00:00Z"
	_, err := s.Update(ctx, set)
	if want := `ConfigMap "c" is invalid: metadata.deletionTimestamp: Invalid value: "2026-03-01T12:00:00Z": field is immutable`; errText(err) != want {
		t.Errorf("setting deletionTimestamp: %v\nwant %s", err, want)
	}
	uid := value.DeepCopyObject(cm)
	metadata(uid)["uid"] = "00000000-0000-4000-8000-000000000000"
	_, err = s.Update(ctx, uid)
	if want := `ConfigMap "c" is invalid: metadata.uid: Invalid value: "00000000-0000-4000-8000-000000000000": field is immutable`; errText(err) != want {
		t.Errorf("changing uid: %v\nwant %s", err, want)
	}

	if err := s.Delete(ctx, gvkConfigMap, "default", "c"); err != nil {
		t.Fatal(err)
	}
	deleting := mustGet(t, s, gvkConfigMap, "default", "c")
	add := value.DeepCopyObject(deleting)
	setFinalizers(add, []string{"example.com/x", "example.com/y"})
	_, err = s.Update(ctx, add)
	if want := `ConfigMap "c" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/y"}`; errText(err) != want {
		t.Errorf("adding a finalizer while deleting: %v\nwant %s", err, want)
	}
	// A client cannot clear deletionTimestamp either: it is carried over.
	clear := value.DeepCopyObject(deleting)
	delete(metadata(clear), "deletionTimestamp")
	metadata(clear)["labels"] = map[string]any{"x": "y"}
	out, err := s.Update(ctx, clear)
	if err != nil {
		t.Fatal(err)
	}
	if metaString(out, "deletionTimestamp") != metaString(deleting, "deletionTimestamp") {
		t.Errorf("deletionTimestamp %q, want %q", metaString(out, "deletionTimestamp"), metaString(deleting, "deletionTimestamp"))
	}
}
