package local

import (
	"context"
	"testing"

	"github.com/konverge/konverge/schema"
	"github.com/konverge/konverge/value"
)

// sameButVersion tells an object encoded with its next resourceVersion
// from the stored one exactly as encoding it again with the stored
// version would, and gives up where the member is not unique.
func TestSameButVersion(t *testing.T) {
	stored := `{"data":{"a":"1"},"metadata":{"name":"x","resourceVersion":"9"}}`
	for _, c := range []struct {
		name, data  string
		same, known bool
	}{
		{"unchanged", `{"data":{"a":"1"},"metadata":{"name":"x","resourceVersion":"10"}}`, true, true},
		{"changed before", `{"data":{"a":"2"},"metadata":{"name":"x","resourceVersion":"10"}}`, false, true},
		{"changed after", `{"data":{"a":"1"},"metadata":{"name":"x","resourceVersion":"10"},"z":1}`, false, true},
		{"longer", `{"data":{"a":"11"},"metadata":{"name":"x","resourceVersion":"10"}}`, false, true},
		{"shorter by the version", `{"data":{"a":"1"},"metadata":{"name":"x","resourceVersion":"1"}}`, false, false},
		{"twice", `{"data":{"resourceVersion":"10"},"metadata":{"name":"x","resourceVersion":"10"}}`, false, false},
		{"escaped in a string", `{"data":{"a":"1","b":"\"resourceVersion\":\"10\""},"metadata":{"name":"x","resourceVersion":"10"}}`, false, true},
	} {
		same, known := sameButVersion([]byte(c.data), []byte(stored), "9", "10")
		if same != c.same || known != c.known {
			t.Errorf("%s: same %v known %v, want %v %v", c.name, same, known, c.same, c.known)
		}
	}
}

// An update that changes nothing writes nothing and leaves the object's
// resourceVersion as stored; one that changes something is written once,
// with the next revision, as encoded.
func TestSaveWritesOnlyChanges(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	created, err := s.Create(ctx, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "default"}, "data": map[string]any{"a": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	rv := metaString(created, "resourceVersion")
	same, err := s.Update(ctx, value.DeepCopyObject(created))
	if err != nil {
		t.Fatal(err)
	}
	if got := metaString(same, "resourceVersion"); got != rv {
		t.Errorf("no-op update: resourceVersion %s, want %s", got, rv)
	}
	changed := value.DeepCopyObject(created)
	changed["data"] = map[string]any{"a": "2"}
	out, err := s.Update(ctx, changed)
	if err != nil {
		t.Fatal(err)
	}
	next := metaString(out, "resourceVersion")
	if next == rv {
		t.Fatalf("update: resourceVersion stayed %s", rv)
	}
	got, err := s.Get(ctx, schema.GVK{Version: "v1", Kind: "ConfigMap"}, "default", "c")
	if err != nil {
		t.Fatal(err)
	}
	if metaString(got, "resourceVersion") != next || !value.Equal(got["data"], map[string]any{"a": "2"}) {
		t.Errorf("stored %v, want resourceVersion %s and data a=2", got, next)
	}
}
