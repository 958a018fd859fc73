package deployment_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/controller/deployment"
	"github.com/konverge/konverge/controller/internal/kobj"
)

// The seed's proportional scaling example: 10 replicas, maxSurge 3,
// maxUnavailable 2, an image that never becomes ready, then scale to 15:
// old ReplicaSet 11, new 7... (8 + 5 = 13 -> 11 and 7 after adding 5 of
// the 5 more allowed, proportionally).
func TestProportionalScaling(t *testing.T) {
	e := newEnv(t)
	d := deploymentObj("nginx-deployment", 10, "nginx:1.14.2")
	d["spec"].(map[string]any)["strategy"] = map[string]any{
		"type":          "RollingUpdate",
		"rollingUpdate": map[string]any{"maxSurge": int64(3), "maxUnavailable": int64(2)},
	}
	e.create(d)
	e.settle()
	e.ready = func(p map[string]any) bool {
		c := kobj.Slice(p, "spec", "containers")[0].(map[string]any)
		return c["image"] != "nginx:sometag"
	}
	e.modify("nginx-deployment", setImage("nginx:sometag"))
	e.settle()
	rss := e.replicaSets()
	if len(rss) != 2 {
		t.Fatalf("%d ReplicaSets", len(rss))
	}
	if o, n := num(rss[0], "spec", "replicas"), num(rss[1], "spec", "replicas"); o != 8 || n != 5 {
		t.Fatalf("before scaling: old %d new %d, want 8 and 5", o, n)
	}
	e.modify("nginx-deployment", setSpec("replicas", int64(15)))
	e.settle()
	rss = e.replicaSets()
	if o, n := num(rss[0], "spec", "replicas"), num(rss[1], "spec", "replicas"); o != 11 || n != 7 {
		t.Errorf("after scaling to 15: old %d new %d, want 11 and 7", o, n)
	}
	for _, rs := range rss {
		if kobj.Annotation(rs, deployment.DesiredReplicasAnnotation) != "15" || kobj.Annotation(rs, deployment.MaxReplicasAnnotation) != "18" {
			t.Errorf("%s annotations desired %q max %q", kobj.Name(rs),
				kobj.Annotation(rs, deployment.DesiredReplicasAnnotation), kobj.Annotation(rs, deployment.MaxReplicasAnnotation))
		}
	}
}

func TestRollover(t *testing.T) {
	e := newEnv(t)
	e.create(deploymentObj("web", 5, "nginx:1"))
	e.settle()
	stuck := map[string]bool{"nginx:2": true}
	e.ready = func(p map[string]any) bool {
		return !stuck[kobj.Slice(p, "spec", "containers")[0].(map[string]any)["image"].(string)]
	}
	e.modify("web", setImage("nginx:2"))
	e.settle()
	e.modify("web", setImage("nginx:3"))
	e.settle()
	rss := e.replicaSets()
	if len(rss) != 3 {
		t.Fatalf("%d ReplicaSets, want 3", len(rss))
	}
	for i, want := range []int64{0, 0, 5} {
		if n := num(rss[i], "spec", "replicas"); n != want {
			t.Errorf("ReplicaSet %d (%s) at %d replicas, want %d", i, kobj.Name(rss[i]), n, want)
		}
	}
	if rev := kobj.Annotation(rss[2], deployment.RevisionAnnotation); rev != "3" {
		t.Errorf("newest revision %q", rev)
	}
	d := e.getDeploy("web")
	if num(d, "status", "updatedReplicas") != 5 || num(d, "status", "availableReplicas") != 5 {
		t.Errorf("status %v", d["status"])
	}
}

func TestPauseResume(t *testing.T) {
	e := newEnv(t)
	e.create(deploymentObj("web", 2, "nginx:1"))
	e.settle()
	e.modify("web", setSpec("paused", true))
	e.settle()
	if c := cond(e.getDeploy("web"), "Progressing"); c == nil || c["reason"] != "DeploymentPaused" || c["status"] != "Unknown" {
		t.Errorf("paused condition %v", c)
	}
	e.modify("web", setImage("nginx:2"))
	e.modify("web", setSpec("replicas", int64(4)))
	e.settle()
	rss := e.replicaSets()
	if len(rss) != 1 {
		t.Fatalf("rollout started while paused: %d ReplicaSets", len(rss))
	}
	if n := num(rss[0], "spec", "replicas"); n != 4 {
		t.Errorf("scaling while paused: %d replicas, want 4", n)
	}
	e.modify("web", setSpec("paused", false))
	e.settle()
	rss = e.replicaSets()
	if len(rss) != 2 || num(rss[1], "spec", "replicas") != 4 || num(rss[0], "spec", "replicas") != 0 {
		t.Fatalf("after resume: %d ReplicaSets", len(rss))
	}
	if c := cond(e.getDeploy("web"), "Progressing"); c == nil || c["reason"] != "NewReplicaSetAvailable" {
		t.Errorf("Progressing after resume %v", c)
	}
}

