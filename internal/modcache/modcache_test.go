package modcache

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// inCache reports whether module@version is in the module cache, so that
// the tests can run with GOPROXY=off.
func inCache(t *testing.T, module, version string) bool {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(filepath.Join(strings.TrimSpace(string(out)), "cache", "download", module, "@v", version+".zip"))
	return err == nil
}

func TestDirFromCache(t *testing.T) {
	const module, version = "sigs.k8s.io/yaml", "v1.6.0"
	if !inCache(t, module, version) {
		t.Skipf("%s@%s is not in the module cache (go mod download)", module, version)
	}
	t.Setenv("GOPROXY", "off")
	dir, err := Dir(module, version)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(mod), "module "+module+"\n") {
		t.Errorf("%s/go.mod starts %q, want the module line of %s", dir, strings.SplitN(string(mod), "\n", 2)[0], module)
	}
}

func TestDirMissing(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	_, err := Dir("example.com/konverge-no-such-module", "v0.0.1")
	if err == nil {
		t.Fatal("no error for a module that is not in the cache, with GOPROXY=off")
	}
	if !strings.Contains(err.Error(), "example.com/konverge-no-such-module@v0.0.1") {
		t.Errorf("error %q does not name the module", err)
	}
}

func TestOpenAPIv3Files(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.json", "a.json", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := OpenAPIv3Files("", dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != "a.json" || filepath.Base(files[1]) != "b.json" {
		t.Errorf("files %v, want a.json and b.json in that order", files)
	}
	if _, err := OpenAPIv3Files("", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no OpenAPI documents") {
		t.Errorf("an empty directory gave %v, want an error saying it has no documents", err)
	}
}
