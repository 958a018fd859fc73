package mask

import (
	"strings"
	"testing"

	"github.com/konverge/konverge/lastapplied"
	"github.com/konverge/konverge/value"
)

func secret(data map[string]any) map[string]any {
	obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}, "data": data}
	with, err := lastapplied.Set(obj)
	if err != nil {
		panic(err)
	}
	return with
}

// TestObjectMasksAnnotation: the last-applied annotation's copy of the
// values is masked too, and the input is left alone.
func TestObjectMasksAnnotation(t *testing.T) {
	in := secret(map[string]any{"k": "c2VjcmV0dmFsdWU="})
	out := Object(in)
	enc, _ := value.Encode(out)
	for _, leak := range []string{"c2VjcmV0dmFsdWU=", "secretvalue"} {
		if strings.Contains(string(enc), leak) {
			t.Fatalf("masked object still holds %q: %s", leak, enc)
		}
	}
	if in["data"].(map[string]any)["k"] != "c2VjcmV0dmFsdWU=" {
		t.Fatal("input modified")
	}
	ann := out["metadata"].(map[string]any)["annotations"].(map[string]any)[lastapplied.Annotation].(string)
	if want := `{"apiVersion":"v1","data":{"k":"***"},"kind":"Secret","metadata":{"annotations":{},"name":"s"}}` + "\n"; ann != want {
		t.Fatalf("annotation = %q, want %q", ann, want)
	}
}

// TestNotSecret: other kinds pass through as they are.
func TestNotSecret(t *testing.T) {
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}}
	if got := Object(cm); got["data"].(map[string]any)["k"] != "v" {
		t.Fatalf("ConfigMap masked: %v", got)
	}
	a, b := Pair(cm, nil)
	if a["data"].(map[string]any)["k"] != "v" || b != nil {
		t.Fatal("Pair changed a ConfigMap")
	}
}

// TestPairOneSide: a created or deleted Secret is masked from the side
// that exists.
func TestPairOneSide(t *testing.T) {
	s := secret(map[string]any{"k": "dmFsdWU="})
	b, a := Pair(nil, s)
	if b != nil || a["data"].(map[string]any)["k"] != Masked {
		t.Fatalf("Pair(nil, s) = %v, %v", b, a)
	}
	b, a = Pair(s, nil)
	if a != nil || b["data"].(map[string]any)["k"] != Masked {
		t.Fatalf("Pair(s, nil) = %v, %v", b, a)
	}
}
