package manifest

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCache reads a directory three times with a Cache while its files
// change, and requires what a Read without it gives; the objects of the
// documents whose bytes did not change are the maps of the last Read,
// the others new, and documents with problems are parsed every time.
func TestCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cm := func(name, v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  k: " + v + "\n"
	}
	write("a.yaml", cm("a", "1")+"---\n"+cm("b", "1"))
	write("b.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
	write("c.yaml", cm("d", "1"))
	var cache Cache
	read := func() ([]Object, []Object) {
		t.Helper()
		got, err := Read(ctx, []string{dir}, Options{Cache: &cache})
		want, werr := Read(ctx, []string{dir}, Options{})
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("error %v, want %v", err, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("with the cache:\n%v\nwithout:\n%v", got, want)
		}
		return got, want
	}
	same := func(a, b Object) bool {
		return reflect.ValueOf(a.Obj).UnsafePointer() == reflect.ValueOf(b.Obj).UnsafePointer()
	}
	first, _ := read()
	// The second document of a.yaml changes; c.yaml gets a problem.
	write("a.yaml", cm("a", "1")+"---\n"+cm("b", "2"))
	write("c.yaml", "kind: ConfigMap\n")
	second, _ := read()
	if len(second) != 3 || !same(first[0], second[0]) || same(first[1], second[1]) || !same(first[2], second[2]) {
		t.Errorf("second read: unchanged documents must be the same maps, changed ones new")
	}
	third, _ := read()
	for i := range third {
		if !same(second[i], third[i]) {
			t.Errorf("third read, object %d: parsed again", i)
		}
	}
	// A document that moves down a line is parsed again (its Source).
	write("a.yaml", "\n"+cm("a", "1")+"---\n"+cm("b", "2"))
	fourth, _ := read()
	if same(third[0], fourth[0]) {
		t.Errorf("a document on another line kept its old Source")
	}
}
