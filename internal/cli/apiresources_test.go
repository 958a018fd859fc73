package cli

import (
	"strings"
	"testing"
)

func TestAPIResources(t *testing.T) {
	state := t.TempDir()
	out, errOut, code := konvergeRun(t, nil, "--state", state, "api-resources")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "NAME SHORTNAMES APIVERSION NAMESPACED KIND" {
		t.Fatalf("header %q", lines[0])
	}
	want := map[string]string{
		"deployments": "deploy apps/v1 true Deployment",
		"namespaces":  "ns v1 false Namespace",
		"pods":        "po v1 true Pod",
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if w, ok := want[f[0]]; ok {
			if got := strings.Join(f[1:], " "); got != w {
				t.Errorf("%s: got %q, want %q", f[0], got, w)
			}
			delete(want, f[0])
		}
	}
	if len(want) != 0 {
		t.Errorf("missing rows: %v", want)
	}

	out, _, code = konvergeRun(t, nil, "--state", state, "api-resources", "--namespaced=false", "-o", "name")
	if code != 0 || !strings.Contains(out, "\nnamespaces\n") || strings.Contains(out, "deployments.apps") {
		t.Errorf("--namespaced=false -o name: exit %d\n%s", code, out)
	}
}
