package local

import (
	"context"
	"fmt"
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// ownedBy is the ownerReferences YAML of an object owned by owner.
func ownedBy(owner map[string]any, block bool) string {
	return fmt.Sprintf(`[{apiVersion: %s, kind: %s, name: %s, uid: %s, controller: true, blockOwnerDeletion: %v}]`,
		owner["apiVersion"], owner["kind"], metaString(owner, "name"), metaString(owner, "uid"), block)
}

func replicaSet(name string, owner map[string]any, block bool, extraMeta string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: %s, namespace: default, ownerReferences: %s %s}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`, name, ownedBy(owner, block), extraMeta)
}

func pod(name string, owner map[string]any, block bool, extraMeta string) string {
	return fmt.Sprintf(`{apiVersion: v1, kind: Pod, metadata: {name: %s, namespace: default, ownerReferences: %s %s}, spec: {containers: [{name: c, image: nginx}]}}`,
		name, ownedBy(owner, block), extraMeta)
}

func removeFinalizers(t *testing.T, c cluster.Interface, gvk schema.GVK, ns, name string) {
	t.Helper()
	o := mustGet(t, c, gvk, ns, name)
	delete(metadata(o), "finalizers")
	if _, err := c.Update(context.Background(), o); err != nil {
		t.Fatalf("remove finalizers of %s: %v", name, err)
	}
}

func TestDeleteBackground(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	rs := mustCreate(t, s, replicaSet("web-1", d, true, ""))
	mustCreate(t, s, pod("p1", rs, true, ""))
	mustCreate(t, s, pod("p2", rs, true, ""))
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: bystander, namespace: default}}`)

	w, err := s.Watch(ctx, gvkPod)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := s.Delete(ctx, gvkDeployment, "default", "web"); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		gvk  schema.GVK
		name string
	}{{gvkDeployment, "web"}, {gvkReplicaSet, "web-1"}, {gvkPod, "p1"}, {gvkPod, "p2"}} {
		if !isGone(t, s, o.gvk, "default", o.name) {
			t.Errorf("%s %s still exists", o.gvk.Kind, o.name)
		}
	}
	mustGet(t, s, gvkConfigMap, "default", "bystander")
	for range 2 {
		ev := <-w.ResultChan()
		if ev.Type != cluster.Deleted {
			t.Errorf("pod event %s, want DELETED", ev.Type)
		}
	}
}

func TestDeleteForeground(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	rs := mustCreate(t, s, replicaSet("web-1", d, true, ""))
	mustCreate(t, s, pod("held", rs, true, ", finalizers: [example.com/hold]"))
	mustCreate(t, s, pod("free", rs, true, ""))
	mustCreate(t, s, pod("nonblocking", rs, false, ", finalizers: [example.com/hold]"))

	if err := s.Delete(ctx, gvkDeployment, "default", "web", cluster.Foreground); err != nil {
		t.Fatal(err)
	}
	dep := mustGet(t, s, gvkDeployment, "default", "web")
	if metaString(dep, "deletionTimestamp") == "" || !hasFinalizer(dep, "foregroundDeletion") {
		t.Fatalf("deployment not marked for foreground deletion: %v", metadata(dep))
	}
	if g := path(dep, "metadata.generation"); g != int64(2) {
		t.Errorf("generation %v, want 2 (bumped when marked)", g)
	}
	if !isGone(t, s, gvkPod, "default", "free") {
		t.Errorf("pod free still exists")
	}
	rsNow := mustGet(t, s, gvkReplicaSet, "default", "web-1")
	if !hasFinalizer(rsNow, "foregroundDeletion") {
		t.Errorf("replicaset not deleting in the foreground: %v", finalizers(rsNow))
	}
	held := mustGet(t, s, gvkPod, "default", "held")
	if metaString(held, "deletionTimestamp") == "" {
		t.Errorf("pod held not marked")
	}

	// The non-blocking dependent does not hold its owner.
	removeFinalizers(t, s, gvkPod, "default", "nonblocking")
	if isGone(t, s, gvkReplicaSet, "default", "web-1") {
		t.Fatalf("replicaset went while a blocking pod remains")
	}
	// The blocking one does: once it goes, so do the owners, in order.
	removeFinalizers(t, s, gvkPod, "default", "held")
	for _, o := range []struct {
		gvk  schema.GVK
		name string
	}{{gvkPod, "held"}, {gvkReplicaSet, "web-1"}, {gvkDeployment, "web"}} {
		if !isGone(t, s, o.gvk, "default", o.name) {
			t.Errorf("%s %s still exists", o.gvk.Kind, o.name)
		}
	}
}

