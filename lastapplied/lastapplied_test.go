package lastapplied

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
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

// TestEncodeMatchesStrippedObject checks that Encode, which writes the
// annotation without building the stripped object, writes what encoding
// the stripped object (withAnnotation) gives, errors included, on objects
// of many shapes.
func TestEncodeMatchesStrippedObject(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	keys := []string{"a", "b", "<&>", "z\u2028", "\xff\xfe", "metadata", "annotations", "name", Annotation, "é", "A", "q\"\\\x01\x7f~"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch rng.IntN(9) {
		case 0:
			return nil
		case 1:
			return rng.IntN(2) == 0
		case 2:
			return int64(rng.IntN(1000) - 500)
		case 3:
			return rng.Float64() * 1e6
		case 4:
			if rng.IntN(20) == 0 {
				return math.NaN() // cannot be encoded
			}
			return keys[rng.IntN(len(keys))]
		case 5, 6:
			if depth > 3 {
				return "leaf"
			}
			m := map[string]any{}
			for range rng.IntN(20) {
				m[keys[rng.IntN(len(keys))]+fmt.Sprint(rng.IntN(3))] = gen(depth + 1)
			}
			return m
		default:
			if depth > 3 {
				return int64(1)
			}
			var l []any
			for range rng.IntN(4) {
				l = append(l, gen(depth+1))
			}
			return l
		}
	}
	for i := range 3000 {
		obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}
		for range rng.IntN(20) {
			obj[keys[rng.IntN(len(keys))]] = gen(1)
		}
		switch rng.IntN(4) {
		case 0:
			delete(obj, "metadata")
		case 1:
			md := map[string]any{"name": "x"}
			for range rng.IntN(20) {
				md[keys[rng.IntN(len(keys))]] = gen(2)
			}
			if rng.IntN(2) == 0 {
				ann := map[string]any{}
				for range rng.IntN(20) {
					k := keys[rng.IntN(len(keys))] + fmt.Sprint(rng.IntN(3))
					if rng.IntN(3) == 0 {
						ann[k] = nil
					} else {
						ann[k] = k
					}
				}
				if rng.IntN(2) == 0 {
					ann[Annotation] = "old"
				}
				md["annotations"] = ann
			}
			obj["metadata"] = md
		}
		got, gerr := Encode(obj)
		want, werr := value.Encode(withAnnotation(obj, nil))
		if werr != nil || gerr != nil {
			if gerr == nil || werr == nil || gerr.Error() != "lastapplied: "+werr.Error() {
				t.Fatalf("object %d: error %v, want %v", i, gerr, werr)
			}
			continue
		}
		if got != string(want)+"\n" {
			t.Fatalf("object %d:\n got %s\nwant %s", i, got, want)
		}
		// In a namespace: as the object with it, settled as apply
		// settles it (metadata exists then); exact when the values
		// written decode as themselves.
		if _, ok := obj["metadata"].(map[string]any); !ok {
			continue
		}
		ns := []string{"default", "n\xff", "<ns>"}[rng.IntN(3)]
		inNS := maps.Clone(obj)
		md := maps.Clone(obj["metadata"].(map[string]any))
		md["namespace"] = ns
		inNS["metadata"] = md
		stripped := withAnnotation(inNS, nil)
		want, werr = value.Encode(stripped)
		gotIn, exact, gerr := AppendEncodeIn([]byte("x"), obj, ns)
		if werr != nil || gerr != nil {
			if gerr == nil || werr == nil || gerr.Error() != "lastapplied: "+werr.Error() {
				t.Fatalf("object %d in %q: error %v, want %v", i, ns, gerr, werr)
			}
			continue
		}
		if string(gotIn) != "x"+string(want)+"\n" {
			t.Fatalf("object %d in %q:\n got %s\nwant x%s", i, ns, gotIn, want)
		}
		_, wantExact, _ := value.AppendEncodeExact(nil, stripped)
		if exact != wantExact {
			t.Fatalf("object %d in %q: exact %v, want %v", i, ns, exact, wantExact)
		}
	}
}
