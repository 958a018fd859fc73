package provenance

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// repoRoot is the repository this test checks.
const repoRoot = "../.."

// extraModules are sources konverge does not build with but records its
// behaviour from: the control plane of scripts/realcluster.sh (its
// admission plugins and controllers are what konverge's embedded cluster
// reproduces, in its own words). Checked when the module cache has them.
var extraModules = []string{"k8s.io/kubernetes@v1.37.1"}

// TestNoUpstreamRuns fails on every passage of Window or more non-trivial
// lines of a product file (non-test .go and .tmpl outside testdata) that
// stands in the sources of the k8s.io, sigs.k8s.io and github.com modules
// of go.sum. With KONVERGE_PROVENANCE=require (as .ci/run sets it) a module
// cache without those sources fails the test instead of skipping it.
func TestNoUpstreamRuns(t *testing.T) {
	roots, missing := upstreamRoots(t)
	if len(missing) > 0 {
		msg := "the Go module cache lacks the sources of " + strings.Join(missing, ", ") + " (run `go mod download`)"
		if os.Getenv("KONVERGE_PROVENANCE") == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	product := productFiles(t)
	start := time.Now()
	runs, err := Scan(product, roots)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d product files against %d upstream module trees in %v", len(product), len(roots), time.Since(start).Round(time.Millisecond))
	bad := 0
	for _, r := range runs {
		if reason := allowed(r); reason != "" {
			t.Logf("allowed (%s): %s", reason, r)
			continue
		}
		bad++
		t.Errorf("upstream run: %s\n\t%s", r, strings.Join(r.Text, "\n\t"))
	}
	if bad > 0 {
		t.Errorf("%d runs of %d or more lines equal upstream: import the package or write it in konverge's own words", bad, Window)
	}
}

// upstreamRoots returns the module cache directories of the k8s.io,
// sigs.k8s.io and github.com modules of go.sum that are present, and
// names the direct requirements of go.mod that are not.
func upstreamRoots(t *testing.T) (roots, missing []string) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env GOMODCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	direct := directRequirements(t)
	seen := map[string]bool{}
	add := func(mod string, required bool) {
		if seen[mod] {
			return
		}
		seen[mod] = true
		dir := filepath.Join(cache, escapePath(mod))
		if _, err := os.Stat(dir); err != nil {
			if required {
				missing = append(missing, mod)
			}
			return
		}
		roots = append(roots, dir)
	}
	f, err := os.Open(filepath.Join(repoRoot, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || strings.HasSuffix(fields[1], "/go.mod") || !upstreamPath(fields[0]) {
			continue
		}
		mod := fields[0] + "@" + fields[1]
		add(mod, direct[mod])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, mod := range extraModules {
		add(mod, false)
	}
	return roots, missing
}

func upstreamPath(mod string) bool {
	for _, p := range []string{"k8s.io/", "sigs.k8s.io/", "github.com/"} {
		if strings.HasPrefix(mod, p) {
			return true
		}
	}
	return false
}

// directRequirements returns module@version for the requirements of go.mod
// not marked indirect.
func directRequirements(t *testing.T) map[string]bool {
	src, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]bool{}
	for _, line := range strings.Split(string(src), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && upstreamPath(fields[0]) && !strings.Contains(line, "// indirect") {
			req[fields[0]+"@"+fields[1]] = true
		}
	}
	return req
}

// escapePath is the module cache's spelling of a module path: an upper-case
// letter becomes '!' and its lower case.
func escapePath(mod string) string {
	var b strings.Builder
	for _, r := range mod {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// productFiles returns the non-test .go and .tmpl files of the repository
// outside testdata and hidden directories.
func productFiles(t *testing.T) []File {
	var files []File
	err := filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != repoRoot && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") || !(strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".tmpl")) {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		files = append(files, File{Path: filepath.ToSlash(rel), Src: src})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no product files found")
	}
	return files
}