func TestDeleteOrphan(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	mustCreate(t, s, replicaSet("web-1", d, true, ""))
	if err := s.Delete(ctx, gvkDeployment, "default", "web", cluster.Orphan); err != nil {
		t.Fatal(err)
	}
	if !isGone(t, s, gvkDeployment, "default", "web") {
		t.Errorf("deployment still exists")
	}
	rs := mustGet(t, s, gvkReplicaSet, "default", "web-1")
	if refs := metadata(rs)["ownerReferences"]; refs != nil {
		t.Errorf("orphan kept ownerReferences %v", refs)
	}
}

func TestDeleteDefaultPropagation(t *testing.T) {
	cases := []struct {
		name        string
		opts        []cluster.DeleteOption
		wantPodGone bool
	}{
		{"job orphans by default", nil, false},
		{"explicit background", []cluster.DeleteOption{cluster.Background}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openStore(t)
			job := mustCreate(t, s, `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`)
			mustCreate(t, s, pod("j-1", job, true, ""))
			if err := s.Delete(context.Background(), gvkJob, "default", "j", c.opts...); err != nil {
				t.Fatal(err)
			}
			if got := isGone(t, s, gvkPod, "default", "j-1"); got != c.wantPodGone {
				t.Errorf("pod gone %v, want %v", got, c.wantPodGone)
			}
		})
	}
}

func TestDeleteWithRemainingOwner(t *testing.T) {
	s, _ := openStore(t)
	a := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}`)
	b := mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: default}}`)
	refs := fmt.Sprintf(`[{apiVersion: v1, kind: ConfigMap, name: a, uid: %s}, {apiVersion: v1, kind: ConfigMap, name: b, uid: %s}]`,
		metaString(a, "uid"), metaString(b, "uid"))
	mustCreate(t, s, `{apiVersion: v1, kind: Secret, metadata: {name: shared, namespace: default, ownerReferences: `+refs+`}}`)
	if err := s.Delete(context.Background(), gvkConfigMap, "default", "a"); err != nil {
		t.Fatal(err)
	}
	sec := mustGet(t, s, gvkSecret, "default", "shared")
	if got := ownerUIDs(sec); len(got) != 1 || got[0] != metaString(b, "uid") {
		t.Errorf("owners %v, want only b", got)
	}
	if err := s.Delete(context.Background(), gvkConfigMap, "default", "b"); err != nil {
		t.Fatal(err)
	}
	if !isGone(t, s, gvkSecret, "default", "shared") {
		t.Errorf("secret survived its last owner")
	}
}

