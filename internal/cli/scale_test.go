package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/internal/printer"
	"github.com/konverge/konverge/schema"
)

var deployGVK = schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}

// liveDeployment reads nginx-deployment from the state.
func liveDeployment(t *testing.T, dir string) map[string]any {
	t.Helper()
	st, err := local.Open(dir, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := st.Get(context.Background(), deployGVK, "default", "nginx-deployment")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TestWriteCommands runs scale, patch, label, annotate and edit in
// sequence and checks their output lines and the live object after each.
func TestWriteCommands(t *testing.T) {
	dep := strings.Replace(nginxDeployment, "labels: {app: nginx}\nspec:", "labels: {app: nginx}\n  annotations: {"+lastApplied+": '{\"kind\":\"Deployment\"}'}\nspec:", 1)
	dir := seedState(t, []seed{{0, dep}})
	editScript := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(editScript, []byte("#!/bin/sh\nsed -i 's/image: nginx:1.14.2/image: nginx:1.16.1/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args       []string
		env        string
		out, err   string
		code       int
		check      func(d map[string]any) string
		checkLabel string
	}{
		{args: []string{"scale", "deployment/nginx-deployment", "--replicas=5"}, out: "deployment.apps/nginx-deployment scaled\n",
			check: func(d map[string]any) string { return printer.Scalar(printer.Int(d, "spec", "replicas")) }, checkLabel: "5"},
		{args: []string{"scale", "deploy", "nginx-deployment", "--current-replicas=3", "--replicas=1"}, err: "error: Expected replicas to be 3, was 5\n", code: 1},
		{args: []string{"scale", "deploy", "nginx-deployment"}, err: "error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0\n", code: 1},
		{args: []string{"scale", "deploy/nope", "--replicas=1"}, err: "Error from server (NotFound): deployments.apps \"nope\" not found\n", code: 1},
		{args: []string{"patch", "deployment", "nginx-deployment", "-p", `{"spec":{"replicas":2}}`}, out: "deployment.apps/nginx-deployment patched\n",
			check: func(d map[string]any) string { return printer.Scalar(printer.Int(d, "spec", "replicas")) }, checkLabel: "2"},
		{args: []string{"patch", "deploy/nginx-deployment", "-p", "spec:\n  replicas: 2\n"}, out: "deployment.apps/nginx-deployment patched (no change)\n"},
		{args: []string{"patch", "deploy/nginx-deployment", "--type=json", "-p", `[{"op":"replace","path":"/spec/replicas","value":4}]`}, out: "deployment.apps/nginx-deployment patched\n",
			check: func(d map[string]any) string { return printer.Scalar(printer.Int(d, "spec", "replicas")) }, checkLabel: "4"},
		{args: []string{"patch", "deploy/nginx-deployment", "--type=merge", "-p", `{"metadata":{"labels":{"tier":"web"}}}`}, out: "deployment.apps/nginx-deployment patched\n",
			check: func(d map[string]any) string { return printer.Str(d, "metadata", "labels", "tier") }, checkLabel: "web"},
		{args: []string{"patch", "deploy/nginx-deployment", "-p", `{bad`}, err: "error: unable to parse \"{bad\": ", code: 1},
		{args: []string{"label", "deploy", "nginx-deployment", "tier=db"}, err: "error: 'tier' already has a value (web), and --overwrite is false\n", code: 1},
		{args: []string{"label", "deploy", "nginx-deployment", "tier=db", "--overwrite"}, out: "deployment.apps/nginx-deployment labeled\n",
			check: func(d map[string]any) string { return printer.Str(d, "metadata", "labels", "tier") }, checkLabel: "db"},
		{args: []string{"label", "deploy/nginx-deployment", "tier-", "env=prod"}, out: "deployment.apps/nginx-deployment modified\n",
			check: func(d map[string]any) string { return printer.FormatLabels(printer.StringMap(d, "metadata", "labels")) }, checkLabel: "app=nginx,env=prod"},
		{args: []string{"label", "deploy/nginx-deployment", "gone-"}, out: "label \"gone\" not found.\ndeployment.apps/nginx-deployment not labeled\n"},
		{args: []string{"label", "deploy/nginx-deployment", "a=b=c"}, err: "error: invalid label spec: a=b=c\n", code: 1},
		{args: []string{"annotate", "deploy", "nginx-deployment", "owner=team a"}, out: "deployment.apps/nginx-deployment annotated\n",
			check: func(d map[string]any) string { return printer.Str(d, "metadata", "annotations", "owner") }, checkLabel: "team a"},
		{args: []string{"annotate", "deploy", "nginx-deployment", "owner=b"}, err: "error: --overwrite is false but found the following declared annotation(s): 'owner' already has a value (team a)\n", code: 1},
		{args: []string{"annotate", "deploy", "nginx-deployment", "owner-"}, out: "deployment.apps/nginx-deployment annotated\n",
			check: func(d map[string]any) string { return printer.Str(d, "metadata", "annotations", "owner") }, checkLabel: ""},
		{args: []string{"edit", "deploy/nginx-deployment"}, env: "true", err: "Edit cancelled, no changes made.\n"},
		{args: []string{"edit", "deployment/nginx-deployment"}, env: editScript, out: "deployment.apps/nginx-deployment edited\n",
			check: func(d map[string]any) string {
				return printer.Str(printer.List(d, "spec", "template", "spec", "containers")[0], "image")
			}, checkLabel: "nginx:1.16.1"},
	}
	for _, s := range steps {
		t.Run(strings.Join(s.args, " "), func(t *testing.T) {
			if s.env != "" {
				t.Setenv("KUBE_EDITOR", s.env)
			}
			out, errOut, code := runKonverge(t, dir, "", s.args...)
			if out != s.out || !strings.HasPrefix(errOut, s.err) || (s.err == "" && errOut != "") || code != s.code {
				t.Fatalf("got out %q err %q code %d\nwant out %q err %q code %d", out, errOut, code, s.out, s.err, s.code)
			}
			d := liveDeployment(t, dir)
			if got := printer.Str(d, "metadata", "annotations", lastApplied); got != `{"kind":"Deployment"}` {
				t.Errorf("last-applied annotation changed: %q", got)
			}
			if s.check != nil {
				if got := s.check(d); got != s.checkLabel {
					t.Errorf("live object: got %q, want %q", got, s.checkLabel)
				}
			}
		})
	}
}
