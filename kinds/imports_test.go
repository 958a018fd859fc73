package kinds_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports checks that the package imports only the standard library
// and konverge's schema, apimeta and value packages (not cluster: the
// contract sits above the kinds it maps). apimeta's causes carry a
// value.Path, and value imports nothing of konverge's.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/konverge/konverge/kinds":   true,
		"github.com/konverge/konverge/schema":  true,
		"github.com/konverge/konverge/apimeta": true,
		"github.com/konverge/konverge/value":   true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("imports %s", p)
		}
	}
}
