package selector_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports checks that the package imports no other konverge package
// and nothing of client-go or kubectl: apimachinery does the parsing and
// matching.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/konverge/konverge/selector" {
			continue
		}
		for _, bad := range []string{"github.com/konverge/", "k8s.io/client-go", "k8s.io/kubectl"} {
			if strings.HasPrefix(p, bad) {
				t.Errorf("imports %s", p)
			}
		}
	}
}
