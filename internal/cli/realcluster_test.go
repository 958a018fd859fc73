package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/internal/realcluster"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// TestRealClusterWalkthrough runs the declarative-apply seed's walkthrough
// with --kubeconfig against a real kube-apiserver, and checks that what
// the server made of each apply is what `konverge merge` computes locally
// from the same files.
func TestRealClusterWalkthrough(t *testing.T) {
	kc := realcluster.Kubeconfig(t)
	dir := "../../testdata/cli/walkthrough/"
	ns := fmt.Sprintf("konverge-walk-%d", time.Now().UnixNano()%1e9)
	nsFile := filepath.Join(t.TempDir(), "ns.yaml")
	if err := os.WriteFile(nsFile, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k := func(args ...string) (string, string, int) {
		t.Helper()
		return konvergeRun(t, nil, append([]string{"--kubeconfig", kc, "-n", ns}, args...)...)
	}
	must := func(want string, args ...string) {
		t.Helper()
		out, errOut, code := k(args...)
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("konverge %s: exit %d, stdout %q, stderr %q; want %q", strings.Join(args, " "), code, out, errOut, want)
		}
	}
	live := func() map[string]any {
		t.Helper()
		out, errOut, code := k("get", "deployment", "nginx-deployment", "-o", "json")
		if code != 0 {
			t.Fatalf("get: %s", errOut)
		}
		obj, err := value.DecodeObject([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	spec := func(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

	if _, _, code := konvergeRun(t, nil, "--kubeconfig", kc, "apply", "-f", nsFile); code != 0 {
		t.Fatal("namespace not created")
	}
	defer konvergeRun(t, nil, "--kubeconfig", kc, "delete", "-f", nsFile)

	if _, _, code := k("diff", "-f", dir+"simple_deployment.yaml"); code != 1 {
		t.Fatalf("diff before create: exit %d, want 1", code)
	}
	must("deployment.apps/nginx-deployment created", "apply", "-f", dir+"simple_deployment.yaml")
	if out, errOut, code := k("diff", "-f", dir+"simple_deployment.yaml"); code != 0 {
		t.Fatalf("diff after apply: exit %d\n%s%s", code, out, errOut)
	}
	must("deployment.apps/nginx-deployment unchanged", "apply", "-f", dir+"simple_deployment.yaml")
	must("deployment.apps/nginx-deployment scaled", "scale", "deployment/nginx-deployment", "--replicas=2")
	before := live()

	// What konverge merge computes locally for the update, from the live
	// object before it.
	liveFile := filepath.Join(t.TempDir(), "live.json")
	b, _ := json.Marshal(before)
	if err := os.WriteFile(liveFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	local, errOut, code := konvergeRun(t, nil, "merge", "--config", dir+"update_deployment.yaml", "--live", liveFile, "-o", "json")
	if code != 0 {
		t.Fatalf("merge: %s", errOut)
	}
	want, err := value.DecodeObject([]byte(local))
	if err != nil {
		t.Fatal(err)
	}

	must("deployment.apps/nginx-deployment configured", "apply", "-f", dir+"update_deployment.yaml")
	after := live()
	if got := spec(after)["replicas"]; got != int64(2) {
		t.Errorf("replicas = %v, want 2 (set by scale, kept by apply)", got)
	}
	if _, ok := spec(after)["minReadySeconds"]; ok {
		t.Error("minReadySeconds still set")
	}
	last, err := lastapplied.Get(after)
	if err != nil || last == nil {
		t.Fatalf("annotation: %v", err)
	}
	if objref.Annotations(after)[lastapplied.Annotation] != objref.Annotations(want)[lastapplied.Annotation] {
		t.Errorf("annotation differs from konverge merge's:\n%s\n%s", objref.Annotations(after)[lastapplied.Annotation], objref.Annotations(want)[lastapplied.Annotation])
	}
	if !value.Equal(spec(after), spec(want)) {
		a, _ := value.Encode(spec(after))
		w, _ := value.Encode(spec(want))
		t.Errorf("the server's spec differs from konverge merge's:\nserver: %s\nlocal:  %s", a, w)
	}

	if out, errOut, code := k("diff", "-f", dir+"update_deployment.yaml"); code != 0 {
		t.Errorf("diff after the update: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := k("diff", "-f", dir+"simple_deployment.yaml"); code != 1 || !strings.Contains(out, "+  minReadySeconds: 5") {
		t.Errorf("diff against the first version: exit %d\n%s%s", code, out, errOut)
	}
	must("nginx-deployment", "get", "deployments")
	must("Replicas:", "describe", "deployment", "nginx-deployment")

	// kubectl's own client-side apply of the same steps, in a namespace
	// of its own, stores the same spec and annotation.
	kubectlCompare(t, kc, ns, dir, after)

	// Prune by label, as in walkthrough_test.go.
	if out, _, _ := k("apply", "-f", dir+"prune/v1", "--prune", "-l", "app=nginx"); out != "configmap/nginx-config created\ndeployment.apps/nginx-deployment configured\n" {
		t.Errorf("apply prune/v1: %q", out)
	}
	if out, _, _ := k("apply", "-f", dir+"prune/v2", "--prune", "-l", "app=nginx"); out != "deployment.apps/nginx-deployment unchanged\nconfigmap/nginx-config pruned\n" {
		t.Errorf("apply prune/v2: %q", out)
	}
	if _, errOut, code := k("get", "configmap", "nginx-config"); code == 0 || !strings.Contains(errOut, "NotFound") {
		t.Errorf("pruned ConfigMap: exit %d, %s", code, errOut)
	}

	// The simulation (virtual clock, controllers) is the embedded
	// cluster's only.
	if _, errOut, code := k("clock"); code == 0 || !strings.Contains(errOut, "no virtual clock") {
		t.Errorf("clock on a real cluster: exit %d, %s", code, errOut)
	}

	must(`deployment.apps "nginx-deployment" deleted from `+ns+` namespace`, "delete", "-f", dir+"update_deployment.yaml")
	if _, _, code := k("get", "deployment", "nginx-deployment"); code == 0 {
		t.Error("deployment still there after delete")
	}
}

// kubectlCompare runs the walkthrough's apply, scale, apply with the
// kubectl that scripts/realcluster.sh builds, when there is one, and
// compares what it stored with konverge's result.
func kubectlCompare(t *testing.T, kc, ns, dir string, konverge map[string]any) {
	t.Helper()
	kubectl := filepath.Join(filepath.Dir(kc), "bin", "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Logf("no %s: kubectl comparison skipped", kubectl)
		return
	}
	kns := ns + "-kubectl"
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", kc}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("create", "namespace", kns)
	defer exec.Command(kubectl, "--kubeconfig", kc, "delete", "namespace", kns, "--wait=false").Run()
	run("-n", kns, "apply", "-f", dir+"simple_deployment.yaml")
	run("-n", kns, "scale", "deployment/nginx-deployment", "--replicas=2")
	run("-n", kns, "apply", "-f", dir+"update_deployment.yaml")
	got, err := value.DecodeObject([]byte(run("-n", kns, "get", "deployment", "nginx-deployment", "-o", "json")))
	if err != nil {
		t.Fatal(err)
	}
	spec := func(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }
	if !value.Equal(spec(got), spec(konverge)) {
		a, _ := value.Encode(spec(got))
		b, _ := value.Encode(spec(konverge))
		t.Errorf("spec after kubectl apply differs from konverge apply's:\nkubectl:  %s\nkonverge: %s", a, b)
	}
	// The annotations differ only in the namespace.
	ka := strings.ReplaceAll(objref.Annotations(got)[lastapplied.Annotation], kns, ns)
	if ka != objref.Annotations(konverge)[lastapplied.Annotation] {
		t.Errorf("last-applied annotation:\nkubectl:  %s\nkonverge: %s", ka, objref.Annotations(konverge)[lastapplied.Annotation])
	}
}

// TestKubeconfigFlag checks how a real cluster is chosen, without one:
// only --kubeconfig selects it ($KUBECONFIG does not), and a kubeconfig
// that cannot be read or reached is an error naming it.
func TestKubeconfigFlag(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "does-not-exist"))
	state := filepath.Join(t.TempDir(), "state")
	if out, errOut, code := konvergeRun(t, nil, "--state", state, "get", "namespaces"); code != 0 || !strings.Contains(out, "default") {
		t.Errorf("with $KUBECONFIG set, the embedded cluster: exit %d, %q %q", code, out, errOut)
	}

	missing := filepath.Join(t.TempDir(), "missing.kubeconfig")
	if _, errOut, code := konvergeRun(t, nil, "--kubeconfig", missing, "get", "pods"); code == 0 || !strings.Contains(errOut, missing) {
		t.Errorf("--kubeconfig of a missing file: exit %d, %q", code, errOut)
	}

	// A server nobody listens on: the error names the kubeconfig and the
	// address, and nothing of its credentials.
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	const secret = "s3cr3t-t0ken-value"
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: ` + secret + `}
contexts:
- name: one
  context: {cluster: c, user: u}
current-context: one
`
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := konvergeRun(t, nil, "--kubeconfig", kc, "get", "pods")
	if code == 0 || !strings.Contains(errOut, kc) || !strings.Contains(errOut, "127.0.0.1:1") || strings.Contains(errOut, secret) {
		t.Errorf("unreachable server: exit %d, %q", code, errOut)
	}
	if _, errOut, code := konvergeRun(t, nil, "--kubeconfig", kc, "--context", "nope", "get", "pods"); code == 0 || !strings.Contains(errOut, `"nope"`) {
		t.Errorf("--context of a missing context: exit %d, %q", code, errOut)
	}

	// --context alone selects a real cluster too, found as kubectl finds
	// it: in $KUBECONFIG, else in ~/.kube/config.
	t.Setenv("KUBECACHEDIR", t.TempDir())
	t.Setenv("KUBECONFIG", kc)
	if _, errOut, code := konvergeRun(t, nil, "--context", "one", "get", "pods"); code == 0 || !strings.Contains(errOut, "127.0.0.1:1") || strings.Contains(errOut, secret) {
		t.Errorf("--context with $KUBECONFIG: exit %d, %q", code, errOut)
	}
	if _, errOut, code := konvergeRun(t, nil, "--context", "nope", "get", "pods"); code == 0 || !strings.Contains(errOut, `"nope"`) {
		t.Errorf("--context of a missing context in $KUBECONFIG: exit %d, %q", code, errOut)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".kube", "config"), []byte(strings.Replace(cfg, "127.0.0.1:1", "127.0.0.1:2", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	if _, errOut, code := konvergeRun(t, nil, "--context", "one", "get", "pods"); code == 0 || !strings.Contains(errOut, "127.0.0.1:2") {
		t.Errorf("--context with ~/.kube/config: exit %d, %q", code, errOut)
	}
	if out, errOut, code := konvergeRun(t, nil, "--state", state, "get", "namespaces"); code != 0 || !strings.Contains(out, "default") {
		t.Errorf("without --kubeconfig and --context, the embedded cluster: exit %d, %q %q", code, out, errOut)
	}
}
