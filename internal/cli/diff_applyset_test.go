package cli

import (
	"strings"
	"testing"
)

// TestDiffApplySet: objects applied with --applyset diff as unchanged with
// the same --applyset (without it, the membership label shows as removed),
// and --prune shows the members that left the input.
func TestDiffApplySet(t *testing.T) {
	t.Parallel()
	c := newSeedCluster(t)
	a := c.file("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n")
	b := c.file("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: v}\n")
	c.ok("apply", "-f", a, "-f", b, "--prune", "--applyset=set", "-n", "default")
	if out, _, code := c.run("diff", "-f", a, "-f", b, "-n", "default"); code != 1 || !strings.Contains(out, "-    applyset.kubernetes.io/part-of:") {
		t.Fatalf("diff without --applyset: exit %d\n%s", code, out)
	}
	if out, errOut, code := c.run("diff", "-f", a, "-f", b, "-n", "default", "--applyset=set"); code != 0 {
		t.Fatalf("diff with --applyset: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code := c.run("diff", "-f", a, "-n", "default", "--applyset=set", "--prune")
	if code != 1 || !strings.Contains(out, "--- live/v1.ConfigMap.default.b") || strings.Contains(out, "ConfigMap.default.a") {
		t.Fatalf("prune preview: exit %d\n%s", code, out)
	}
}
