package normalize

import (
	"reflect"
	"testing"

	"github.com/konverge/konverge/defaults"
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

// TestServerSharesFieldsV1: Server gives what defaulting a deep copy
// gives, leaves its input as it was (the times of managedFields are
// rewritten in the copy only), and shares the fieldsV1 trees.
func TestServerSharesFieldsV1(t *testing.T) {
	fields := map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}
	in := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "creationTimestamp": "2026-01-02T03:04:05+00:00",
			"managedFields": []any{
				map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
					"time": "2026-01-02T04:04:05+01:00", "fieldsType": "FieldsV1", "fieldsV1": fields},
			}},
		"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}}
	before := value.DeepCopyObject(in)
	want := value.DeepCopyObject(in)
	if err := defaults.Apply(want); err != nil {
		t.Fatal(err)
	}
	got, err := Server(in)
	if err != nil {
		t.Fatal(err)
	}
	if !value.Equal(got, want) {
		t.Fatalf("Server = %v\nwant %v", got, want)
	}
	if !value.Equal(in, before) {
		t.Fatalf("input modified: %v", in)
	}
	entry := got["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)
	if entry["time"] != "2026-01-02T03:04:05Z" {
		t.Fatalf("time %v", entry["time"])
	}
	if reflect.ValueOf(entry["fieldsV1"]).UnsafePointer() != reflect.ValueOf(fields).UnsafePointer() {
		t.Fatal("fieldsV1 copied")
	}
	// A managedFields that is not a list of entries is copied whole, and
	// judged by the defaulting as before.
	odd := value.DeepCopyObject(in)
	odd["metadata"].(map[string]any)["managedFields"] = []any{"not an entry"}
	if _, err := Server(odd); err == nil {
		t.Fatal("no error for a managedFields entry that is a string")
	}
}
