package apply_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/golden"
)

// TestSeedWalkthrough is the seed's declarative-apply page as library
// calls: create, scale by another writer, update, re-apply, prune.
func TestSeedWalkthrough(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	var out strings.Builder

	// kubectl apply -f simple_deployment.yaml
	res := mustApply(t, s, apply.Options{}, read(t, "seed/simple_deployment.yaml"))
	out.WriteString(lines(res))
	if got, want := lines(res), "deployment.apps/nginx-deployment created\n"; got != want {
		t.Fatalf("create: %q, want %q", got, want)
	}
	live := mustGet(t, s, gvkDeployment, "default", "nginx-deployment")
	const createdAnnotation = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"nginx-deployment","namespace":"default"},"spec":{"minReadySeconds":5,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx","ports":[{"containerPort":80}]}]}}}}` + "\n"
	if got := annotation(live); got != createdAnnotation {
		t.Errorf("annotation after create:\n%s\nwant\n%s", got, createdAnnotation)
	}
	// Server defaults, as the seed's "default values" section shows.
	if got := field(live, "spec.replicas"); got != int64(1) {
		t.Errorf("defaulted replicas = %v", got)
	}
	if got := field(live, "spec.strategy.type"); got != "RollingUpdate" {
		t.Errorf("defaulted strategy = %v", got)
	}

	// kubectl scale deployment/nginx-deployment --replicas=2
	if _, err := s.Patch(ctx, gvkDeployment, "default", "nginx-deployment", cluster.MergePatchType, []byte(`{"spec":{"replicas":2}}`)); err != nil {
		t.Fatal(err)
	}

	// kubectl apply -f update_deployment.yaml
	res = mustApply(t, s, apply.Options{}, read(t, "seed/update_deployment.yaml"))
	out.WriteString(lines(res))
	if got, want := lines(res), "deployment.apps/nginx-deployment configured\n"; got != want {
		t.Fatalf("update: %q, want %q", got, want)
	}
	live = mustGet(t, s, gvkDeployment, "default", "nginx-deployment")
	if got := field(live, "spec.replicas"); got != int64(2) {
		t.Errorf("replicas = %v, want 2 (set by scale, not in the config)", got)
	}
	if got := field(live, "spec.minReadySeconds"); got != nil {
		t.Errorf("minReadySeconds = %v, want it cleared", got)
	}
	containers := field(live, "spec.template.spec.containers").([]any)
	if got := containers[0].(map[string]any)["image"]; got != "nginx:1.16.1" {
		t.Errorf("image = %v", got)
	}
	const updatedAnnotation = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"nginx-deployment","namespace":"default"},"spec":{"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.16.1","name":"nginx","ports":[{"containerPort":80}]}]}}}}` + "\n"
	if got := annotation(live); got != updatedAnnotation {
		t.Errorf("annotation after update:\n%s\nwant\n%s", got, updatedAnnotation)
	}
	// The patch sent is kubectl's.
	const wantPatch = `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":` +
		`"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"nginx-deployment\",\"namespace\":\"default\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"nginx\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"nginx\"}},\"spec\":{\"containers\":[{\"image\":\"nginx:1.16.1\",\"name\":\"nginx\",\"ports\":[{\"containerPort\":80}]}]}}}}\n"}},` +
		`"spec":{"minReadySeconds":null,"template":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],"containers":[{"image":"nginx:1.16.1","name":"nginx"}]}}}}`
	if got := string(encode(t, res[0].Patch)); got != wantPatch {
		t.Errorf("patch:\n%s\nwant\n%s", got, wantPatch)
	}
	if res[0].PatchType != cluster.StrategicMergePatchType {
		t.Errorf("patch type %s", res[0].PatchType)
	}

	// Applying again changes nothing.
	res = mustApply(t, s, apply.Options{}, read(t, "seed/update_deployment.yaml"))
	out.WriteString(lines(res))
	if got, want := lines(res), "deployment.apps/nginx-deployment unchanged\n"; got != want {
		t.Fatalf("re-apply: %q, want %q", got, want)
	}
	if rv := field(mustGet(t, s, gvkDeployment, "default", "nginx-deployment"), "metadata.resourceVersion"); rv != field(live, "metadata.resourceVersion") {
		t.Errorf("unchanged apply wrote: resourceVersion %v -> %v", field(live, "metadata.resourceVersion"), rv)
	}

	// kubectl apply -f v1/ --prune -l app=nginx, then without config.yaml.
	prune := apply.Options{Prune: true, Selector: "app=nginx"}
	res = mustApply(t, s, prune, read(t, "prune/v1"))
	out.WriteString(lines(res))
	res = mustApply(t, s, prune, read(t, "prune/v2"))
	out.WriteString(lines(res))
	if exists(t, s, gvkConfigMap, "default", "nginx-config") {
		t.Errorf("nginx-config not pruned")
	}
	golden.Assert(t, filepath.Join(testdata, "golden", "seed-walkthrough.txt"), []byte(out.String()))
	golden.Assert(t, filepath.Join(testdata, "golden", "seed-walkthrough-live.yaml"),
		[]byte(toYAML(t, stripServerFields(mustGet(t, s, gvkDeployment, "default", "nginx-deployment")))))
}

// stripServerFields removes what differs from run to run (uid) and the
// store's counters, which this test does not pin.
func stripServerFields(obj map[string]any) map[string]any {
	md := obj["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "generation"} {
		delete(md, f)
	}
	return obj
}
