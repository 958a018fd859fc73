package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/konverge/konverge/internal/printer"
)

// TestReplaceEditScaleSubresource checks replace and edit
// --subresource=scale against what kubectl v1.37.1 printed on a real
// control plane: neither can write a Scale (kubectl maps no kind Scale and
// the API decodes no other kind as one), each fails as kubectl does, and
// the Deployment keeps its replicas.
func TestReplaceEditScaleSubresource(t *testing.T) {
	dir := seedState(t, []seed{{0, nginxDeployment}})
	files := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dep := write("dep5.yaml", strings.Replace(nginxDeployment, "replicas: 3", "replicas: 5", 1))
	cm := write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
	scale := write("scale.yaml", "apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {name: nginx-deployment, namespace: default}\nspec: {replicas: 4}\n")
	bump := write("bump.sh", "#!/bin/sh\nsed -i 's/replicas: 3$/replicas: 4/' \"$1\"\n")
	if err := os.Chmod(bump, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runKonverge(t, dir, "", "apply", "-f", cm); code != 0 {
		t.Fatal(errOut)
	}
	copyLine := regexp.MustCompile(`^A copy of your changes has been stored to "[^"]*konverge-edit-[0-9]+\.yaml"\n`)
	cases := []struct {
		args     []string
		editor   string
		out, err string
		code     int
	}{
		{args: []string{"replace", "--subresource=scale", "-f", dep}, code: 1,
			err: `Error from server (BadRequest): error when replacing "` + dep + `": Deployment in version "v1" cannot be handled as a Scale: converting (v1.Deployment) to (autoscaling.Scale): unknown conversion` + "\n"},
		{args: []string{"replace", "--subresource=scale", "-f", dep, "-o", "json"}, code: 1,
			err: `Error from server (BadRequest): error when replacing "` + dep + `": Deployment in version "v1" cannot be handled as a Scale`},
		{args: []string{"replace", "--subresource=scale", "-f", cm}, code: 1,
			err: `Error from server (NotFound): error when replacing "` + cm + `": the server could not find the requested resource` + "\n"},
		{args: []string{"replace", "--subresource=bogus", "-f", dep}, code: 1,
			err: `Error from server (NotFound): error when replacing "` + dep + `": the server could not find the requested resource` + "\n"},
		{args: []string{"replace", "--subresource=scale", "-f", scale}, code: 1,
			err: `error: ` + scale + `#1 (line 1): resource mapping not found for name: "nginx-deployment" namespace: "default": no matches for kind "Scale" in version "autoscaling/v1"` + "\nensure CRDs are installed first\n"},
		{args: []string{"replace", "--subresource=scale", "-f", dep, "--dry-run=client"},
			out: "deployment.apps/nginx-deployment replaced (dry run)\n"},
		{args: []string{"edit", "deploy/nginx-deployment", "--subresource=scale"}, editor: "true",
			err: "Edit cancelled, no changes made.\n"},
		{args: []string{"edit", "cm/c", "--subresource=scale"}, editor: "true", code: 1,
			err: "Error from server (NotFound): the server could not find the requested resource\n"},
		{args: []string{"edit", "deploy/nginx-deployment", "--subresource=bogus"}, editor: "true", code: 1,
			err: "Error from server (NotFound): the server could not find the requested resource\n"},
		{args: []string{"edit", "deploy/nginx-deployment", "--subresource=scale"}, editor: bump, code: 1,
			err: "A copy of your changes has been stored to \"\"\nerror: Edit cancelled, no valid changes were saved.\n"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if c.editor != "" {
				t.Setenv("KUBE_EDITOR", c.editor)
			}
			out, errOut, code := runKonverge(t, dir, "", c.args...)
			if copyLine.MatchString(errOut) {
				// The kept file: the Scale with the error in its header.
				path := regexp.MustCompile(`"(.*)"`).FindStringSubmatch(errOut)[1]
				kept, err := os.ReadFile(path)
				os.Remove(path)
				if err != nil {
					t.Fatal(err)
				}
				wantHead := editHeader + `# The edited file had a syntax error: resource mapping not found for name: "nginx-deployment" namespace: "default" from "edited-file": no matches for kind "Scale" in version "autoscaling/v1"` + "\n# ensure CRDs are installed first\n#\napiVersion: autoscaling/v1\nkind: Scale\n"
				if !strings.HasPrefix(string(kept), wantHead) || !strings.Contains(string(kept), "replicas: 4") {
					t.Errorf("kept file:\n%s\nwant it to start with:\n%s", kept, wantHead)
				}
				errOut = copyLine.ReplaceAllString(errOut, "A copy of your changes has been stored to \"\"\n")
			}
			if out != c.out || !strings.HasPrefix(errOut, c.err) || (c.err == "" && errOut != "") || code != c.code {
				t.Fatalf("got out %q err %q code %d\nwant out %q err %q code %d", out, errOut, code, c.out, c.err, c.code)
			}
			if got := printer.Int(liveDeployment(t, dir), "spec", "replicas"); got != 3 {
				t.Errorf("replicas are %d, want 3 (nothing written)", got)
			}
		})
	}
}