func TestDeleteFinalizers(t *testing.T) {
	s, clock := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default, finalizers: [example.com/a, example.com/b]}}`)
	if err := s.Delete(ctx, gvkConfigMap, "default", "c"); err != nil {
		t.Fatal(err)
	}
	c := mustGet(t, s, gvkConfigMap, "default", "c")
	if got, want := metaString(c, "deletionTimestamp"), formatTime(clock.Now()); got != want {
		t.Errorf("deletionTimestamp %q, want %q", got, want)
	}
	if g := metadata(c)["deletionGracePeriodSeconds"]; g != int64(0) {
		t.Errorf("deletionGracePeriodSeconds %v, want 0", g)
	}
	// Deleting again changes nothing.
	if err := s.Delete(ctx, gvkConfigMap, "default", "c"); err != nil {
		t.Fatal(err)
	}
	if again := mustGet(t, s, gvkConfigMap, "default", "c"); metaString(again, "resourceVersion") != metaString(c, "resourceVersion") {
		t.Errorf("second delete wrote the object")
	}
	// Removing one finalizer keeps it; removing the last deletes it.
	setFinalizers(c, []string{"example.com/b"})
	c, err := s.Update(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if metaString(c, "deletionTimestamp") == "" || isGone(t, s, gvkConfigMap, "default", "c") {
		t.Errorf("object went while a finalizer was left")
	}
	p := `{"metadata":{"finalizers":null}}`
	if _, err := s.Patch(ctx, gvkConfigMap, "default", "c", cluster.MergePatchType, []byte(p)); err != nil {
		t.Fatal(err)
	}
	if !isGone(t, s, gvkConfigMap, "default", "c") {
		t.Errorf("object stayed after its last finalizer went")
	}
}

func TestDeletePreconditions(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	cases := []struct {
		name string
		pre  cluster.Preconditions
		want string
	}{
		{"uid", cluster.Preconditions{UID: "other"},
			`Operation cannot be fulfilled on Deployment.apps "web": the UID in the precondition (other) does not match the UID in record (` + metaString(d, "uid") + `). The object might have been deleted and then recreated`},
		{"resourceVersion", cluster.Preconditions{ResourceVersion: "1"},
			`Operation cannot be fulfilled on Deployment.apps "web": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (` + metaString(d, "resourceVersion") + `). The object might have been modified`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Delete(ctx, gvkDeployment, "default", "web", c.pre)
			if !cluster.IsConflict(err) || err.Error() != c.want {
				t.Errorf("got %v\nwant %s", err, c.want)
			}
		})
	}
	ok := cluster.Preconditions{UID: metaString(d, "uid"), ResourceVersion: metaString(d, "resourceVersion")}
	if err := s.Delete(ctx, gvkDeployment, "default", "web", ok); err != nil {
		t.Fatal(err)
	}
	err := s.Delete(ctx, gvkDeployment, "default", "web")
	if !cluster.IsNotFound(err) || err.Error() != `deployments.apps "web" not found` {
		t.Errorf("second delete: %v", err)
	}
}

func TestDeleteNamespace(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, `{apiVersion: v1, kind: Namespace, metadata: {name: team}}`)
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: plain, namespace: team}}`)
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: held, namespace: team, finalizers: [example.com/hold]}}`)
	mustCreate(t, s, `{apiVersion: v1, kind: ConfigMap, metadata: {name: elsewhere, namespace: default}}`)

	if err := s.Delete(ctx, gvkNamespace, "", "team"); err != nil {
		t.Fatal(err)
	}
	ns := mustGet(t, s, gvkNamespace, "", "team")
	if path(ns, "status.phase") != "Terminating" || metaString(ns, "deletionTimestamp") == "" {
		t.Errorf("namespace not terminating: %v %v", ns["status"], metadata(ns))
	}
	if !isGone(t, s, gvkConfigMap, "team", "plain") {
		t.Errorf("content not deleted")
	}
	_, err := s.Create(ctx, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: late, namespace: team}}`))
	if want := `configmaps "late" is forbidden: unable to create new content in namespace team because it is being terminated`; errText(err) != want || cluster.ReasonOf(err) != cluster.ReasonForbidden {
		t.Errorf("create in a terminating namespace: %v\nwant %s", err, want)
	}
	removeFinalizers(t, s, gvkConfigMap, "team", "held")
	if !isGone(t, s, gvkNamespace, "", "team") {
		t.Errorf("namespace stayed after its content went")
	}
	mustGet(t, s, gvkConfigMap, "default", "elsewhere")

	err = s.Delete(ctx, gvkNamespace, "", "default")
	if want := `namespaces "default" is forbidden: this namespace may not be deleted`; errText(err) != want {
		t.Errorf("deleting default: %v", err)
	}
}

