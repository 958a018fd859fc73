package cli

import (
	"strings"
	"testing"
)

// TestAPIErrorNamesSource checks that an object the API server refuses is
// reported with kubectl's message after the file, the document and the
// object it comes from, whether it fails alone (kubectl's message then
// names no file) or among others, client-side or server-side, and that the
// refused Secret's value never shows.
func TestAPIErrorNamesSource(t *testing.T) {
	t.Parallel()
	const dir = "../../testdata/bad/invalid-dir"
	const src = "error: apply: " + dir + "/b-two-docs.yaml#2 (line 9) secret/db: "
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"client-side", []string{"apply", "-f", dir},
			[]string{src + `The Secret "db" is invalid: data[a b]: Invalid value: "a b": a valid config key`}},
		{"server-side", []string{"apply", "--server-side", "-f", dir},
			[]string{src + `The Secret "db" is invalid: data[a b]: Invalid value: "a b": a valid config key`}},
		{"server-side, two errors", []string{"apply", "--server-side", "-f", dir, "-f", "../../testdata/bad/bad-selector.yaml"},
			[]string{
				"error: apply: ../../testdata/bad/bad-selector.yaml#1 (line 1) deployment.apps/web: Deployment.apps \"web\" is invalid: ",
				src + `Secret "db" is invalid: data[a b]: Invalid value: "a b": a valid config key`,
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			_, stderr, code := konvergeRun(t, nil, append([]string{"--state", state}, c.args...)...)
			if code != 1 {
				t.Errorf("exit %d, want 1:\n%s", code, stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			for _, w := range c.want {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, w)
				}
				if !found {
					t.Errorf("no line starts with %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "s3cr3t-Pa55w0rd") || strings.Contains(stderr, "czNjcjN0LVBhNTV3MHJk") {
				t.Errorf("the Secret's value shows:\n%s", stderr)
			}
		})
	}
}
