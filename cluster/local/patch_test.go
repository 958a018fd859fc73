package local

import (
	"context"
	"testing"

	"github.com/konverge/konverge/cluster"
)

func TestPatch(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		pt    cluster.PatchType
		patch string
		check func(t *testing.T, out map[string]any)
	}{
		{"strategic merges containers by name", cluster.StrategicMergePatchType,
			`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}`,
			func(t *testing.T, out map[string]any) {
				cs, _ := path(out, "spec.template.spec.containers").([]any)
				if len(cs) != 2 {
					t.Errorf("containers %v, want nginx and sidecar", cs)
				}
				if path(out, "metadata.generation") != int64(2) {
					t.Errorf("generation %v", path(out, "metadata.generation"))
				}
			}},
		{"merge patch replaces lists", cluster.MergePatchType,
			`{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"busybox"}]}}}}`,
			func(t *testing.T, out map[string]any) {
				cs, _ := path(out, "spec.template.spec.containers").([]any)
				if len(cs) != 1 || path(cs[0].(map[string]any), "name") != "only" {
					t.Errorf("containers %v", cs)
				}
			}},
		{"json patch", cluster.JSONPatchType,
			`[{"op":"replace","path":"/spec/replicas","value":4},{"op":"add","path":"/metadata/labels/x","value":"y"}]`,
			func(t *testing.T, out map[string]any) {
				if path(out, "spec.replicas") != int64(4) || path(out, "metadata.labels.x") != "y" {
					t.Errorf("replicas %v labels %v", path(out, "spec.replicas"), path(out, "metadata.labels"))
				}
			}},
		{"a patch of status is ignored", cluster.MergePatchType, `{"status":{"replicas":3}}`,
			func(t *testing.T, out map[string]any) {
				if path(out, "status.replicas") != nil {
					t.Errorf("status %v", out["status"])
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openStore(t)
			mustCreate(t, s, deploymentWeb)
			out, err := s.Patch(ctx, gvkDeployment, "default", "web", c.pt, []byte(c.patch))
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, out)
			stored := mustGet(t, s, gvkDeployment, "default", "web")
			if metaString(stored, "resourceVersion") != metaString(out, "resourceVersion") {
				t.Errorf("stored %s, returned %s", metaString(stored, "resourceVersion"), metaString(out, "resourceVersion"))
			}
		})
	}
}

func TestPatchErrors(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	d := mustCreate(t, s, deploymentWeb)
	mustCreate(t, s, crdWidgets)
	mustCreate(t, s, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default}, spec: {size: 1}}`)
	cases := []struct {
		name   string
		gvk    string
		target string
		pt     cluster.PatchType
		patch  string
		reason cluster.Reason
		msg    string
	}{
		{"missing", "deploy", "nope", cluster.MergePatchType, `{}`, cluster.ReasonNotFound, `deployments.apps "nope" not found`},
		{"stale resourceVersion", "deploy", "web", cluster.MergePatchType, `{"metadata":{"resourceVersion":"1"},"spec":{"replicas":2}}`,
			cluster.ReasonConflict, `Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again`},
		{"strategic on a custom resource", "widget", "w", cluster.StrategicMergePatchType, `{"spec":{"size":2}}`,
			cluster.ReasonUnsupportedMedia, `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`},
		{"server-side apply without a field manager", "deploy", "web", cluster.ApplyPatchType, `{}`,
			cluster.ReasonInvalid, `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"unknown type", "deploy", "web", "text/plain", `{}`, cluster.ReasonUnsupportedMedia,
			`the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml`},
		{"bad json", "deploy", "web", cluster.MergePatchType, `{`, cluster.ReasonBadRequest, ""},
		{"renaming", "deploy", "web", cluster.MergePatchType, `{"metadata":{"name":"other"}}`,
			cluster.ReasonBadRequest, `the name of the object (other) does not match the name on the URL (web)`},
		{"invalid result", "deploy", "web", cluster.MergePatchType, `{"spec":{"replicas":-1}}`,
			cluster.ReasonInvalid, `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`},
		{"immutable field", "deploy", "web", cluster.MergePatchType, `{"spec":{"selector":{"matchLabels":{"app":"other"}},"template":{"metadata":{"labels":{"app":"other"}}}}}`,
			cluster.ReasonInvalid, `Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"other"}}: field is immutable`},
		{"failing json patch", "deploy", "web", cluster.JSONPatchType, `[{"op":"test","path":"/spec/replicas","value":9}]`, cluster.ReasonInvalid, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gvk, ns := gvkDeployment, "default"
			if c.gvk == "widget" {
				gvk = gvkWidget
			}
			_, err := s.Patch(ctx, gvk, ns, c.target, c.pt, []byte(c.patch))
			if cluster.ReasonOf(err) != c.reason || (c.msg != "" && errText(err) != c.msg) {
				t.Errorf("got %s (%s)\nwant %s (%s)", errText(err), cluster.ReasonOf(err), c.msg, c.reason)
			}
		})
	}
	if got := mustGet(t, s, gvkDeployment, "default", "web"); metaString(got, "resourceVersion") != metaString(d, "resourceVersion") {
		t.Errorf("a failed patch changed the object")
	}
}

func TestPatchWithCurrentResourceVersion(t *testing.T) {
	s, _ := openStore(t)
	d := mustCreate(t, s, deploymentWeb)
	p := `{"metadata":{"resourceVersion":"` + metaString(d, "resourceVersion") + `"},"spec":{"replicas":2}}`
	out, err := s.Patch(context.Background(), gvkDeployment, "default", "web", cluster.MergePatchType, []byte(p))
	if err != nil {
		t.Fatal(err)
	}
	if path(out, "spec.replicas") != int64(2) {
		t.Errorf("replicas %v", path(out, "spec.replicas"))
	}
}