func TestDeletePodGracefully(t *testing.T) {
	s, clock := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, `{apiVersion: v1, kind: Pod, metadata: {name: bound, namespace: default}, spec: {nodeName: node-1, containers: [{name: c, image: nginx}]}}`)
	mustCreate(t, s, `{apiVersion: v1, kind: Pod, metadata: {name: pending, namespace: default}, spec: {containers: [{name: c, image: nginx}]}}`)
	if err := s.Delete(ctx, gvkPod, "default", "pending"); err != nil {
		t.Fatal(err)
	}
	if !isGone(t, s, gvkPod, "default", "pending") {
		t.Errorf("an unscheduled pod goes at once")
	}
	if err := s.Delete(ctx, gvkPod, "default", "bound"); err != nil {
		t.Fatal(err)
	}
	p := mustGet(t, s, gvkPod, "default", "bound")
	if got, want := metaString(p, "deletionTimestamp"), formatTime(clock.Now().Add(30e9)); got != want {
		t.Errorf("deletionTimestamp %s, want %s", got, want)
	}
	if g := metadata(p)["deletionGracePeriodSeconds"]; g != int64(30) {
		t.Errorf("grace %v", g)
	}
	if err := s.Delete(ctx, gvkPod, "default", "bound", cluster.GracePeriod(0)); err != nil {
		t.Fatal(err)
	}
	if !isGone(t, s, gvkPod, "default", "bound") {
		t.Errorf("grace period 0 keeps the pod")
	}
}

func TestDryRun(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	list, _ := s.List(ctx, gvkDeployment)
	rev := list.ResourceVersion

	created, err := s.Create(ctx, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: dry, namespace: default}}`), cluster.DryRunAll)
	if err != nil || metaString(created, "uid") == "" || metaString(created, "resourceVersion") != "" {
		t.Errorf("dry-run create: %v %v", err, metadata(created))
	}
	if _, err := s.Create(ctx, obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: bad, namespace: default}, spec: {}}`), cluster.DryRunAll); !cluster.IsInvalid(err) {
		t.Errorf("dry-run create validates: %v", err)
	}
	edit := value.DeepCopyObject(d)
	edit["spec"].(map[string]any)["replicas"] = int64(9)
	updated, err := s.Update(ctx, edit, cluster.DryRunAll)
	if err != nil || path(updated, "spec.replicas") != int64(9) || path(updated, "metadata.generation") != int64(2) {
		t.Errorf("dry-run update: %v %v %v", err, path(updated, "spec.replicas"), path(updated, "metadata.generation"))
	}
	patched, err := s.Patch(ctx, gvkDeployment, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":7}}`), cluster.DryRunAll)
	if err != nil || path(patched, "spec.replicas") != int64(7) {
		t.Errorf("dry-run patch: %v %v", err, path(patched, "spec.replicas"))
	}
	if err := s.Delete(ctx, gvkDeployment, "default", "web", cluster.DryRunAll); err != nil {
		t.Errorf("dry-run delete: %v", err)
	}
	if err := s.Delete(ctx, gvkDeployment, "default", "none", cluster.DryRunAll); !cluster.IsNotFound(err) {
		t.Errorf("dry-run delete of a missing object: %v", err)
	}
	if err := s.Batch(ctx, func(c cluster.Interface) error {
		_, err := c.Create(ctx, obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: dry2, namespace: default}}`), cluster.DryRunAll)
		return err
	}); err != nil {
		t.Fatal(err)
	}

	stored := mustGet(t, s, gvkDeployment, "default", "web")
	if !value.Equal(stored, d) {
		t.Errorf("dry runs changed the deployment")
	}
	for _, n := range []string{"dry", "dry2"} {
		if !isGone(t, s, gvkConfigMap, "default", n) {
			t.Errorf("dry-run create stored %s", n)
		}
	}
	if list, _ := s.List(ctx, gvkDeployment); list.ResourceVersion != rev {
		t.Errorf("revision moved from %s to %s", rev, list.ResourceVersion)
	}
}
