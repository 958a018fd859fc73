package deployment_test

import (
	"strings"
	"testing"

	"github.com/konverge/konverge/controller/deployment"
	"github.com/konverge/konverge/controller/internal/kobj"
)

func TestRollingUpdateSeedSequence(t *testing.T) {
	e := newEnv(t)
	e.create(deploymentObj("nginx-deployment", 3, "nginx:1.14.2"))
	e.settle()
	rss := e.replicaSets()
	if len(rss) != 1 {
		t.Fatalf("%d ReplicaSets, want 1", len(rss))
	}
	first := kobj.Name(rss[0])
	hash := kobj.Str(rss[0], "metadata", "labels", "pod-template-hash")
	if first != "nginx-deployment-"+hash || len(hash) < 8 {
		t.Fatalf("ReplicaSet name %q, hash %q", first, hash)
	}
	if kobj.Str(rss[0], "spec", "selector", "matchLabels", "pod-template-hash") != hash ||
		kobj.Str(rss[0], "spec", "template", "metadata", "labels", "pod-template-hash") != hash {
		t.Errorf("pod-template-hash missing from selector or template: %v", rss[0]["spec"])
	}
	d := e.getDeploy("nginx-deployment")
	if kobj.Annotation(d, deployment.RevisionAnnotation) != "1" || kobj.Annotation(rss[0], deployment.RevisionAnnotation) != "1" {
		t.Errorf("revision annotations: deployment %q, rs %q", kobj.Annotation(d, deployment.RevisionAnnotation), kobj.Annotation(rss[0], deployment.RevisionAnnotation))
	}
	if g := num(d, "metadata", "generation"); g != 1 || num(d, "status", "observedGeneration") != 1 {
		t.Errorf("generation %d observedGeneration %d, want 1 and 1", g, num(d, "status", "observedGeneration"))
	}
	for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
		if num(d, "status", f) != 3 {
			t.Errorf("status.%s = %d, want 3", f, num(d, "status", f))
		}
	}
	if c := cond(d, "Available"); c == nil || c["reason"] != "MinimumReplicasAvailable" || c["message"] != "Deployment has minimum availability." {
		t.Errorf("Available condition %v", c)
	}
	if c := cond(d, "Progressing"); c == nil || c["reason"] != "NewReplicaSetAvailable" ||
		c["message"] != `ReplicaSet "`+first+`" has successfully progressed.` {
		t.Errorf("Progressing condition %v", c)
	}

	e.modify("nginx-deployment", func(d map[string]any) {
		setImage("nginx:1.16.1")(d)
		kobj.SetAnnotation(d, "kubernetes.io/change-cause", "kubectl set image deployment/nginx-deployment nginx=nginx:1.16.1")
	})
	e.settle()
	rss = e.replicaSets()
	if len(rss) != 2 {
		t.Fatalf("%d ReplicaSets, want 2", len(rss))
	}
	second := kobj.Name(rss[1])
	if second == first {
		t.Fatal("no new ReplicaSet")
	}
	want := []string{
		"Scaled up replica set " + first + " from 0 to 3",
		"Scaled up replica set " + second + " from 0 to 1",
		"Scaled down replica set " + first + " from 3 to 2",
		"Scaled up replica set " + second + " from 1 to 2",
		"Scaled down replica set " + first + " from 2 to 1",
		"Scaled up replica set " + second + " from 2 to 3",
		"Scaled down replica set " + first + " from 1 to 0",
	}
	got := e.events("ScalingReplicaSet")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	d = e.getDeploy("nginx-deployment")
	if kobj.Annotation(d, deployment.RevisionAnnotation) != "2" || kobj.Annotation(rss[1], deployment.RevisionAnnotation) != "2" {
		t.Errorf("revision after update: %q / %q", kobj.Annotation(d, deployment.RevisionAnnotation), kobj.Annotation(rss[1], deployment.RevisionAnnotation))
	}
	if kobj.Annotation(rss[1], "kubernetes.io/change-cause") == "" {
		t.Errorf("change-cause not copied to the new ReplicaSet")
	}
	if n := num(rss[0], "spec", "replicas"); n != 0 {
		t.Errorf("old ReplicaSet at %d replicas", n)
	}
	if len(e.pods()) != 3 {
		t.Errorf("%d pods, want 3", len(e.pods()))
	}
	for _, p := range e.pods() {
		if kobj.ControllerUID(p) != kobj.UID(rss[1]) {
			t.Errorf("pod %s not of the new ReplicaSet", kobj.Name(p))
		}
	}
	// Settled: another round writes nothing.
	r, err := deployment.Controller{}.Sync(e.Ctx, e.Store, e.Now())
	if err != nil || r.Changed {
		t.Errorf("settled sync: changed=%v err=%v", r.Changed, err)
	}
}
