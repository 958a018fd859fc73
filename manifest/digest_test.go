package manifest

import (
	"context"
	"testing"
)

// TestDigest checks Object.Digest: the same text gives the same digest
// wherever it is, any other text another, and every item of a List its
// own.
func TestDigest(t *testing.T) {
	ctx := context.Background()
	read := func(file, text string) []Object {
		t.Helper()
		objs, err := Parse(ctx, file, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"
	cm2 := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n"
	list := "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n"
	a := read("a.yaml", cm)
	b := read("b.yaml", "# moved down\n\n---\n"+cm+"---\n"+cm2)
	c := read("c.yaml", list)
	j := read("d.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`)
	j2 := read("e.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
	if a[0].Digest == 0 {
		t.Fatal("no digest")
	}
	if a[0].Digest != b[0].Digest {
		t.Errorf("the same document in another file and line: digest %x, want %x", b[0].Digest, a[0].Digest)
	}
	if b[1].Digest == a[0].Digest {
		t.Errorf("another document has the same digest")
	}
	if len(c) != 2 || c[0].Digest == c[1].Digest || c[0].Digest == 0 {
		t.Errorf("List items: digests %x %x, want two different ones", c[0].Digest, c[1].Digest)
	}
	if again := read("c.yaml", list); again[0].Digest != c[0].Digest || again[1].Digest != c[1].Digest {
		t.Errorf("the List read again has other digests")
	}
	if j[0].Digest != j2[0].Digest || j[1].Digest == j[0].Digest {
		t.Errorf("JSON stream: digests %x %x, alone %x: want each value's own", j[0].Digest, j[1].Digest, j2[0].Digest)
	}
}
