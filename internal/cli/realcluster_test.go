package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/value"
)

// realKubeconfig returns the kubeconfig of the control plane that
// scripts/realcluster.sh runs, or skips: KONVERGE_REALCLUSTER=1 means
// ~/.cache/realcluster, another value is that REALCLUSTER_HOME.
func realKubeconfig(t *testing.T) string {
	t.Helper()
	home := os.Getenv("KONVERGE_REALCLUSTER")
	if home == "" {
		t.Skip("KONVERGE_REALCLUSTER not set (scripts/realcluster.sh up; KONVERGE_REALCLUSTER=1)")
	}
	if home == "1" {
		h, _ := os.UserHomeDir()
		home = filepath.Join(h, ".cache", "realcluster")
	}
	return filepath.Join(home, "kubeconfig")
}

// TestRealClusterWalkthrough runs the declarative-apply seed's walkthrough
// with --kubeconfig against a real kube-apiserver, and checks that what
// the server made of each apply is what `konverge merge` computes locally
// from the same files.
func TestRealClusterWalkthrough(t *testing.T) {
	kc := realKubeconfig(t)
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

	must(`deployment.apps "nginx-deployment" deleted`, "delete", "-f", dir+"update_deployment.yaml")
	if _, _, code := k("get", "deployment", "nginx-deployment"); code == 0 {
		t.Error("deployment still there after delete")
	}
}
