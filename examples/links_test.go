package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docFiles are the documentation pages, relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md", "CONTRIBUTING.md"}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(p, "../")))
	}
	return files
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// prose returns the lines of a Markdown page outside its code blocks.
func prose(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// anchors returns the anchors of a page's headings, as GitHub makes them:
// lower case, punctuation dropped, spaces turned into hyphens.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range prose(text) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// TestDocLinks: every relative link of the documentation names a file of
// the repository, and every #anchor a heading of its page.
func TestDocLinks(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	checked := 0
	for _, file := range docFiles(t) {
		for _, line := range prose(read(file)) {
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
					if _, err := os.Stat(filepath.Join("..", resolved)); err != nil {
						t.Errorf("%s: the link %s names no file of the repository", file, target)
						continue
					}
				}
				if anchor != "" && !anchors(read(resolved))[anchor] {
					t.Errorf("%s: the link %s names no heading of %s", file, target, resolved)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Error("no links found: the documentation pages moved?")
	}
}

// TestREADMEIsShort: the README introduces and points on; the manual is
// under docs/.
func TestREADMEIsShort(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 300 {
		t.Errorf("README.md has %d lines: move the details into docs/ (at most 300)", n)
	}
}

// TestREADMETestCommandIsCI: the test command the README gives a fresh
// machine is the one .ci/run runs.
func TestREADMETestCommandIsCI(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)Run the tests[^\n]*\n\n```sh\n([^\n]+)\n```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md gives no test command (a sh block after \"Run the tests\")")
	}
	cmd := string(m[1])
	for _, line := range strings.Split(string(ci), "\n") {
		if strings.TrimSpace(line) == cmd {
			return
		}
	}
	t.Errorf(".ci/run does not run the README's test command %q on a line of its own", cmd)
}
