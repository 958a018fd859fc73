package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/objref"
	"github.com/konverge/konverge/schema"
)

// storeSnapshot is everything a bad apply could have changed: the store's
// revision and every object of the kinds the bad inputs hold.
func storeSnapshot(t *testing.T, state string) string {
	t.Helper()
	ctx := context.Background()
	st, err := local.Open(state, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var b strings.Builder
	rev, err := st.GetMeta(ctx, "revision")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "revision %s\n", rev)
	for _, gvk := range []schema.GVK{
		{Version: "v1", Kind: "ConfigMap"},
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "Namespace"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
	} {
		list, err := st.List(ctx, gvk)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range list.Items {
			fmt.Fprintf(&b, "%s %s/%s %s\n", gvk.Kind, objref.Namespace(obj), objref.Name(obj), objref.ResourceVersion(obj))
		}
	}
	return b.String()
}

// TestBadInput applies each bad input of testdata/bad to a cluster holding
// one object and checks that the command fails with an error naming where
// the problem is, that no secret value shows, and that nothing was written.
func TestBadInput(t *testing.T) {
	t.Parallel()
	gen := t.TempDir()

	// Generated inputs, too large to commit.
	deep := filepath.Join(gen, "deep.json")
	{
		var b bytes.Buffer
		b.WriteString(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":`)
		b.WriteString(strings.Repeat(`{"a":`, 10000))
		b.WriteString("1")
		b.WriteString(strings.Repeat("}", 10000))
		b.WriteString("}\n")
		writeFile(t, deep, b.Bytes())
	}
	deepYAML := filepath.Join(gen, "deep.yaml")
	{
		var b bytes.Buffer
		b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nx: ")
		b.WriteString(strings.Repeat("[", 10000))
		b.WriteString(strings.Repeat("]", 10000))
		b.WriteString("\n")
		writeFile(t, deepYAML, b.Bytes())
	}
	huge := filepath.Join(gen, "huge.yaml")
	{
		f, err := os.Create(huge)
		if err != nil {
			t.Fatal(err)
		}
		line := []byte("# " + strings.Repeat("x", 1021) + "\n")
		for i := 0; i < 50*1024; i++ {
			if _, err := f.Write(line); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	bigAnnotation := filepath.Join(gen, "big-annotation.yaml")
	writeFile(t, bigAnnotation, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: annotated\n  annotations:\n    a: "+strings.Repeat("v", 140000)+"\n    b: "+strings.Repeat("w", 140000)+"\n"))

	bad := func(name string) string { return filepath.Join("../../testdata/bad", name) }
	cases := []struct {
		name string
		args []string
		// want are substrings the error output must hold; secret must not
		// appear in it.
		want   []string
		secret string
	}{
		{name: "malformed YAML", args: []string{"-f", bad("malformed.yaml")}, want: []string{"malformed.yaml", "line 5"}},
		{name: "scalar document", args: []string{"-f", bad("scalar.yaml")}, want: []string{"scalar.yaml#2", "line 6"}},
		{name: "missing apiVersion", args: []string{"-f", bad("no-apiversion.yaml")}, want: []string{"no-apiversion.yaml#1 (line 1)", "apiVersion", "required"}},
		{name: "missing kind", args: []string{"-f", bad("no-kind.yaml")}, want: []string{"no-kind.yaml#1 (line 1)", "kind", "required"}},
		{name: "unknown kind", args: []string{"-f", bad("unknown-kind.yaml")}, want: []string{"unknown-kind.yaml#1 (line 1)", "Frobnicator", "frob"}},
		{name: "wrong field type", args: []string{"-f", bad("wrong-type.yaml")}, want: []string{"wrong-type.yaml#1 (line 1)", "deployment.apps/web", "spec.replicas"}},
		// An object the API server finds invalid, alone, is printed as
		// kubectl prints it (kind, name and the causes' field paths) after
		// the file, document and object it comes from.
		{name: "invalid selector operator", args: []string{"-f", bad("bad-selector.yaml")}, want: []string{`error: apply: ../../testdata/bad/bad-selector.yaml#1 (line 1) deployment.apps/web: The Deployment "web" is invalid: `, "\n* spec.selector.matchExpressions[0].operator: Invalid value"}},
		{name: "invalid object in a directory", args: []string{"-f", bad("invalid-dir")}, want: []string{`error: apply: ../../testdata/bad/invalid-dir/b-two-docs.yaml#2 (line 9) secret/db: The Secret "db" is invalid: data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters`}, secret: "s3cr3t-Pa55w0rd"},
		{name: "invalid selector flag", args: []string{"-f", bad("good.yaml"), "--prune", "-l", "a in (b"}, want: []string{"a in (b", "unable to parse"}},
		{name: "duplicate merge key", args: []string{"-f", bad("dup-merge-key.yaml")}, want: []string{"dup-merge-key.yaml#1 (line 1)", "deployment.apps/web", `spec.template.spec.containers[name="web"]`}},
		{name: "duplicate objects", args: []string{"-f", bad("dup-objects.yaml")}, want: []string{"dup-objects.yaml#1 (line 1)", "dup-objects.yaml#2 (line 8)", "configmap/twice", "duplicate"}},
		{name: "nested 10000 deep JSON", args: []string{"-f", deep}, want: []string{"deep.json#1", "nest"}},
		{name: "nested 10000 deep YAML", args: []string{"-f", deepYAML}, want: []string{"deep.yaml", "nest"}},
		{name: "50 MiB file", args: []string{"-f", huge}, want: []string{"huge.yaml", "larger than"}},
		{name: "alias bomb", args: []string{"-f", bad("alias-bomb.yaml")}, want: []string{"alias-bomb.yaml", "alias"}},
		{name: "annotations too long", args: []string{"-f", bigAnnotation}, want: []string{`big-annotation.yaml#1 (line 1) configmap/annotated: The ConfigMap "annotated" is invalid: metadata.annotations: Too long`, "262144"}},
		{name: "secret bad base64", args: []string{"-f", bad("secret-bad.yaml")}, want: []string{"secret-bad.yaml#1 (line 1)", "secret/db", "data"}, secret: "s3cr3t-Pa55w0rd"},
		{name: "secret wrong type", args: []string{"-f", bad("secret-wrong-type.yaml")}, want: []string{"secret-wrong-type.yaml#1 (line 1)", "secret/db", "stringData.password"}, secret: "s3cr3t-Pa55w0rd"},
		{name: "good and bad files", args: []string{"-f", bad("good-new.yaml"), "-f", bad("wrong-type.yaml")}, want: []string{"wrong-type.yaml#1 (line 1)", "spec.replicas"}},
		{name: "good and bad documents from stdin", args: []string{"-f", "-"}, want: []string{"-#2", "spec.replicas"}},
	}
	stdinDocs := readTestFile(t, bad("good.yaml")) + "---\n" + readTestFile(t, bad("wrong-type.yaml"))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			// A cluster with one object in it.
			if _, stderr, code := konvergeRun(t, nil, "--state", state, "apply", "-f", bad("good.yaml")); code != 0 {
				t.Fatalf("baseline apply failed: %s", stderr)
			}
			// Change the baseline object in the inputs that hold it, so that
			// writing it would show.
			before := storeSnapshot(t, state)
			for _, cmdName := range []string{"apply", "diff"} {
				var stdin *strings.Reader
				if c.args[len(c.args)-1] == "-" {
					stdin = strings.NewReader(strings.Replace(stdinDocs, "k: v", "k: changed", 1))
				}
				args := append([]string{"--state", state, cmdName}, c.args...)
				if cmdName == "diff" && slicesContains(c.args, "--prune") {
					continue
				}
				var stdout, stderr string
				var code int
				if stdin != nil {
					stdout, stderr, code = konvergeRun(t, stdin, args...)
				} else {
					stdout, stderr, code = konvergeRun(t, nil, args...)
				}
				wantCode := 1
				if cmdName == "diff" {
					wantCode = 2
				}
				if code != wantCode {
					t.Errorf("%s: exit %d, want %d; stdout:\n%s\nstderr:\n%s", cmdName, code, wantCode, stdout, stderr)
				}
				if stdout != "" {
					t.Errorf("%s: printed on stdout:\n%s", cmdName, stdout)
				}
				for _, w := range c.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("%s: error does not name %q:\n%s", cmdName, w, stderr)
					}
				}
				if c.secret != "" && strings.Contains(stderr, c.secret) {
					t.Errorf("%s: error shows the secret value:\n%s", cmdName, stderr)
				}
				if len(stderr) > 4000 {
					t.Errorf("%s: error is %d bytes long; it should be short:\n%.2000s", cmdName, len(stderr), stderr)
				}
			}
			if after := storeSnapshot(t, state); after != before {
				t.Errorf("the store changed:\n--- before\n%s--- after\n%s", before, after)
			}
		})
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
