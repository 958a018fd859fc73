package apply

import (
	"testing"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/value"
)

// TestOriginalOfMatchesDecoding checks that originalOf, when it takes the
// config instead of decoding live's annotation, gives what decoding gives,
// and that it decodes when the config holds values that would not come
// back as themselves.
func TestOriginalOfMatchesDecoding(t *testing.T) {
	configs := []struct {
		name     string
		config   map[string]any
		shortcut bool
	}{
		{"deployment", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web", "gone": nil}},
			"spec": map[string]any{"replicas": int64(3), "paused": false, "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "web", "image": "nginx", "args": []any{"a", "b"}}}}}}}, true},
		{"annotations with a null", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "annotations": map[string]any{"note": nil, "other": "x"}},
			"data":     map[string]any{"k": "v"}}, true},
		{"its own annotation", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "annotations": map[string]any{lastapplied.Annotation: "stale"}}}, true},
		{"a fraction", map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "x"}, "spec": map[string]any{"f": 0.5}}, true},
		{"an integral float", map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "x"}, "spec": map[string]any{"f": 3.0}}, false},
		{"a Go int", map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "x"}, "spec": map[string]any{"n": 3}}, false},
		{"invalid UTF-8", map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "x"}, "spec": map[string]any{"s": "a\xffb"}}, false},
		{"a string map", map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "x", "labels": map[string]string{"a": "b"}}}, false},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			modified, err := lastapplied.Set(c.config)
			if err != nil {
				t.Fatal(err)
			}
			// live as the server holds it after applying modified, then
			// changed by another writer.
			live := value.DeepCopyObject(modified)
			live["status"] = map[string]any{"observed": int64(1)}
			want, err := lastapplied.Get(live)
			if err != nil {
				t.Fatal(err)
			}
			got, err := originalOf(live, modified, c.config)
			if err != nil {
				t.Fatal(err)
			}
			if !value.Equal(got, want) {
				t.Errorf("originalOf = %v, decoding gives %v", got, want)
			}
			if shortcut := decodesAsItself(c.config); shortcut != c.shortcut {
				t.Errorf("shortcut taken: %v, want %v", shortcut, c.shortcut)
			}
			// A live object applied from another config: decoded.
			other := value.DeepCopyObject(live)
			objAnn := other["metadata"].(map[string]any)["annotations"].(map[string]any)
			objAnn[lastapplied.Annotation] = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"name":"other"}}` + "\n"
			got, _ = originalOf(other, modified, c.config)
			if want, _ := lastapplied.Get(other); !value.Equal(got, want) {
				t.Errorf("another annotation: originalOf = %v, want %v", got, want)
			}
		})
	}
}
