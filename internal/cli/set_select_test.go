package cli

import (
	"strings"
	"testing"
)

// The containers kubectl v1.37.1 picks with set env --containers=SELECTOR
// (--local, -o json) among app, bapp, sidecar, web-app and aa: a star
// pattern's pieces are searched for with kubectl's offsets, so "a*" picks
// every name with an "a" and "b*p" picks no "bapp".
func TestSelectContainerNameAsKubectl(t *testing.T) {
	names := []string{"app", "bapp", "sidecar", "web-app", "aa"}
	for selector, want := range map[string]string{
		"a*":      "app bapp sidecar web-app aa",
		"*app":    "app bapp web-app",
		"b*p":     "",
		"*a*":     "app bapp sidecar web-app aa",
		"web*app": "web-app",
		"app":     "app",
		"x*":      "",
		"*car":    "sidecar",
		"a*a":     "",
		"s*d*r":   "",
		"*":       "app bapp sidecar web-app aa",
	} {
		var got []string
		for _, n := range names {
			if selectContainerName(n, selector) {
				got = append(got, n)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("--containers=%s picks %q, kubectl picks %q", selector, got, want)
		}
	}
}
