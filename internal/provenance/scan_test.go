package provenance

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestLinesFoldsAndDropsTrivial(t *testing.T) {
	src := "package p\n\nimport (\n\t\"fmt\"\n)\n\nfunc  F()   {\n\t}\n\t// konverge  says\n"
	got := Lines([]byte(src), true)
	want := []Line{{"func F() {", 7}, {"// kubectl says", 9}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Lines = %#v, want %#v", got, want)
	}
}

// TestScanFindsRenamedReindentedCopy writes an upstream file and a product
// file that copies seven of its lines with other indentation, blank lines
// and the name changed, and one that shares only five.
func TestScanFindsRenamedReindentedCopy(t *testing.T) {
	up := t.TempDir()
	upstream := "package up\n\nfunc a() {\n\tone := 1\n\ttwo := 2\n\tthree := 3\n\tfour := 4\n\tfive := 5\n\tsix := \"kubectl\"\n\tseven := 7\n}\n"
	if err := os.WriteFile(filepath.Join(up, "a.go"), []byte(upstream), 0o644); err != nil {
		t.Fatal(err)
	}
	copied := "package mine\n\n// mine\nfunc a() {\n  one := 1\n\n  two := 2\n  three := 3\n  four := 4\n  five := 5\n  six := \"konverge\"\n  seven := 7\n}\n"
	short := "package mine\n\nfunc b() {\n\tone := 1\n\ttwo := 2\n\tthree := 3\n\tfour := 4\n\tfive := 5\n\tmine := 6\n}\n"
	runs, err := Scan([]File{{"copied.go", []byte(copied)}, {"short.go", []byte(short)}}, []string{up})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("runs = %v, want one", runs)
	}
	r := runs[0]
	if r.Path != "copied.go" || r.From != 4 || r.To != 12 || r.Lines != 8 {
		t.Errorf("run = %v, want copied.go:4-12 (8 lines)", r)
	}
}
