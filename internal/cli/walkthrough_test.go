package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

var deploymentGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}

// getObject reads one object from the state directory, with the store
// opened only for the read.
func getObject(t *testing.T, state string, gvk schema.GVK, ns, name string) (map[string]any, error) {
	t.Helper()
	st, err := local.Open(state, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return st.Get(context.Background(), gvk, ns, name)
}

// mustRun runs a konverge command line that must succeed and returns its
// standard output.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := konvergeRun(t, nil, args...)
	if code != 0 {
		t.Fatalf("konverge %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

func hasSubcommand(name string) bool {
	root := NewRootCmd(Streams{})
	for _, c := range root.Commands() {
		if c.Name() == name {
			return true
		}
	}
	return false
}

// TestSeedWalkthrough follows the seed declarative-apply-v1.17 end to end
// through the CLI: apply, scale outside apply, apply an update that drops
// minReadySeconds, prune, delete.
func TestSeedWalkthrough(t *testing.T) {
	t.Parallel()
	dir := "../../testdata/cli/walkthrough/"
	state := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		return mustRun(t, append([]string{"--state", state}, args...)...)
	}
	get := func() map[string]any {
		t.Helper()
		obj, err := getObject(t, state, deploymentGVK, "default", "nginx-deployment")
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	annotation := func(obj map[string]any) string {
		return objref.Annotations(obj)[lastapplied.Annotation]
	}
	spec := func(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }
	image := func(obj map[string]any) any {
		return spec(obj)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]
	}

	// kubectl diff shows the object to be created; kubectl apply creates it
	// with the annotation holding the file's configuration.
	if _, _, code := konvergeRun(t, nil, "--state", state, "diff", "-f", dir+"simple_deployment.yaml"); code != 1 {
		t.Fatalf("diff before create: exit %d, want 1", code)
	}
	if got := run("apply", "-f", dir+"simple_deployment.yaml"); got != "deployment.apps/nginx-deployment created\n" {
		t.Fatalf("apply: %q", got)
	}
	const firstAnnotation = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"nginx-deployment","namespace":"default"},"spec":{"minReadySeconds":5,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx","ports":[{"containerPort":80}]}]}}}}` + "\n"
	if got := annotation(get()); got != firstAnnotation {
		t.Fatalf("annotation after create:\n%s\nwant:\n%s", got, firstAnnotation)
	}

	// kubectl scale deployment/nginx-deployment --replicas=2: outside apply,
	// so the annotation does not change.
	switch {
	case hasSubcommand("scale"):
		run("scale", "deployment/nginx-deployment", "--replicas=2")
	case hasSubcommand("patch"):
		run("patch", "deployment", "nginx-deployment", "--type=merge", "-p", `{"spec":{"replicas":2}}`)
	default:
		// Neither command exists yet in this build: scale through the
		// library, as kubectl scale's merge patch of spec.replicas.
		st, err := local.Open(state, local.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.Patch(context.Background(), deploymentGVK, "default", "nginx-deployment", cluster.MergePatchType, []byte(`{"spec":{"replicas":2}}`))
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	obj := get()
	if r := spec(obj)["replicas"]; r != int64(2) {
		t.Fatalf("replicas after scale = %v, want 2", r)
	}
	if got := annotation(obj); got != firstAnnotation {
		t.Fatalf("scale changed the annotation:\n%s", got)
	}

	// Apply update_deployment.yaml: new image, no minReadySeconds.
	if _, _, code := konvergeRun(t, nil, "--state", state, "diff", "-f", dir+"update_deployment.yaml"); code != 1 {
		t.Fatalf("diff before update: exit %d, want 1", code)
	}
	if got := run("apply", "-f", dir+"update_deployment.yaml"); got != "deployment.apps/nginx-deployment configured\n" {
		t.Fatalf("apply update: %q", got)
	}
	obj = get()
	if r := spec(obj)["replicas"]; r != int64(2) {
		t.Errorf("replicas after update = %v, want 2 (set by scale, ignored by apply)", r)
	}
	if _, ok := spec(obj)["minReadySeconds"]; ok {
		t.Errorf("minReadySeconds is still set: %v", spec(obj)["minReadySeconds"])
	}
	if img := image(obj); img != "nginx:1.16.1" {
		t.Errorf("image = %v, want nginx:1.16.1", img)
	}
	const secondAnnotation = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"nginx-deployment","namespace":"default"},"spec":{"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.16.1","name":"nginx","ports":[{"containerPort":80}]}]}}}}` + "\n"
	if got := annotation(obj); got != secondAnnotation {
		t.Errorf("annotation after update:\n%s\nwant:\n%s", got, secondAnnotation)
	}
	if _, _, code := konvergeRun(t, nil, "--state", state, "diff", "-f", dir+"update_deployment.yaml"); code != 0 {
		t.Errorf("diff after update: exit %d, want 0", code)
	}
	if got := run("apply", "-f", dir+"update_deployment.yaml"); got != "deployment.apps/nginx-deployment unchanged\n" {
		t.Errorf("re-apply: %q", got)
	}

	// kubectl apply -f <dir/> --prune -l <labels>: the ConfigMap that left
	// the directory goes; the Deployment, labelled in prune/ since -l also
	// filters the input, stays with its replicas.
	if got := run("apply", "-f", dir+"prune/v1", "--prune", "-l", "app=nginx"); got != "configmap/nginx-config created\ndeployment.apps/nginx-deployment configured\n" {
		t.Errorf("apply prune/v1: %q", got)
	}
	if got := run("apply", "-f", dir+"prune/v2", "--prune", "-l", "app=nginx"); got != "deployment.apps/nginx-deployment unchanged\nconfigmap/nginx-config pruned\n" {
		t.Errorf("apply prune/v2: %q", got)
	}
	if _, err := getObject(t, state, schema.GVK{Version: "v1", Kind: "ConfigMap"}, "default", "nginx-config"); !cluster.IsNotFound(err) {
		t.Errorf("pruned ConfigMap: err = %v, want NotFound", err)
	}
	if spec(get())["replicas"] != int64(2) {
		t.Errorf("prune changed the Deployment")
	}

	// kubectl delete -f <file>.
	if got := run("delete", "-f", dir+"update_deployment.yaml"); got != "deployment.apps \"nginx-deployment\" deleted from default namespace\n" {
		t.Errorf("delete: %q", got)
	}
	if _, err := getObject(t, state, deploymentGVK, "default", "nginx-deployment"); !cluster.IsNotFound(err) {
		t.Errorf("deleted Deployment: err = %v, want NotFound", err)
	}
}
