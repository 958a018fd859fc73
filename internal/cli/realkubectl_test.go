package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/konverge/konverge/internal/realcluster"
	"github.com/konverge/konverge/value"
)

// kubectlRun runs the kubectl built with the real control plane.
func kubectlRun(t *testing.T, kc string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(realcluster.Kubectl(t), append([]string{"--kubeconfig", kc}, args...)...)
	cmd.Env = append(cmd.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("kubectl: %v", err)
	}
	return out.String(), errOut.String(), code
}

// TestRealDiffTruthMatchesKubectl applies the objects of
// testdata/cli/diff-truth, whose every re-apply sends a patch that changes
// nothing on the server, with kubectl into one namespace and with konverge
// into another: the result lines, the diff exit statuses and the live
// objects must be the same.
func TestRealDiffTruthMatchesKubectl(t *testing.T) {
	kc := realcluster.Kubeconfig(t)
	file := "../../testdata/cli/diff-truth/objects.yaml"
	suffix := time.Now().UnixNano() % 1e9
	nsK, nsC := fmt.Sprintf("truth-kubectl-%d", suffix), fmt.Sprintf("truth-konverge-%d", suffix)
	for _, ns := range []string{nsK, nsC} {
		if _, errOut, code := kubectlRun(t, kc, nil, "create", "namespace", ns); code != 0 {
			t.Fatalf("create namespace: %s", errOut)
		}
		defer kubectlRun(t, kc, nil, "delete", "namespace", ns, "--wait=false")
	}
	step := func(args ...string) {
		t.Helper()
		kOut, kErr, kCode := kubectlRun(t, kc, nil, append([]string{"-n", nsK}, args...)...)
		cOut, cErr, cCode := konvergeRun(t, nil, append([]string{"--kubeconfig", kc, "-n", nsC}, args...)...)
		if kCode != cCode || kOut != cOut {
			t.Errorf("%s:\nkubectl (exit %d):\n%s%s\nkonverge (exit %d):\n%s%s", strings.Join(args, " "), kCode, kOut, kErr, cCode, cOut, cErr)
		}
	}
	step("apply", "-f", file)
	step("diff", "-f", file)
	step("apply", "-f", file)
	step("diff", "-f", file)
	step("apply", "-f", file, "--dry-run=server")
	for _, kind := range []string{"poddisruptionbudget/web", "deployment/web", "configmap/empty", "secret/creds"} {
		kOut, kErr, _ := kubectlRun(t, kc, nil, "-n", nsK, "get", kind, "-o", "json", "--show-managed-fields")
		cOut, cErr, _ := kubectlRun(t, kc, nil, "-n", nsC, "get", kind, "-o", "json", "--show-managed-fields")
		k, err := value.DecodeObject([]byte(kOut))
		if err != nil {
			t.Fatalf("kubectl get %s: %v %s", kind, err, kErr)
		}
		c, err := value.DecodeObject([]byte(cOut))
		if err != nil {
			t.Fatalf("konverge get %s: %v %s", kind, err, cErr)
		}
		if a, b := realcluster.Comparable(t, k, nsK), realcluster.Comparable(t, c, nsC); a != b {
			t.Errorf("%s differs:\nkubectl:  %s\nkonverge: %s", kind, a, b)
		}
	}
}

// TestRealApplyCRDAndItsResources applies, in one input, a Namespace, a
// CustomResourceDefinition and a resource of it (after them in applying
// order, before them in the input), on a real cluster: the kind appears to
// konverge once the CRD is Established, the lines come in input order, and
// a re-apply sends nothing. A second process finds discovery and OpenAPI
// in the disk cache.
func TestRealApplyCRDAndItsResources(t *testing.T) {
	kc := realcluster.Kubeconfig(t)
	cache := t.TempDir()
	t.Setenv("KUBECACHEDIR", cache)
	suffix := fmt.Sprint(time.Now().UnixNano() % 1e9)
	group := "g" + suffix + ".konverge.example"
	dir := t.TempDir()
	writeFile(t, dir+"/a-widget.yaml", []byte(`apiVersion: `+group+`/v1
kind: Widget
metadata: {name: w, namespace: crd-`+suffix+`}
spec: {size: 3}
`))
	writeFile(t, dir+"/b-crd.yaml", []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.`+group+`}
spec:
  group: `+group+`
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`))
	writeFile(t, dir+"/c-namespace.yaml", []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: crd-"+suffix+"}\n"))
	defer kubectlRun(t, kc, nil, "delete", "-f", dir+"/b-crd.yaml", "--wait=false")
	defer kubectlRun(t, kc, nil, "delete", "-f", dir+"/c-namespace.yaml", "--wait=false")

	out, errOut, code := konvergeRun(t, nil, "--kubeconfig", kc, "apply", "-f", dir)
	want := "widget." + group + "/w created\ncustomresourcedefinition.apiextensions.k8s.io/widgets." + group + " created\nnamespace/crd-" + suffix + " created\n"
	if code != 0 || out != want {
		t.Fatalf("apply: exit %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}
	out, errOut, code = konvergeRun(t, nil, "--kubeconfig", kc, "apply", "-f", dir)
	if code != 0 || out != strings.ReplaceAll(want, "created", "unchanged") {
		t.Fatalf("re-apply: exit %d\n%s%s", code, out, errOut)
	}
	got, errOut, code := kubectlRun(t, kc, nil, "get", "widgets."+group, "w", "-n", "crd-"+suffix, "-o", "jsonpath={.spec.size}")
	if code != 0 || got != "3" {
		t.Errorf("kubectl get widget: %q %s", got, errOut)
	}
	for _, sub := range []string{"discovery", "http", "konverge/openapi"} {
		entries, err := os.ReadDir(filepath.Join(cache, sub))
		if err != nil || len(entries) == 0 {
			t.Errorf("nothing cached in %s/%s: %v", cache, sub, err)
		}
	}
}