func TestProgressDeadline(t *testing.T) {
	e := newEnv(t)
	d := deploymentObj("web", 3, "nginx:1")
	d["spec"].(map[string]any)["progressDeadlineSeconds"] = int64(60)
	e.create(d)
	e.settle()
	broken := true
	e.ready = func(p map[string]any) bool {
		img := kobj.Slice(p, "spec", "containers")[0].(map[string]any)["image"]
		return img != "nginx:bad" || !broken
	}
	e.modify("web", setImage("nginx:bad"))
	start := e.Now()
	e.settleUntil(start.Add(10 * time.Minute))
	c := cond(e.getDeploy("web"), "Progressing")
	if c == nil || c["reason"] != "ProgressDeadlineExceeded" || c["status"] != "False" {
		t.Fatalf("Progressing %v, want ProgressDeadlineExceeded", c)
	}
	if at := kobj.ParseTime(kobj.Str(c, "lastTransitionTime")); at.Sub(start) < 60*time.Second || at.Sub(start) > 70*time.Second {
		t.Errorf("timed out at %v, %v after the update", at, at.Sub(start))
	}
	broken = false
	e.settle()
	c = cond(e.getDeploy("web"), "Progressing")
	if c == nil || c["reason"] != "NewReplicaSetAvailable" || c["status"] != "True" {
		t.Errorf("after recovery Progressing %v", c)
	}
}

func TestRevisionHistoryLimit(t *testing.T) {
	e := newEnv(t)
	d := deploymentObj("web", 1, "nginx:0")
	d["spec"].(map[string]any)["revisionHistoryLimit"] = int64(2)
	e.create(d)
	e.settle()
	for _, img := range []string{"nginx:1", "nginx:2", "nginx:3", "nginx:4"} {
		e.modify("web", setImage(img))
		e.settle()
	}
	e.settle()
	rss := e.replicaSets()
	if len(rss) != 3 {
		t.Fatalf("%d ReplicaSets, want 3 (2 old + new)", len(rss))
	}
	var revs []string
	for _, rs := range rss {
		revs = append(revs, kobj.Annotation(rs, deployment.RevisionAnnotation))
	}
	if strings.Join(revs, ",") != "3,4,5" {
		t.Errorf("revisions kept %v, want 3,4,5", revs)
	}
	e.modify("web", setSpec("revisionHistoryLimit", int64(0)))
	e.settle()
	if n := len(e.replicaSets()); n != 1 {
		t.Errorf("revisionHistoryLimit 0 keeps %d ReplicaSets, want 1", n)
	}
}

func TestRecreate(t *testing.T) {
	e := newEnv(t)
	d := deploymentObj("web", 3, "nginx:1")
	d["spec"].(map[string]any)["strategy"] = map[string]any{"type": "Recreate"}
	e.create(d)
	e.settle()
	e.modify("web", setImage("nginx:2"))
	e.settle()
	rss := e.replicaSets()
	if len(rss) != 2 {
		t.Fatalf("%d ReplicaSets", len(rss))
	}
	want := []string{
		"Scaled up replica set " + kobj.Name(rss[0]) + " from 0 to 3",
		"Scaled down replica set " + kobj.Name(rss[0]) + " from 3 to 0",
		"Scaled up replica set " + kobj.Name(rss[1]) + " from 0 to 3",
	}
	if got := e.events("ScalingReplicaSet"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRollback(t *testing.T) {
	e := newEnv(t)
	e.create(deploymentObj("nginx-deployment", 2, "nginx:1.14.2"))
	e.settle()
	e.modify("nginx-deployment", setImage("nginx:1.16.1"))
	e.settle()
	e.modify("nginx-deployment", setImage("nginx:1.161"))
	e.settle()
	err := deployment.Rollback(e.Ctx, e.Store, "default", "nginx-deployment", 9, e.Now())
	if err == nil || err.Error() != "unable to find specified revision 9 in history" {
		t.Errorf("revision 9: %v", err)
	}
	if err := deployment.Rollback(e.Ctx, e.Store, "default", "nginx-deployment", 2, e.Now()); err != nil {
		t.Fatal(err)
	}
	e.settle()
	d := e.getDeploy("nginx-deployment")
	img := kobj.Slice(d, "spec", "template", "spec", "containers")[0].(map[string]any)["image"]
	if img != "nginx:1.16.1" {
		t.Errorf("image after rollback %v", img)
	}
	if _, ok := kobj.Map(d, "spec", "template", "metadata", "labels")["pod-template-hash"]; ok {
		t.Error("pod-template-hash copied into the Deployment")
	}
	if rev := kobj.Annotation(d, deployment.RevisionAnnotation); rev != "4" {
		t.Errorf("revision after rollback %q, want 4", rev)
	}
	rss := e.replicaSets()
	if len(rss) != 3 {
		t.Fatalf("%d ReplicaSets", len(rss))
	}
	if h := kobj.Annotation(rss[1], deployment.RevisionHistoryAnnotation); h != "2" {
		t.Errorf("revision-history %q, want 2", h)
	}
	if got := e.events("DeploymentRollback"); len(got) != 1 || got[0] != `Rolled back deployment "nginx-deployment" to revision 2` {
		t.Errorf("rollback events %v", got)
	}
	var skipped *deployment.SkippedError
	if err := deployment.Rollback(e.Ctx, e.Store, "default", "nginx-deployment", 4, e.Now()); !errors.As(err, &skipped) {
		t.Errorf("rollback to the current revision: %v", err)
	}
	// Undo (revision 0) goes to the previous revision: 3.
	if err := deployment.Rollback(e.Ctx, e.Store, "default", "nginx-deployment", 0, e.Now()); err != nil {
		t.Fatal(err)
	}
	e.settle()
	d = e.getDeploy("nginx-deployment")
	if img := kobj.Slice(d, "spec", "template", "spec", "containers")[0].(map[string]any)["image"]; img != "nginx:1.161" {
		t.Errorf("image after undo %v", img)
	}
	e.modify("nginx-deployment", setSpec("paused", true))
	if err := deployment.Rollback(e.Ctx, e.Store, "default", "nginx-deployment", 0, e.Now()); err == nil || !strings.Contains(err.Error(), "you cannot rollback a paused deployment") {
		t.Errorf("paused rollback: %v", err)
	}
}
