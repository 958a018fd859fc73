// Package golden compares test output with files under testdata, and
// rewrites them when the tests run with -update.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Assert fails t when got differs from the content of the file at path, or
// writes got to path when tests run with -update.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (run the test with -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("output differs from %s (run with -update to accept it)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// Updating reports whether tests run with -update.
func Updating() bool { return *update }
