package diff_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/konverge/konverge/apply"
	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/cluster/local"
	"github.com/konverge/konverge/diff"
	"github.com/konverge/konverge/internal/golden"
	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/manifest"
	"github.com/konverge/konverge/schema"
)

var testdata = filepath.Join("..", "testdata", "apply")

type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func openStore(t testing.TB) *local.Store {
	t.Helper()
	s, err := local.Open(t.TempDir(), local.Options{Clock: &fixedClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func parse(t testing.TB, docs string) []manifest.Object {
	t.Helper()
	objs, err := manifest.Parse(context.Background(), "test.yaml", []byte(docs))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return objs
}

func read(t testing.TB, paths ...string) []manifest.Object {
	t.Helper()
	for i, p := range paths {
		paths[i] = filepath.Join(testdata, p)
	}
	objs, err := manifest.Read(context.Background(), paths, manifest.Options{})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return objs
}

func mustApply(t testing.TB, c cluster.Interface, objs []manifest.Object) {
	t.Helper()
	if _, err := apply.New(c, apply.Options{}).Apply(context.Background(), objs); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func unifiedText(t testing.TB, r *diff.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteUnified(&b, diff.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// uids matches the random uids the store gives objects.
var uids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// stable replaces uids, for golden files.
func stable(b []byte) []byte {
	b = uids.ReplaceAll(b, []byte("00000000-0000-0000-0000-000000000000"))
	// Revisions depend on what else the cluster writes.
	return resourceVersions.ReplaceAll(b, []byte(`${1}"<rv>"`))
}

var resourceVersions = regexp.MustCompile(`("?resourceVersion"?: )"\d+"`)

// TestExitStates: no differences (0), differences (1), an error (2).
func TestExitStates(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	mustApply(t, s, read(t, "seed/simple_deployment.yaml"))

	r, err := diff.New(s, diff.Options{}).Run(ctx, read(t, "seed/simple_deployment.yaml"))
	if code := diff.ExitCode(r, err); code != 0 {
		t.Fatalf("same config: exit %d (%v)", code, err)
	}
	if text := unifiedText(t, r); text != "" {
		t.Errorf("same config printed:\n%s", text)
	}

	if _, err := s.Patch(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, "default", "nginx-deployment",
		cluster.MergePatchType, []byte(`{"spec":{"replicas":2}}`)); err != nil {
		t.Fatal(err)
	}
	r, err = diff.New(s, diff.Options{}).Run(ctx, read(t, "seed/update_deployment.yaml"))
	if code := diff.ExitCode(r, err); code != 1 {
		t.Fatalf("updated config: exit %d (%v)", code, err)
	}
	golden.Assert(t, filepath.Join(testdata, "golden", "diff-update.txt"), stable([]byte(unifiedText(t, r))))
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join(testdata, "golden", "diff-update.json"), stable(js.Bytes()))

	// The diff wrote nothing.
	live, err := s.Get(ctx, schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, "default", "nginx-deployment")
	if err != nil {
		t.Fatal(err)
	}
	if spec := live["spec"].(map[string]any); spec["minReadySeconds"] != int64(5) {
		t.Errorf("diff changed the object: %v", spec)
	}

	r, err = diff.New(s, diff.Options{}).Run(ctx, read(t, "invalid"))
	if code := diff.ExitCode(r, err); code != 2 || err == nil {
		t.Fatalf("invalid config: exit %d (%v)", code, err)
	}
}

// TestDiffNewObjects: objects in a namespace and of a CRD that the input
// creates diff as creations, with server defaults.
func TestDiffNewObjects(t *testing.T) {
	s := openStore(t)
	input := `
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team}
data: {color: blue}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`
	r, err := diff.New(s, diff.Options{}).Run(context.Background(), parse(t, input))
	if code := diff.ExitCode(r, err); code != 1 {
		t.Fatalf("exit %d (%v)", code, err)
	}
	var actions []string
	for _, e := range r.Entries {
		actions = append(actions, e.Name()+" "+string(e.Action))
	}
	want := "v1.ConfigMap.team.settings create, v1.Namespace..team create, v1.Service.team.web create"
	if got := strings.Join(actions, ", "); got != want {
		t.Errorf("entries %s, want %s", got, want)
	}
	text := unifiedText(t, r)
	// Servers default: the Service port's protocol and targetPort.
	if !strings.Contains(text, "+    protocol: TCP\n") || !strings.Contains(text, "+    targetPort: 80\n") {
		t.Errorf("no server defaults in:\n%s", text)
	}
	// As kubectl diff: the objects as the server's dry run returns them
	// (a create has no resourceVersion), without managedFields, and the
	// configuration merged without its last-applied annotation.
	for _, stripped := range []string{"resourceVersion", "managedFields", lastapplied.Annotation} {
		if strings.Contains(text, stripped) {
			t.Errorf("diff shows %s:\n%s", stripped, text)
		}
	}
	if _, err := s.Get(context.Background(), schema.GVK{Version: "v1", Kind: "Namespace"}, "", "team"); !cluster.IsNotFound(err) {
		t.Errorf("diff created the namespace: %v", err)
	}
}

// TestSecretMasking: Secret values never show, in data, stringData or the
// last-applied annotation, and changed keys are marked before/after.
func TestSecretMasking(t *testing.T) {
	s := openStore(t)
	mustApply(t, s, parse(t, `
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {user: admin-user, password: old-passw0rd, token: dropped-t0ken}
`))
	next := `
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {user: admin-user, password: new-passw0rd, apikey: added-k3y}
`
	r, err := diff.New(s, diff.Options{}).Run(context.Background(), parse(t, next))
	if code := diff.ExitCode(r, err); code != 1 {
		t.Fatalf("exit %d (%v)", code, err)
	}
	text := unifiedText(t, r)
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"admin-user", "old-passw0rd", "dropped-t0ken", "new-passw0rd", "added-k3y"} {
		b64 := base64.StdEncoding.EncodeToString([]byte(v))
		for _, out := range []string{text, js.String()} {
			if strings.Contains(out, v) || strings.Contains(out, b64) {
				t.Errorf("value %q shows in:\n%s", v, out)
			}
		}
	}
	for _, marker := range []string{`password: '*** (before)'`, `password: '*** (after)'`} {
		if !strings.Contains(text, marker) {
			t.Errorf("no %s in:\n%s", marker, text)
		}
	}
	golden.Assert(t, filepath.Join(testdata, "golden", "diff-secret.txt"), stable([]byte(text)))

	// ShowSecrets shows them.
	r, err = diff.New(s, diff.Options{ShowSecrets: true}).Run(context.Background(), parse(t, next))
	if err != nil {
		t.Fatal(err)
	}
	if text := unifiedText(t, r); !strings.Contains(text, base64.StdEncoding.EncodeToString([]byte("new-passw0rd"))) {
		t.Errorf("ShowSecrets hides values:\n%s", text)
	}
}

// TestDiffPrune: objects apply --prune would delete show as deletions.
func TestDiffPrune(t *testing.T) {
	s := openStore(t)
	mustApply(t, s, read(t, "prune/v1"))
	r, err := diff.New(s, diff.Options{Prune: true, Selector: "app=nginx"}).Run(context.Background(), read(t, "prune/v2"))
	if code := diff.ExitCode(r, err); code != 1 {
		t.Fatalf("exit %d (%v)", code, err)
	}
	var got []string
	for _, e := range r.Entries {
		got = append(got, e.Ref.String()+" "+string(e.Action))
	}
	if want := "deployment.apps/nginx-deployment none, configmap/nginx-config delete, service/nginx none"; strings.Join(got, ", ") != want {
		t.Errorf("entries %s, want %s", strings.Join(got, ", "), want)
	}
	golden.Assert(t, filepath.Join(testdata, "golden", "diff-prune.txt"), stable([]byte(unifiedText(t, r))))
	if _, err := s.Get(context.Background(), schema.GVK{Version: "v1", Kind: "ConfigMap"}, "default", "nginx-config"); err != nil {
		t.Errorf("diff pruned: %v", err)
	}
}

// TestExternalDiff runs diff -u -N on kubectl's directories.
func TestExternalDiff(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("no diff program")
	}
	s := openStore(t)
	mustApply(t, s, read(t, "seed/simple_deployment.yaml"))
	r, err := diff.New(s, diff.Options{}).Run(context.Background(), read(t, "seed/update_deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code, err := r.RunExternal("diff -u -N /not-an-arg", &out, &errOut)
	if code != 1 || err != nil {
		t.Fatalf("exit %d, %v; stderr %s", code, err, errOut.String())
	}
	if !strings.Contains(out.String(), "/apps.v1.Deployment.default.nginx-deployment") || !strings.Contains(out.String(), "+      - image: nginx:1.16.1") {
		t.Errorf("output:\n%s", out.String())
	}
	code, err = r.RunExternal("false", &out, &errOut)
	if code != 1 || err != nil {
		t.Errorf("false: exit %d, %v", code, err)
	}
	code, err = r.RunExternal("sh -c exit-3", &out, &errOut)
	if code < 2 || err == nil {
		t.Errorf("failing program: exit %d, %v", code, err)
	}
}

func TestColor(t *testing.T) {
	s := openStore(t)
	mustApply(t, s, parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: a}}`))
	r, err := diff.New(s, diff.Options{}).Run(context.Background(), parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: b}}`))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteUnified(&b, diff.RenderOptions{Color: true, Context: -1}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"\x1b[1mdiff -u -N live/v1.ConfigMap.default.c merged/v1.ConfigMap.default.c\x1b[0m\n",
		"\x1b[36m@@ -3 +3 @@\x1b[0m\n\x1b[31m-  k: a\x1b[0m\n\x1b[32m+  k: b\x1b[0m\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in %q", want, text)
		}
	}
	if diff.ExitCode(nil, nil) != 0 {
		t.Errorf("exit code of nothing")
	}
}
