package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
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
