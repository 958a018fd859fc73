package local

import (
	"context"
	"strings"
	"testing"

	"github.com/konverge/konverge/cluster"
)

func TestSubresources(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mustCreate(t, s, deploymentWeb)
	scale, err := s.GetSubresource(ctx, gvkDeployment, "default", "web", "scale")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := encodeString(scale["spec"]); got != `{"replicas":1}` || scale["kind"] != "Scale" || scale["apiVersion"] != "autoscaling/v1" {
		t.Errorf("scale: %v", scale)
	}
	out, err := s.Patch(ctx, gvkDeployment, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":5},"status":{"replicas":9}}`), cluster.Subresource("scale"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := encodeString(out["spec"]); got != `{"replicas":5}` {
		t.Errorf("patched scale: %v", out)
	}
	d := mustGet(t, s, gvkDeployment, "default", "web")
	if path(d, "spec.replicas") != int64(5) || path(d, "metadata.generation") != int64(2) {
		t.Errorf("after the scale patch: replicas %v generation %v", path(d, "spec.replicas"), path(d, "metadata.generation"))
	}
	// A status patch changes only status.
	st, err := s.Patch(ctx, gvkDeployment, "default", "web", cluster.MergePatchType, []byte(`{"spec":{"replicas":1},"status":{"observedGeneration":2}}`), cluster.Subresource("status"))
	if err != nil {
		t.Fatal(err)
	}
	if path(st, "spec.replicas") != int64(5) || path(st, "status.observedGeneration") != int64(2) {
		t.Errorf("status patch: %v", st)
	}
	if _, err := s.GetSubresource(ctx, gvkConfigMap, "default", "x", "scale"); !cluster.IsNotFound(err) {
		t.Errorf("scale of a ConfigMap: %v", err)
	}
}

func TestFieldValidation(t *testing.T) {
	var warnings []string
	s, err := Open(t.TempDir(), Options{Warnings: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	cm := func() cluster.Object {
		return obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: typo, labelz: {a: b}}, dta: {k: v}}`)
	}
	_, err = s.Create(ctx, cm(), cluster.FieldValidationStrict)
	if want := `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dta", unknown field "metadata.labelz"`; err == nil || err.Error() != want || cluster.ReasonOf(err) != cluster.ReasonBadRequest {
		t.Fatalf("strict create: %v", err)
	}
	if _, err := s.Create(ctx, cm(), cluster.FieldValidationIgnore, cluster.DryRunAll); err != nil || len(warnings) != 0 {
		t.Fatalf("ignore: %v %v", err, warnings)
	}
	if _, err := s.Create(ctx, cm()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(warnings, "|") != `unknown field "dta"|unknown field "metadata.labelz"` {
		t.Errorf("warnings: %q", warnings)
	}
	_, err = s.Patch(ctx, gvkConfigMap, "default", "typo", cluster.MergePatchType, []byte(`{"dtx":{"a":1}}`), cluster.FieldValidationStrict)
	if !cluster.IsInvalid(err) || !strings.Contains(err.Error(), `patch: Invalid value: "map[dtx:map[a:1]]": strict decoding error: unknown field "dtx"`) {
		t.Errorf("strict patch: %v", err)
	}
}
