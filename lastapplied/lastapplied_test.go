package lastapplied

import (
	"testing"

	"github.com/konverge/konverge/value"
)

// TestEncodeAsKubectl pins the annotation kubectl v1.37.1 writes for
// configs with null annotations (recorded in testdata/fidelity's
// stories/annotation-null): a null annotation value becomes "", null
// annotations become {}, labels keep their nulls.
func TestEncodeAsKubectl(t *testing.T) {
	for _, tc := range []struct{ name, config, want, wantAnnotations string }{
		{
			name:            "null value",
			config:          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","annotations":{"owner":null,"team":"core"},"labels":{"tier":null}}}`,
			want:            `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"owner":"","team":"core"},"labels":{"tier":null},"name":"a"}}` + "\n",
			wantAnnotations: `{"owner":"","team":"core"}`,
		},
		{
			name:            "null annotations",
			config:          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","annotations":null,"labels":{"a":null}}}`,
			want:            `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"labels":{"a":null},"name":"a"}}` + "\n",
			wantAnnotations: `{}`,
		},
		{
			name:            "own annotation dropped",
			config:          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"old"}}}`,
			want:            `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"name":"a"}}` + "\n",
			wantAnnotations: `{}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config, err := value.DecodeObject([]byte(tc.config))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := value.Encode(config)
			got, err := Encode(config)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Encode:\n got %s\nwant %s", got, tc.want)
			}
			set, err := Set(config)
			if err != nil {
				t.Fatal(err)
			}
			ann := set["metadata"].(map[string]any)["annotations"].(map[string]any)
			if ann[Annotation] != tc.want {
				t.Errorf("Set: annotation %v, want %s", ann[Annotation], tc.want)
			}
			delete(ann, Annotation)
			if b, _ := value.Encode(ann); string(b) != tc.wantAnnotations {
				t.Errorf("Set: annotations %s, want %s", b, tc.wantAnnotations)
			}
			if after, _ := value.Encode(config); string(after) != string(before) {
				t.Errorf("config changed:\n%s\n%s", before, after)
			}
		})
	}
}
