package normalize

import (
	"testing"

	"github.com/konverge/konverge/value"
)

// TestObjectDoesNotModify: the input is left as it was, and nothing is
// copied when nothing changes.
func TestObjectDoesNotModify(t *testing.T) {
	in := map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "s", "uid": "u", "labels": map[string]any{ApplySetLabel: "x", "app": "a"}},
		"stringData": map[string]any{"k": "v"}, "status": map[string]any{}}
	before := value.DeepCopyObject(in)
	out, err := Object(in, Options{Defaults: true, DropApplySet: true})
	if err != nil {
		t.Fatal(err)
	}
	if !value.Equal(in, before) {
		t.Fatalf("input modified: %v", in)
	}
	want := map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": "s", "labels": map[string]any{"app": "a"}},
		"data":     map[string]any{"k": "dg=="}}
	if !value.Equal(out, want) {
		t.Fatalf("Object = %v\nwant %v", out, want)
	}
	plain := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}
	if got, _ := Object(plain, Options{}); got["metadata"].(map[string]any)["name"] != "c" || len(got) != 3 {
		t.Fatalf("Object(plain) = %v", got)
	}
}

// TestServerBadValue: a value the kind cannot hold is an error naming the
// object.
func TestServerBadValue(t *testing.T) {
	_, err := Server(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": "two"}})
	if err == nil {
		t.Fatal("no error")
	}
	if got := err.Error(); got[:len("normalize: deployment.apps/web: ")] != "normalize: deployment.apps/web: " {
		t.Fatalf("error %q", got)
	}
}
