// Package examples checks the documentation: that docs/library.md shows
// the example programs as they are (their code, and the output their own
// tests check), that the links between the pages lead somewhere, and that
// the README stays a README.
package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/konverge/konverge/internal/golden"
)

var programRE = regexp.MustCompile("(?s)<!-- program: ([^ ]+) -->\n```go\n(.*?)```\n\n```console\n\\$ go run ./([^\n]+)\n(.*?)```\n")

var gitopsRE = regexp.MustCompile("(?s)```console\n\\$ go run ./examples/gitops\n(.*?)```\n")

// libraryDoc is the page that shows the programs.
const libraryDoc = "../docs/library.md"

// TestLibraryDocPrograms: every program of examples/library is in
// docs/library.md, with its main.go and its output (testdata/output.txt,
// which the program's own test compares with what it prints) as they are;
// and so is the GitOps loop's output. With -update the page is rewritten
// from the files.
func TestLibraryDocPrograms(t *testing.T) {
	data, err := os.ReadFile(libraryDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	shown := map[string]bool{}
	text = programRE.ReplaceAllStringFunc(text, func(block string) string {
		m := programRE.FindStringSubmatch(block)
		dir, code, runDir, out := m[1], m[2], m[3], m[4]
		shown[dir] = true
		if runDir != dir {
			t.Errorf("docs/library.md: the program %s is run as ./%s", dir, runDir)
		}
		wantCode, wantOut := read(dir+"/main.go"), read(dir+"/testdata/output.txt")
		if !golden.Updating() {
			if code != wantCode {
				t.Errorf("docs/library.md shows another %s/main.go (go test ./examples -update rewrites it)", dir)
			}
			if out != wantOut {
				t.Errorf("docs/library.md shows another output of %s:\n%s\nwant:\n%s", dir, out, wantOut)
			}
		}
		return "<!-- program: " + dir + " -->\n```go\n" + wantCode + "```\n\n```console\n$ go run ./" + dir + "\n" + wantOut + "```\n"
	})
	dirs, err := filepath.Glob("library/*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		dir := "examples/" + filepath.ToSlash(filepath.Dir(d))
		if !shown[dir] {
			t.Errorf("docs/library.md does not show %s", dir)
		}
	}
	found := false
	text = gitopsRE.ReplaceAllStringFunc(text, func(block string) string {
		found = true
		out := gitopsRE.FindStringSubmatch(block)[1]
		want := read("examples/gitops/testdata/output.txt")
		if !golden.Updating() && out != want {
			t.Errorf("docs/library.md shows another output of examples/gitops:\n%s\nwant:\n%s", out, want)
		}
		return "```console\n$ go run ./examples/gitops\n" + want + "```\n"
	})
	if !found {
		t.Error("docs/library.md does not show the output of examples/gitops")
	}
	if golden.Updating() && text != string(data) {
		if err := os.WriteFile(libraryDoc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExamplesUsePublicAPI: the example programs import only what a
// program outside the module can import: no internal package of konverge.
func TestExamplesUsePublicAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./gitops", "./library/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/konverge/konverge/") && strings.Contains(dep, "/internal") {
			t.Errorf("an example depends on %s", dep)
		}
	}
}
